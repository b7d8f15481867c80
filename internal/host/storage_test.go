package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// blockTree writes a sysfs tree of block devices: folders with queue files,
// partitions, slaves links and dev/block links.
type blockTree struct {
	t   *testing.T
	sys string
}

func (b blockTree) dev(rel string, queue map[string]string) {
	b.t.Helper()
	q := filepath.Join(b.sys, rel, "queue")
	if err := os.MkdirAll(q, 0o755); err != nil {
		b.t.Fatal(err)
	}
	for name, v := range queue {
		if err := os.WriteFile(filepath.Join(q, name), []byte(v+"\n"), 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

func (b blockTree) partition(rel string) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Join(b.sys, rel), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.sys, rel, "partition"), []byte("1\n"), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func (b blockTree) link(target, name string) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(b.sys, name)), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(b.sys, target), filepath.Join(b.sys, name)); err != nil {
		b.t.Fatal(err)
	}
}

func queue(maxKB, hwKB, sched, rot, ra string) map[string]string {
	return map[string]string{"max_sectors_kb": maxKB, "max_hw_sectors_kb": hwKB, "scheduler": sched, "rotational": rot, "read_ahead_kb": ra}
}

func devNames(ds []BlockDevice) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name+"<"+d.Under)
	}
	return strings.Join(out, " ")
}

// An NVMe SSD with the file system on a partition: the partition's queue is
// its disk's.
func TestStorageNVMe(t *testing.T) {
	b := blockTree{t, t.TempDir()}
	nvme := "devices/pci0000:00/0000:00:02.0/nvme/nvme0/nvme0n1"
	b.dev(nvme, queue("128", "128", "[none] mq-deadline", "0", "128"))
	b.partition(nvme + "/nvme0n1p1")
	b.link(nvme+"/nvme0n1p1", "dev/block/259:1")
	s := &Storage{Path: "/data"}
	s.fill(Roots{Sys: b.sys}, "259:1")
	d := s.Device
	if s.Err != "" || d == nil || d.Name != "nvme0n1" || d.Partition != "nvme0n1p1" || d.MaxSectorsKB != 128 || d.MaxHWSectorsKB != 128 ||
		d.Scheduler != "none" || d.Rotational == nil || *d.Rotational || d.ReadAheadKB != 128 || len(s.Members) != 0 {
		t.Fatalf("got %+v (%s)", d, s.Err)
	}
	if m, ok := s.SmallestMaxSectors(); !ok || m.Name != "nvme0n1" || m.MaxSectorsKB != 128 {
		t.Errorf("SmallestMaxSectors = %+v, %v", m, ok)
	}
}

// A software RAID (md0) over partitions of two disks whose limits differ
// from the array's: the members are read through slaves, each under its
// array, and the smallest limit is a member's.
func TestStorageSoftwareRAID(t *testing.T) {
	b := blockTree{t, t.TempDir()}
	sda := "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
	sdb := "devices/pci0000:00/0000:00:17.0/ata2/host1/target1:0:0/1:0:0:0/block/sdb"
	b.dev(sda, queue("1280", "32767", "mq-deadline [bfq] none", "1", "128"))
	b.dev(sdb, queue("64", "512", "[mq-deadline] none", "1", "128"))
	b.partition(sda + "/sda2")
	b.partition(sdb + "/sdb2")
	b.dev("devices/virtual/block/md0", queue("512", "32767", "none", "1", "4096"))
	b.link(sda+"/sda2", "devices/virtual/block/md0/slaves/sda2")
	b.link(sdb+"/sdb2", "devices/virtual/block/md0/slaves/sdb2")
	b.link("devices/virtual/block/md0", "dev/block/9:0")
	s := &Storage{}
	s.fill(Roots{Sys: b.sys}, "9:0")
	if s.Device == nil || s.Device.Name != "md0" || s.Device.MaxSectorsKB != 512 || s.Device.ReadAheadKB != 4096 {
		t.Fatalf("array %+v (%s)", s.Device, s.Err)
	}
	if got := devNames(s.Members); got != "sda<md0 sdb<md0" {
		t.Errorf("members %s", got)
	}
	byName := map[string]BlockDevice{}
	for _, m := range s.Members {
		byName[m.Name] = m
	}
	if a := byName["sda"]; a.MaxSectorsKB != 1280 || a.MaxHWSectorsKB != 32767 || a.Scheduler != "bfq" || a.Partition != "sda2" || !*a.Rotational {
		t.Errorf("sda %+v", a)
	}
	if m, ok := s.SmallestMaxSectors(); !ok || m.Name != "sdb" || m.MaxSectorsKB != 64 {
		t.Errorf("SmallestMaxSectors = %+v, %v; want sdb's 64", m, ok)
	}
}

// LVM on dm-crypt on an NVMe partition: the walk goes down every level.
func TestStorageDeviceMapperStack(t *testing.T) {
	b := blockTree{t, t.TempDir()}
	nvme := "devices/pci0000:00/0000:00:02.0/nvme/nvme0/nvme0n1"
	b.dev(nvme, queue("256", "256", "[none]", "0", "128"))
	b.partition(nvme + "/nvme0n1p3")
	b.dev("devices/virtual/block/dm-0", queue("256", "256", "none", "0", "128"))
	b.dev("devices/virtual/block/dm-1", queue("128", "256", "none", "0", "128"))
	b.link(nvme+"/nvme0n1p3", "devices/virtual/block/dm-0/slaves/nvme0n1p3")
	b.link("devices/virtual/block/dm-0", "devices/virtual/block/dm-1/slaves/dm-0")
	b.link("devices/virtual/block/dm-1", "dev/block/253:1")
	s := &Storage{}
	s.fill(Roots{Sys: b.sys}, "253:1")
	if s.Device == nil || s.Device.Name != "dm-1" || devNames(s.Members) != "dm-0<dm-1 nvme0n1<dm-0" {
		t.Fatalf("device %+v, members %s (%s)", s.Device, devNames(s.Members), s.Err)
	}
	if m, _ := s.SmallestMaxSectors(); m.Name != "dm-1" {
		t.Errorf("smallest %+v", m)
	}
	s = &Storage{}
	s.fill(Roots{Sys: b.sys}, "8:99")
	if s.Device != nil || !strings.Contains(s.Err, "8:99") {
		t.Errorf("an unknown device: %+v", s)
	}
	if _, ok := s.SmallestMaxSectors(); ok {
		t.Error("no device, yet a smallest limit")
	}
}

// This machine: a folder that does not exist yet is looked up through its
// parent; a tmpfs has no block device, and says so.
func TestStorageOfThisMachine(t *testing.T) {
	s := StorageOf(Real, filepath.Join(t.TempDir(), "not", "yet"))
	if s.Err != "" || s.Device == nil || s.Device.MaxSectorsKB == 0 {
		t.Errorf("a temporary folder: %+v", s)
	}
	if s := StorageOf(Real, "/dev/shm"); s.Err == "" || !strings.Contains(s.Err, "tmpfs") {
		t.Errorf("/dev/shm: %+v", s)
	}
}
