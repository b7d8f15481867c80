package host

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Storage is what the block devices under a folder (the datadirs') bring to
// I/O-bound results: each device's largest request (max_sectors_kb, and
// the hardware's max_hw_sectors_kb), its I/O scheduler, whether it is
// rotational, and its read-ahead; for a RAID or device-mapper device, the
// same of each device under it, down to the disks. A read larger than
// max_sectors_kb is split; RocksDB's compaction readahead above it has
// been seen to turn compaction reads into ~4 KB requests (RocksDB issue
// 12038).
type Storage struct {
	Path    string        `json:"path"`
	Device  *BlockDevice  `json:"device,omitempty"`  // the file system's device (a partition: its disk's queue)
	Members []BlockDevice `json:"members,omitempty"` // the devices under it, in walk order
	Err     string        `json:"error,omitempty"`   // why the devices could not be found
}

// BlockDevice is one block device's request limits and queue settings.
type BlockDevice struct {
	Name           string `json:"name"`                // sysfs name: nvme0n1, md0, dm-0, sda
	Partition      string `json:"partition,omitempty"` // the partition of it that holds the file system
	Under          string `json:"under,omitempty"`     // the device it is a member of
	MaxSectorsKB   int    `json:"max_sectors_kb"`      // 0: not readable
	MaxHWSectorsKB int    `json:"max_hw_sectors_kb"`
	Scheduler      string `json:"scheduler,omitempty"`
	Rotational     *bool  `json:"rotational,omitempty"`
	ReadAheadKB    int    `json:"read_ahead_kb"`
}

// SmallestMaxSectors is the device, of the folder's device and its
// members, with the smallest max_sectors_kb: the largest request that
// reaches every disk whole. ok is false when none was read.
func (s *Storage) SmallestMaxSectors() (d BlockDevice, ok bool) {
	if s == nil || s.Device == nil {
		return BlockDevice{}, false
	}
	for _, x := range append([]BlockDevice{*s.Device}, s.Members...) {
		if x.MaxSectorsKB > 0 && (!ok || x.MaxSectorsKB < d.MaxSectorsKB) {
			d, ok = x, true
		}
	}
	return d, ok
}

// StorageOf finds the block devices that hold path (or, if it does not exist
// yet, its nearest existing parent) and reads their limits. It never fails:
// what could not be found is said in Err.
//
// No library maps a path to its device stack with the queue limits:
// procfs's blockdevice reads the I/O counters and queue stats of a named
// disk, not sysfs's device links from a file system down to its members.
func StorageOf(r Roots, path string) *Storage {
	s := &Storage{Path: path}
	p := path
	var st unix.Stat_t
	for {
		err := unix.Stat(p, &st)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.ENOENT) || filepath.Dir(p) == p {
			s.Err = fmt.Sprintf("stat %s: %v", p, err)
			return s
		}
		p = filepath.Dir(p)
	}
	maj, mnr := unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))
	if maj == 0 { // an anonymous device (btrfs, overlay): the mount's source
		src, fstype := MountSource(r, p)
		var sst unix.Stat_t
		if !strings.HasPrefix(src, "/dev/") || unix.Stat(src, &sst) != nil || sst.Mode&unix.S_IFMT != unix.S_IFBLK {
			s.Err = fmt.Sprintf("%s is on %s, which has no block device", path, fstype)
			return s
		}
		maj, mnr = unix.Major(uint64(sst.Rdev)), unix.Minor(uint64(sst.Rdev))
	}
	s.fill(r, fmt.Sprintf("%d:%d", maj, mnr))
	return s
}

// fill reads the device numbered majmin ("259:1") and the devices under it.
func (s *Storage) fill(r Roots, majmin string) {
	dir, err := filepath.EvalSymlinks(filepath.Join(r.Sys, "dev/block", majmin))
	if err != nil {
		s.Err = fmt.Sprintf("device %s is not in %s/dev/block", majmin, r.Sys)
		return
	}
	top := readBlockDevice(dir)
	s.Device = &top
	seen := map[string]bool{top.Name: true}
	var walk func(dir, under string, depth int)
	walk = func(dir, under string, depth int) {
		if depth > 8 {
			return
		}
		if part(dir) {
			dir = filepath.Dir(dir)
		}
		ents, _ := os.ReadDir(filepath.Join(dir, "slaves"))
		for _, e := range ents {
			next, err := filepath.EvalSymlinks(filepath.Join(dir, "slaves", e.Name()))
			if err != nil {
				continue
			}
			d := readBlockDevice(next)
			d.Under = under
			if !seen[d.Name] {
				seen[d.Name] = true
				s.Members = append(s.Members, d)
			}
			walk(next, d.Name, depth+1)
		}
	}
	walk(dir, top.Name, 0)
}

// part says whether a sysfs block folder is a partition (its queue is its
// disk's, the folder above).
func part(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "partition"))
	return err == nil
}

// readBlockDevice reads the queue of the device at dir (a partition: its
// disk's). Files that are not there leave their field zero.
func readBlockDevice(dir string) BlockDevice {
	var d BlockDevice
	if part(dir) {
		d.Partition = filepath.Base(dir)
		dir = filepath.Dir(dir)
	}
	d.Name = filepath.Base(dir)
	q := filepath.Join(dir, "queue")
	num := func(name string) int {
		b, err := os.ReadFile(filepath.Join(q, name))
		if err != nil {
			return 0
		}
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	d.MaxSectorsKB, d.MaxHWSectorsKB, d.ReadAheadKB = num("max_sectors_kb"), num("max_hw_sectors_kb"), num("read_ahead_kb")
	if b, err := os.ReadFile(filepath.Join(q, "scheduler")); err == nil {
		d.Scheduler = bracketed(strings.TrimSpace(string(b)))
	}
	if b, err := os.ReadFile(filepath.Join(q, "rotational")); err == nil {
		v := strings.TrimSpace(string(b)) == "1"
		d.Rotational = &v
	}
	return d
}

// MountSource is the source and type of the mount that holds path, from
// mountinfo (the longest mount point that is a prefix of path).
func MountSource(r Roots, path string) (src, fstype string) {
	abs, _ := filepath.Abs(path)
	f, err := os.Open(filepath.Join(r.Proc, "self/mountinfo"))
	if err != nil {
		return "", "unknown"
	}
	defer f.Close()
	best := -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint options [optional...] - fstype source super
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+2 >= len(fields) {
			continue
		}
		mp := fields[4]
		if (abs == mp || strings.HasPrefix(abs, strings.TrimSuffix(mp, "/")+"/")) && len(mp) > best {
			best, fstype, src = len(mp), fields[sep+1], fields[sep+2]
		}
	}
	return src, fstype
}
