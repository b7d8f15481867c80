// Package analysis owns what is concluded from stored results: the
// comparison of builds per test (absolute and relative
// QPS, group statistics over the reference's 5- and 4-group layouts, the
// geometric mean, significance over repeats), and the per-op hardware table
// relative to a first result. It reads result.Run values and returns
// tables of numbers; it neither queries the store nor formats.
package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

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
	// Missed is how many of the runs failed a goal they were judged by
	// (the Insert Benchmark's insert SLA), named in MissedWhat: their
	// values are shown, and marked.
	Missed     int    `json:"missed,omitempty"`
	MissedWhat string `json:"missed_what,omitempty"`
	// Stalled is how many of the runs had stalled seconds (a rate below
	// result.StallFraction of their median second), and StallMax the
	// longest stall among them, in seconds.
	Stalled  int     `json:"stalled,omitempty"`
	StallMax float64 `json:"stall_max,omitempty"`
	// Modes are the two modes of the runs' slices where they fall in two
	// (BimodalOf): the test is unstable on this label. Nil otherwise.
	Modes *Modes `json:"modes,omitempty"`
}

// Cell is an other label's result beside the base's.
type Cell struct {
	Summary
	Missing bool `json:"missing,omitempty"` // no result for this test
	// Rel is the relative value: paired, the geometric mean of the
	// per-round ratios; else Center / base Center.
	Rel float64 `json:"rel"`
	// P is the test's p-value (Verdict.P) where one was tested, and
	// Significant whether it says the two differ.
	P           float64 `json:"p,omitempty"`
	Tested      bool    `json:"tested"`
	Significant bool    `json:"significant"`
	// Verdict is what the comparison concludes of the test, with its
	// evidence: the pairing, the interval, the noise floor (Judge).
	Verdict Verdict `json:"verdict"`
	// Cost is the verdict on the server's CPU per operation (CostMetric,
	// lower is better), beside the rate's: a cost, not a rate, so a test
	// whose rate is too noisy to call may be called on its CPU, and a rate
	// better at a CPU cost worse shows both. Nil where the runs did not
	// measure it.
	Cost *Verdict `json:"cost,omitempty"`
}

// CostMetric is the per-op figure compare judges beside the rate: the
// server's CPU per operation.
const CostMetric = "server_cpu_us/o"

// Row is one test at one thread count.
type Row struct {
	Test    string `json:"test"`
	Threads int    `json:"threads"`
	// Conditions are the runs' (result.Run.LabelConditions); Comparison.Conditions
	// says whether they differ between rows.
	Conditions string `json:"conditions"`
	Group      string `json:"group"`
	Unit       string `json:"unit"` // qps, Krows/s, rows/s
	Base       Summary
	Others     []Cell `json:"others"`
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
	Suite  string   `json:"suite"`
	Base   string   `json:"base"`
	Others []string `json:"others"`
	// Versions are the builds' versions, the base's first ("" unknown).
	Versions []string  `json:"versions"`
	Layout   string    `json:"layout"` // the layout the groups are of (result.LayoutNames of the suite, an import's own, or a user's file's)
	Rows     []Row     `json:"rows"`
	Groups   []Group   `json:"groups"`
	All      []Stats   `json:"all"`     // over every test (not the load), per other label
	Geomean  []float64 `json:"geomean"` // of the relative values, per other label
	Repeats  bool      `json:"repeats"` // some test has more than one result per label
	Alpha    float64   `json:"alpha"`
	// IntervalN is the fewest repeats per label a confidence interval of
	// the median needs (benchmath, assuming no distribution).
	IntervalN int `json:"interval_n"`
	// MixedConditions: some test was run under more than one set of
	// conditions (open and closed loop, two table sizes) and has a row for
	// each; reports then show each row's conditions.
	MixedConditions bool `json:"mixed_conditions"`
	// Confidence is the verdicts' intervals' (0.95, or 1 − the per-look
	// level of a sequential plan's).
	Confidence float64 `json:"confidence"`
	// Tally counts the verdicts of the tests (not the load), per other
	// label.
	Tally []Tally `json:"tally"`
	// Pairings are the ways the rows' figures were paired, each with how
	// many rows (result.Paired*; "unpaired" for the rest).
	Pairings map[string]int `json:"pairings"`
	// Pools are, per other label, what its paired tests of each kind
	// (PoolReads, PoolWrites) say together of their repeats (PoolOf):
	// where a pool finds a repeat effect, its tests are judged by their
	// repeats, else by their rounds (Paired).
	Pools [][]Pool `json:"pools"`
	// Looks is the most looks at the data the runs' plans could take
	// (--until-decided; 1 for a plan judged once): each verdict is judged
	// at the level that keeps the false-positive rate over all of them
	// within Alpha, and its interval is at Confidence = 1 − that level.
	Looks int `json:"looks"`
	// State is each test's database state per repeat on each label
	// (State): where every repeat starts from the tables as loaded, the
	// repeats should agree.
	State []StateRow `json:"state,omitempty"`
	// Idle is, per label (the base first), the CPU its plan's other
	// servers used while its rounds were measured (% of one CPU): their
	// background work competing with it. Nil where none was measured.
	Idle []IdleCPU `json:"idle,omitempty"`
	// opts are the options it was made with, so that what is concluded
	// from it (FindingsFor's neighbour comparisons) judges as it did.
	opts Options
}

// Tally counts one other label's verdicts over the tests.
type Tally struct {
	Better     int `json:"better"`
	Worse      int `json:"worse"`
	Same       int `json:"same"` // undecided: no significant change, and not the same within the floor either (KindSame, whose name the JSON keeps)
	Inside     int `json:"inside_noise"`
	Equivalent int `json:"equivalent"` // the same within the floor (KindEquivalent)
	CannotTell int `json:"cannot_tell"`
	// CostBetter, CostWorse and CostTested count the verdicts on the
	// server's CPU per operation (Cell.Cost): lower, higher, judged at all.
	CostBetter int `json:"cost_better"`
	CostWorse  int `json:"cost_worse"`
	CostTested int `json:"cost_tested"`
	// CostNotAfterFDR is how many of CostBetter and CostWorse the
	// false-discovery correction over the label's cost verdicts does not
	// keep (correctFDR).
	CostNotAfterFDR int `json:"cost_not_after_fdr"`
	// NotAfterFDR is how many of Better and Worse the false-discovery
	// correction over the label's tests does not keep (correctFDR).
	NotAfterFDR int `json:"not_after_fdr"`
	// Calibrated is how many of the tests had this host's noise floor.
	Calibrated int `json:"calibrated"`
}

// IdleCPU is the other servers' CPU during one label's measured rounds:
// the median over its rounds, and the most over any test.
type IdleCPU struct {
	Label   string  `json:"label"`
	Median  float64 `json:"median_pct"`
	Max     float64 `json:"max_pct"`
	MaxTest string  `json:"max_test"`
}

// Set is the results of one label.
type Set struct {
	Label string
	Runs  []result.Run
}

// LabelSets groups runs by label, in the order the labels first appear.
func LabelSets(runs []result.Run) []Set {
	var sets []Set
	at := map[string]int{}
	for _, r := range runs {
		l := r.Label()
		i, ok := at[l]
		if !ok {
			i = len(sets)
			at[l] = i
			sets = append(sets, Set{Label: l})
		}
		sets[i].Runs = append(sets[i].Runs, r)
	}
	return sets
}

// Version is the build version of the set's runs ("" when they name none).
func (s Set) Version() string {
	for _, r := range s.Runs {
		if r.Version != "" {
			return r.Version
		}
	}
	return ""
}

// Options of a comparison.
type Options struct {
	Layout string // a layout the runs are placed in (result.Placements); "" for their suite's default (the first)
	// User, if set, is a user's layout (result.ReadLayout), which places
	// the runs instead of Layout: by their test, whatever they carry.
	User       *result.Layout
	Confidence float64 // of the repeats' medians' intervals (Summary); default 0.95
	// Noise, if set, is the noise floor of a test's headline (a fraction:
	// 0.03 for ±3 %) of the host its runs (the base's and the other's)
	// came from, where qpslab run --aa measured it.
	Noise func(test string, threads int, conditions string, runs ...[]result.Run) (float64, bool)
	// RunEffects, if set, are the A/A plans' log ratios and their standard
	// errors stored of a test on the hosts its runs came from
	// (store.RunEffectsOf): its between-run σ (BetweenRuns, or
	// DefaultRunSigma with fewer than MinRunEffects) goes in each paired
	// interval. Nil: no between-run variance is taken in.
	RunEffects func(test string, threads int, conditions string, runs ...[]result.Run) (logs, ses []float64)
}

// key is what makes results repeats of each other: the test, the thread
// count, and the conditions that change what a figure means
// (result.Run.LabelConditions: a label already tells engines apart).
type key struct {
	test    string
	threads int
	cond    string
}

// Compare compares each of others with base, test by test, over the runs
// that ended ok and are not warm-up steps. Runs are ordered as they say
// (result.Run's Step and Role) and grouped by their suite's registered
// layouts as they are now (result.Placements: a placement stored with a run
// is derived, unless an import brought it as its own): the load in a group
// of its own after the layout's groups, never in "all" nor the geomean.
func Compare(base Set, others []Set, o Options) (*Comparison, error) {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	thr := benchmath.DefaultThresholds
	c := &Comparison{Base: base.Label, Alpha: thr.CompareAlpha, IntervalN: IntervalN(o.Confidence), Pairings: map[string]int{}, opts: o, Looks: 1}
	all := append([]Set{base}, others...)
	for _, s := range all {
		for _, r := range s.Runs {
			c.Looks = max(c.Looks, r.Looks())
		}
	}
	judging := Judging{Alpha: c.Alpha, Looks: c.Looks, Higher: true}
	c.Confidence = judging.Confidence()
	suites := map[string]bool{}
	for _, s := range all {
		for _, r := range s.Runs {
			suites[r.Suite] = true
			c.Suite = r.Suite
		}
	}
	if len(suites) > 1 {
		return nil, fmt.Errorf("the labels hold runs of several suites (%s): compare one suite at a time with --suite", strings.Join(sortedKeys(suites), ", "))
	}
	for _, s := range all {
		c.Versions = append(c.Versions, s.Version())
	}
	layout := layoutChoice{user: o.User}
	if o.User != nil {
		layout.name = o.User.Name
	} else {
		var err error
		if layout, err = chooseLayout(all, o.Layout); err != nil {
			return nil, err
		}
	}
	c.Layout = layout.name
	bv, units, info := values(base.Runs, layout)
	missed := func(s Set, k key, sum Summary) Summary {
		for _, r := range s.Runs {
			if r.Comparable() && r.Test == k.test && r.Threads == k.threads && r.LabelConditions() == k.cond {
				if m, what := missedGoal([]result.Run{r}); m {
					sum.Missed++
					sum.MissedWhat = what
				}
				if r.Totals.Figures["stalls"] > 0 {
					sum.Stalled++
					sum.StallMax = max(sum.StallMax, r.Totals.Figures["stall_max"])
				}
			}
		}
		return sum
	}
	if len(bv) == 0 {
		return nil, fmt.Errorf("no comparable results for %s (every run failed, or is a warm-up): see qpslab labels", base.Label)
	}
	ov := make([]map[key][]float64, len(others))
	for i, s := range others {
		c.Others = append(c.Others, s.Label)
		var oinfo map[key]placed
		ov[i], _, oinfo = values(s.Runs, layout)
		if len(ov[i]) == 0 {
			return nil, fmt.Errorf("no comparable results for %s (every run failed, or is a warm-up): see qpslab labels", s.Label)
		}
		for k, p := range oinfo {
			if _, ok := info[k]; !ok {
				info[k] = p
			}
		}
		if common(bv, ov[i]) == 0 {
			return nil, fmt.Errorf("%s and %s have no test in common at the same thread count: %s", base.Label, s.Label, noCommonWhy(bv, ov[i]))
		}
	}
	keys := make([]key, 0, len(bv))
	for k := range bv {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		pa, pb := info[a], info[b]
		if pa.pos != pb.pos {
			return pa.pos < pb.pos
		}
		if pa.step != pb.step {
			return pa.step < pb.step
		}
		if a.test != b.test {
			return a.test < b.test
		}
		if a.threads != b.threads {
			return a.threads < b.threads
		}
		return a.cond < b.cond
	})
	for i := 1; i < len(keys); i++ {
		a, b := keys[i-1], keys[i] // sorted: a test's rows are neighbours
		c.MixedConditions = c.MixedConditions || (a.test == b.test && a.threads == b.threads)
	}

	bRuns := runsByKey(base.Runs)
	oRuns := make([]map[key][]result.Run, len(others))
	for i, s := range others {
		oRuns[i] = runsByKey(s.Runs)
		c.Pools = append(c.Pools, pools(keys, bRuns, oRuns[i]))
	}
	c.Tally = make([]Tally, len(others))
	rels := make([]map[string][]float64, len(others)) // per other: group → relative values
	allRel := make([][]float64, len(others))
	for i := range rels {
		rels[i] = map[string][]float64{}
	}
	for _, k := range keys {
		pl := info[k]
		row := Row{Test: k.test, Threads: k.threads, Conditions: k.cond, Group: pl.group, Unit: units[k], Base: missed(base, k, summarize(bv[k], o.Confidence))}
		row.Base.Modes = modesOf(bRuns[k])
		if row.Base.N > 1 {
			c.Repeats = true
		}
		for i := range others {
			v, ok := ov[i][k]
			if !ok {
				row.Others = append(row.Others, Cell{Missing: true, Rel: math.NaN()})
				continue
			}
			cell := Cell{Summary: missed(others[i], k, summarize(v, o.Confidence))}
			cell.Modes = modesOf(oRuns[i][k])
			if cell.N > 1 {
				c.Repeats = true
			}
			floor, known := 0.0, false
			if o.Noise != nil {
				floor, known = o.Noise(k.test, k.threads, k.cond, bRuns[k], oRuns[i][k])
			}
			j := judging
			j.Floor, j.Calibrated, j.Pool = floor, known, poolFor(c.Pools[i], bRuns[k])
			if o.RunEffects != nil {
				j.RunSigma, j.RunDF = DefaultRunSigma, 0
				logs, ses := o.RunEffects(k.test, k.threads, k.cond, bRuns[k], oRuns[i][k])
				if s, ok := BetweenRuns(logs, ses); ok {
					j.RunSigma, j.RunDF = s, float64(len(logs)-1)
				}
			}
			bs, os := sidesFor(j.Pool, bRuns[k], oRuns[i][k])
			cell.Verdict = Judge(bs, os, j)
			cell.Rel = result.Ratio(cell.Center, row.Base.Center) // NaN for a base of 0, never ±Inf
			if cell.Verdict.Method == MethodPaired && !math.IsNaN(cell.Verdict.Rel) {
				cell.Rel = cell.Verdict.Rel
			}
			if !math.IsNaN(cell.Verdict.P) {
				cell.P, cell.Tested, cell.Significant = cell.Verdict.P, true, cell.Verdict.Significant
			}
			if m, err := result.MetricNamed(CostMetric); err == nil && !pl.aside {
				cb, co := RunSide(bRuns[k], m), RunSide(oRuns[i][k], m)
				// A CPU of 0 per operation is not measured (an import's runs).
				if cb.Runs > 0 && co.Runs > 0 && medianOf(bRuns[k], m) > 0 && medianOf(oRuns[i][k], m) > 0 {
					cj := j
					cj.Higher, cj.Floor, cj.Calibrated, cj.Pool, cj.RunSigma, cj.RunDF = false, 0, false, nil, 0, 0
					cv := Judge(cb, co, cj)
					cell.Cost = &cv
					t := &c.Tally[i]
					if cv.Kind != CannotTell {
						t.CostTested++
					}
					switch cv.Kind {
					case KindBetter:
						t.CostBetter++
					case KindWorse:
						t.CostWorse++
					}
				}
			}
			if i == 0 {
				pr := cell.Verdict.Pairing
				if cell.Verdict.Method != MethodPaired {
					pr = "unpaired"
				}
				c.Pairings[pr]++
			}
			if !pl.aside {
				t := &c.Tally[i]
				switch cell.Verdict.Kind {
				case KindBetter:
					t.Better++
				case KindWorse:
					t.Worse++
				case KindSame:
					t.Same++
				case KindInsideNoise:
					t.Inside++
				case KindEquivalent:
					t.Equivalent++
				default:
					t.CannotTell++
				}
				if cell.Verdict.Calibrated {
					t.Calibrated++
				}
			}
			if !math.IsNaN(cell.Rel) && !math.IsInf(cell.Rel, 0) {
				rels[i][row.Group] = append(rels[i][row.Group], cell.Rel)
				if !pl.aside { // the load is no test: not in "all" nor the geomean
					allRel[i] = append(allRel[i], cell.Rel)
				}
			}
			row.Others = append(row.Others, cell)
		}
		c.Rows = append(c.Rows, row)
	}
	correctFDR(c)
	for _, g := range layout.groups(info) {
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
		c.All = append(c.All, Describe(allRel[i]))
		c.Geomean = append(c.Geomean, geomean(allRel[i]))
	}
	for _, s := range all {
		if ic, ok := idleOf(s); ok {
			c.Idle = append(c.Idle, ic)
		}
	}
	c.State = State(all)
	return c, nil
}

// poolOf is the pool of tests the runs of one test belong to (PoolReads
// or PoolWrites, as the runs record whether their step writes; "" where
// they do not say).
func poolOf(runs []result.Run) string {
	for _, r := range runs {
		if w, known := r.Writes(); known {
			if w {
				return PoolWrites
			}
			return PoolReads
		}
	}
	return ""
}

// pools are what the paired tests of each kind say of their repeats, for
// one other label against the base: one Pool per kind, each over its
// tests' rounds (the load is no test of either kind).
//
// Each pool also asks whether its tests' first repeats differ from their
// later ones (first.go): where they do, the pool is made of the tests'
// later repeats, as their verdicts will be (sidesFor).
func pools(keys []key, base, other map[key][]result.Run) []Pool {
	byName := map[string][][2]Side{}
	for _, k := range keys {
		name := poolOf(base[k])
		if name == "" || len(base[k]) == 0 || base[k][0].Role == result.RoleLoad {
			continue
		}
		b, o := HeadlineSide(base[k]), HeadlineSide(other[k])
		if rounds, _ := PairRounds(b, o); len(rounds) > 0 {
			byName[name] = append(byName[name], [2]Side{b, o})
		}
	}
	var out []Pool
	for _, name := range []string{PoolReads, PoolWrites} {
		sides, ok := byName[name]
		if !ok {
			continue
		}
		var d []float64
		for _, s := range sides {
			if x, ok := firstDiff(s[0], s[1]); ok {
				d = append(d, x)
			}
		}
		effect, p := firstEffect(d)
		drop := p <= FirstLevel
		var tests [][]Round
		for _, s := range sides {
			b, o := s[0], s[1]
			if drop {
				b, o, _ = withoutFirst(b, o)
			}
			rounds, _ := PairRounds(b, o)
			tests = append(tests, rounds)
		}
		pl := PoolOf(name, tests)
		pl.FirstEffect, pl.FirstP, pl.FirstOut = effect, p, drop
		out = append(out, pl)
	}
	return out
}

// sidesFor are the sides a test is judged on: its runs' headline
// observations, without each plan's first repeat where its pool leaves
// them out (Pool.FirstOut).
func sidesFor(pool *Pool, base, other []result.Run) (Side, Side) {
	b, o := HeadlineSide(base), HeadlineSide(other)
	if pool != nil && pool.FirstOut {
		b, o, _ = withoutFirst(b, o)
	}
	return b, o
}

// poolFor is the pool of ps that the runs of a test belong to (nil: none).
func poolFor(ps []Pool, runs []result.Run) *Pool {
	if len(runs) == 0 || runs[0].Role == result.RoleLoad {
		return nil
	}
	name := poolOf(runs)
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

// runsByKey groups the comparable runs by test, thread count and
// conditions.
func runsByKey(runs []result.Run) map[key][]result.Run {
	m := map[key][]result.Run{}
	for _, r := range runs {
		if r.Comparable() {
			k := key{r.Test, r.Threads, r.LabelConditions()}
			m[k] = append(m[k], r)
		}
	}
	return m
}

// idleOf is the other servers' CPU over s's measured rounds, where it was
// measured.
func idleOf(s Set) (IdleCPU, bool) {
	ic := IdleCPU{Label: s.Label}
	var all []float64
	for _, r := range s.Runs {
		if !r.Comparable() || r.Pairing == "" || r.Pairing == result.PairedPasses {
			continue
		}
		var sum float64
		n := 0
		for _, rd := range r.Rounds {
			if rd.IdleCPU >= 0 {
				all = append(all, rd.IdleCPU)
				sum += rd.IdleCPU
				n++
			}
		}
		if n > 0 && sum/float64(n) > ic.Max {
			ic.Max, ic.MaxTest = sum/float64(n), r.Test
		}
	}
	if len(all) == 0 {
		return ic, false
	}
	ic.Median = median(all)
	return ic, true
}

// placed is where a test's row goes: its group in the layout, the group's
// position, the test's position in its suite's run order, and whether it
// stands aside from "all" (the load).
type placed struct {
	group string
	pos   int
	step  int
	aside bool
}

// Positions of the groups that are not the layout's.
const (
	otherPos = 1 << 20 // a test without a group in the layout
	loadPos  = 1 << 21 // the load, after every test
)

func placeOf(r result.Run, l layoutChoice) placed {
	if r.Role == result.RoleLoad {
		return placed{group: "load", pos: loadPos, step: r.Step, aside: true}
	}
	if l.user != nil {
		if p, ok := l.user.Place(r.Test); ok {
			return placed{group: p.Group, pos: p.Pos, step: r.Step}
		}
		return placed{group: "other", pos: otherPos, step: r.Step}
	}
	layout := l.name
	if p, ok := r.Placement(layout); ok && (layout == "" || p.Layout == layout) {
		return placed{group: p.Group, pos: p.Pos, step: r.Step}
	}
	return placed{group: "other", pos: otherPos, step: r.Step}
}

// layoutChoice is the layout a comparison groups by: a name (of the
// suite's registered layouts, or one an import brought), or a user's.
type layoutChoice struct {
	name string
	user *result.Layout
}

// groups lists the groups the rows fall in, in layout order (by position,
// then name: a group an import brought of its own may share a position
// with one of the registered layout's), "other" and "load" last.
func (l layoutChoice) groups(info map[key]placed) []string {
	type at struct {
		pos   int
		group string
	}
	seen := map[at]bool{}
	var all []at
	for _, p := range info {
		if a := (at{p.pos, p.group}); !seen[a] {
			seen[a] = true
			all = append(all, a)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].pos != all[j].pos {
			return all[i].pos < all[j].pos
		}
		return all[i].group < all[j].group
	})
	out := make([]string, len(all))
	for i, a := range all {
		out[i] = a.group
	}
	return out
}

// chooseLayout is the layout asked for, which the runs must be placed in,
// or the runs' default: the first layout the first placed run is in. Where
// runs are placed is what their suite's registered layouts say now
// (result.Placements), not what was stored with them.
func chooseLayout(sets []Set, want string) (layoutChoice, error) {
	have := map[string]bool{}
	def := ""
	suite := ""
	for _, s := range sets {
		for _, r := range s.Runs {
			suite = r.Suite
			for i, p := range result.Placements(r) {
				have[p.Layout] = true
				if def == "" && i == 0 {
					def = p.Layout
				}
			}
		}
	}
	switch {
	case want == "":
		return layoutChoice{name: def}, nil
	case have[want]:
		return layoutChoice{name: want}, nil
	}
	offer := result.LayoutNames(suite)
	for _, n := range sortedKeys(have) {
		if !slices.Contains(offer, n) {
			offer = append(offer, n)
		}
	}
	if len(offer) == 0 {
		return layoutChoice{}, fmt.Errorf("--groups %s: these runs carry no group layout: leave --groups out", want)
	}
	return layoutChoice{}, fmt.Errorf("--groups %s: %s's runs are grouped by the layout(s) %s (qpslab suites lists their groups)", want, suite, strings.Join(offer, ", "))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func common(a, b map[key][]float64) int {
	n := 0
	for k := range a {
		if _, ok := b[k]; ok {
			n++
		}
	}
	return n
}

// noCommonWhy explains two labels without a common test: other thread
// counts, or other tests.
func noCommonWhy(a, b map[key][]float64) string {
	tests := func(m map[key][]float64) (map[string]bool, map[int]bool) {
		t, th := map[string]bool{}, map[int]bool{}
		for k := range m {
			t[k.test], th[k.threads] = true, true
		}
		return t, th
	}
	// The same tests at the same thread counts: only their conditions differ.
	for ka := range a {
		for kb := range b {
			if ka.test == kb.test && ka.threads == kb.threads {
				return fmt.Sprintf("their runs differ in what the figures mean (%s): compare runs made alike", result.ConditionsDiff(ka.cond, kb.cond))
			}
		}
	}
	ta, tha := tests(a)
	tb, thb := tests(b)
	shared := 0
	for t := range ta {
		if tb[t] {
			shared++
		}
	}
	if shared > 0 {
		return fmt.Sprintf("they share %d test(s) but ran them at other thread counts (%s against %s): pick one with --threads", shared, intKeys(tha), intKeys(thb))
	}
	return "they ran different tests"
}

func intKeys(m map[int]bool) string {
	var v []int
	for k := range m {
		v = append(v, k)
	}
	sort.Ints(v)
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ","), "[]")
}

// IntervalN is the fewest values benchmath needs for a finite confidence
// interval of the median at this confidence, assuming no distribution.
func IntervalN(confidence float64) int {
	thr := benchmath.DefaultThresholds
	for n := 2; n <= 64; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i + 1)
		}
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &thr), confidence)
		if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) {
			return n
		}
	}
	return 0
}

// values collects the reported figure of each comparable run by test and
// thread count, with each one's unit and place in the layout.
func values(runs []result.Run, layout layoutChoice) (map[key][]float64, map[key]string, map[key]placed) {
	v, u, p := map[key][]float64{}, map[key]string{}, map[key]placed{}
	for _, r := range runs {
		if !r.Comparable() {
			continue
		}
		k := key{r.Test, r.Threads, r.LabelConditions()}
		v[k] = append(v[k], r.Totals.Reported)
		u[k] = r.Totals.ReportedUnit
		p[k] = placeOf(r, layout)
	}
	return v, u, p
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
	if math.IsInf(s.Center, 0) || math.IsNaN(s.Center) { // its interpolation overflows on ±MaxFloat64
		sorted := append([]float64{}, v...)
		sort.Float64s(sorted)
		s.Center = history.Median(sorted)
	}
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
	if math.IsInf(s.Avg, 0) || math.IsNaN(s.Avg) { // the sum overflowed
		s.Avg = result.Mean(v)
	}
	if len(v) > 1 {
		s.Stddev = stat.StdDev(v, nil)
		if math.IsInf(s.Stddev, 0) || math.IsNaN(s.Stddev) {
			s.Stddev = result.StdDev(v)
		}
	}
	return s
}

func geomean(v []float64) float64 { return result.GeoMean(v) }
