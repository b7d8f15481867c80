package analysis

import (
	"math"
	"sort"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// Findings are what a comparison's numbers say, each resting on a figure
// and the test it was measured on: per other label, the wins and losses,
// the max and the min relative value and where they occur, each group's
// median, and the largest regressions with the per-op figures that moved
// with them; for a sweep, the build each change arrived in. Nothing here
// is a cause: the hardware figures say what moved, not why.
type Findings struct {
	Suite  string          `json:"suite"`
	Base   string          `json:"base"`
	Labels []LabelFindings `json:"labels"` // one per other label, in the comparison's order
	// Sweep: the labels are builds in version order (IsSweep), or a
	// study's sweep of more than two builds (FindingsWith), and Arrivals
	// the changes between neighbours (nil when not a sweep).
	Sweep    bool      `json:"sweep"`
	Arrivals []Arrival `json:"arrivals,omitempty"`
	// Neighbours is how many tests' neighbour comparisons a sweep made,
	// and Untold how many of them had no verdict to give (one value a
	// side, too few repeats or rounds): changes there are not placed.
	Neighbours int `json:"neighbours,omitempty"`
	Untold     int `json:"untold,omitempty"`
}

// Where is one test's relative value for a label: the test (at a thread
// count, under conditions), its group, the value and its verdict's kind.
type Where struct {
	Test       string  `json:"test"`
	Threads    int     `json:"threads"`
	Conditions string  `json:"conditions,omitempty"`
	Group      string  `json:"group"`
	Rel        float64 `json:"rel"`
	Kind       string  `json:"kind"` // the verdict's (KindBetter …, CannotTell); "" where nothing was tested
}

// LabelFindings are one other label's findings against the base.
type LabelFindings struct {
	Label string `json:"label"`
	// Tests is how many tests (not the load) have a relative value;
	// Faster and Slower how many of them are above and below 1 (the
	// printed two decimals), whatever the noise.
	Tests  int `json:"tests"`
	Faster int `json:"faster"`
	Slower int `json:"slower"`
	// Better, Worse, Same, Inside, Equivalent and CannotTell count the verdicts
	// (Comparison.Tally): Better and Worse are the changes beyond the
	// noise (+ and -), Untested the tests with one value a side (no
	// verdict: the ±5 % colours are all there is).
	Better     int `json:"better"`
	Worse      int `json:"worse"`
	Same       int `json:"same"`
	Inside     int `json:"inside_noise"`
	Equivalent int `json:"equivalent"`
	CannotTell int `json:"cannot_tell"`
	Untested   int `json:"untested"`
	// NotAfterFDR is how many of Better and Worse the false-discovery
	// correction does not keep (Tally.NotAfterFDR).
	NotAfterFDR int `json:"not_after_fdr,omitempty"`
	// CostBetter, CostWorse and CostTested are the verdicts on the
	// server's CPU per operation (Tally), and CostAgainst how many tests
	// the rate and the cost call the opposite ways.
	CostBetter  int `json:"cost_better,omitempty"`
	CostWorse   int `json:"cost_worse,omitempty"`
	CostTested  int `json:"cost_tested,omitempty"`
	CostAgainst int `json:"cost_against,omitempty"`
	// Max and Min are the largest and smallest relative values and where
	// they occur (the first in the table's order on a tie).
	Max     Where   `json:"max"`
	Min     Where   `json:"min"`
	Geomean float64 `json:"geomean"`
	// Groups are the layout's groups (not the load) with a value, in the
	// layout's order.
	Groups []GroupFinding `json:"groups"`
	// Regressions are the largest regressions, the worst first (at most
	// MaxRegressions): tests judged worse, or, where one value a side
	// allows no test, at or below the red threshold (Worse).
	Regressions []Regression `json:"regressions"`
	// Regressed counts every regression, Regressions the worst of them.
	Regressed int `json:"regressed"`
}

// GroupFinding is one group's median relative value for a label, and
// where its min and max occur.
type GroupFinding struct {
	Group  string  `json:"group"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    Where   `json:"min"`
	Max    Where   `json:"max"`
}

// Regression is one regressed test and the per-op figures that went up
// with it (the worse way), in the registry's order; none where the test
// has no per-op figures or none moved.
type Regression struct {
	Where
	// Measured: the test has per-op figures of both labels, so an empty
	// Hardware says none of HardwareSays went up.
	Measured bool       `json:"measured"`
	Hardware []HWChange `json:"hardware,omitempty"`
}

// HWChange is a per-op figure that went up on a regressed test: its base
// and other values (medians over repeats), the ratio the verdict is of
// (Verdict.OwnRel where it was paired round by round, Paired; else the
// ratio of the medians; +Inf where the base is 0), the verdict on it, and
// what its rise says (result.Metric.Rise). The ratio and the verdict's
// direction are one answer: a paired verdict's medians can move the other
// way (their ratio is Medians), and a sentence that printed theirs beside
// the verdict's direction would contradict itself ("cpu/o 0.90×: more CPU
// per operation").
type HWChange struct {
	Metric  string  `json:"metric"`
	Base    float64 `json:"base"`
	Other   float64 `json:"other"`
	Rel     float64 `json:"rel"`
	Medians float64 `json:"medians_rel"`
	Paired  bool    `json:"paired,omitempty"`
	Verdict Verdict `json:"verdict"`
	Says    string  `json:"says"`
}

// MaxRegressions is how many regressions each label's findings name.
const MaxRegressions = 5

// HardwareSays are the per-op figures a regression's findings look at:
// the per-op table's (MetricNames) whose rise the registry says something
// of (result.Metric.Rise), in its order.
func HardwareSays() []string {
	var out []string
	for _, m := range hwMetrics() {
		if m.Rise != "" {
			out = append(out, m.Name)
		}
	}
	return out
}

// FindingsOf concludes c's findings; tables are the per-op tables of the
// same sets (Metrics; nil where there are none), the base's row first.
// It does no I/O and changes neither argument.
func FindingsOf(c *Comparison, tables []MetricTable) Findings {
	f := Findings{Suite: c.Suite, Base: c.Base, Sweep: IsSweep(c)}
	for i, label := range c.Others {
		lf := LabelFindings{Label: label, Geomean: math.NaN(), Max: Where{Rel: math.NaN()}, Min: Where{Rel: math.NaN()}}
		if i < len(c.Geomean) {
			lf.Geomean = c.Geomean[i]
		}
		if i < len(c.Tally) {
			t := c.Tally[i]
			lf.Better, lf.Worse, lf.Same, lf.Inside, lf.Equivalent, lf.CannotTell = t.Better, t.Worse, t.Same, t.Inside, t.Equivalent, t.CannotTell
			lf.NotAfterFDR = t.NotAfterFDR
			lf.CostBetter, lf.CostWorse, lf.CostTested = t.CostBetter, t.CostWorse, t.CostTested
		}
		groups := map[string]*GroupFinding{}
		var regs []Regression
		for _, r := range c.Rows {
			if r.Group == "load" || i >= len(r.Others) {
				continue
			}
			cell := r.Others[i]
			if cell.Missing || math.IsNaN(cell.Rel) || math.IsInf(cell.Rel, 0) {
				continue
			}
			if cv := cell.Cost; cv != nil && cv.Changed() && cell.Verdict.Changed() && cv.Kind != cell.Verdict.Kind {
				lf.CostAgainst++
			}
			w := Where{Test: r.Test, Threads: r.Threads, Conditions: r.Conditions, Group: r.Group, Rel: cell.Rel, Kind: cell.Verdict.Kind}
			if cell.Verdict.Method == MethodNone {
				w.Kind = ""
				lf.Untested++
			}
			lf.Tests++
			switch printed := math.Round(cell.Rel*100) / 100; {
			case printed > 1:
				lf.Faster++
			case printed < 1:
				lf.Slower++
			}
			// The first of equal values wins: the table's order.
			if math.IsNaN(lf.Max.Rel) || w.Rel > lf.Max.Rel {
				lf.Max = w
			}
			if math.IsNaN(lf.Min.Rel) || w.Rel < lf.Min.Rel {
				lf.Min = w
			}
			g := groups[r.Group]
			if g == nil {
				g = &GroupFinding{Group: r.Group, Min: w, Max: w}
				groups[r.Group] = g
			}
			if w.Rel > g.Max.Rel {
				g.Max = w
			}
			if w.Rel < g.Min.Rel {
				g.Min = w
			}
			if cell.Verdict.Colour() == "red" {
				hw, measured := hardwareUp(tables, r, c.Base, label)
				regs = append(regs, Regression{Where: w, Measured: measured, Hardware: hw})
			}
		}
		for _, g := range c.Groups {
			gf := groups[g.Name]
			if gf == nil || g.Name == "load" || i >= len(g.Stats) {
				continue
			}
			gf.N, gf.Median = g.Stats[i].N, g.Stats[i].Median
			lf.Groups = append(lf.Groups, *gf)
		}
		sort.SliceStable(regs, func(a, b int) bool { return regs[a].Rel < regs[b].Rel })
		lf.Regressed = len(regs)
		if len(regs) > MaxRegressions {
			regs = regs[:MaxRegressions]
		}
		lf.Regressions = regs
		f.Labels = append(f.Labels, lf)
	}
	return f
}

// FindingsFor concludes the findings of c, the comparison of sets by o
// (the options it was made with; sets in any order, matched by label):
// FindingsOf with the sets' per-op tables, and for a sweep (IsSweep) the
// Arrivals between neighbouring builds. A sweep whose neighbours cannot be
// compared (no test in common) has no arrivals. No I/O.
func FindingsFor(c *Comparison, sets []Set) Findings {
	return FindingsWith(c, sets, nil, nil)
}

// FindingsWith is FindingsFor where the sweep's neighbour comparisons are
// made already (a study's, which it shows: sweep, the sets in the sweep's
// order, wherever its base stands, and neighbours[i-1] sweep[i] against
// sweep[i-1]): the arrivals are placed from those very verdicts, so the
// tl;dr and the neighbour verdicts are one story. With no neighbours it
// is FindingsFor.
func FindingsWith(c *Comparison, sets, sweep []Set, neighbours []*Comparison) Findings {
	bySet := map[string]Set{}
	for _, s := range sets {
		bySet[s.Label] = s
	}
	ordered := []Set{bySet[c.Base]}
	for _, l := range c.Others {
		ordered = append(ordered, bySet[l])
	}
	tables, _ := Metrics(ordered, "") // no per-op figures (imports without sb.met) is not an error here
	f := FindingsOf(c, tables)
	if len(sweep) > 2 && len(neighbours) == len(sweep)-1 { // two builds: the base comparison is the one neighbour's (IsSweep)
		f.Sweep = true
		f.Arrivals, f.Neighbours, f.Untold = arrivalsFrom(sweep, neighbours)
		return f
	}
	if f.Sweep {
		// The neighbours are compared as c was (its layout, a user's
		// layout file, the noise floors); where they cannot be, the
		// findings say nothing of a sweep rather than "no change".
		var err error
		if f.Arrivals, f.Neighbours, f.Untold, err = arrivals(ordered, c.opts); err != nil {
			f.Sweep, f.Arrivals = false, nil
		}
	}
	return f
}

// hardwareUp are the per-op figures (HardwareSays) of row's test that went
// up from base to label: judged worse (beyond the noise), or, where one
// value a side allows no test, at or above the green threshold (Better),
// or from 0 to more; measured says whether both labels have any of the
// figures (a target's runs, on another host, have none).
func hardwareUp(tables []MetricTable, r Row, base, label string) (out []HWChange, measured bool) {
	for _, t := range tables {
		if t.Test != r.Test || t.Threads != r.Threads || t.Conditions != r.Conditions || len(t.Rows) == 0 || t.Rows[0].Label != base {
			continue
		}
		for _, row := range t.Rows[1:] {
			if row.Label != label || row.N == 0 || t.Rows[0].N == 0 {
				continue
			}
			for j, m := range hwMetrics() {
				name, says := m.Name, m.Rise
				if says == "" || j >= len(row.Abs) || j >= len(t.Rows[0].Abs) {
					continue
				}
				b, o := t.Rows[0].Abs[j], row.Abs[j]
				if math.IsNaN(b) || math.IsNaN(o) {
					continue
				}
				measured = true
				var v Verdict
				if j < len(row.Verdicts) {
					v = row.Verdicts[j]
				}
				ch := HWChange{Metric: name, Base: b, Other: o, Rel: math.Inf(1), Medians: math.Inf(1), Verdict: v, Says: says}
				if b != 0 {
					ch.Rel = result.Ratio(o, b)
					ch.Medians = ch.Rel
				}
				if rel, ok := v.OwnRel(); ok {
					ch.Rel, ch.Paired = rel, true
				}
				up := false
				switch {
				case b == 0:
					up = o > 0
				case v.Kind == KindWorse && !v.NotAfterFDR:
					up = true
				case v.Method == MethodNone:
					up = math.Round(ch.Rel*100)/100 >= Better
				}
				if up {
					out = append(out, ch)
				}
			}
		}
		return out, measured
	}
	return nil, false
}

// IsSweep says whether c is a sweep: more than two labels, each naming
// its build's version, in ascending version order (the base the oldest).
func IsSweep(c *Comparison) bool {
	if len(c.Others) < 2 || len(c.Versions) != len(c.Others)+1 {
		return false
	}
	for i, v := range c.Versions {
		if v == "" || i > 0 && history.CompareVersions(c.Versions[i-1], v) >= 0 {
			return false
		}
	}
	return true
}

// Arrival is a change beyond the noise between two neighbouring builds
// of a sweep, in the build it arrived in: the test, the build (Label, at
// Index in the sets, or among the series' points) and the one before it
// (Before), the relative value Label / Before and the verdict (Judge, as
// compare judges).
type Arrival struct {
	Test       string  `json:"test"`
	Threads    int     `json:"threads"`
	Conditions string  `json:"conditions,omitempty"`
	Group      string  `json:"group"`
	Index      int     `json:"index"`
	Label      string  `json:"label"`
	Version    string  `json:"version,omitempty"`
	Before     string  `json:"before"`
	Kind       string  `json:"kind"` // KindBetter or KindWorse
	Rel        float64 `json:"rel"`
	Verdict    Verdict `json:"verdict"`
	// First: the test's first change in the sweep; a later one is a
	// further change (a recovery, or a second step).
	First bool `json:"first"`
}

// Arrivals are the changes of a sweep: sets are its labels' sets in build
// order, each compared with the one before it as compare compares (o);
// each test's change beyond the noise (+ or -) between neighbours is an
// Arrival in the later build. Tests without a change have none. They come
// in the tests' table order, each test's in build order, its first marked.
func Arrivals(sets []Set, o Options) ([]Arrival, error) {
	out, _, _, err := arrivals(sets, o)
	return out, err
}

// arrivals are Arrivals, with how many neighbour comparisons of a test
// were made and how many of them could not tell.
func arrivals(sets []Set, o Options) (out []Arrival, n, untold int, err error) {
	comps := make([]*Comparison, 0, len(sets))
	for i := 1; i < len(sets); i++ {
		c, err := Compare(sets[i-1], []Set{sets[i]}, o)
		if err != nil {
			return nil, 0, 0, err
		}
		comps = append(comps, c)
	}
	out, n, untold = arrivalsFrom(sets, comps)
	return out, n, untold, nil
}

// arrivalsFrom are arrivals' of sets from their neighbour comparisons
// made already: comps[i-1] is sets[i] against sets[i-1].
func arrivalsFrom(sets []Set, comps []*Comparison) (out []Arrival, n, untold int) {
	type tk struct {
		test    string
		threads int
		cond    string
	}
	order := map[tk]int{}
	per := map[tk][]Arrival{}
	var keys []tk
	for i := 1; i < len(sets) && i <= len(comps); i++ {
		for _, r := range comps[i-1].Rows {
			k := tk{r.Test, r.Threads, r.Conditions}
			if _, ok := order[k]; !ok {
				order[k] = len(order)
			}
			v := r.Others[0].Verdict
			if r.Group == "load" || r.Others[0].Missing {
				continue
			}
			n++
			if v.Kind == CannotTell {
				untold++
			}
			if !v.Changed() {
				continue
			}
			if len(per[k]) == 0 {
				keys = append(keys, k)
			}
			per[k] = append(per[k], Arrival{Test: r.Test, Threads: r.Threads, Conditions: r.Conditions, Group: r.Group,
				Index: i, Label: sets[i].Label, Version: sets[i].Version(), Before: sets[i-1].Label,
				Kind: v.Kind, Rel: r.Others[0].Rel, Verdict: v, First: len(per[k]) == 0})
		}
	}
	sort.SliceStable(keys, func(a, b int) bool { return order[keys[a]] < order[keys[b]] })
	for _, k := range keys {
		out = append(out, per[k]...)
	}
	return out, n, untold
}
