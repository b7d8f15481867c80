package analysis

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/qpslab/qpslab/internal/result"
)

// StepTable is one metric of every label at every step of a suite run in
// steps (the Insert Benchmark): labels as rows, steps as columns, as the
// reference's throughput tables (tput.tab, tputr.tab, iput.tab) print them.
type StepTable struct {
	Metric  string `json:"metric"`
	Threads int    `json:"threads"`
	// Conditions are the runs' (result.Run.LabelConditions): runs under other
	// conditions (another table size, pacing) are in a table of their own.
	Conditions string   `json:"conditions"`
	Mixed      bool     `json:"mixed"` // the sets have tables under other conditions too
	Steps      []string `json:"steps"`
	Units      []string `json:"units"`
	Labels     []string `json:"labels"`
	// Values[label][step]: the median over repeats; NaN where the label
	// has no run of the step.
	Values [][]float64 `json:"values"`
	// Missed[label][step]: a run of it missed a goal it was judged by (the
	// insert SLA), named in MissedWhat.
	Missed     [][]bool   `json:"missed"`
	MissedWhat [][]string `json:"missed_what"`
	// Targets[step] is the goal a step is judged by, where it has one
	// (the read+write steps' insert rate: clients × rate); NaN otherwise.
	Targets []float64 `json:"targets"`
	// Best[step] is the label with the column's best value among those that
	// missed no goal (-1 for none), as the reference colours its columns.
	Best []int `json:"best"`
}

// Steps builds a StepTable of metric m per thread count: the steps the
// sets ran, in their suite's order, each label's median. Only steps that
// have m in some run are kept; with targeted, only steps judged against a
// target.
func Steps(sets []Set, m result.Metric, targeted bool) ([]StepTable, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("name at least one label")
	}
	type sk struct {
		test    string
		threads int
		cond    string
	}
	type tk struct {
		threads int
		cond    string
	}
	per := make([]map[sk][]result.Run, len(sets))
	order := map[string]int{}
	unit := map[sk]string{}
	target := map[sk]float64{}
	groups := map[tk]bool{}
	for i, s := range sets {
		per[i] = map[sk][]result.Run{}
		for _, r := range s.Runs {
			if !r.Comparable() {
				continue
			}
			if _, ok := m.Of(r); !ok {
				continue
			}
			if _, err := strconv.ParseFloat(r.Params["insert_rate"], 64); targeted && err != nil {
				continue
			}
			k := sk{r.Test, r.Threads, r.LabelConditions()}
			per[i][k] = append(per[i][k], r)
			order[r.Test] = r.Step
			groups[tk{r.Threads, k.cond}] = true
			if unit[k] == "" {
				unit[k] = m.Unit
				if unit[k] == "" {
					unit[k] = r.Totals.ReportedUnit
				}
			}
			if rate, err := strconv.ParseFloat(r.Params["insert_rate"], 64); err == nil {
				target[k] = rate * float64(r.Threads)
			}
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no results with %s", m.Name)
	}
	var gs []tk
	for g := range groups {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(a, b int) bool {
		if gs[a].threads != gs[b].threads {
			return gs[a].threads < gs[b].threads
		}
		return gs[a].cond < gs[b].cond
	})
	var out []StepTable
	for _, g := range gs {
		thr := g.threads
		t := StepTable{Metric: m.Name, Threads: thr, Conditions: g.cond, Mixed: len(gs) > 1}
		for test := range order {
			for i := range sets {
				if len(per[i][sk{test, thr, g.cond}]) > 0 {
					t.Steps = append(t.Steps, test)
					break
				}
			}
		}
		sort.Slice(t.Steps, func(a, b int) bool {
			if order[t.Steps[a]] != order[t.Steps[b]] {
				return order[t.Steps[a]] < order[t.Steps[b]]
			}
			return t.Steps[a] < t.Steps[b]
		})
		for _, st := range t.Steps {
			k := sk{st, thr, g.cond}
			t.Units = append(t.Units, unit[k])
			tg, ok := target[k]
			if !ok {
				tg = math.NaN()
			}
			t.Targets = append(t.Targets, tg)
		}
		for i, s := range sets {
			t.Labels = append(t.Labels, s.Label)
			vals := make([]float64, len(t.Steps))
			missed := make([]bool, len(t.Steps))
			what := make([]string, len(t.Steps))
			for j, st := range t.Steps {
				runs := per[i][sk{st, thr, g.cond}]
				vals[j] = medianOf(runs, m)
				missed[j], what[j] = missedGoal(runs)
			}
			t.Values = append(t.Values, vals)
			t.Missed = append(t.Missed, missed)
			t.MissedWhat = append(t.MissedWhat, what)
		}
		for j := range t.Steps {
			best := -1
			for i := range t.Labels {
				v := t.Values[i][j]
				if math.IsNaN(v) || t.Missed[i][j] {
					continue
				}
				if best < 0 || (m.HigherIsBetter && v > t.Values[best][j]) || (!m.HigherIsBetter && v < t.Values[best][j]) {
					best = i
				}
			}
			t.Best = append(t.Best, best)
		}
		out = append(out, t)
	}
	return out, nil
}

// missedGoal says whether one of runs failed a verdict, and which.
func missedGoal(runs []result.Run) (bool, string) {
	for _, r := range runs {
		for _, v := range r.Verdicts {
			if !v.OK {
				return true, v.Name
			}
		}
	}
	return false, ""
}
