package analysis

import (
	"math"
	"sort"

	"github.com/qpslab/qpslab/internal/result"
)

// SweepMetrics are the figures a concurrency sweep is read by, as the
// seeds tabulate them (the registry's metrics with a Sweep place, in its
// order): throughput, the 95th percentile response time, and how fairly the
// connections were served.
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

// Sweep is one test over the thread counts its labels ran at: for each
// metric, a table of thread counts (rows) by labels (columns), the median
// over repeats; NaN where a label did not run a thread count.
type Sweep struct {
	Test       string        `json:"test"`
	Conditions string        `json:"conditions"`
	Threads    []int         `json:"threads"`
	Labels     []string      `json:"labels"`
	Metrics    []string      `json:"metrics"`
	Values     [][][]float64 `json:"values"` // [metric][thread row][label]
}

// Sweeps finds the tests the sets ran at three thread counts or more and
// tabulates each (in the suites' order).
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
			k := tk{r.Test, r.Conditions()}
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
		if len(threads[k]) < 3 {
			continue
		}
		sw := Sweep{Test: k.test, Conditions: k.cond, Metrics: SweepMetrics()}
		for t := range threads[k] {
			sw.Threads = append(sw.Threads, t)
		}
		sort.Ints(sw.Threads)
		for _, s := range sets {
			sw.Labels = append(sw.Labels, s.Label)
		}
		for _, name := range sw.Metrics {
			m, err := result.MetricNamed(name)
			if err != nil {
				continue
			}
			table := make([][]float64, len(sw.Threads))
			for ti, t := range sw.Threads {
				table[ti] = make([]float64, len(sets))
				for li, s := range sets {
					var runs []result.Run
					for _, r := range s.Runs {
						if r.Comparable() && r.Test == k.test && r.Threads == t && r.Conditions() == k.cond {
							runs = append(runs, r)
						}
					}
					table[ti][li] = medianOf(runs, m)
					if len(runs) == 0 {
						table[ti][li] = math.NaN()
					}
				}
			}
			sw.Values = append(sw.Values, table)
		}
		out = append(out, sw)
	}
	return out
}
