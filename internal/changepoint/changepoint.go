// Package changepoint finds change points in a benchmark history (one
// metric's values in commit order): the points where the level of the
// series shifts, with the statistics of the segments on both sides, the
// significance of the shift, the interval where it arrived and whether it
// is a regression given the metric's direction.
//
// Candidates come from Apache Otava 0.8's split (formerly DataStax
// Hunter): E-divisive means (Matteson & James, energy distance with
// α = 1, the best split τ over all pairs τ < κ of an interval) searched
// hierarchically inside sliding windows of Options.Window points, the
// window advancing by Window/2 or to its last change point; each
// candidate is kept while a two-sided Student t-test between the two
// segments it separates gives p ≤ 10 × Options.PValue ("weak" change
// points). Then a bottom-up merge removes, one at a time and re-testing
// the neighbours after each removal, the weak change point that fails:
// first any that leaves a segment shorter than Options.MinSegment (a
// spike's points are set aside), then the least significant while it is
// not significant at PValue, then the smallest while its relative
// magnitude is at most Options.MinMagnitude.
//
// How significance is judged is Options.Method (docs/changepoint.md):
//   - Calibrated (the default): values further than 4 robust standard
//     deviations from the medians of the points before and after them are
//     outliers and take the nearer median; the t statistic's variance is
//     multiplied by (1+φ)/(1−φ), φ the noise's lag-1 autocorrelation
//     estimated robustly from the series; and the p-value is multiplied
//     by the number of positions the change could have been placed at
//     between its neighbours (the split chose the best-looking one).
//     The surviving change points are then placed where the values say
//     they most probably are (a posterior over positions, Gaussian noise,
//     flat prior) and tested again. About 0.01 false change points per
//     1,000 points of white, autocorrelated or outlier-ridden noise at
//     PValue 0.001, where Otava's test gives 1 to 20.
//   - OtavaTTest: Otava's Student t-test on the raw values, with the
//     minimum segment and both neighbours re-tested after a removal (Otava
//     re-tests the right neighbour and the one after it, not the left one,
//     and can report a p-value of a segment that no longer exists).
//     DetectOtava reproduces Otava's behaviour exactly, for cross-checks.
//
// Every change point carries the interval [Lo, Hi] that holds the point
// where it arrived with 95 % probability. It is deterministic (no
// permutation test) and linear in the series length for a fixed window:
// O(n·Window) for the windows and O(k log k) for the merge of k weak change
// points, plus O(n) for the calibrated method's outliers and
// autocorrelation. Analysis.Append re-runs only the windows whose values
// a new point can change and returns exactly what Detect returns on the
// whole series.
//
// No Go library implements E-divisive means or Otava's windowed split and
// merge, so this package is written by hand from the papers and Otava's
// semantics (checked against Otava 0.8.0's answers on the vectors in
// testdata/otava, written by scripts/otava-vectors.sh); only the
// regularised incomplete beta function (for the t distribution) comes from
// gonum.
package changepoint

import (
	"errors"
	"fmt"
	"math"
)

// Options are the detector's parameters. Zero values select the defaults.
type Options struct {
	// Window is the number of points in each sliding window (default 50,
	// Otava's). The window advances by Window/2 points or to the last change
	// point it found, whichever is further.
	Window int `json:"window"`
	// PValue is the significance level of the final change points (default
	// 0.001, Otava's). The weak first pass uses 10 × PValue (2 × PValue for
	// PValue ≥ 0.05, PValue itself for PValue ≥ 0.5), as Otava does.
	PValue float64 `json:"pvalue"`
	// MinMagnitude is the minimum relative change of the segment means,
	// max(|after/before − 1|, |before/after − 1|), for a change point to be
	// kept (default 0: any change; 0.05 is Nyrkiö's default).
	MinMagnitude float64 `json:"min_magnitude"`
	// MinSegment is the minimum number of points between two change points
	// and between a change point and either end of the series (default 3).
	// Shorter segments are merged into the neighbouring segment whose mean
	// is closer, so a spike of fewer than MinSegment points is never a
	// change point and a step at the newest points is reported once
	// MinSegment points follow it. 1 switches the rule off (Otava's
	// behaviour).
	MinSegment int `json:"min_segment"`
	// Method is how a change point's significance is judged: Calibrated
	// (the default) or OtavaTTest.
	Method Method `json:"method,omitempty"`
}

// Method is how the merge judges a change point.
type Method string

const (
	// Calibrated is the default: the t statistic between the two segments
	// of values with outliers clipped, its variance scaled by the noise's
	// autocorrelation, and its p-value multiplied by the number of
	// positions the change could have been placed at (docs/changepoint.md,
	// "The calibrated method"). About one false change point per 100,000
	// points of noise at PValue 0.001.
	Calibrated Method = "calibrated"
	// OtavaTTest is Apache Otava 0.8's test: Student's t on the raw values
	// of the two segments, with no correction for the choice of the
	// position; about one false change point per 1,000 points of noise at
	// PValue 0.001. With it, Detect is Otava's method with the minimum
	// segment and both neighbours re-tested; DetectOtava is Otava's
	// exactly.
	OtavaTTest Method = "otava"
)

// Methods lists the methods by name.
var Methods = []Method{Calibrated, OtavaTTest}

// Default values of Options.
const (
	DefaultWindow     = 50
	DefaultPValue     = 0.001
	DefaultMinSegment = 3
)

// Direction says which way a metric gets better.
type Direction int

const (
	// HigherIsBetter is for throughput (qps, tps, rows/s).
	HigherIsBetter Direction = 1
	// LowerIsBetter is for latency, CPU or I/O per operation.
	LowerIsBetter Direction = -1
)

func (d Direction) String() string {
	switch d {
	case HigherIsBetter:
		return "higher-is-better"
	case LowerIsBetter:
		return "lower-is-better"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// ChangePoint is a point where the series' level changes: values[:Index]
// and values[Index:] (up to the neighbouring change points) differ.
type ChangePoint struct {
	// Index is the first point of the new segment (0-based; never 0).
	Index int
	// Lo and Hi bound where the change arrived, at 95 % confidence: the
	// first point of the new segment is one of Lo … Hi (Lo ≤ Index ≤ Hi).
	Lo, Hi int
	// PValue is the significance of the change between the segment before
	// and the segment after, bounded by the neighbouring change points or
	// the ends of the series: for the calibrated method the probability
	// that noise alone gives so large a change at any position between the
	// neighbours (at most 1); for OtavaTTest Student's two-sided t-test.
	PValue float64
	// MeanBefore, MeanAfter, StdBefore and StdAfter describe those two
	// segments (population standard deviations, as Otava reports them).
	MeanBefore, MeanAfter, StdBefore, StdAfter float64
	// Magnitude is the relative change (MeanAfter − MeanBefore)/MeanBefore;
	// 0 when MeanBefore is 0, as in Otava.
	Magnitude float64
	// Regression is true when the change is for the worse given the
	// direction: a drop of a HigherIsBetter metric or a rise of a
	// LowerIsBetter one.
	Regression bool
}

// config is Options resolved and validated.
type config struct {
	window, step int
	p, weakP     float64
	minMag       float64
	minSeg       int
	dir          Direction
	// otavaMerge re-tests only the right neighbours after a removal, as
	// Otava 0.8's merge does.
	otavaMerge bool
	// calibrated: the merge judges change points with the calibrated test.
	calibrated bool
}

func resolve(o Options, dir Direction) (config, error) {
	c := config{window: o.Window, p: o.PValue, minMag: o.MinMagnitude, minSeg: o.MinSegment, dir: dir}
	if dir != HigherIsBetter && dir != LowerIsBetter {
		return c, fmt.Errorf("changepoint: direction %d is neither HigherIsBetter nor LowerIsBetter", int(dir))
	}
	if c.window == 0 {
		c.window = DefaultWindow
	}
	if c.window < 2 {
		return c, fmt.Errorf("changepoint: window %d is below 2", o.Window)
	}
	c.step = c.window / 2
	if c.p == 0 {
		c.p = DefaultPValue
	}
	if !(c.p > 0 && c.p <= 1) {
		return c, fmt.Errorf("changepoint: p-value %v is not in (0, 1]", o.PValue)
	}
	switch {
	case c.p < 0.05:
		c.weakP = c.p * 10
	case c.p < 0.5:
		c.weakP = c.p * 2
	default:
		c.weakP = c.p
	}
	if !(c.minMag >= 0) || math.IsInf(c.minMag, 0) {
		return c, fmt.Errorf("changepoint: minimum magnitude %v is not a finite value ≥ 0", o.MinMagnitude)
	}
	if c.minSeg == 0 {
		c.minSeg = DefaultMinSegment
	}
	if c.minSeg < 1 {
		return c, fmt.Errorf("changepoint: minimum segment %d is below 1", o.MinSegment)
	}
	switch o.Method {
	case "", Calibrated:
		c.calibrated = true
	case OtavaTTest:
	default:
		return c, fmt.Errorf("changepoint: method %q is neither %q nor %q", o.Method, Calibrated, OtavaTTest)
	}
	return c, nil
}

// finish sets a change point's magnitude and direction from its means.
func (c config) finish(cp *ChangePoint) {
	if cp.MeanBefore != 0 {
		cp.Magnitude = (cp.MeanAfter - cp.MeanBefore) / cp.MeanBefore
	}
	if c.dir == HigherIsBetter {
		cp.Regression = cp.MeanAfter < cp.MeanBefore
	} else {
		cp.Regression = cp.MeanAfter > cp.MeanBefore
	}
}

// ErrInfinite is returned for a value that is +Inf or −Inf. NaN is a
// missing value: it takes the previous value (the next one at the start of
// the series), as Otava fills missing values.
var ErrInfinite = errors.New("changepoint: infinite value")

// Detect returns the change points of values, in index order.
func Detect(values []float64, o Options, dir Direction) ([]ChangePoint, error) {
	c, err := resolve(o, dir)
	if err != nil {
		return nil, err
	}
	return detect(values, c)
}

// DetectOtava runs the detector the way Apache Otava 0.8's
// compute_change_points does (window, p-value and minimum magnitude from o,
// no minimum segment, Otava's merge that re-tests only the right neighbours
// of a removed point), for cross-checks against Otava. The statistics it
// returns are those of the final segments, which is not always what Otava
// prints (Otava can print a left neighbour's statistics from before a
// removal).
func DetectOtava(values []float64, o Options, dir Direction) ([]ChangePoint, error) {
	o.MinSegment = 1
	o.Method = OtavaTTest
	c, err := resolve(o, dir)
	if err != nil {
		return nil, err
	}
	c.otavaMerge = true
	return detect(values, c)
}

func detect(values []float64, c config) ([]ChangePoint, error) {
	e := newEngine(c)
	e.reserve(len(values))
	for _, v := range values {
		if err := e.push(v); err != nil {
			return nil, err
		}
	}
	e.split()
	return e.result(e.merge()), nil
}
