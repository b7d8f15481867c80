package analysis

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// Kinds of a Verdict.
const (
	KindBetter      = "better"                 // a change beyond the noise, the better way
	KindWorse       = "worse"                  // a change beyond the noise, the worse way
	KindSame        = "same"                   // tested: no significant change, and not shown to be within the floor either (undecided)
	KindEquivalent  = "equivalent"             // the same within the floor: two one-sided tests say the change is smaller than it
	KindInsideNoise = "inside the noise floor" // significant, but no larger than this host's noise floor
)

// Methods of a Verdict: how the two sides were measured and tested.
const (
	MethodPaired  = "paired"  // rounds measured next to each other (Pairing says how)
	MethodRepeats = "repeats" // unpaired repeats: the Mann-Whitney U test
	MethodSingle  = "single"  // one run a side: each run's own seconds (RunInterval)
	MethodNone    = "none"    // nothing to test a change with (a single value a side, no seconds)
)

// DefaultFloor is the smallest change a verdict calls better or worse
// where the host's noise floor is not known (qpslab run --aa measures
// it): the reference's colour thresholds, ±5 %.
const DefaultFloor = Better - 1

// DefaultAlpha is every verdict's level unless told otherwise: compare's,
// bisect's and the dashboard's (benchmath's default).
var DefaultAlpha = benchmath.DefaultThresholds.CompareAlpha

// Judging is how a verdict is reached. Its options live in one struct
// with their defaults in one place (DefaultJudging), as golang.org/x/perf's
// benchmath keeps its Thresholds, so that a new one extends it without
// new arguments.
type Judging struct {
	// Alpha is the level over all of a test's looks (0.05): a change is
	// called where the (1 − Level) interval excludes 1, sameness within
	// the floor where the (1 − 2·Level) interval lies inside it (two
	// one-sided tests at Level).
	Alpha float64
	// Looks is the most looks at the data a sequential run may take
	// (--until-decided; ≤ 1: one). Each look is judged at Level, so that
	// the rate of false calls over all of them stays within Alpha.
	Looks int
	// Higher says which way is better (true for qps).
	Higher bool
	// Floor is the smallest change called better or worse, and the margin
	// within which two are called the same (a fraction; not > 0:
	// DefaultFloor). Calibrated says it is this host's (qpslab run --aa).
	Floor      float64
	Calibrated bool
	// Pool is what the tests of this one's kind in its comparison say of
	// their repeats (nil: the test alone; Paired).
	Pool *Pool
	// RunSigma is σ of the test's run effect on its host (BetweenRuns,
	// or DefaultRunSigma; 0: none taken in): a paired interval's SE² gains
	// RunSigma²/plans (runs.go).
	RunSigma float64
	// RunDF are its degrees of freedom (the A/A plans less one; 0 for
	// the default, taken as known).
	RunDF float64
}

// DefaultJudging are the options of every verdict unless a caller says
// otherwise: α = 0.05 in one look, higher better, the default floor.
func DefaultJudging() Judging {
	return Judging{Alpha: DefaultAlpha, Looks: 1, Higher: true, Floor: DefaultFloor}
}

// pocock are Pocock's (1977) nominal two-sided levels per look that keep
// the overall level at 0.05 over K equally spaced looks, K = 1 … 10
// (Jennison and Turnbull, "Group Sequential Methods", table 2.1: the
// constants 1.960, 2.178, 2.289, 2.361, 2.413, 2.453, 2.485, 2.512, 2.535,
// 2.555 as two-sided normal tail areas). One level at every look, rather
// than an α-spending function, because a look of --until-decided adds
// repeats to the undecided tests only, so the looks of a test are not a
// schedule fixed in advance, and a fixed level needs none; and because the
// verdict a later qpslab compare gives of the same runs is then the same
// as the last look's. TestSequentialFalsePositives checks the overall
// level with --until-decided's own schedule and t intervals.
var pocock = []float64{0.05, 0.0294, 0.0221, 0.0182, 0.0158, 0.0142, 0.0130, 0.0120, 0.0112, 0.0106}

// MaxLooks is the most looks Level has Pocock's level for; CountedLooks
// the most it counts at all (ten resumed bisect plans of four looks: a
// larger count, from an imported results file, is no plan qpslab makes).
const (
	MaxLooks     = 10
	CountedLooks = 40
)

// Level is the level each look is judged at: Alpha for one look; for K
// looks at Alpha 0.05, Pocock's up to MaxLooks; else Alpha/K (Bonferroni:
// the union bound keeps the overall level within Alpha, more strictly;
// a resumed bisect step's pooled plans can sum to more than MaxLooks).
func (j Judging) Level() float64 {
	k := min(max(j.Looks, 1), CountedLooks)
	switch {
	case k == 1:
		return j.Alpha
	case j.Alpha == 0.05 && k <= MaxLooks:
		return pocock[k-1]
	}
	return j.Alpha / float64(k)
}

// Confidence is the confidence of a look's interval, 1 − Level.
func (j Judging) Confidence() float64 { return 1 - j.Level() }

// withDefaults fills what is not set.
func (j Judging) withDefaults() Judging {
	if !(j.Alpha > 0 && j.Alpha < 1) {
		j.Alpha = DefaultAlpha
	}
	if !(j.Floor > 0) || math.IsInf(j.Floor, 0) {
		j.Floor, j.Calibrated = DefaultFloor, false
	}
	return j
}

// Verdict is what a comparison concludes of one figure of one test for an
// other label against the base, and the evidence behind it.
type Verdict struct {
	Method  string `json:"method"`
	Pairing string `json:"pairing,omitempty"` // result.Paired*: how paired rounds were measured
	// N is what the test rests on: rounds (paired), the fewer repeats of
	// the two sides (repeats), the fewer seconds of the two runs (single).
	N      int     `json:"n"`
	Blocks int     `json:"blocks,omitempty"` // paired: repeats (plans × repeats) the rounds fall in
	Rel    float64 `json:"rel"`              // other / base
	// Lo and Hi bound Rel at the look's confidence, 1 − Level (NaN where
	// no interval is known).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	P  float64 `json:"p"` // the test's two-sided p-value (NaN where untested)
	// Q is P adjusted for the false-discovery rate over the tests of its
	// comparison (BHAdjust; 0 where no comparison corrected it), and
	// NotAfterFDR marks a change (better or worse) whose Q is above its
	// level: called on its own, not after the correction.
	Q           float64 `json:"q,omitempty"`
	NotAfterFDR bool    `json:"not_after_fdr,omitempty"`
	// Level is the level the verdict was judged at (Judging.Level: 0.05,
	// or a sequential run's per-look level).
	Level float64 `json:"level"`
	// Paired verdicts: the interval's units (UnitRounds or UnitRepeats),
	// its degrees of freedom and the standard error of the log ratio; Pool
	// is what the test's kind said of the repeats ("" for a test alone).
	Unit string  `json:"unit,omitempty"`
	DF   float64 `json:"df,omitempty"`
	SE   float64 `json:"se,omitempty"`
	Pool string  `json:"pool,omitempty"`
	// RunSigma is the between-run σ the interval took in (0: none), over
	// Plans plans.
	RunSigma float64 `json:"run_sigma,omitempty"`
	Plans    int     `json:"plans,omitempty"`
	// Significant: the test says the two differ (paired: the interval
	// excludes 1; repeats: Mann-Whitney's p below the level; single: the
	// interval excludes 1).
	Significant bool `json:"significant"`
	// Floor is the smallest change called better or worse (a fraction):
	// the host's noise floor for the test where qpslab run --aa measured
	// it (Calibrated), else DefaultFloor. Within it, two are called
	// equivalent.
	Floor      float64 `json:"floor"`
	Calibrated bool    `json:"calibrated,omitempty"`
	Kind       string  `json:"kind"` // KindBetter, KindWorse, KindEquivalent, KindSame, KindInsideNoise or CannotTell
	Why        string  `json:"why,omitempty"`
	// More is, for a paired verdict still undecided (KindSame), about how
	// many more repeats like the ones it has would decide it at its
	// level (0 where not known): the estimate of --until-decided.
	More int `json:"more,omitempty"`
}

// Changed says whether the verdict calls a change: significant and
// beyond the floor.
func (v Verdict) Changed() bool { return v.Kind == KindBetter || v.Kind == KindWorse }

// OwnRel is the verdict's own relative value where it differs from a
// ratio of medians and is the one its kind is of: a paired verdict's
// geometric mean of per-round ratios (finite and > 0). Every surface that
// prints a paired verdict's mark prints this number beside it.
func (v Verdict) OwnRel() (float64, bool) {
	if v.Method != MethodPaired || !(v.Rel > 0) || math.IsInf(v.Rel, 0) {
		return math.NaN(), false
	}
	return v.Rel, true
}

// Decided says whether the verdict is an answer: a change, a significant
// one inside the floor, or the same within the floor. --until-decided
// stops a test's repeats there. A change the false-discovery correction
// does not keep (NotAfterFDR) is not decided: more repeats may keep it.
func (v Verdict) Decided() bool {
	if v.NotAfterFDR {
		return false
	}
	return v.Changed() || v.Kind == KindInsideNoise || v.Kind == KindEquivalent
}

// Colour of a verdict: red for worse, green for better, none otherwise;
// where there is nothing to test with (MethodNone: one imported value a
// side) the reference's thresholds (Colour) are all there is, and the
// legend says so.
func (v Verdict) Colour() string {
	switch {
	case v.Kind == KindBetter:
		return "green"
	case v.Kind == KindWorse:
		return "red"
	case v.Method == MethodNone:
		return Colour(v.Rel)
	}
	return ""
}

// Obs is one observation of a label's figure, with where it was measured,
// for pairing: two observations pair when they share a plan (non-empty),
// a repeat and a round.
type Obs = history.Obs

// Side is one label's observations of a figure for one test, and for a
// single run its per-second values.
type Side struct {
	Obs []Obs
	// Runs is how many runs the observations come from.
	Runs int
	// Seconds are the per-second values of each run (for the verdict of
	// single runs; nil where samples were not loaded).
	Seconds [][]float64
}

// HeadlineSide is the side of runs' headline figure (Totals.Reported):
// each run's rounds where it has them, else the run as one observation of
// its repeat; and each run's per-second rate of what its headline counts.
func HeadlineSide(runs []result.Run) Side {
	var s Side
	for _, r := range runs {
		s.Runs++
		rep, _ := strconv.Atoi(r.Params["repeat"])
		if len(r.Rounds) > 0 && r.Plan != "" {
			for _, rd := range r.Rounds {
				s.Obs = append(s.Obs, Obs{Plan: r.Plan, Pairing: r.Pairing, Repeat: rd.Repeat, Round: rd.Round, Value: rd.Value})
			}
		} else {
			s.Obs = append(s.Obs, Obs{Repeat: rep, Value: r.Totals.Reported})
		}
		if len(r.Samples) > 0 {
			s.Seconds = append(s.Seconds, perSecond(r))
		}
	}
	return s
}

// RunSide is the side of metric m: each run's rounds where they carry
// it (a sliced run's hardware cost per slice), paired round by round;
// else one observation per run, paired by its plan and repeat.
func RunSide(runs []result.Run, m result.Metric) Side {
	var s Side
	for _, r := range runs {
		v, ok := m.Of(r)
		if !ok || math.IsNaN(v) {
			continue
		}
		s.Runs++
		if r.Pairing != "" && r.Plan != "" && len(r.Rounds) > 0 {
			var obs []Obs
			for _, rd := range r.Rounds {
				if x, ok := rd.Figures[m.Name]; ok {
					obs = append(obs, Obs{Plan: r.Plan, Pairing: r.Pairing, Repeat: rd.Repeat, Round: rd.Round, Value: x})
				}
			}
			if len(obs) == len(r.Rounds) {
				s.Obs = append(s.Obs, obs...)
				continue
			}
		}
		rep, _ := strconv.Atoi(r.Params["repeat"])
		o := Obs{Repeat: rep, Value: v}
		if r.Pairing != "" {
			o.Plan, o.Pairing = r.Plan, r.Pairing
		}
		s.Obs = append(s.Obs, o)
	}
	return s
}

// perSecond is a run's per-second count of what its headline counts,
// scaled to the headline's unit (so that scan's Krows/s and the load's
// rows/s are judged in their own units; a ratio does not mind).
func perSecond(r result.Run) []float64 {
	var out []float64
	for _, s := range r.Samples {
		for len(out) < s.Second {
			out = append(out, 0)
		}
		out = append(out, s.Count(r.Totals.Series))
	}
	return out
}

// pairKey is where an observation was measured.
type pairKey struct {
	plan          string
	repeat, round int
}

// Judge concludes what base and other say of a figure: paired where they
// have observations of the same plan, repeat and round (Paired: the
// geometric mean of per-round ratios and its interval, by repeats or by
// rounds as the test's pool says); else from repeats (the ratio of
// medians, the Mann-Whitney U test); else, one run a side, from each
// run's seconds (SingleRuns); else nothing.
//
// A change is called better or worse where the test says so at j's level
// and its interval clears the floor: every value in it lies beyond
// ±floor, not only the point estimate (a call "beyond the noise" whose
// interval reaches inside the floor is not shown to be beyond it). A
// significant change is inside the noise floor where its interval lies
// within the floor (paired: the (1 − 2·level) interval, the two one-sided
// tests'; else the interval itself). Not significant, it is equivalent
// where the (1 − 2·level) interval lies within the floor (two one-sided
// tests: "the same within ±floor" is an answer too). Anything else is
// undecided (KindSame: no significant change, or a significant one whose
// interval straddles the floor), with about how many more repeats would
// decide it. The repeats' Mann-Whitney test has no interval of the ratio:
// there the point estimate is all there is to hold against the floor.
func Judge(base, other Side, j Judging) Verdict {
	j = j.withDefaults()
	v := Test(base, other, j)
	v.Floor, v.Calibrated = j.Floor, j.Calibrated
	if v.Kind == CannotTell && v.Why != "" {
		return v
	}
	interval := v.Lo > 0 && v.Hi > 0 && !math.IsInf(v.Hi, 0)
	lo, hi, tostOK := v.tost()
	inside := func(a, b float64) bool { return a >= 1/(1+v.Floor) && b <= 1+v.Floor }
	switch {
	case !v.Significant:
		v.Kind = KindSame
		if tostOK && inside(lo, hi) {
			v.Kind = KindEquivalent
			v.Why = fmt.Sprintf("the same within ±%.1f %%%s: its %.0f %% interval %.3f to %.3f lies inside it", 100*v.Floor, floorWhat(v.Calibrated), 100*(1-2*v.Level), lo, hi)
		} else {
			v.More = v.more()
		}
	case interval && clears(v.Lo, v.Hi, v.Floor), !interval && beyond(v.Rel, v.Floor):
		if (v.Rel > 1) == j.Higher {
			v.Kind = KindBetter
		} else {
			v.Kind = KindWorse
		}
	case tostOK && inside(lo, hi), !tostOK && interval && inside(v.Lo, v.Hi), !interval && !beyond(v.Rel, v.Floor):
		v.Kind = KindInsideNoise
		v.Why = fmt.Sprintf("significant, but within the noise floor ±%.1f %%%s", 100*v.Floor, floorWhat(v.Calibrated))
	default:
		v.Kind = KindSame
		v.Why = fmt.Sprintf("significant, but its %.0f %% interval %.3f to %.3f reaches across the floor ±%.1f %%%s: not shown beyond it, nor inside it", 100*(1-v.Level), v.Lo, v.Hi, 100*v.Floor, floorWhat(v.Calibrated))
		v.More = v.more()
	}
	return v
}

// clears says whether the interval [lo, hi] lies wholly beyond the floor,
// on one side: above 1 + floor, or below 1/(1 + floor).
func clears(lo, hi, floor float64) bool {
	return lo > 1+floor || hi < 1/(1+floor)
}

// tost is the (1 − 2·level) interval of a paired verdict, whose lying
// within the floor is the two one-sided tests' equivalence at level.
func (v Verdict) tost() (lo, hi float64, ok bool) {
	if v.Method != MethodPaired || !(v.DF >= 1) || math.IsNaN(v.SE) || !(v.Rel > 0) || !(v.Level > 0 && v.Level < 0.5) {
		return math.NaN(), math.NaN(), false
	}
	half := tQuantile(1-v.Level, v.DF) * v.SE
	m := math.Log(v.Rel)
	return math.Exp(m - half), math.Exp(m + half), true
}

// more is about how many more repeats like the ones a paired verdict has
// would decide it: the fewest for which, the relative value staying what
// it is and the standard error shrinking with the square root of the
// units, the interval would clear the floor (a relative value beyond it)
// or the (1 − 2·level) interval would lie within it (one inside it: the
// same within the floor, or significant but inside it), at the present
// degrees of freedom' t quantiles, which errs on the side of more. 0
// where it cannot be said.
func (v Verdict) more() int {
	if v.Method != MethodPaired || !(v.DF >= 1) || !(v.SE > 0) || !(v.Rel > 0) || v.Blocks < 1 {
		return 0
	}
	units, perRepeat := float64(v.Blocks), 1.0
	if v.Unit == UnitRounds {
		units, perRepeat = float64(v.N), float64(v.N)/float64(v.Blocks)
	}
	m, margin := math.Abs(math.Log(v.Rel)), math.Log1p(v.Floor)
	need := math.Inf(1)
	switch {
	case m > margin:
		need = math.Pow(tQuantile(1-v.Level/2, v.DF)*v.SE/(m-margin), 2) * units
	case margin > m:
		need = math.Pow(tQuantile(1-v.Level, v.DF)*v.SE/(margin-m), 2) * units
	}
	if math.IsInf(need, 1) || need > 1e6 {
		return 0
	}
	return max(int(math.Ceil((need-units)/perRepeat)), 1)
}

// PairRounds are the rounds base and other share (the same plan, repeat
// and round), each repeat of a plan a block, and the pairings they were
// measured with, counted.
func PairRounds(base, other Side) ([]Round, map[string]int) {
	bm := map[pairKey]float64{}
	for _, o := range base.Obs {
		if o.Plan != "" && o.Pairing != "" {
			bm[pairKey{o.Plan, o.Repeat, o.Round}] = o.Value
		}
	}
	var rounds []Round
	blocks := map[pairKey]int{}
	pairings := map[string]int{}
	for _, o := range other.Obs {
		b, ok := bm[pairKey{o.Plan, o.Repeat, o.Round}]
		if !ok || o.Plan == "" {
			continue
		}
		bk := pairKey{o.Plan, o.Repeat, 0}
		if _, ok := blocks[bk]; !ok {
			blocks[bk] = len(blocks)
		}
		rounds = append(rounds, Round{Block: blocks[bk], Base: b, Other: o.Value})
		pairings[o.Pairing]++
	}
	return rounds, pairings
}

// Test is Judge's evidence without its conclusion: the method, the
// relative value, its interval at j's level, the test's p-value and
// significance. Its Kind is CannotTell (with Why) when nothing can be
// concluded, else empty for the caller to decide.
func Test(base, other Side, j Judging) Verdict {
	j = j.withDefaults()
	level := j.Level()
	v := Verdict{Method: MethodNone, Rel: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), Level: level, Kind: CannotTell}
	rounds, pairings := PairRounds(base, other)
	switch {
	case len(rounds) > 0:
		res := Paired(rounds, level, j.Pool)
		if j.RunSigma > 0 {
			v.Plans = plansOf(other)
			res = withRuns(res, j.RunSigma, v.Plans, j.RunDF, level)
			v.RunSigma = j.RunSigma
		}
		v.Method, v.Pairing, v.N, v.Blocks = MethodPaired, mostOf(pairings), res.N, res.Blocks
		v.Rel, v.Lo, v.Hi, v.P, v.Significant = res.Ratio, res.Lo, res.Hi, res.P, res.Significant
		v.Unit, v.DF, v.SE = res.Unit, res.DF, res.SE
		if j.Pool != nil && j.Pool.Tests > 0 {
			v.Pool = j.Pool.Says()
		}
		if math.IsNaN(res.DF) {
			v.Why = fmt.Sprintf("%d paired round(s) in %d repeat(s): an interval needs two (more --repeat, or longer tests for more slices)", res.N, res.Blocks)
			return v
		}
	case len(perRun(base.Obs)) > 1 && len(perRun(other.Obs)) > 1:
		bv, ov := perRun(base.Obs), perRun(other.Obs)
		v.Method, v.N = MethodRepeats, min(len(bv), len(ov))
		thr := benchmath.DefaultThresholds
		thr.CompareAlpha = level
		bs := benchmath.AssumeNothing.Summary(benchmath.NewSample(append([]float64{}, bv...), &thr), 1-level)
		os := benchmath.AssumeNothing.Summary(benchmath.NewSample(append([]float64{}, ov...), &thr), 1-level)
		if bs.Center != 0 {
			v.Rel = result.Ratio(os.Center, bs.Center)
		}
		if minMannWhitneyP(len(bv), len(ov)) >= level {
			v.Why = fmt.Sprintf("%s: too few for the Mann-Whitney test to reach p < %g (4 runs each can at 0.05)", runsOf(len(bv), len(ov)), level)
			return v
		}
		cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(append([]float64{}, bv...), &thr), benchmath.NewSample(append([]float64{}, ov...), &thr))
		v.P, v.Significant = cmp.P, cmp.P < level
	case len(base.Seconds) == 1 && len(other.Seconds) == 1 && base.Runs == 1 && other.Runs == 1:
		sv := SingleRuns(base.Seconds[0], other.Seconds[0], 1-level, 1)
		v.Method, v.N = MethodSingle, min(len(base.Seconds[0]), len(other.Seconds[0]))
		if len(base.Obs) == 1 && len(other.Obs) == 1 && base.Obs[0].Value != 0 {
			v.Rel = result.Ratio(other.Obs[0].Value, base.Obs[0].Value)
		} else {
			v.Rel = sv.Ratio
		}
		v.Lo, v.Hi, v.Why = sv.Lo, sv.Hi, sv.Why
		if sv.Verdict == CannotTell {
			return v
		}
		v.Significant = sv.Verdict == BeyondRunNoise
		if !v.Significant {
			v.Why = InsideRunNoise + ": " + sv.Why
		}
	default:
		if len(base.Obs) > 0 && len(other.Obs) > 0 {
			bv, ov := obsValues(base.Obs), obsValues(other.Obs)
			if mb := median(bv); mb != 0 {
				v.Rel = result.Ratio(median(ov), mb)
			}
		}
		v.Why = "one value a side and no per-second samples: nothing to tell a change from noise with (run --repeat, or qpslab run rather than an import)"
		return v
	}
	v.Kind = ""
	return v
}

// beyond says whether a ratio lies outside the band [1/(1+floor), 1+floor].
func beyond(rel, floor float64) bool {
	return !math.IsNaN(rel) && (rel > 1+floor || rel < 1/(1+floor))
}

func floorWhat(calibrated bool) string {
	if calibrated {
		return " (this host's, from qpslab run --aa)"
	}
	return " (the default: qpslab run --aa measures this host's)"
}

// perRun are the values of obs one per run: a run's rounds (one plan and
// repeat) as their geometric mean, so that rounds that pair with nothing
// (two labels never measured side by side) are not counted as that many
// independent repeats; an observation of no plan is its own.
func perRun(obs []Obs) []float64 {
	type run struct {
		plan   string
		repeat int
	}
	var out []float64
	at := map[run]int{}
	var logs [][]float64
	for _, o := range obs {
		if o.Plan == "" {
			out = append(out, o.Value)
			continue
		}
		k := run{o.Plan, o.Repeat}
		i, ok := at[k]
		if !ok {
			i = len(logs)
			at[k] = i
			logs = append(logs, nil)
		}
		if positive(o.Value) {
			logs[i] = append(logs[i], logPos(o.Value))
		}
	}
	for _, l := range logs {
		if len(l) > 0 {
			out = append(out, math.Exp(stat.Mean(l, nil)))
		}
	}
	return out
}

func obsValues(obs []Obs) []float64 {
	out := make([]float64, 0, len(obs))
	for _, o := range obs {
		out = append(out, o.Value)
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64{}, v...)
	sort.Float64s(s)
	return history.Median(s)
}

// mostOf is the key counted most often (the first by name on a tie).
func mostOf(m map[string]int) string {
	best, n := "", -1
	for k, c := range m {
		if c > n || c == n && k < best {
			best, n = k, c
		}
	}
	return best
}
