package result

import (
	"fmt"
	"time"
)

// The fairness figures a run's tails are judged by (the engine records
// them: engine.Fairness).
const (
	FigureStarved   = "starved"    // connections that completed nothing in the window
	FigureStarved1s = "starved_1s" // the most that completed nothing in one second (a run of slices: in one slice)
)

// TailsCut says whether run r's latency tails and per-connection figures
// cannot be trusted, and why ("" when they can), with the connections
// that completed nothing in a window: a connection that completed nothing
// in the run's window had every event it waited on cut off by the
// window's ends (a whole run with a warm-up drops what is in flight at
// its end); in a run of slices, one that completed nothing in a slice
// (starved_1s), or a p99 of a quarter of the slice or more (TailShare), says the slices are
// shorter than the waits they must hold: each slice starts with nothing
// queued and ends by draining its queue, so a wait of a slice's length is
// mostly start and end. This is the one rule: the plan's warning line
// and compare's mark both use it.
func TailsCut(r Run) (starved int, why string) { return TailsCutIn(r, r.SliceLength()) }

// TailsCutIn is TailsCut of a run measured in slices of slice (0: not
// sliced).
func TailsCutIn(r Run, slice time.Duration) (starved int, why string) {
	f := r.Totals.Figures
	n := int(f[FigureStarved])
	if n > 0 {
		return n, fmt.Sprintf("%d of %d connections completed nothing in the window", n, r.Threads)
	}
	if slice <= 0 {
		return 0, ""
	}
	if m := int(f[FigureStarved1s]); m > 0 {
		return m, fmt.Sprintf("%d of %d connections completed nothing in a slice of %s", m, r.Threads, slice.Round(time.Millisecond))
	}
	if p99 := time.Duration(r.Totals.Response.P99 * float64(time.Microsecond)); p99 >= slice/TailShare {
		return 0, fmt.Sprintf("p99 %s is a quarter of its slices' %s or more", p99.Round(time.Millisecond), slice.Round(time.Millisecond))
	}
	return 0, ""
}

// TailShare: a run of slices whose p99 is 1/TailShare of a slice or more
// has its tails cut. Each slice starts with every connection sending at
// once and ends by waiting for the events in flight while the load falls
// away (engine's keepInFlight); an event that waits a quarter of the slice
// spends much of it in one or the other. At 1,024 connections on a 2-core
// VM, 0.25 s slices gave a p99 of 358 ms (pool-of-threads) and 552 ms
// (one thread per connection) against 532 ms and 809 ms run whole
// (docs/perf.md, "Slices that keep the tail").
const TailShare = 4

// SliceLength is the length of the slices a run of slices (PairedSlices)
// was measured in, its windows' time over its rounds; 0 for another run.
func (r Run) SliceLength() time.Duration {
	if r.Pairing != PairedSlices || len(r.Rounds) == 0 || r.Duration <= 0 {
		return 0
	}
	return time.Duration(r.Duration / float64(len(r.Rounds)) * float64(time.Second))
}
