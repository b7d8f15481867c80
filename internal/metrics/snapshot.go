// Package metrics owns the hardware cost of a measured window: a sampler that
// reads /proc and /sys once a second while the engine measures (host CPU,
// context switches, interrupts, the datadir's disk, the server's process
// tree, the client's own CPU, CPU frequencies), the window's averages, the
// per-operation figures the reference harness publishes (cpu/o, cs/o, r/o,
// rKB/o, wKB/o, o/s) beside honest CPU µs per op, and the flags that say a
// run's numbers are at risk (frequency drift, CPU steal). It reads; it never
// starts servers or runs load.
package metrics

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"

	"github.com/qpslab/qpslab/internal/host"
)

// Spec says what to read.
type Spec struct {
	Roots     host.Roots
	ServerPID int      // the server's main process; its descendants count with it
	ClientPID int      // the benchmark client (this process)
	Disks     []string // block devices whose counters are summed (diskstats names)
}

// Snapshot is the counters at one moment. CPU times are in seconds.
type Snapshot struct {
	At         time.Time
	CPU        procfs.CPUStat // the host, all CPUs
	CPUs       int            // CPUs in /proc/stat
	CS, Intr   uint64
	Disk       diskCounters
	DiskTicks  []uint64 // per disk: ms spent doing I/O (for %util)
	ServerCPU  float64  // user+system of the server's tree, reaped children included
	ServerRSS  uint64   // KB, summed over the tree
	ServerProc int
	ClientCPU  float64
	FreqKHz    []uint64 // per CPU, where cpufreq exposes scaling_cur_freq
}

type diskCounters struct{ reads, readSectors, writes, writeSectors uint64 }

// Reader reads snapshots for one Spec. It finds the per-CPU frequency files
// once, when it is made.
type Reader struct {
	spec     Spec
	fs       procfs.FS
	bd       blockdevice.FS
	freq     []string
	pageKB   uint64
	userHZ   float64
	diskName map[string]int
}

// NewReader checks that the roots can be read.
func NewReader(spec Spec) (*Reader, error) {
	fs, err := procfs.NewFS(spec.Roots.Proc)
	if err != nil {
		return nil, fmt.Errorf("open procfs at %s: %w", spec.Roots.Proc, err)
	}
	bd, err := blockdevice.NewFS(spec.Roots.Proc, spec.Roots.Sys)
	if err != nil {
		return nil, fmt.Errorf("open block devices at %s: %w", spec.Roots.Sys, err)
	}
	r := &Reader{spec: spec, fs: fs, bd: bd, pageKB: uint64(os.Getpagesize() / 1024), userHZ: 100, diskName: map[string]int{}}
	for i, d := range spec.Disks {
		r.diskName[d] = i
	}
	// procfs's sysfs reader has SystemCpufreq, but it reads every cpufreq
	// attribute and the statistics tables of each CPU; once a second that
	// is tens of files per CPU, all counted as client CPU. Only the current
	// frequency is needed here, one small file per CPU.
	r.freq, _ = filepath.Glob(filepath.Join(spec.Roots.Sys, "devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq"))
	sort.Slice(r.freq, func(i, j int) bool { return cpuNum(r.freq[i]) < cpuNum(r.freq[j]) })
	return r, nil
}

func cpuNum(path string) int {
	d := filepath.Base(filepath.Dir(filepath.Dir(path))) // cpuN
	n, _ := strconv.Atoi(strings.TrimPrefix(d, "cpu"))
	return n
}

// Read takes a snapshot stamped at. An error means the snapshot is unusable
// (a file vanished or the server is gone); it is skipped, never counted as
// zeros.
func (r *Reader) Read(at time.Time) (Snapshot, error) {
	s := Snapshot{At: at}
	st, err := r.fs.Stat()
	if err != nil {
		return s, fmt.Errorf("read %s/stat: %w", r.spec.Roots.Proc, err)
	}
	s.CPU, s.CPUs, s.CS, s.Intr = st.CPUTotal, len(st.CPU), st.ContextSwitches, st.IRQTotal

	if len(r.spec.Disks) > 0 {
		ds, err := r.bd.ProcDiskstats()
		if err != nil {
			return s, fmt.Errorf("read %s/diskstats: %w", r.spec.Roots.Proc, err)
		}
		s.DiskTicks = make([]uint64, len(r.spec.Disks))
		found := 0
		for _, d := range ds {
			i, ok := r.diskName[d.DeviceName]
			if !ok {
				continue
			}
			found++
			s.Disk.reads += d.ReadIOs
			s.Disk.readSectors += d.ReadSectors
			s.Disk.writes += d.WriteIOs
			s.Disk.writeSectors += d.WriteSectors
			s.DiskTicks[i] = d.IOsTotalTicks
		}
		if found != len(r.spec.Disks) {
			return s, fmt.Errorf("%s/diskstats lacks %s", r.spec.Roots.Proc, strings.Join(r.spec.Disks, " or "))
		}
	}

	if r.spec.ServerPID > 0 {
		if err := r.readTree(&s); err != nil {
			return s, err
		}
	}
	if r.spec.ClientPID > 0 {
		p, err := r.fs.Proc(r.spec.ClientPID)
		if err != nil {
			return s, fmt.Errorf("client process %d: %w", r.spec.ClientPID, err)
		}
		ps, err := p.Stat()
		if err != nil {
			return s, fmt.Errorf("client process %d: %w", r.spec.ClientPID, err)
		}
		// The client's own time only: its children (the server it may have
		// started) are the server's.
		s.ClientCPU = float64(ps.UTime+ps.STime) / r.userHZ
	}

	for _, f := range r.freq {
		b, err := os.ReadFile(f)
		if err != nil {
			return s, fmt.Errorf("read %s: %w", f, err)
		}
		khz, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return s, fmt.Errorf("read %s: %w", f, err)
		}
		s.FreqKHz = append(s.FreqKHz, khz)
	}
	return s, nil
}

// PSS sums the proportional set size of the server's tree, in KB: shared
// pages divided among the processes that map them, so PostgreSQL's
// shared_buffers count once where RSS counts them in every backend
// (/proc/PID/smaps_rollup). Reading it walks each process's page tables
// under its memory map lock, milliseconds for a server with a large buffer
// pool, so the sampler reads it once, after the window's last snapshot,
// never inside a timed one. A process whose smaps_rollup cannot
// be read makes the whole sum unknown (an error), never a part.
func (r *Reader) PSS() (uint64, error) {
	if r.spec.ServerPID <= 0 {
		return 0, fmt.Errorf("no server process")
	}
	procs, err := r.fs.AllProcs()
	if err != nil {
		return 0, fmt.Errorf("list processes in %s: %w", r.spec.Roots.Proc, err)
	}
	children := map[int][]int{}
	for _, p := range procs {
		ps, err := p.Stat()
		if err != nil {
			continue // exited since the listing
		}
		children[ps.PPID] = append(children[ps.PPID], p.PID)
	}
	var kb uint64
	queue := []int{r.spec.ServerPID}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		p, err := r.fs.Proc(pid)
		if err != nil {
			return 0, fmt.Errorf("server process %d: %w", pid, err)
		}
		sm, err := p.ProcSMapsRollup()
		if err != nil {
			return 0, fmt.Errorf("PSS of server process %d: %w", pid, err)
		}
		kb += sm.Pss / 1024
		queue = append(queue, children[pid]...)
	}
	return kb, nil
}

// TreeCPU is the CPU time (user+system, reaped children included, in
// seconds) of each process tree rooted at pids, from one listing of the
// processes: what a plan reads of its idle servers around another
// server's measured slice. A root that is gone has no entry.
func TreeCPU(roots host.Roots, pids ...int) (map[int]float64, error) {
	fs, err := procfs.NewFS(roots.Proc)
	if err != nil {
		return nil, fmt.Errorf("open procfs at %s: %w", roots.Proc, err)
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("list processes in %s: %w", roots.Proc, err)
	}
	cpu := make(map[int]float64, len(procs))
	children := map[int][]int{}
	for _, p := range procs {
		ps, err := p.Stat()
		if err != nil {
			continue
		}
		cpu[p.PID] = float64(int64(ps.UTime)+int64(ps.STime)+int64(ps.CUTime)+int64(ps.CSTime)) / 100 // USER_HZ
		children[ps.PPID] = append(children[ps.PPID], p.PID)
	}
	out := map[int]float64{}
	for _, root := range pids {
		if _, ok := cpu[root]; !ok {
			continue
		}
		var sum float64
		for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
			sum += cpu[queue[0]]
			queue = append(queue, children[queue[0]]...)
		}
		out[root] = sum
	}
	return out, nil
}

// readTree sums the CPU and RSS of the server process and its descendants
// (PostgreSQL's backends). utime+stime+cutime+cstime over the tree stays
// continuous when a child exits: its time moves into its parent's cutime.
func (r *Reader) readTree(s *Snapshot) error {
	procs, err := r.fs.AllProcs()
	if err != nil {
		return fmt.Errorf("list processes in %s: %w", r.spec.Roots.Proc, err)
	}
	stats := make(map[int]procfs.ProcStat, len(procs))
	children := map[int][]int{}
	for _, p := range procs {
		ps, err := p.Stat()
		if err != nil {
			continue // exited since the listing
		}
		stats[p.PID] = ps
		children[ps.PPID] = append(children[ps.PPID], p.PID)
	}
	if _, ok := stats[r.spec.ServerPID]; !ok {
		return fmt.Errorf("server process %d is gone", r.spec.ServerPID)
	}
	queue := []int{r.spec.ServerPID}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		ps := stats[pid]
		s.ServerCPU += float64(int64(ps.UTime)+int64(ps.STime)+int64(ps.CUTime)+int64(ps.CSTime)) / r.userHZ
		s.ServerRSS += uint64(ps.RSS) * r.pageKB
		s.ServerProc++
		queue = append(queue, children[pid]...)
	}
	return nil
}
