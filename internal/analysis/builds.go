package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// BuildChange is what happened between two neighbouring builds of a series
// too short for change points (2 to 2·MinSegment−1 builds, 2 to 5 by
// default), told from their repeats as compare tells it: the Mann-Whitney
// U test over the runs of each (benchmath, assuming no distribution) at
// compare's α, and the change of the medians.
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
	// PValue is the Mann-Whitney U test's (NaN when untested): the
	// probability of so large a difference between the two sets of runs
	// if the builds were the same. Confidence is 1 − PValue.
	PValue     float64 `json:"pvalue"`
	Confidence float64 `json:"confidence"`
	Tested     bool    `json:"tested"`
	Alpha      float64 `json:"alpha"`
	// Newest: To is the series' newest build.
	Newest bool `json:"newest"`
	// Method is how the two builds were tested (Verdict's methods):
	// paired rounds of one plan (Pairing, Rounds; Magnitude is then the
	// geometric mean of the per-round ratios less 1, within Lo and Hi),
	// or unpaired repeats.
	Method  string  `json:"method"`
	Pairing string  `json:"pairing,omitempty"`
	Rounds  int     `json:"rounds,omitempty"`
	Lo      float64 `json:"lo,omitempty"`
	Hi      float64 `json:"hi,omitempty"`
}

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
// their repeats. The minimum magnitude is the series' detect option.
func Builds(series []history.Series, settings DetectSettings, base changepoint.Options) []BuildChange {
	thr := benchmath.DefaultThresholds
	var out []BuildChange
	for _, s := range series {
		want := shortOf(s, settings, base)
		if want == 0 || !comparesBuilds(s, want) {
			continue
		}
		o, floorWhy := settings.seriesOptions(base, s)
		for i := 1; i < len(s.Points); i++ {
			from, to := s.Points[i-1], s.Points[i]
			b := BuildChange{Series: s.Name(), Suite: s.Suite, Test: s.Test, Metric: s.Metric, Threads: s.Threads, Config: s.Config, Host: s.Host,
				From: from, To: to, PValue: math.NaN(), Confidence: math.NaN(), Alpha: thr.CompareAlpha, Newest: i == len(s.Points)-1}
			if from.Value != 0 {
				b.Magnitude = result.Ratio(to.Value-from.Value, from.Value) // no overflow from a tiny from
				if math.IsInf(to.Value-from.Value, 0) {                     // values of both signs near the largest float
					b.Magnitude = result.Ratio(to.Value, from.Value) - 1
				}
			}
			nf, nt := len(from.Values), len(to.Values)
			v := Test(pointSide(from), pointSide(to), Judging{Alpha: b.Alpha})
			b.Method, b.Pairing, b.Rounds = v.Method, v.Pairing, v.N
			if v.Method == MethodPaired {
				b.Magnitude = v.Rel - 1
				b.Lo, b.Hi = v.Lo, v.Hi
			}
			switch {
			case v.Kind == CannotTell && v.Method == MethodNone && nf < 2 && nt < 2:
				b.Kind = CannotTell
				b.Why = "one run per build, so no spread to tell a change from noise: repeat the runs (qpslab run --repeat 5), or run the builds in one plan (paired rounds)"
			case v.Kind == CannotTell && v.Method == MethodNone:
				b.Kind = CannotTell
				b.Why = fmt.Sprintf("%s: one run shows no spread; repeat the runs (qpslab run --repeat 5)", runsOf(nf, nt))
			case v.Kind == CannotTell:
				b.Kind, b.Why = CannotTell, v.Why
			default:
				b.Tested, b.PValue, b.Confidence = true, v.P, 1-v.P
				rel := v.Rel
				worse := rel < 1
				if !s.HigherIsBetter {
					worse = rel > 1
				}
				switch {
				case !v.Significant:
					b.Kind = NoChange
				case !(magnitude(1, rel) > o.MinMagnitude) && floorWhy != "":
					b.Kind, b.Why = NoChange, fmt.Sprintf("below the minimum magnitude %g%s", o.MinMagnitude, floorWhy)
				case !(magnitude(1, rel) > o.MinMagnitude):
					b.Kind, b.Why = NoChange, fmt.Sprintf("below --min-magnitude %g", o.MinMagnitude)
				case worse:
					b.Kind = "regression"
				default:
					b.Kind = "improvement"
				}
			}
			out = append(out, b)
		}
	}
	return out
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
