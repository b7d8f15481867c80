package metrics

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/qpslab/qpslab/internal/result"
)

// Thresholds of the run flags.
const (
	// DriftThreshold: the per-second mean CPU frequency moved by more than
	// this fraction of its highest value during the window.
	DriftThreshold = 0.05
	// FollowR: QPS "follows" the frequency when their per-second Pearson
	// correlation is at least this.
	FollowR = 0.5
	// StealThreshold: mean CPU steal over the window, % of all CPUs.
	StealThreshold = 1.0
)

// Window is what Summarize needs beyond the snapshots.
type Window struct {
	From, To  time.Time // the measured window; snapshots outside it do not count
	OpsPerSec float64   // the reported figure: QPS, rows/s (load) or Krows/s (scan)
	Op        string    // statement, row or Krow
	Disks     []string
	Skipped   int      // snapshots that could not be read
	Notes     []string // what could not be measured
}

// Summarize averages the snapshots taken inside the window and normalises
// them per operation.
//
// Averages come from the first and the last snapshot's counters, so a missed
// or unreadable second changes nothing: vmstat-style tooling averages
// per-interval lines, and a missing or header line counted as zero biases it
// low (docs/reference.md §6, about 4.6 %). The per-second series keeps
// each interval with its own length.
func Summarize(snaps []Snapshot, w Window) *result.HW {
	hw := &result.HW{Op: w.Op, OpsPerSec: w.OpsPerSec, Device: w.Disks, NoDisk: len(w.Disks) == 0, Skipped: w.Skipped, Notes: w.Notes}
	var in []Snapshot
	for _, s := range snaps {
		if !s.At.Before(w.From) && !s.At.After(w.To) {
			in = append(in, s)
		}
	}
	hw.Samples = len(in)
	if len(in) < 2 {
		hw.Notes = append(hw.Notes, fmt.Sprintf("%d snapshot(s) in a %.1f s window: too short to measure (it needs two)", len(in), w.To.Sub(w.From).Seconds()))
		return hw
	}
	first, last := in[0], in[len(in)-1]
	hw.CPUs = last.CPUs
	hw.Avg = interval(first, last, w.From, len(w.Disks) > 0)
	hw.Seconds = hw.Avg.Dur
	for i := 1; i < len(in); i++ {
		hw.Series = append(hw.Series, interval(in[i-1], in[i], w.From, len(w.Disks) > 0))
	}
	hw.Avg.ServerRSS = 0
	for _, s := range in {
		hw.Avg.ServerRSS = max(hw.Avg.ServerRSS, s.ServerRSS)
	}
	freqs(hw, in)
	hw.Avg.FreqMHz = 0
	for _, f := range hw.FreqMHz {
		hw.Avg.FreqMHz += f / float64(len(hw.FreqMHz))
	}

	perOp(hw, w.OpsPerSec, len(w.Disks) > 0)
	return hw
}

// perOp normalises hw's averages per operation at ops operations per
// second: the reference's cpu/o, cs/o, r/o, rKB/o, wKB/o (the disk's only
// when it was measured) and CPU µs per op.
// PerOp sets hw's per-op figures at opsPerSec from its averages: the cost
// of a window measured by one process (the server's host's agent in a
// spread run) of the ops another counted.
func PerOp(hw *result.HW, opsPerSec float64) {
	hw.OpsPerSec = opsPerSec
	perOp(hw, opsPerSec, !hw.NoDisk)
}

func perOp(hw *result.HW, ops float64, disk bool) {
	if ops <= 0 {
		return
	}
	a := hw.Avg
	hw.CPUPerOp = (a.User + a.System) / ops
	hw.HostCPUUsOp = (a.User + a.System) / 100 * float64(hw.CPUs) * 1e6 / ops
	hw.ServerCPUUsOp = a.ServerCPU / 100 * 1e6 / ops
	hw.ClientCPUUsOp = a.ClientCPU / 100 * 1e6 / ops
	hw.CSPerOp = a.CS / ops
	if disk {
		hw.ReadsPerOp = a.Reads / ops
		hw.ReadKBPerOp = a.ReadKB / ops
		hw.WriteKBPerOp = a.WriteKB / ops
	}
}

// Merge makes one window's figures of parts, the windows of one run laid
// end to end (a test's slices, measured between other servers' slices):
// each average weighted by its window's seconds (so a rate is the parts'
// counts over their summed time, as Summarize's first-to-last average
// is), the largest RSS and PSS, the series one after the other, the
// parts' flags and notes once each; then the cost per op at opsPerSec (the
// merged run's reported figure, in unit op). A part that measured nothing
// (nil, or a window too short for two snapshots) adds only its notes; the
// server's counters (HW.Server) are the caller's to merge.
func Merge(parts []*result.HW, opsPerSec float64, op string) *result.HW {
	var out *result.HW
	var wsum float64
	seenNote, seenFlag := map[string]bool{}, map[string]bool{}
	var freqW float64
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = &result.HW{Op: op, OpsPerSec: opsPerSec, NoDisk: true, NoCPUTime: p.NoCPUTime, FreqMinMHz: math.Inf(1)}
		}
		out.Remote = out.Remote || p.Remote
		for _, n := range p.Notes {
			if !seenNote[n] {
				seenNote[n] = true
				out.Notes = append(out.Notes, n)
			}
		}
		for _, f := range p.Flags {
			if !seenFlag[f.Name] {
				seenFlag[f.Name] = true
				out.Flags = append(out.Flags, f)
			}
		}
		out.Skipped += p.Skipped
		if p.Samples < 2 || p.Avg.Dur <= 0 {
			continue
		}
		w := p.Avg.Dur
		for _, s := range p.Series {
			s.T += out.Seconds
			out.Series = append(out.Series, s)
		}
		out.Seconds += p.Seconds
		out.Samples += p.Samples
		out.CPUs = p.CPUs
		if !p.NoDisk {
			out.NoDisk, out.Device = false, p.Device
		}
		a, b := &out.Avg, p.Avg
		for _, f := range [][2]*float64{
			{&a.User, &b.User}, {&a.System, &b.System}, {&a.IOWait, &b.IOWait}, {&a.Steal, &b.Steal}, {&a.Idle, &b.Idle},
			{&a.CS, &b.CS}, {&a.Intr, &b.Intr}, {&a.Reads, &b.Reads}, {&a.ReadKB, &b.ReadKB}, {&a.Writes, &b.Writes},
			{&a.WriteKB, &b.WriteKB}, {&a.Util, &b.Util}, {&a.ServerCPU, &b.ServerCPU}, {&a.ClientCPU, &b.ClientCPU},
		} {
			*f[0] += w * *f[1]
		}
		a.Dur += w
		a.ServerRSS, a.ServerPSS, a.ServerProc = max(a.ServerRSS, b.ServerRSS), max(a.ServerPSS, b.ServerPSS), max(a.ServerProc, b.ServerProc)
		if b.FreqMHz > 0 {
			a.FreqMHz += w * b.FreqMHz
			freqW += w
		}
		if len(p.FreqMHz) > 0 {
			if out.FreqMHz == nil {
				out.FreqMHz = make([]float64, len(p.FreqMHz))
			}
			for i := range out.FreqMHz {
				if i < len(p.FreqMHz) {
					out.FreqMHz[i] += w * p.FreqMHz[i]
				}
			}
			out.FreqMinMHz, out.FreqMaxMHz = math.Min(out.FreqMinMHz, p.FreqMinMHz), math.Max(out.FreqMaxMHz, p.FreqMaxMHz)
		}
		wsum += w
	}
	if out == nil {
		return nil
	}
	if math.IsInf(out.FreqMinMHz, 1) {
		out.FreqMinMHz = 0
	}
	if wsum > 0 {
		a := &out.Avg
		for _, f := range []*float64{&a.User, &a.System, &a.IOWait, &a.Steal, &a.Idle, &a.CS, &a.Intr, &a.Reads, &a.ReadKB,
			&a.Writes, &a.WriteKB, &a.Util, &a.ServerCPU, &a.ClientCPU} {
			*f /= wsum
		}
		if a.Reads > 0 {
			a.RareqSz = a.ReadKB / a.Reads
		}
		if a.Writes > 0 {
			a.WareqSz = a.WriteKB / a.Writes
		}
		for i := range out.FreqMHz {
			out.FreqMHz[i] /= wsum
		}
		perOp(out, opsPerSec, !out.NoDisk)
	}
	if freqW > 0 {
		out.Avg.FreqMHz /= freqW
	}
	return out
}

// interval is the rates between two snapshots.
func interval(a, b Snapshot, origin time.Time, disk bool) result.HWSecond {
	dt := b.At.Sub(a.At).Seconds()
	out := result.HWSecond{T: a.At.Sub(origin).Seconds(), Dur: dt, ServerRSS: b.ServerRSS, ServerProc: b.ServerProc}
	if dt <= 0 {
		return out
	}
	// vmstat's columns: us = user+nice, sy = system+irq+softirq (guest time
	// is already inside user).
	us := (b.CPU.User + b.CPU.Nice) - (a.CPU.User + a.CPU.Nice)
	sy := (b.CPU.System + b.CPU.IRQ + b.CPU.SoftIRQ) - (a.CPU.System + a.CPU.IRQ + a.CPU.SoftIRQ)
	wa := b.CPU.Iowait - a.CPU.Iowait
	st := b.CPU.Steal - a.CPU.Steal
	id := b.CPU.Idle - a.CPU.Idle
	if tot := us + sy + wa + st + id; tot > 0 {
		out.User, out.System, out.IOWait, out.Steal, out.Idle = 100*us/tot, 100*sy/tot, 100*wa/tot, 100*st/tot, 100*id/tot
	}
	out.CS = float64(b.CS-a.CS) / dt
	out.Intr = float64(b.Intr-a.Intr) / dt
	out.ServerCPU = 100 * (b.ServerCPU - a.ServerCPU) / dt
	out.ClientCPU = 100 * (b.ClientCPU - a.ClientCPU) / dt
	if disk {
		// iostat -x: sectors are 512 bytes in diskstats whatever the
		// device's sector size; request sizes are KB per request.
		r, w := float64(b.Disk.reads-a.Disk.reads), float64(b.Disk.writes-a.Disk.writes)
		rkb, wkb := float64(b.Disk.readSectors-a.Disk.readSectors)/2, float64(b.Disk.writeSectors-a.Disk.writeSectors)/2
		out.Reads, out.ReadKB, out.Writes, out.WriteKB = r/dt, rkb/dt, w/dt, wkb/dt
		if r > 0 {
			out.RareqSz = rkb / r
		}
		if w > 0 {
			out.WareqSz = wkb / w
		}
		// %util of the busiest disk: a sum over a stack's disks could pass 100.
		for i := range b.DiskTicks {
			if i < len(a.DiskTicks) {
				out.Util = max(out.Util, math.Min(100, float64(b.DiskTicks[i]-a.DiskTicks[i])/(dt*1000)*100))
			}
		}
	}
	if len(a.FreqKHz) > 0 && len(a.FreqKHz) == len(b.FreqKHz) {
		out.FreqMHz = (meanKHz(a.FreqKHz) + meanKHz(b.FreqKHz)) / 2 / 1000
	}
	return out
}

func meanKHz(f []uint64) float64 {
	var s float64
	for _, x := range f {
		s += float64(x)
	}
	return s / float64(len(f))
}

// freqs fills the per-CPU means and the range of the per-snapshot means.
func freqs(hw *result.HW, in []Snapshot) {
	n := len(in[0].FreqKHz)
	if n == 0 {
		hw.Notes = append(hw.Notes, "no CPU frequency: this host's cpufreq exposes no scaling_cur_freq (a VM, or cpufreq off)")
		return
	}
	hw.FreqMHz = make([]float64, n)
	hw.FreqMinMHz = math.Inf(1)
	count := 0
	for _, s := range in {
		if len(s.FreqKHz) != n {
			continue
		}
		count++
		for i, f := range s.FreqKHz {
			hw.FreqMHz[i] += float64(f) / 1000
		}
		m := meanKHz(s.FreqKHz) / 1000
		hw.FreqMinMHz, hw.FreqMaxMHz = math.Min(hw.FreqMinMHz, m), math.Max(hw.FreqMaxMHz, m)
	}
	for i := range hw.FreqMHz {
		hw.FreqMHz[i] /= float64(count)
	}
}

// Flag adds the run flags: frequency drift (with whether QPS followed it,
// from perSecond, the measured ops of each second) and CPU steal.
func Flag(hw *result.HW, perSecond []float64) {
	if hw == nil {
		return
	}
	if f := flagDrift(hw, perSecond); f != nil {
		hw.Flags = append(hw.Flags, *f)
	}
	if hw.Samples >= 2 && hw.Avg.Steal >= StealThreshold {
		top := 0.0
		for _, s := range hw.Series {
			top = max(top, s.Steal)
		}
		hw.Flags = append(hw.Flags, result.Flag{Name: "steal", Detail: fmt.Sprintf(
			"CPU steal averaged %.1f%% (%.1f%% in the worst second): the hypervisor gave this VM's CPU time to others, so QPS varies with its neighbours; run on dedicated hardware or repeat and compare medians", hw.Avg.Steal, top)})
	}
}

func flagDrift(hw *result.HW, perSecond []float64) *result.Flag {
	// Each interval's QPS is the mean of the engine's seconds it covers
	// (an interval after a skipped snapshot is two seconds or more).
	var f, q []float64
	qAligned := true
	for _, s := range hw.Series {
		if s.FreqMHz <= 0 {
			continue
		}
		f = append(f, s.FreqMHz)
		from, to := int(math.Floor(s.T)), int(math.Floor(s.T+s.Dur))
		to = max(to, from+1)
		if from < 0 || to > len(perSecond) {
			qAligned = false
			continue
		}
		var sum float64
		for _, x := range perSecond[from:to] {
			sum += x
		}
		q = append(q, sum/float64(to-from))
	}
	if len(f) < 2 {
		return nil
	}
	lo, hi := f[0], f[0]
	for _, x := range f {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if hi <= 0 || (hi-lo)/hi <= DriftThreshold {
		return nil
	}
	d := fmt.Sprintf("mean CPU frequency moved between %.2f and %.2f GHz (%.0f%%) during the window", lo/1000, hi/1000, 100*(hi-lo)/hi)
	if qAligned && len(q) == len(f) && len(q) >= 3 {
		r := stat.Correlation(f, q, nil)
		switch {
		case math.IsNaN(r):
			d += "; QPS was flat"
		case r >= FollowR:
			d += fmt.Sprintf("; QPS followed it (r=%.2f)", r)
		default:
			d += fmt.Sprintf("; QPS did not follow it (r=%.2f)", r)
		}
	}
	d += ": turn boost off and set the performance governor (qpslab host tune)"
	return &result.Flag{Name: "frequency-drift", Detail: d}
}
