package plan

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/metrics"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/stacks"
)

// window is everything that opens and closes with a run's measured
// window: the hardware sampler, the server's counters, and, when asked
// for, stack captures (--pmp) and perf (--perf). Each part that cannot be
// made is left out with a note; the run goes on. It is an engine.Window.
type window struct {
	hw    *metrics.Sampler
	ctr   *counters.Reader
	pmp   *stacks.PMP
	perf  *stacks.Perf
	notes []string // the hardware sampler's
	more  []string // the rest's, logged
	// the other servers of the plan, idle while this window is measured:
	// their CPU time when it opened, and their CPU over it
	idle  []int
	idle0 map[int]float64
	t0    time.Time
	idleP float64 // % of one CPU, summed; -1 unknown
	// rate, if set, is the ops per second over the sampler's window, for
	// the cost per op where the window is wider than the measured time
	// (a slice's, opened and closed on a quiet server around it).
	rate float64
	// remote: the server runs on another host (measure.remote).
	remote bool
}

// window makes the window of one run on the server m measures; idle are
// the plan's other servers, whose CPU over the window is measured too.
func (p *Runner) window(ctx context.Context, m measure, idle []int) *window {
	w := &window{idle: idle, idleP: -1, remote: m.remote}
	if len(idle) == 0 {
		w.idleP = 0
	}
	var err error
	if w.hw, err = metrics.NewSampler(metrics.Spec{Roots: host.Real, ServerPID: m.serverPID, ClientPID: os.Getpid(), Disks: m.disks}); err != nil {
		w.hw = nil
		w.notes = append(append([]string(nil), m.notes...), "no hardware metrics: "+err.Error())
	} else {
		w.notes = append([]string(nil), m.notes...)
	}
	if w.ctr, err = counters.Open(ctx, m.counters, m.ep, p.Client.TCP, p.Counters); err != nil {
		w.ctr = nil
		w.more = append(w.more, "no server counters: "+err.Error())
	}
	if p.PMP > 0 {
		if w.pmp, err = stacks.NewPMP(ctx, m.serverPID, p.PMP, ""); err != nil {
			w.pmp = nil
			w.more = append(w.more, err.Error())
		}
	}
	if p.perfs() {
		w.perf = stacks.NewPerf(ctx, m.serverPID)
	}
	return w
}

// Open opens every part: the hardware sampler first, so that its first
// snapshot marks the window's start.
func (w *window) Open() {
	if len(w.idle) > 0 {
		w.idle0, _ = metrics.TreeCPU(host.Real, w.idle...)
		w.t0 = time.Now()
	}
	w.hw.Open()
	w.ctr.Open()
	w.pmp.Open()
	w.perf.Open()
}

// Close closes every part: no new stack capture; the hardware sampler,
// whose last snapshot marks the window's end; then, once a capture in
// progress has ended (its threads go on), the server's counters, which a
// stopped thread would make wait; perf.
func (w *window) Close() {
	w.pmp.Stop()
	w.hw.Close()
	w.pmp.Close()
	w.ctr.Close()
	w.perf.Close()
	if len(w.idle) > 0 && w.idle0 != nil {
		now, err := metrics.TreeCPU(host.Real, w.idle...)
		if dt := time.Since(w.t0).Seconds(); err == nil && dt > 0 {
			sum := 0.0
			for pid, c0 := range w.idle0 {
				if c1, ok := now[pid]; ok {
					sum += c1 - c0
				}
			}
			w.idleP = 100 * max(sum, 0) / dt
		}
	}
}

// opsOver sets the window's rate from the ops measured inside it: a
// slice's window is opened before its measured events start and closed
// after they end, so its cost per op is over the window's own length.
func (w *window) opsOver(ops float64) {
	if secs := w.hw.Seconds(); secs > 0 && ops > 0 {
		w.rate = ops / secs
	}
}

// idleCPU is the CPU the plan's other servers used while the window was
// open (% of one CPU, summed over them): 0 with none, -1 when it could not
// be read.
func (w *window) idleCPU() float64 { return w.idleP }

// finish puts what the window measured into res: the hardware cost per
// op (o/s is the run's reported figure in unit op, perSec its per-second
// series), the server's counters, the stacks. It releases the counters'
// connection.
func (w *window) finish(res *result.Run, op string, perSec []float64, logf func(string, ...any)) {
	defer w.ctr.Release()
	rate := res.Totals.Reported
	if w.rate > 0 {
		rate = w.rate
	}
	res.HW = w.hw.Result(rate, op, perSec, w.notes)
	if res.HW != nil {
		res.HW.OpsPerSec = res.Totals.Reported // o/s is the run's figure; the cost per op is over the window's ops
		res.HW.Remote = w.remote
	}
	for _, n := range w.more {
		logf("%s", n)
		if res.HW != nil {
			res.HW.Notes = append(res.HW.Notes, n)
		}
	}
	if sc := w.ctr.Result(); sc != nil && res.HW != nil {
		res.HW.Server = sc
		for _, n := range sc.Notes {
			logf("server counters: %s", n)
		}
	}
	for _, s := range []*result.Stacks{w.pmp.Result(), w.perf.Result()} {
		if s == nil {
			continue
		}
		res.Stacks = append(res.Stacks, *s)
		switch s.Source {
		case "pmp":
			logf("pmp: %d capture(s) by %s, %d samples; each stopped the server up to %.0f ms (mean %.0f ms)", s.Captures, s.Tool, s.Samples(), s.PauseMaxMs, s.PauseMeanMs)
		case "perf":
			logf("perf: %d on-CPU sample(s)", s.Captures)
		}
		for _, n := range s.Notes {
			logf("%s: %s", s.Source, n)
		}
	}
}

// release frees what the window holds when its run never started.
func (w *window) release() { w.ctr.Release() }

// stackParams are the run params that say stacks were taken during its
// window: they cost the server time, so runs with them are repeats only of
// runs with the same (result.Run.Conditions).
func (p *Runner) stackParams(params map[string]string) {
	if p.PMP > 0 {
		params["pmp"] = strconv.FormatFloat(p.PMP.Seconds(), 'g', -1, 64)
	}
	if p.perfs() {
		params["perf"] = fmt.Sprint(stacks.PerfHz)
	}
}
