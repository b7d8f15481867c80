package analysis

import (
	"sort"

	"github.com/qpslab/qpslab/internal/result"
)

// TailWarning is one label's runs of one test (at one thread count, under
// one set of conditions) whose latency tails cannot be trusted
// (result.TailsCut): connections that completed nothing in the window, or
// slices shorter than the waits they must hold. Compare names each in one
// line, and calls none of the test's tail figures (p95, p99, the median,
// the largest) for that label: Sweep.Cut.
type TailWarning struct {
	Test       string `json:"test"`
	Threads    int    `json:"threads"`
	Conditions string `json:"conditions,omitempty"`
	Label      string `json:"label"`
	Runs       int    `json:"runs"`    // the runs whose tails are cut
	Of         int    `json:"of"`      // of the label's runs of the test
	Starved    int    `json:"starved"` // the most connections that completed nothing in a window (a slice), over those runs
	Why        string `json:"why"`     // the first such run's reason
}

// Tails are the sets' tests whose tails cannot be trusted, per label, in
// the sets' order and each set's tests' order.
func Tails(sets []Set) []TailWarning {
	type tk struct {
		test    string
		threads int
		cond    string
	}
	var out []TailWarning
	for _, s := range sets {
		at := map[tk]int{}
		var all []TailWarning
		for _, r := range s.Runs {
			if !r.Comparable() {
				continue
			}
			k := tk{r.Test, r.Threads, r.LabelConditions()}
			i, ok := at[k]
			if !ok {
				i = len(all)
				at[k] = i
				all = append(all, TailWarning{Test: r.Test, Threads: r.Threads, Conditions: k.cond, Label: s.Label})
			}
			w := &all[i]
			w.Of++
			n, why := result.TailsCut(r)
			if why == "" {
				continue
			}
			w.Runs++
			w.Starved = max(w.Starved, n)
			if w.Why == "" {
				w.Why = why
			}
		}
		for _, w := range all {
			if w.Runs > 0 {
				out = append(out, w)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Test != out[j].Test {
			return out[i].Test < out[j].Test
		}
		return out[i].Threads < out[j].Threads
	})
	return out
}

// tailCut says whether any of runs has its tails cut (result.TailsCut).
func tailCut(runs []result.Run) bool {
	for _, r := range runs {
		if _, why := result.TailsCut(r); why != "" {
			return true
		}
	}
	return false
}
