// Package analysis owns what is concluded from stored results: labels
// (build.config), the comparison of builds per test (absolute and relative
// QPS, group statistics over the reference's 5- and 4-group layouts, the
// geometric mean, significance over repeats), and the per-op hardware table
// relative to a first result. It reads result.Run values and returns
// tables of numbers; it neither queries the store nor formats.
package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// Label addresses a result set as the seeds do: build.config, split at the
// last dot (ma100244_rel.cz11a_bee; mariadb-10.2.11.default).
type Label struct{ Build, Config string }

// ParseLabel splits s at its last dot.
func ParseLabel(s string) (Label, error) {
	i := strings.LastIndex(s, ".")
	if i <= 0 || i == len(s)-1 {
		return Label{}, fmt.Errorf("label %q is not build.config (for example mariadb-system.default): see qpslab labels", s)
	}
	return Label{Build: s[:i], Config: s[i+1:]}, nil
}

func (l Label) String() string { return l.Build + "." + l.Config }

// Thresholds of the colours: a relative value at or below Worse is a
// regression (red), at or above Better an improvement (green). The value
// compared is the printed one, rounded to two decimals.
const (
	Worse  = 0.95
	Better = 1.05
)

// Colour of a relative value: "red", "green" or "".
func Colour(rel float64) string {
	r := math.Round(rel*100) / 100
	switch {
	case math.IsNaN(rel) || math.IsInf(rel, 0):
		return ""
	case r <= Worse:
		return "red"
	case r >= Better:
		return "green"
	}
	return ""
}

// Summary is one label's repeats of one test at one thread count.
type Summary struct {
	N      int       `json:"n"`
	Center float64   `json:"center"` // the median (the value itself without repeats)
	Lo     float64   `json:"lo"`     // its confidence interval (benchmath, assuming nothing)
	Hi     float64   `json:"hi"`
	Values []float64 `json:"values"`
}

// Cell is an other label's result beside the base's.
type Cell struct {
	Summary
	Missing bool    `json:"missing,omitempty"` // no result for this test
	Rel     float64 `json:"rel"`               // Center / base Center
	// With repeats on both sides: the p-value that the two come from the
	// same distribution (Mann-Whitney U), and whether it is below Alpha.
	P           float64 `json:"p,omitempty"`
	Tested      bool    `json:"tested"`
	Significant bool    `json:"significant"`
}

// Row is one test at one thread count.
type Row struct {
	Test    string `json:"test"`
	Threads int    `json:"threads"`
	Group   string `json:"group"`
	Unit    string `json:"unit"` // qps, Krows/s, rows/s
	Base    Summary
	Others  []Cell `json:"others"`
}

// Stats are a group's statistics of relative values, for one other label.
type Stats struct {
	N      int     `json:"n"`
	Avg    float64 `json:"avg"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Stddev float64 `json:"stddev"` // sample standard deviation (n-1), 0 for one value
}

// Group is one group of the layout; Stats has one entry per other label.
type Group struct {
	Name  string  `json:"name"`
	Stats []Stats `json:"stats"`
}

// Comparison is BASE against OTHERS, test by test.
type Comparison struct {
	Base    string    `json:"base"`
	Others  []string  `json:"others"`
	Layout  string    `json:"layout"` // "5" or "4"
	Rows    []Row     `json:"rows"`
	Groups  []Group   `json:"groups"`
	All     []Stats   `json:"all"`     // over every test (not the load), per other label
	Geomean []float64 `json:"geomean"` // of the relative values, per other label
	Repeats bool      `json:"repeats"` // some test has more than one result per label
	Alpha   float64   `json:"alpha"`
}

// Set is the results of one label.
type Set struct {
	Label string
	Runs  []result.Run
}

// Options of a comparison.
type Options struct {
	Layout     string  // "5" (default) or "4"
	Confidence float64 // of the intervals; default 0.95
}

type key struct {
	test    string
	threads int
}

// Compare compares each of others with base, test by test, over the runs
// that ended ok and are not warm-up steps.
func Compare(base Set, others []Set, o Options) (*Comparison, error) {
	if o.Layout == "" {
		o.Layout = "5"
	}
	if o.Layout != "5" && o.Layout != "4" {
		return nil, fmt.Errorf("--groups %s: use 5 (the 2023-2024 layout) or 4 (the 2025 layout)", o.Layout)
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	thr := benchmath.DefaultThresholds
	c := &Comparison{Base: base.Label, Layout: o.Layout, Alpha: thr.CompareAlpha}
	bv, units := values(base.Runs)
	if len(bv) == 0 {
		return nil, fmt.Errorf("no results for %s: see qpslab labels", base.Label)
	}
	ov := make([]map[key][]float64, len(others))
	for i, s := range others {
		c.Others = append(c.Others, s.Label)
		ov[i], _ = values(s.Runs)
		if len(ov[i]) == 0 {
			return nil, fmt.Errorf("no results for %s: see qpslab labels", s.Label)
		}
	}
	keys := make([]key, 0, len(bv))
	for k := range bv {
		keys = append(keys, k)
	}
	cat := catalog()
	group := func(test string) string {
		if test == "load" {
			return "load"
		}
		if t, ok := cat[test]; ok {
			if o.Layout == "4" {
				return t.Group4
			}
			return t.Group5
		}
		return "other"
	}
	layout := sysbench.Layout5
	if o.Layout == "4" {
		layout = sysbench.Layout4
	}
	gi := map[string]int{}
	for i, g := range layout {
		gi[g] = i
	}
	gi["other"] = len(layout)
	gi["load"] = len(layout) + 1
	pos := func(test string) int {
		if t, ok := cat[test]; ok {
			return t.pos
		}
		return 1 << 20
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if ga, gb := gi[group(a.test)], gi[group(b.test)]; ga != gb {
			return ga < gb
		}
		if pa, pb := pos(a.test), pos(b.test); pa != pb {
			return pa < pb
		}
		if a.test != b.test {
			return a.test < b.test
		}
		return a.threads < b.threads
	})

	rels := make([]map[string][]float64, len(others)) // per other: group → relative values
	all := make([][]float64, len(others))
	for i := range rels {
		rels[i] = map[string][]float64{}
	}
	for _, k := range keys {
		row := Row{Test: k.test, Threads: k.threads, Group: group(k.test), Unit: units[k], Base: summarize(bv[k], o.Confidence)}
		if row.Base.N > 1 {
			c.Repeats = true
		}
		for i := range others {
			v, ok := ov[i][k]
			if !ok {
				row.Others = append(row.Others, Cell{Missing: true, Rel: math.NaN()})
				continue
			}
			cell := Cell{Summary: summarize(v, o.Confidence)}
			if cell.N > 1 {
				c.Repeats = true
			}
			cell.Rel = cell.Center / row.Base.Center
			if row.Base.N > 1 && cell.N > 1 {
				// NewSample sorts its values in place: give it copies, so
				// Values keep the run order (A B A B).
				cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(append([]float64{}, bv[k]...), &thr), benchmath.NewSample(append([]float64{}, v...), &thr))
				cell.P, cell.Tested, cell.Significant = cmp.P, true, cmp.P < cmp.Alpha
			}
			if !math.IsNaN(cell.Rel) && !math.IsInf(cell.Rel, 0) {
				rels[i][row.Group] = append(rels[i][row.Group], cell.Rel)
				if row.Group != "load" { // the load is no test: not in "all" nor the geomean
					all[i] = append(all[i], cell.Rel)
				}
			}
			row.Others = append(row.Others, cell)
		}
		c.Rows = append(c.Rows, row)
	}
	names := append([]string{}, layout...)
	names = append(names, "other", "load")
	for _, g := range names {
		grp := Group{Name: g}
		any := false
		for i := range others {
			grp.Stats = append(grp.Stats, Describe(rels[i][g]))
			any = any || len(rels[i][g]) > 0
		}
		if any {
			c.Groups = append(c.Groups, grp)
		}
	}
	for i := range others {
		c.All = append(c.All, Describe(all[i]))
		c.Geomean = append(c.Geomean, geomean(all[i]))
	}
	return c, nil
}

// values collects the reported figure of each ok, non-warm run by test and
// thread count.
func values(runs []result.Run) (map[key][]float64, map[key]string) {
	v, u := map[key][]float64{}, map[key]string{}
	for _, r := range runs {
		if !r.Comparable() {
			continue
		}
		k := key{r.Test, r.Threads}
		v[k] = append(v[k], r.Totals.Reported)
		u[k] = r.Totals.ReportedUnit
	}
	return v, u
}

func summarize(v []float64, confidence float64) Summary {
	s := Summary{N: len(v), Values: v}
	if len(v) == 1 {
		s.Center, s.Lo, s.Hi = v[0], v[0], v[0]
		return s
	}
	thr := benchmath.DefaultThresholds
	bs := benchmath.AssumeNothing.Summary(benchmath.NewSample(append([]float64{}, v...), &thr), confidence)
	s.Center, s.Lo, s.Hi = bs.Center, bs.Lo, bs.Hi
	return s
}

// Describe is avg, median, min, max and sample stddev of v.
func Describe(v []float64) Stats {
	s := Stats{N: len(v)}
	if len(v) == 0 {
		return s
	}
	sorted := append([]float64{}, v...)
	sort.Float64s(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.Median = history.Median(sorted)
	s.Avg = stat.Mean(v, nil)
	if len(v) > 1 {
		s.Stddev = stat.StdDev(v, nil)
	}
	return s
}

func geomean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range v {
		if x <= 0 {
			return math.NaN()
		}
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(v)))
}

type catTest struct {
	sysbench.Test
	pos int
}

// catalog is every known test by label, with its position in the 2024 run
// order (the 2025 list's tests that are not in it follow).
func catalog() map[string]catTest {
	m := map[string]catTest{}
	for i, t := range append(sysbench.Order2024(), sysbench.OrderHEAD()...) {
		if _, ok := m[t.Label()]; !ok {
			m[t.Label()] = catTest{t, i}
		}
	}
	return m
}
