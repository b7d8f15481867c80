package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// BuildChange is what happened between two neighbouring builds of a series
// too short for change points (2 or 3 builds; 2 to 2·MinSegment−1 points
// with --method otava), told from their runs: where one plan measured
// both side by side (paired rounds), compare's own verdict on them; else
// Student's t test on the logarithms of their runs at compare's α (the
// runs' spread: three runs against three can tell a large change, which
// ranks alone cannot), with the relative change of the medians, and
// compare's verdict beside it where the two differ.
type BuildChange struct {
	Series  string `json:"series"`
	Suite   string `json:"suite,omitempty"`
	Test    string `json:"test"`
	Metric  string `json:"metric"`
	Threads int    `json:"threads,omitempty"`
	Config  string `json:"config,omitempty"`
	Host    string `json:"host,omitempty"`
	// Kind is regression or improvement (significant, and beyond the
	// minimum magnitude), "no significant change", or "cannot tell" (too few runs for
	// the test to tell a change from noise; Why says which).
	Kind string `json:"kind"`
	Why  string `json:"why,omitempty"`
	// From is the older build, To the newer (each a point with its runs'
	// values).
	From history.Point `json:"from"`
	To   history.Point `json:"to"`
	// Magnitude is (median of To − median of From) / median of From.
	Magnitude float64 `json:"magnitude"`
	// PValue is the test's (NaN when untested): the probability of so
	// large a difference between the two sets of runs if the builds were
	// the same. Confidence is 1 − PValue.
	PValue     float64 `json:"pvalue"`
	Confidence float64 `json:"confidence"`
	Tested     bool    `json:"tested"`
	Alpha      float64 `json:"alpha"`
	// Newest: To is the series' newest build.
	Newest bool `json:"newest"`
	// Method is how the two builds were tested: paired rounds of one plan
	// (MethodPaired: compare's verdict; Pairing, Rounds; Magnitude is then
	// the geometric mean of the per-round ratios less 1, within Lo and
	// Hi), or their runs (MethodRunsT).
	Method  string  `json:"method"`
	Pairing string  `json:"pairing,omitempty"`
	Rounds  int     `json:"rounds,omitempty"`
	Lo      float64 `json:"lo,omitempty"`
	Hi      float64 `json:"hi,omitempty"`
	// Compare is qpslab compare's verdict on the same two builds (its
	// paired rounds, or its rank test of the repeats, and its noise floor);
	// Note says so where it gives another answer than the runs' t test,
	// and why, so that the two surfaces never contradict each other
	// silently.
	Compare *Verdict `json:"compare,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// MethodRunsT is a BuildChange's test of unpaired runs: Student's t on
// the logarithms of the two builds' runs (the values themselves when one
// is not positive), equal variances.
const MethodRunsT = "runs t-test"

// pointSide is a build's point as one side of a Test: its observations
// (its runs' rounds and repeats, for pairing).
func pointSide(p history.Point) Side {
	if len(p.Obs) > 0 {
		return Side{Obs: p.Obs, Runs: p.N}
	}
	s := Side{Runs: p.N}
	for _, v := range p.Values {
		s.Obs = append(s.Obs, Obs{Value: v})
	}
	return s
}

// Kinds of BuildChange besides regression and improvement.
const (
	NoChange   = "no significant change"
	CannotTell = "cannot tell"
)

// comparesBuilds reports whether Builds compares s's builds when s is too
// short for change points (want points): its points are builds in version
// or commit order, two or more.
func comparesBuilds(s history.Series, want int) bool {
	return (s.Order == history.OrderVersion || s.Order == history.OrderCommit) && len(s.Points) >= 2 && len(s.Points) < want
}

// Builds compares the neighbouring builds of every series too short for
// change points whose points are builds: each build with the next, by
// their runs (BuildChange). The minimum magnitude is the series' detect
// option.
func Builds(series []history.Series, settings DetectSettings, base changepoint.Options) []BuildChange {
	var out []BuildChange
	for _, s := range series {
		want := shortOf(s, settings, base)
		if want == 0 || !comparesBuilds(s, want) {
			continue
		}
		o, floorWhy := settings.seriesOptions(base, s)
		for i := 1; i < len(s.Points); i++ {
			out = append(out, compareBuilds(s, i, o, floorWhy, settings))
		}
	}
	return out
}

// BuildCalls are the regressions and improvements among bs (of series)
// as changes of their series, for the surfaces that list changes (the
// dashboard's attention view and its alerts): each arrived in the newer
// build, after the older.
func BuildCalls(series []history.Series, bs []BuildChange) []Change {
	byName := map[string]history.Series{}
	for _, s := range series {
		byName[s.Name()] = s
	}
	var out []Change
	for _, b := range bs {
		s, ok := byName[b.Series]
		if !ok || (b.Kind != "regression" && b.Kind != "improvement") {
			continue
		}
		i := slices.IndexFunc(s.Points, func(p history.Point) bool { return p.Build == b.To.Build })
		if i < 1 {
			continue
		}
		c := Change{Series: b.Series, Suite: b.Suite, Test: b.Test, Metric: b.Metric, Threads: b.Threads, Config: b.Config, Host: b.Host,
			Kind: b.Kind, Magnitude: b.Magnitude, MeanBefore: b.From.Value, MeanAfter: b.To.Value, PValue: b.PValue,
			Index: i, Points: len(s.Points), Order: s.Order, Arrived: b.To, Before: b.From, Earliest: b.To, Latest: b.To,
			Last: b.Newest, New: b.Newest, Method: ChangeBuilds, Note: b.Note}
		if b.Method == MethodPaired {
			c.Pair = b.Compare
		}
		out = append(out, c)
	}
	return out
}

// compareBuilds is BuildChange of s's points i−1 and i.
func compareBuilds(s history.Series, i int, o changepoint.Options, floorWhy string, settings DetectSettings) BuildChange {
	from, to := s.Points[i-1], s.Points[i]
	b := BuildChange{Series: s.Name(), Suite: s.Suite, Test: s.Test, Metric: s.Metric, Threads: s.Threads, Config: s.Config, Host: s.Host,
		From: from, To: to, PValue: math.NaN(), Confidence: math.NaN(), Alpha: DefaultAlpha, Newest: i == len(s.Points)-1}
	if from.Value != 0 {
		b.Magnitude = result.Ratio(to.Value-from.Value, from.Value) // no overflow from a tiny from
		if math.IsInf(to.Value-from.Value, 0) {                     // values of both signs near the largest float
			b.Magnitude = result.Ratio(to.Value, from.Value) - 1
		}
	}
	cmp := judgePair(s, from, to, settings)
	b.Compare = &cmp
	rel := math.NaN()
	if cmp.Method == MethodPaired {
		// One plan measured both: compare's verdict is the answer.
		b.Method, b.Pairing, b.Rounds = MethodPaired, cmp.Pairing, cmp.N
		b.Magnitude, b.Lo, b.Hi = cmp.Rel-1, cmp.Lo, cmp.Hi
		switch cmp.Kind {
		case CannotTell:
			b.Kind, b.Why = CannotTell, cmp.Why
			return b
		case KindSame, KindEquivalent, KindInsideNoise:
			b.Tested, b.PValue, b.Confidence = !math.IsNaN(cmp.P), cmp.P, 1-cmp.P
			b.Kind, b.Why = NoChange, verdictWhy(cmp)
			return b
		}
		b.Tested, b.PValue, b.Confidence = true, cmp.P, 1-cmp.P
		rel = cmp.Rel
	} else {
		nf, nt := len(from.Values), len(to.Values)
		b.Method = MethodRunsT
		p, ok := runsT(from.Values, to.Values)
		switch {
		case !ok && nf < 2 && nt < 2:
			b.Kind = CannotTell
			b.Why = "one run per build, so no spread to tell a change from noise: repeat the runs (qpslab run --repeat 3), or run the builds in one plan (paired rounds)"
			return b
		case !ok:
			b.Kind = CannotTell
			b.Why = fmt.Sprintf("%s: too few to measure their spread; repeat the runs (qpslab run --repeat 3)", runsOf(nf, nt))
			return b
		}
		b.Tested, b.PValue, b.Confidence = true, p, 1-p
		rel = 1 + b.Magnitude
		if !(p < b.Alpha) {
			b.Kind = NoChange
			b.note(cmp)
			return b
		}
	}
	worse := rel < 1
	if !s.HigherIsBetter {
		worse = rel > 1
	}
	switch {
	case !(magnitude(1, rel) > o.MinMagnitude) && floorWhy != "":
		b.Kind, b.Why = NoChange, fmt.Sprintf("below the minimum magnitude %g%s", o.MinMagnitude, floorWhy)
	case !(magnitude(1, rel) > o.MinMagnitude):
		b.Kind, b.Why = NoChange, fmt.Sprintf("below --min-magnitude %g", o.MinMagnitude)
	case worse:
		b.Kind = "regression"
	default:
		b.Kind = "improvement"
	}
	if b.Method != MethodPaired {
		b.note(cmp)
	}
	return b
}

// note says where compare's verdict on the same two builds (its rank test
// of the repeats, beyond its noise floor) gives another answer than the
// runs' t test, and why.
func (b *BuildChange) note(cmp Verdict) {
	called := b.Kind == "regression" || b.Kind == "improvement"
	if called == cmp.Changed() && (!called || (b.Kind == "regression") == (cmp.Kind == KindWorse)) {
		return
	}
	b.Note = "compare says " + verdictWords(cmp)
	if why := verdictWhy(cmp); why != "" {
		b.Note += ": " + why
	}
	switch {
	case called && cmp.Kind == KindInsideNoise:
		b.Note += "; the runs' t test has no noise floor"
	case called && cmp.Method == MethodRepeats:
		b.Note += "; its rank test uses the order of the runs only, the t test their spread"
	}
}

// VerdictWords names a verdict as compare's legend does.
func VerdictWords(v Verdict) string { return verdictWords(v) }

// verdictWords names a verdict as compare's legend does.
func verdictWords(v Verdict) string {
	switch v.Kind {
	case KindWorse, KindBetter:
		return fmt.Sprintf("%s, %.2f×", v.Kind, v.Rel)
	case KindSame:
		return "undecided"
	case "":
		return CannotTell
	}
	return v.Kind
}

// verdictWhy is a verdict's reason, with its interval where it has one.
func verdictWhy(v Verdict) string {
	var parts []string
	if !math.IsNaN(v.Lo) && !math.IsNaN(v.Hi) && v.Lo > 0 {
		parts = append(parts, fmt.Sprintf("%.2f [%.2f, %.2f]", v.Rel, v.Lo, v.Hi))
	}
	if !math.IsNaN(v.P) {
		parts = append(parts, "p="+strconv.FormatFloat(v.P, 'g', 2, 64))
	}
	if v.Why != "" {
		parts = append(parts, v.Why)
	}
	return strings.Join(parts, ", ")
}

// judgePair is compare's verdict on two builds of series s: the one qpslab
// compare gives of their labels (settings.Pair, from the store: its pools
// of tests and its noise floor), or, without it, Judge on the two points'
// observations with the series' noise floor.
func judgePair(s history.Series, from, to history.Point, settings DetectSettings) Verdict {
	if settings.Pair != nil && s.Metric == history.HeadlineMetric {
		if v, ok := settings.Pair(s, from, to); ok {
			return v
		}
	}
	j := DefaultJudging()
	j.Higher = s.HigherIsBetter
	if settings.Floors != nil && s.HostID != "" && s.Metric == history.HeadlineMetric {
		if f, ok := settings.Floors(s.HostID, s.Suite, s.Test, s.Threads, s.Conditions); ok {
			j.Floor, j.Calibrated = f, true
		}
	}
	return Judge(pointSide(from), pointSide(to), j)
}

// paired says whether two builds' points pair: rounds (or repeats) of one
// plan measured side by side.
func paired(from, to history.Point) bool {
	rounds, _ := PairRounds(pointSide(from), pointSide(to))
	return len(rounds) > 0
}

// runsT is the two-sided p-value of Student's t test between the runs a
// and b (equal variances, on their logarithms when all are positive), and
// whether it could be computed: two degrees of freedom or more.
func runsT(a, b []float64) (p float64, ok bool) {
	na, nb := len(a), len(b)
	if na+nb-2 < 2 || na == 0 || nb == 0 {
		return math.NaN(), false
	}
	logs := true
	for _, v := range append(append([]float64{}, a...), b...) {
		logs = logs && v > 0 && !math.IsInf(v, 0)
	}
	mv := func(x []float64) (m, ss float64) {
		for _, v := range x {
			if logs {
				v = math.Log(v)
			}
			m += v
		}
		m /= float64(len(x))
		for _, v := range x {
			if logs {
				v = math.Log(v)
			}
			ss += (v - m) * (v - m)
		}
		return
	}
	ma, sa := mv(a)
	mb, sb := mv(b)
	df := float64(na + nb - 2)
	s2 := (sa + sb) / df
	d := mb - ma
	switch {
	case math.IsNaN(d) || math.IsInf(d, 0) || math.IsNaN(s2) || math.IsInf(s2, 0):
		return math.NaN(), false
	case !(s2 > 0):
		if d == 0 {
			return 1, true
		}
		return 0, true
	}
	t := d / math.Sqrt(s2*(1/float64(na)+1/float64(nb)))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t)), true
}

func runsOf(a, b int) string {
	if a == b {
		return fmt.Sprintf("%d runs each", a)
	}
	return fmt.Sprintf("%d and %d runs", a, b)
}

// magnitude is the detector's: max(|b/a − 1|, |a/b − 1|).
func magnitude(a, b float64) float64 {
	var fwd, bwd float64
	if a != 0 {
		fwd = b/a - 1
	}
	if b != 0 {
		bwd = a/b - 1
	}
	return math.Max(math.Abs(fwd), math.Abs(bwd))
}

// minMannWhitneyP is the smallest two-sided p-value the Mann-Whitney U
// test gives two samples of n and m values: both orderings of the
// C(n+m, n) equally likely arrangements are the extreme ones.
func minMannWhitneyP(n, m int) float64 {
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// Gate is the check of --fail-on: the newest build must not bring a
// regression of at least Min (a fraction; 0 for any).
type Gate struct {
	Min  float64
	Spec string // as given
}

// ParseGate reads --fail-on: "regression" or "regression:N%".
func ParseGate(spec string) (Gate, error) {
	g := Gate{Spec: spec}
	kind, min, hasMin := strings.Cut(spec, ":")
	if kind != "regression" {
		return g, fmt.Errorf("--fail-on %q: give regression or regression:N%% (e.g. regression:5%%)", spec)
	}
	if hasMin {
		pct, ok := strings.CutSuffix(min, "%")
		v, err := strconv.ParseFloat(pct, 64)
		if !ok || err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return g, fmt.Errorf("--fail-on %q: the threshold is a percentage: give regression or regression:N%% (e.g. regression:5%%)", spec)
		}
		g.Min = v / 100
	}
	return g, nil
}

// Failures are what trips the gate: the regressions the newest build
// brings. In a series long enough for change points, a regression that is
// the series' last change point (the newest build is at the new level) and
// that the newest build established (detect does not find it without
// that build's point), so each regression trips the gate once, on the
// build that makes it certain, however long ago it arrived (its interval
// says where); in a series of a few builds, a regression between the two
// newest builds. Either way its magnitude is at least g.Min.
func (g Gate) Failures(changes []Change, builds []BuildChange) ([]Change, []BuildChange) {
	var cs []Change
	var bs []BuildChange
	for _, c := range changes {
		if c.Kind == "regression" && c.Last && c.New && math.Abs(c.Magnitude) >= g.Min {
			cs = append(cs, c)
		}
	}
	for _, b := range builds {
		if b.Kind == "regression" && b.Newest && math.Abs(b.Magnitude) >= g.Min {
			bs = append(bs, b)
		}
	}
	return cs, bs
}
