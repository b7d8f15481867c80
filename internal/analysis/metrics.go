package analysis

import (
	"fmt"
	"math"
	"path"
	"sort"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// The per-op tables' columns, from the metric registry (result.MetricsOf),
// read when a table is made (the registry fills as packages initialise):
// the seeds' per-op columns in their order (sum_met.sh), the CPU columns in
// honest units, the hardware figures per inserted row of runs that insert
// beside other work (the Insert Benchmark's cpu/i … wKB/i), and the disk's
// request sizes (iostat's rareq-sz and wareq-sz) of runs that report them
// (db_bench's).
func hwMetrics() []result.Metric     { return result.MetricsOf(result.ClassHW) }
func honestMetrics() []result.Metric { return result.MetricsOf(result.ClassCPU) }
func insertMetrics() []result.Metric { return result.MetricsOf(result.ClassInsert) }

// DeviceMetrics are the disk's request sizes, beside MetricNames.
func DeviceMetrics() []result.Metric { return result.MetricsOf(result.ClassDevice) }

// MetricNames, HonestNames, InsertNames and DeviceNames are the columns'
// headers.
func MetricNames() []string { return names(hwMetrics()) }
func HonestNames() []string { return names(honestMetrics()) }
func InsertNames() []string { return names(insertMetrics()) }
func DeviceNames() []string { return names(DeviceMetrics()) }

func names(ms []result.Metric) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// MetricRow is one label's hardware cost for one test at one thread count:
// the median over its repeats of each figure.
type MetricRow struct {
	Label  string    `json:"label"`
	N      int       `json:"n"`      // results with hardware metrics
	Abs    []float64 `json:"abs"`    // MetricNames()
	Honest []float64 `json:"honest"` // HonestNames()
	// Insert are InsertNames, for runs that insert beside other work;
	// empty for others.
	Insert []float64 `json:"insert,omitempty"`
	// Device are DeviceNames, for runs that report them; empty for others.
	Device []float64 `json:"device,omitempty"`
	Op     string    `json:"op"`
	// Verdicts and HonestVerdicts judge Abs and Honest against the first
	// row's (Judge: paired round by round where the runs' slices carry
	// them, else by repeat); empty for the first row.
	Verdicts       []Verdict `json:"verdicts,omitempty"`
	HonestVerdicts []Verdict `json:"honest_verdicts,omitempty"`
}

// MetricTable is the table of one test at one thread count; the first row
// is the base of the relative values.
type MetricTable struct {
	Test    string `json:"test"`
	Threads int    `json:"threads"`
	// Conditions are the runs' (result.Run.LabelConditions); Mixed says the
	// test has tables under other conditions too, so reports name them.
	Conditions string      `json:"conditions"`
	Mixed      bool        `json:"mixed"`
	Rows       []MetricRow `json:"rows"`
	// Server are the server's figures beside the OS's: its memory, its
	// counters per op, its levels, one line each with a value per row;
	// HiddenServer counts the counters left out as zero in every row.
	Server       []CounterLine `json:"server,omitempty"`
	HiddenServer int           `json:"hidden_server,omitempty"`
}

// Metrics builds a table per test (matching the glob testPattern; "" for
// all) and thread count that the first set has, in the first set's order.
func Metrics(sets []Set, testPattern string) ([]MetricTable, error) {
	return metrics(sets, testPattern, CounterChoice{})
}

func metrics(sets []Set, testPattern string, choice CounterChoice) ([]MetricTable, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("name at least one label")
	}
	if testPattern != "" {
		if _, err := path.Match(testPattern, ""); err != nil {
			return nil, fmt.Errorf("--test %q is not a valid pattern: %v", testPattern, err)
		}
	}
	per := make([]map[key][]result.Run, len(sets))
	var keys []key
	step := map[key]int{}
	for i, s := range sets {
		per[i] = map[key][]result.Run{}
		for _, r := range s.Runs {
			if !r.Comparable() || !r.HW.Measured() {
				continue
			}
			if ok, _ := path.Match(testPattern, r.Test); testPattern != "" && !ok {
				continue
			}
			k := key{r.Test, r.Threads, r.LabelConditions()}
			if i == 0 && len(per[0][k]) == 0 {
				keys = append(keys, k)
				step[k] = r.Step
			}
			per[i][k] = append(per[i][k], r)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s has no results with hardware metrics%s", sets[0].Label, map[bool]string{true: " for --test " + testPattern, false: ""}[testPattern != ""])
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if si, sj := step[keys[i]], step[keys[j]]; si != sj {
			return si < sj
		}
		return keys[i].threads < keys[j].threads
	})
	seen := map[key]int{}
	for _, k := range keys {
		seen[key{k.test, k.threads, ""}]++
	}
	var out []MetricTable
	for _, k := range keys {
		t := MetricTable{Test: k.test, Threads: k.threads, Conditions: k.cond, Mixed: seen[key{k.test, k.threads, ""}] > 1}
		var rowRuns [][]result.Run
		for i, s := range sets {
			runs := per[i][k]
			rowRuns = append(rowRuns, runs)
			row := MetricRow{Label: s.Label, N: len(runs)}
			if len(runs) > 0 {
				row.Op = runs[0].HW.Op
			}
			hw, honest := hwMetrics(), honestMetrics()
			for _, m := range hw {
				row.Abs = append(row.Abs, medianOf(runs, m))
			}
			for _, m := range honest {
				row.Honest = append(row.Honest, medianOf(runs, m))
			}
			var ins []float64
			have := false
			for _, m := range insertMetrics() {
				v := medianOf(runs, m)
				ins = append(ins, v)
				have = have || !math.IsNaN(v)
			}
			if have {
				row.Insert = ins
			}
			if dev, have := mediansOf(runs, DeviceMetrics()); have {
				row.Device = dev
			}
			if i > 0 {
				j := DefaultJudging()
				j.Looks = looksOf(rowRuns[0], runs)
				for _, m := range hw {
					j.Higher = m.HigherIsBetter
					row.Verdicts = append(row.Verdicts, Judge(RunSide(rowRuns[0], m), RunSide(runs, m), j))
				}
				for _, m := range honest {
					j.Higher = m.HigherIsBetter
					row.HonestVerdicts = append(row.HonestVerdicts, Judge(RunSide(rowRuns[0], m), RunSide(runs, m), j))
				}
			}
			t.Rows = append(t.Rows, row)
		}
		t.Server, t.HiddenServer = serverLines(rowRuns, choice)
		out = append(out, t)
	}
	correctMetricsFDR(out, len(sets))
	return out, nil
}

// correctMetricsFDR is the false-discovery correction of the per-op
// verdicts: one family per other label and metric, over the tables (the
// tests and thread counts), as compare corrects each label's rates
// (CorrectFDR). A metrics table judges a dozen counters on every test; a
// counter's calls across the tests are one question, and its change on
// one test in twenty at α is what noise alone gives.
func correctMetricsFDR(tables []MetricTable, labels int) {
	for i := 1; i < labels; i++ {
		fam := map[[2]int][]*Verdict{} // [0 hw | 1 honest, metric]
		for ti := range tables {
			if i >= len(tables[ti].Rows) {
				continue
			}
			r := &tables[ti].Rows[i]
			for j := range r.Verdicts {
				fam[[2]int{0, j}] = append(fam[[2]int{0, j}], &r.Verdicts[j])
			}
			for j := range r.HonestVerdicts {
				fam[[2]int{1, j}] = append(fam[[2]int{1, j}], &r.HonestVerdicts[j])
			}
		}
		for _, f := range fam {
			CorrectFDR(f)
		}
	}
}

// looksOf is the most looks the runs' plans could take (result.Run.Looks).
func looksOf(sets ...[]result.Run) int {
	n := 1
	for _, runs := range sets {
		for _, r := range runs {
			n = max(n, r.Looks())
		}
	}
	return n
}

// mediansOf is medianOf of each of ms, and whether any run has one.
func mediansOf(runs []result.Run, ms []result.Metric) ([]float64, bool) {
	out := make([]float64, len(ms))
	have := false
	for i, m := range ms {
		out[i] = medianOf(runs, m)
		have = have || !math.IsNaN(out[i])
	}
	return out, have
}

// medianOf is the median of m over the runs that have it; NaN (printed
// "-") when none does: not measured is not zero.
func medianOf(runs []result.Run, m result.Metric) float64 {
	v := make([]float64, 0, len(runs))
	for _, r := range runs {
		if x, ok := m.Of(r); ok && !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	return history.Median(v)
}

// RelAt is row's figure i (MetricNames) relative to base's as the tables
// print it: the verdict's own relative value where the verdict was paired
// round by round (the geometric mean of per-round ratios, which its mark
// and its direction are of: compare prints its own the same way), else
// RelString of the two medians. A ratio of medians beside a paired
// verdict can point the other way ("0.90 -" on a per-op cost), which is
// one answer given twice.
func (r MetricRow) RelAt(base MetricRow, i int) string {
	if i < len(r.Verdicts) {
		if rel, ok := r.Verdicts[i].OwnRel(); ok {
			return fmt.Sprintf("%.2f", rel)
		}
	}
	b, v := math.NaN(), math.NaN()
	if i < len(base.Abs) {
		b = base.Abs[i]
	}
	if i < len(r.Abs) {
		v = r.Abs[i]
	}
	return RelString(b, v)
}

// RelString is a value relative to the first result as sum_met.sh prints
// it: "1" when both are 0, "inf" when only the base is, else two decimals.
func RelString(base, v float64) string {
	switch {
	case math.IsNaN(base) || math.IsNaN(v):
		return "-"
	case base == 0 && v == 0:
		return "1"
	case base == 0:
		return "inf"
	}
	return fmt.Sprintf("%.2f", v/base)
}
