package bisect

import (
	"fmt"
	"math"

	"github.com/qpslab/qpslab/internal/analysis"
)

// Kinds of a step.
const (
	Good       = "good"        // like GOOD: the regression came later
	Bad        = "bad"         // like BAD: the regression came at or before it
	CannotTell = "cannot tell" // its interval holds the halfway cut: more rounds, or skip it
	Skipped    = "skipped"     // it does not build, or the user skipped it
	// Final is the first bad commit measured against its parent at the
	// end: a magnitude, never a verdict the walk reads.
	Final = "final"
)

// Test is the verdict of other's observations against base's: paired
// rounds where they share a plan, repeat and round, judged as every
// comparison judges them (analysis.Test with j, analysis.DefaultJudging's
// level unless a sequential measurement says otherwise).
func Test(base, other analysis.Side, j analysis.Judging) analysis.Verdict {
	return analysis.Test(base, other, j)
}

// Up is a verdict's relative value and interval turned so that above 1 is
// better: as they are for a metric where higher is better (qps), else
// inverted.
func Up(v analysis.Verdict, higher bool) (r, lo, hi float64) {
	if higher {
		return v.Rel, v.Lo, v.Hi
	}
	return 1 / v.Rel, 1 / v.Hi, 1 / v.Lo
}

// Regression judges the endpoints, BAD against GOOD: Bad, with the
// regression's magnitude m = 1 − rel (rel turned up, Up), when the change
// is significant and worse than the threshold t (as analysis.Judge calls
// a change worse beyond a floor: rel below 1/(1+t), the band symmetric on
// the log scale); Good when it is not (nothing to bisect);
// CannotTell when the test cannot conclude (too few rounds). why says it
// in words.
func Regression(v analysis.Verdict, higher bool, threshold float64) (kind string, m float64, why string) {
	if v.Kind == analysis.CannotTell {
		return CannotTell, math.NaN(), v.Why
	}
	r, lo, hi := Up(v, higher)
	if v.Significant && r < 1/(1+threshold) {
		return Bad, 1 - r, fmt.Sprintf("BAD against GOOD %s: a regression of %.1f %%, beyond the threshold %.1f %% (rel below %.3f)", Interval(r, lo, hi), 100*(1-r), 100*threshold, 1/(1+threshold))
	}
	what := "not significant"
	if v.Significant {
		what = fmt.Sprintf("within the threshold %.1f %% (rel %.3f to %.3f)", 100*threshold, 1/(1+threshold), 1+threshold)
		if r > 1 {
			what = "better, not worse"
		}
	}
	return Good, 1 - r, fmt.Sprintf("BAD against GOOD %s: %s: no regression to bisect at this threshold (give a smaller --threshold, or more --rounds)", Interval(r, lo, hi), what)
}

// Cut is the halfway cut of a regression of magnitude m: the relative
// value halfway between GOOD's (1) and BAD's (1 − m).
func Cut(m float64) float64 { return 1 - m/2 }

// Classify judges a midpoint measured against GOOD, in a regression of
// magnitude m: Bad when its whole interval lies below the halfway cut
// (it is nearer BAD than GOOD, beyond doubt at the confidence), Good when
// it lies above, else CannotTell. A test that cannot conclude (too few
// rounds) cannot tell either.
func Classify(v analysis.Verdict, higher bool, m float64) (kind, why string) {
	r, lo, hi := Up(v, higher)
	cut := Cut(m)
	switch {
	case v.Kind == analysis.CannotTell || math.IsNaN(lo) || math.IsNaN(hi):
		why = v.Why
		if why == "" {
			why = "no interval"
		}
		return CannotTell, why
	case hi < cut:
		return Bad, fmt.Sprintf("%s below the cut %.3f", Interval(r, lo, hi), cut)
	case lo > cut:
		return Good, fmt.Sprintf("%s above the cut %.3f", Interval(r, lo, hi), cut)
	}
	return CannotTell, fmt.Sprintf("%s holds the cut %.3f", Interval(r, lo, hi), cut)
}

// Interval writes a relative value and its interval.
func Interval(r, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return fmt.Sprintf("%.3f", r)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", r, lo, hi)
}
