package analysis

import (
	"fmt"
	"math"
	"path"
	"sort"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// MetricNames are the seeds' per-op columns, in their order (sum_met.sh).
var MetricNames = []string{"cpu/o", "cs/o", "r/o", "rKB/o", "wKB/o", "o/s"}

// HonestNames are the CPU columns in honest units.
var HonestNames = []string{"host µs/o", "server µs/o", "client µs/o"}

// MetricRow is one label's hardware cost for one test at one thread count:
// the median over its repeats of each figure.
type MetricRow struct {
	Label  string    `json:"label"`
	N      int       `json:"n"`      // results with hardware metrics
	Abs    []float64 `json:"abs"`    // MetricNames
	Honest []float64 `json:"honest"` // HonestNames
	Op     string    `json:"op"`
}

// MetricTable is the table of one test at one thread count; the first row
// is the base of the relative values.
type MetricTable struct {
	Test    string      `json:"test"`
	Threads int         `json:"threads"`
	Rows    []MetricRow `json:"rows"`
}

// Metrics builds a table per test (matching the glob testPattern; "" for
// all) and thread count that the first set has, in the first set's order.
func Metrics(sets []Set, testPattern string) ([]MetricTable, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("name at least one label")
	}
	if testPattern != "" {
		if _, err := path.Match(testPattern, ""); err != nil {
			return nil, fmt.Errorf("--test %q is not a valid pattern: %v", testPattern, err)
		}
	}
	per := make([]map[key][]result.HW, len(sets))
	var keys []key
	for i, s := range sets {
		per[i] = map[key][]result.HW{}
		for _, r := range s.Runs {
			if !r.Comparable() || !r.HW.Measured() {
				continue
			}
			if ok, _ := path.Match(testPattern, r.Test); testPattern != "" && !ok {
				continue
			}
			k := key{r.Test, r.Threads}
			if i == 0 && len(per[0][k]) == 0 {
				keys = append(keys, k)
			}
			per[i][k] = append(per[i][k], *r.HW)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s has no results with hardware metrics%s", sets[0].Label, map[bool]string{true: " for --test " + testPattern, false: ""}[testPattern != ""])
	}
	cat := catalog()
	sort.SliceStable(keys, func(i, j int) bool {
		pi, pj := cat[keys[i].test].pos, cat[keys[j].test].pos
		if pi != pj {
			return pi < pj
		}
		return keys[i].threads < keys[j].threads
	})
	var out []MetricTable
	for _, k := range keys {
		t := MetricTable{Test: k.test, Threads: k.threads}
		for i, s := range sets {
			hws := per[i][k]
			row := MetricRow{Label: s.Label, N: len(hws)}
			if len(hws) > 0 {
				row.Op = hws[0].Op
			}
			for _, f := range []func(result.HW) float64{
				func(h result.HW) float64 { return h.CPUPerOp }, func(h result.HW) float64 { return h.CSPerOp },
				disk(func(h result.HW) float64 { return h.ReadsPerOp }), disk(func(h result.HW) float64 { return h.ReadKBPerOp }),
				disk(func(h result.HW) float64 { return h.WriteKBPerOp }), func(h result.HW) float64 { return h.OpsPerSec },
			} {
				row.Abs = append(row.Abs, medianOf(hws, f))
			}
			for _, f := range []func(result.HW) float64{
				func(h result.HW) float64 { return h.HostCPUUsOp }, func(h result.HW) float64 { return h.ServerCPUUsOp },
				func(h result.HW) float64 { return h.ClientCPUUsOp },
			} {
				row.Honest = append(row.Honest, medianOf(hws, f))
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}
	return out, nil
}

// disk is a disk figure: unknown (NaN) where the disk was not measured.
func disk(f func(result.HW) float64) func(result.HW) float64 {
	return func(h result.HW) float64 {
		if h.NoDisk {
			return math.NaN()
		}
		return f(h)
	}
}

// medianOf is the median of f over the results that have it (not NaN).
func medianOf(hws []result.HW, f func(result.HW) float64) float64 {
	v := make([]float64, 0, len(hws))
	for _, h := range hws {
		if x := f(h); !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	return history.Median(v)
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
