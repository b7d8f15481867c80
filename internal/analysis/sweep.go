package analysis

import (
	"math"
	"sort"

	"github.com/qpslab/qpslab/internal/result"
)

// SweepMetrics are the figures a concurrency sweep is read by, as the
// seeds tabulate them (the registry's metrics with a Sweep place, in its
// order): events/s and QPS, the response times (p95, p99 and the median),
// and how fairly the connections were served.
func SweepMetrics() []string {
	var ms []result.Metric
	for _, m := range result.All() {
		if m.Sweep > 0 {
			ms = append(ms, m)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Sweep < ms[j].Sweep })
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// Sweep is one test over the thread (client) counts its labels ran at, as
// the seeds tabulate a concurrency sweep: for each metric, a table of
// labels (rows) by thread counts (columns), the median over repeats; NaN
// where a label did not run a thread count or its runs lack the figure.
// Metrics no run has are left out.
type Sweep struct {
	Test       string        `json:"test"`
	Conditions string        `json:"conditions"`
	Threads    []int         `json:"threads"`
	Labels     []string      `json:"labels"`
	Metrics    []string      `json:"metrics"`
	Values     [][][]float64 `json:"values"` // [metric][label][thread count]
	// Cut marks the cells whose tails cannot be trusted (result.TailsCut:
	// starved connections, slices shorter than their waits), [label][thread
	// count]: their response times are shown, and not called.
	Cut [][]bool `json:"cut,omitempty"`
}

// MinSweep is how many thread counts make a test a sweep.
const MinSweep = 2

// Sweeps finds the tests the sets ran at MinSweep thread counts or more
// (under the same conditions) and tabulates each, in the suites' order.
func Sweeps(sets []Set) []Sweep {
	type tk struct{ test, cond string }
	threads := map[tk]map[int]bool{}
	order := map[tk]int{}
	var keys []tk
	for _, s := range sets {
		for _, r := range s.Runs {
			if !r.Comparable() {
				continue
			}
			k := tk{r.Test, r.LabelConditions()}
			if threads[k] == nil {
				threads[k] = map[int]bool{}
				keys = append(keys, k)
				order[k] = r.Step
			}
			threads[k][r.Threads] = true
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return order[keys[i]] < order[keys[j]] })
	var out []Sweep
	for _, k := range keys {
		if len(threads[k]) < MinSweep {
			continue
		}
		sw := Sweep{Test: k.test, Conditions: k.cond}
		for t := range threads[k] {
			sw.Threads = append(sw.Threads, t)
		}
		sort.Ints(sw.Threads)
		anyCut := false
		cut := make([][]bool, len(sets))
		for li, s := range sets {
			sw.Labels = append(sw.Labels, s.Label)
			cut[li] = make([]bool, len(sw.Threads))
			for ti, t := range sw.Threads {
				var runs []result.Run
				for _, r := range s.Runs {
					if r.Comparable() && r.Test == k.test && r.Threads == t && r.LabelConditions() == k.cond {
						runs = append(runs, r)
					}
				}
				cut[li][ti] = tailCut(runs)
				anyCut = anyCut || cut[li][ti]
			}
		}
		if anyCut {
			sw.Cut = cut
		}
		for _, name := range SweepMetrics() {
			m, ok := result.Lookup(name)
			if !ok {
				continue
			}
			table := make([][]float64, len(sets))
			has := false
			for li, s := range sets {
				table[li] = make([]float64, len(sw.Threads))
				for ti, t := range sw.Threads {
					var runs []result.Run
					for _, r := range s.Runs {
						if r.Comparable() && r.Test == k.test && r.Threads == t && r.LabelConditions() == k.cond {
							runs = append(runs, r)
						}
					}
					table[li][ti] = medianOf(runs, m) // NaN without runs or the figure
					has = has || !math.IsNaN(table[li][ti])
				}
			}
			if has {
				sw.Metrics = append(sw.Metrics, name)
				sw.Values = append(sw.Values, table)
			}
		}
		out = append(out, sw)
	}
	return out
}
