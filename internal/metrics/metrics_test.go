package metrics

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
)

// The snapshots in testdata/snap are /proc and /sys files in this VM's
// formats with counters set to known rates (testdata/README.md): snapshot k
// is taken k seconds after the window opens; -2 and -1 are in the warmup
// (busy), 9 and 10 after the window (idle).
var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

var spec = Spec{ServerPID: 100, ClientPID: 200, Disks: []string{"vda"}}

func read(t *testing.T, name string, at time.Time) (Snapshot, error) {
	t.Helper()
	dir := filepath.Join("testdata/snap", name)
	sp := spec
	sp.Roots = host.Roots{Proc: filepath.Join(dir, "proc"), Sys: filepath.Join(dir, "sys")}
	r, err := NewReader(sp)
	if err != nil {
		t.Fatal(err)
	}
	return r.Read(at)
}

func snaps(t *testing.T, ks ...int) []Snapshot {
	var out []Snapshot
	for _, k := range ks {
		s, err := read(t, strconv.Itoa(k), t0.Add(time.Duration(k)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// The known answers of the window [0 s, 8 s] at 1000 ops/s.
func checkKnown(t *testing.T, hw *result.HW) {
	t.Helper()
	pageKB := uint64(os.Getpagesize() / 1024)
	if len(hw.FreqMHz) != 2 {
		t.Fatalf("frequencies of %d CPUs, want the fixture's 2: %v", len(hw.FreqMHz), hw.FreqMHz)
	}
	a := hw.Avg
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"seconds", hw.Seconds, 8},
		{"us", a.User, 51.25}, {"sy", a.System, 20}, {"wa", a.IOWait, 5}, {"st", a.Steal, 5}, {"id", a.Idle, 18.75},
		{"cs/s", a.CS, 1750}, {"in/s", a.Intr, 500},
		{"r/s", a.Reads, 10}, {"rkB/s", a.ReadKB, 80}, {"w/s", a.Writes, 27.5}, {"wkB/s", a.WriteKB, 275},
		{"rareq-sz", a.RareqSz, 8}, {"wareq-sz", a.WareqSz, 10}, {"%util", a.Util, 25},
		{"server CPU %", a.ServerCPU, 70}, {"client CPU %", a.ClientCPU, 20},
		{"server RSS KB", float64(a.ServerRSS), float64((25600 + 2560) * pageKB)},
		{"cpu/o", hw.CPUPerOp, 0.07125}, {"host CPU µs/op", hw.HostCPUUsOp, 1425},
		{"server CPU µs/op", hw.ServerCPUUsOp, 700}, {"client CPU µs/op", hw.ClientCPUUsOp, 200},
		{"cs/o", hw.CSPerOp, 1.75}, {"r/o", hw.ReadsPerOp, 0.01}, {"rKB/o", hw.ReadKBPerOp, 0.08}, {"wKB/o", hw.WriteKBPerOp, 0.275},
		{"o/s", hw.OpsPerSec, 1000}, {"cpus", float64(hw.CPUs), 2},
		{"freq cpu0", hw.FreqMHz[0], 3800}, {"freq cpu1", hw.FreqMHz[1], 3600}, {"freq mean", a.FreqMHz, 3700},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestSummarizeKnownAnswers(t *testing.T) {
	hw := Summarize(snaps(t, 0, 1, 2, 3, 4, 5, 6, 7, 8), Window{From: t0, To: t0.Add(8 * time.Second), OpsPerSec: 1000, Op: "statement", Disks: spec.Disks})
	checkKnown(t, hw)
	if hw.Samples != 9 || len(hw.Series) != 8 {
		t.Errorf("%d samples, %d intervals", hw.Samples, len(hw.Series))
	}
	// Each second keeps its own rates: seconds 2-4 were busier.
	if s := hw.Series[3]; !near(s.User, 70) || !near(s.CS, 3000) || !near(s.Dur, 1) || !near(s.T, 3) {
		t.Errorf("second 3: %+v", s)
	}
	if s := hw.Series[6]; !near(s.ServerCPU, 70) { // the child was reaped in this second
		t.Errorf("second 6 server CPU %v: a reaped child's time was lost or counted twice", s.ServerCPU)
	}
}

// Snapshots taken in the warmup (busy) and after the window (idle) are
// there, and must not count.
func TestSummarizeCountsOnlyTheWindow(t *testing.T) {
	all := snaps(t, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	hw := Summarize(all, Window{From: t0, To: t0.Add(8 * time.Second), OpsPerSec: 1000, Op: "statement", Disks: spec.Disks})
	checkKnown(t, hw)
	if hw.Samples != 9 {
		t.Errorf("%d samples in the window, want 9", hw.Samples)
	}
}

// vmstat-style gaps: seconds 3 and 4 were never sampled (the sampler was
// late) and one snapshot could not be read. A tool that averages its
// per-interval lines would say us = 45 % here (five lines of 40 %, one of
// 70 % standing for three seconds); the answer is still 51.25 %.
func TestSummarizeWithGaps(t *testing.T) {
	s := snaps(t, 0, 1, 2, 5, 6, 7, 8)
	if _, err := read(t, "broken", t0.Add(6500*time.Millisecond)); err == nil || !strings.Contains(err.Error(), "diskstats") {
		t.Fatalf("a snapshot without diskstats read without error: %v", err)
	}
	hw := Summarize(s, Window{From: t0, To: t0.Add(8 * time.Second), OpsPerSec: 1000, Op: "statement", Disks: spec.Disks, Skipped: 1})
	checkKnown(t, hw)
	if len(hw.Series) != 6 || !near(hw.Series[2].Dur, 3) || !near(hw.Series[2].User, 70) {
		t.Errorf("series around the gap: %+v", hw.Series[2])
	}
	naive := 0.0
	for _, x := range hw.Series {
		naive += x.User / float64(len(hw.Series))
	}
	if near(naive, hw.Avg.User) {
		t.Errorf("the gap does not matter to a per-line average here; the test proves nothing")
	}
}

func TestSummarizeFlagsSteal(t *testing.T) {
	hw := Summarize(snaps(t, 0, 1, 2, 3, 4, 5, 6, 7, 8), Window{From: t0, To: t0.Add(8 * time.Second), OpsPerSec: 1000, Op: "statement"})
	Flag(hw, []float64{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000})
	if len(hw.Flags) != 1 || hw.Flags[0].Name != "steal" || !strings.Contains(hw.Flags[0].Detail, "5.0%") {
		t.Errorf("flags: %+v", hw.Flags)
	}
	// Without disks, no disk figures.
	if hw.WriteKBPerOp != 0 || hw.Avg.WriteKB != 0 {
		t.Errorf("disk figures without a disk: %+v", hw.Avg)
	}
}

func TestSummarizeTooShort(t *testing.T) {
	hw := Summarize(snaps(t, 0), Window{From: t0, To: t0.Add(500 * time.Millisecond), OpsPerSec: 1000})
	if hw.Samples != 1 || len(hw.Notes) == 0 || hw.CPUPerOp != 0 {
		t.Errorf("%+v", hw)
	}
}

// The turbo cycle: cool → fast → hot → slow, with QPS following the
// frequency; and a drift that QPS does not follow; and a steady clock.
func TestFlagFrequencyDrift(t *testing.T) {
	series := func(mhz ...float64) *result.HW {
		hw := &result.HW{Samples: len(mhz) + 1}
		for i, f := range mhz {
			hw.Series = append(hw.Series, result.HWSecond{T: float64(i), Dur: 1, FreqMHz: f})
		}
		return hw
	}
	hw := series(3800, 3800, 3700, 2200, 2200, 1600, 3800, 3800)
	Flag(hw, []float64{9500, 9400, 9300, 5600, 5500, 4100, 9400, 9500})
	if len(hw.Flags) != 1 || hw.Flags[0].Name != "frequency-drift" || !strings.Contains(hw.Flags[0].Detail, "1.60 and 3.80 GHz") ||
		!strings.Contains(hw.Flags[0].Detail, "QPS followed it") {
		t.Errorf("turbo cycle: %+v", hw.Flags)
	}
	hw = series(3800, 2200, 3800, 2200, 3800)
	Flag(hw, []float64{5000, 5000, 5001, 5000, 5000})
	if len(hw.Flags) != 1 || !strings.Contains(hw.Flags[0].Detail, "did not follow") {
		t.Errorf("drift without QPS following: %+v", hw.Flags)
	}
	hw = series(3800, 3790, 3800, 3810)
	Flag(hw, []float64{5000, 5000, 5000, 5000})
	if len(hw.Flags) != 0 {
		t.Errorf("a steady clock was flagged: %+v", hw.Flags)
	}
	hw = series(0, 0, 0) // no cpufreq: nothing to say
	Flag(hw, []float64{1, 2, 3})
	if len(hw.Flags) != 0 {
		t.Errorf("no frequency, but flags: %+v", hw.Flags)
	}
}

// A device stack in a sysfs tree: partitions resolve to their disk,
// device-mapper devices through their slaves, a whole disk to itself.
func TestResolveDevice(t *testing.T) {
	sys := t.TempDir()
	mk := func(path string) string {
		p := filepath.Join(sys, path)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, name string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sys, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(sys, target), filepath.Join(sys, name)); err != nil {
			t.Fatal(err)
		}
	}
	nvme := "devices/pci0000:00/0000:00:02.0/nvme/nvme0/nvme0n1"
	mk(nvme)
	os.WriteFile(filepath.Join(mk(nvme+"/nvme0n1p3"), "partition"), []byte("3\n"), 0o644)
	sda := "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda"
	os.WriteFile(filepath.Join(mk(sda+"/sda1"), "partition"), []byte("1\n"), 0o644)
	mk("devices/virtual/block/dm-0/slaves")
	mk("devices/virtual/block/dm-1/slaves")
	link(nvme+"/nvme0n1p3", "devices/virtual/block/dm-0/slaves/nvme0n1p3")       // dm-crypt on a partition
	link("devices/virtual/block/dm-0", "devices/virtual/block/dm-1/slaves/dm-0") // LVM on dm-crypt …
	link(sda+"/sda1", "devices/virtual/block/dm-1/slaves/sda1")                  // … spanning a second disk
	link(nvme, "dev/block/259:0")
	link(nvme+"/nvme0n1p3", "dev/block/259:3")
	link("devices/virtual/block/dm-0", "dev/block/253:0")
	link("devices/virtual/block/dm-1", "dev/block/253:1")
	roots := host.Roots{Sys: sys, Proc: t.TempDir()}
	for _, c := range []struct {
		maj, mnr uint32
		want     string
	}{{259, 0, "nvme0n1"}, {259, 3, "nvme0n1"}, {253, 0, "nvme0n1"}, {253, 1, "nvme0n1 sda"}} {
		got, err := resolveDevice(roots, c.maj, c.mnr)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%d:%d resolves to %v (%v), want %s", c.maj, c.mnr, got, err, c.want)
		}
	}
	if _, err := resolveDevice(roots, 8, 99); err == nil || !strings.Contains(err.Error(), "--device") {
		t.Errorf("an unknown device: %v", err)
	}
}

// This machine: the datadir's folder resolves to a disk that is in
// diskstats; a tmpfs has none and the error names the fix.
func TestDisksOfThisMachine(t *testing.T) {
	d, err := DisksOf(host.Real, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range d {
		if err := CheckDevice(host.Real, name); err != nil {
			t.Error(err)
		}
	}
	if _, err := DisksOf(host.Real, "/dev/shm"); err == nil || !strings.Contains(err.Error(), "--device") {
		t.Errorf("/dev/shm: %v %v", d, err)
	}
	if err := CheckDevice(host.Real, "nosuchdisk"); err == nil || !strings.Contains(err.Error(), "use one of") {
		t.Errorf("--device nosuchdisk: %v", err)
	}
}

// The sampler over the real /proc: it samples only between Open and Close
// (a snapshot at each and one every tick between), and sees this process's
// CPU as the client's.
func TestSamplerOnThisMachine(t *testing.T) {
	s, err := NewSampler(Spec{Roots: host.Real, ServerPID: 1, ClientPID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	s.every = 200 * time.Millisecond
	snaps := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.snaps)
	}
	if s.stop != nil || snaps() != 0 { // not sampled: not open yet
		t.Fatalf("the sampler samples before Open: %d snapshots", snaps())
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0, t0 := cpu(), time.Now()
	s.Open()
	// Busy (client CPU) until five ticks have been sampled after the
	// Open's snapshot: the window's length follows the sampler's ticks,
	// whatever the machine's stalls do to the wall clock.
	const ticks = 5
	for deadline := time.Now().Add(time.Minute); snaps() < 1+ticks; {
		if time.Now().After(deadline) {
			t.Fatalf("%d snapshots in a minute at one per %s", snaps(), s.every)
		}
		for end := time.Now().Add(5 * time.Millisecond); time.Now().Before(end); {
		}
	}
	s.Close()
	window := time.Since(t0)
	// What the process really got: on a loaded machine a busy loop gets
	// less than a CPU, so the sampler is held to that, not to 100 %.
	used := 100 * float64(cpu()-c0) / float64(window)
	select { // not sampled: closed, its loop is over
	case <-s.done:
	default:
		t.Fatal("the sampler's loop outlived Close")
	}
	hw := s.Result(100, "statement", nil, nil)
	// Open's snapshot, the five ticks (a sixth if it came before Close
	// took the lock), Close's; the window from Open's snapshot to Close's,
	// at least the five ticks and at most what the test saw.
	if hw == nil || hw.Samples < 2+ticks || hw.Samples > 3+ticks ||
		hw.Seconds < ticks*s.every.Seconds()-0.01 || hw.Seconds > window.Seconds() {
		t.Fatalf("samples: %+v (the window seen: %s)", hw, window)
	}
	if hw.Avg.ClientCPU < 0.6*used || hw.Avg.ClientCPU > 1.5*used+5 || hw.ClientCPUUsOp <= 0 {
		t.Errorf("a busy client shows %.0f%% CPU, and used %.0f%% (getrusage)", hw.Avg.ClientCPU, used)
	}
	var nilS *Sampler // a test without a sampler
	nilS.Open()
	nilS.Close()
	if nilS.Result(1, "statement", nil, nil) != nil {
		t.Error("a nil sampler has a result")
	}
}
