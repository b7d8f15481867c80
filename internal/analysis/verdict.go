package analysis

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"golang.org/x/perf/benchmath"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// Kinds of a Verdict.
const (
	KindBetter      = "better"                 // a change beyond the noise, the better way
	KindWorse       = "worse"                  // a change beyond the noise, the worse way
	KindSame        = "same"                   // tested: no significant change
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
	// Lo and Hi bound Rel at the comparison's confidence (NaN where no
	// interval is known).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	P  float64 `json:"p"` // the test's two-sided p-value (NaN where untested)
	// Significant: the test says the two differ (paired: Wilcoxon's p
	// below α and the interval excludes 1; repeats: Mann-Whitney's p below
	// α; single: the interval excludes 1).
	Significant bool `json:"significant"`
	// Floor is the smallest change called better or worse (a fraction):
	// the host's noise floor for the test where qpslab run --aa measured
	// it (Calibrated), else DefaultFloor.
	Floor      float64 `json:"floor"`
	Calibrated bool    `json:"calibrated,omitempty"`
	Kind       string  `json:"kind"` // KindBetter, KindWorse, KindSame, KindInsideNoise or CannotTell
	Why        string  `json:"why,omitempty"`
}

// Changed says whether the verdict calls a change: significant and
// beyond the floor.
func (v Verdict) Changed() bool { return v.Kind == KindBetter || v.Kind == KindWorse }

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
// geometric mean of per-round ratios, its interval, Wilcoxon's test);
// else from repeats (the ratio of medians, the Mann-Whitney U test); else,
// one run a side, from each run's seconds (SingleRuns); else nothing. The
// change is called better or worse only when the test says so and it is
// beyond floor (the host's noise floor where calibrated, else
// DefaultFloor; calibrated says which). higher says which way is better.
func Judge(base, other Side, higher bool, floor float64, calibrated bool, confidence, alpha float64) Verdict {
	return JudgeIn(base, other, higher, floor, calibrated, confidence, alpha, nil)
}

// JudgeIn is Judge for one test of a comparison whose repeat effect was
// estimated over all its tests (nil: judge the test's rounds alone).
func JudgeIn(base, other Side, higher bool, floor float64, calibrated bool, confidence, alpha float64, e *RepeatEffect) Verdict {
	v := TestIn(base, other, confidence, alpha, e)
	if !(floor > 0) {
		floor, calibrated = DefaultFloor, false
	}
	v.Floor, v.Calibrated = floor, calibrated
	if v.Kind == CannotTell && v.Why != "" {
		return v
	}
	switch {
	case !v.Significant:
		v.Kind = KindSame
	case !beyond(v.Rel, v.Floor):
		v.Kind = KindInsideNoise
		v.Why = fmt.Sprintf("significant, but within the noise floor ±%.1f %%%s", 100*v.Floor, floorWhat(v.Calibrated))
	case (v.Rel > 1) == higher:
		v.Kind = KindBetter
	default:
		v.Kind = KindWorse
	}
	return v
}

// Test is Judge's evidence without its conclusion: the method, the
// relative value, its interval and the test's p-value and significance.
// Its Kind is CannotTell (with Why) when nothing can be concluded, else
// empty for the caller to decide.
func Test(base, other Side, confidence, alpha float64) Verdict {
	return TestIn(base, other, confidence, alpha, nil)
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

// TestIn is Test with the comparison's repeat effect (nil: the test's
// rounds alone; see PairedIn).
func TestIn(base, other Side, confidence, alpha float64, e *RepeatEffect) Verdict {
	v := Verdict{Method: MethodNone, Rel: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), Kind: CannotTell}
	rounds, pairings := PairRounds(base, other)
	switch {
	case len(rounds) > 0:
		var res PairedResult
		if e != nil {
			res = PairedIn(rounds, confidence, alpha, *e)
		} else {
			res = Paired(rounds, confidence, alpha)
		}
		v.Method, v.Pairing, v.N, v.Blocks = MethodPaired, mostOf(pairings), res.N, res.Blocks
		v.Rel, v.Lo, v.Hi, v.P, v.Significant = res.Ratio, res.Lo, res.Hi, res.P, res.Significant
		if !res.CanReach {
			v.Why = fmt.Sprintf("%d paired round(s): the signed-rank test needs %d to reach p < %g (more --repeat, or longer tests for more slices)", res.N, MinRounds(alpha), alpha)
			return v
		}
	case len(base.Obs) > 1 && len(other.Obs) > 1:
		bv, ov := obsValues(base.Obs), obsValues(other.Obs)
		v.Method, v.N = MethodRepeats, min(len(bv), len(ov))
		thr := benchmath.DefaultThresholds
		thr.CompareAlpha = alpha
		bs := benchmath.AssumeNothing.Summary(benchmath.NewSample(append([]float64{}, bv...), &thr), confidence)
		os := benchmath.AssumeNothing.Summary(benchmath.NewSample(append([]float64{}, ov...), &thr), confidence)
		if bs.Center != 0 {
			v.Rel = result.Ratio(os.Center, bs.Center)
		}
		if minMannWhitneyP(len(bv), len(ov)) >= alpha {
			v.Why = fmt.Sprintf("%s: too few for the Mann-Whitney test to reach p < %g (4 runs each can)", runsOf(len(bv), len(ov)), alpha)
			return v
		}
		cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(append([]float64{}, bv...), &thr), benchmath.NewSample(append([]float64{}, ov...), &thr))
		v.P, v.Significant = cmp.P, cmp.P < alpha
	case len(base.Seconds) == 1 && len(other.Seconds) == 1 && base.Runs == 1 && other.Runs == 1:
		sv := SingleRuns(base.Seconds[0], other.Seconds[0], confidence, 1)
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
