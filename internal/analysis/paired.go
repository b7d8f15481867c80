package analysis

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Round is one paired observation: the two labels' values measured next
// to each other in time. Block groups rounds that share more than time
// (the repeat they belong to: every repeat starts from the same database
// state, but a repeat as a whole may land high or low); rounds of one
// block may be correlated.
type Round struct {
	Block       int
	Base, Other float64
}

// Units of a paired interval: what its degrees of freedom count.
const (
	// UnitRounds: the rounds of a single repeat, their trimmed mean.
	UnitRounds = "rounds"
	// UnitRepeats: one value per repeat, the mean of its rounds' log
	// ratios without the wild ones, the repeats independent (Paired).
	UnitRepeats = "repeats"
)

// PoolLevel is the p-value of a pool's F test of a repeat effect at or
// below which its repeats are said to carry variance (Pool.Repeats: the
// legend's words and the budget's components; no verdict's method turns
// on it since each test is judged on its repeats, Paired). OwnLevel is
// the same for one test's own F test (PairedResult.OwnP), kept for the
// evidence.
const (
	PoolLevel = 0.05
	OwnLevel  = 0.01
)

// PairedResult is what Paired concludes from rounds.
type PairedResult struct {
	N      int     // rounds used (both values finite and > 0)
	Blocks int     // distinct blocks (repeats) among them
	Ratio  float64 // the relative value: exp of the mean log ratio (of the rounds, or of the repeats' means)
	Lo, Hi float64 // its interval at the level Paired was given
	// SE is the standard error of the mean log ratio, DF the degrees of
	// freedom of its t quantile (NaN when N < 2), Unit what DF counts.
	SE   float64
	DF   float64
	Unit string
	// P is the two-sided p-value of the t test that the mean log ratio is
	// 0, on the interval's SE and DF (NaN when N < 2).
	P float64
	// OwnP is the p-value of the test's own F test of a repeat effect (1
	// with fewer than two repeats of which one has two rounds).
	OwnP float64
	// Bimodal: either label's rounds fall in two modes (BimodalOf), so
	// each repeat's value is the mean of its rounds' log ratios, not
	// their median.
	Bimodal bool
	// Significant: the interval excludes 1 (the same as P < level).
	Significant bool
}

// Paired concludes what rounds say of Other relative to Base, on the log
// ratios rᵢ = ln Otherᵢ − ln Baseᵢ (so values near the largest float64 do
// not overflow). Rounds with a value that is not a finite number > 0 are
// dropped and not counted. level is the two-sided test's (0.05 for a
// 95 % interval); pool is what the tests of this one's kind in the same
// comparison say of their repeats (nil: none).
//
// The relative value is a geometric mean of per-repeat ratios: symmetric
// (swapping the labels gives exactly 1/Ratio), the centre of the interval
// on the logs, and it composes with the geometric mean over tests.
//
// The units are the repeats (Kalibera and Jones, "Rigorous benchmarking in
// reasonable time", 2013: the independent units are the top level that
// may carry variance; every repeat starts from the same state, but a
// repeat as a whole may still land high or low), for every test, whatever
// the others of its kind show: one value per repeat, yᵍ = the mean of its
// rounds' log ratios without the wild ones (those more than OutlierK
// robust standard deviations off their repeat's median; all of them where
// either label's slices fall in two modes: repeatValues), and the
// t-interval on their mean,
//
//	ȳ = Σyᵍ/R,  s² = Σ(yᵍ − ȳ)²/(R − 1),  ȳ ± t(df)·√(s̃²/R),
//
// with s² moderated toward the test's pool by empirical Bayes (Smyth,
// "Linear models and empirical Bayes methods for assessing differential
// expression", 2004: the prior d₀, s₀² of the pool's tests' s², PoolOf):
//
//	s̃² = (d₀·s₀² + (R − 1)·s²) / (d₀ + R − 1),  df = d₀ + R − 1,
//
// so that a test of six repeats borrows the degrees of freedom its kind's
// other tests measured, in proportion to how alike their variances are,
// instead of one pooled F test switching the method for all of them.
// Leaving the wild rounds out keeps a round several times off (a second of
// steal, a stall) from moving its repeat; the repeats being the units, the
// interval covers the mean over repeats of that per-repeat log ratio,
// however a repeat's rounds are spread (two modes, heavy tails): a
// repeat's value is one draw of a distribution, and R of them are averaged.
// For rounds of one distribution that differ only by the ratio it is the
// ratio itself; for slices of two modes (Bimodal) it is the mean over
// repeats of each repeat's mean slice log ratio: the geometric mean of
// the slices' ratios, which is not the ratio of the mean rates where one
// label stalls more often than the other (docs/results.md).
//
// A single repeat's rounds are the units: their 20 % trimmed mean with
// Yuen's standard error (trimmed), h − 1 degrees of freedom. With N < 2
// there is no interval.
func Paired(rounds []Round, level float64, pool *Pool) PairedResult {
	res := PairedResult{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), SE: math.NaN(), DF: math.NaN(), OwnP: 1}
	logs, groups := logRatios(rounds)
	res.N, res.Blocks = len(logs), len(groups)
	if res.N == 0 {
		return res
	}
	res.OwnP = anovaOf(groups).p()
	var mean, se, df float64
	if res.Blocks < 2 {
		res.Unit = UnitRounds
		mean, se, df = trimmed(logs, Trim)
	} else {
		res.Unit = UnitRepeats
		res.Bimodal = bimodalRounds(rounds)
		ys := repeatValues(groups, res.Bimodal)
		mean = stat.Mean(ys, nil)
		r := float64(len(ys))
		s2, d := stat.Variance(ys, nil), r-1
		if pool != nil && pool.PriorDF > 0 && pool.PriorVar > 0 {
			s2 = (pool.PriorDF*pool.PriorVar + d*s2) / (pool.PriorDF + d)
			d += pool.PriorDF
		}
		se, df = math.Sqrt(s2/r), d
	}
	res.Ratio = math.Exp(mean)
	if res.N < 2 || !(df >= 1) {
		return res
	}
	res.SE, res.DF = se, df
	res.P = tTestP(mean, se, df)
	if !(level > 0 && level < 1) {
		return res
	}
	half := tQuantile(1-level/2, df) * se
	res.Lo, res.Hi = math.Exp(mean-half), math.Exp(mean+half)
	res.Significant = res.Lo > 1 || res.Hi < 1
	return res
}

// repeatValues are the repeats' values: each the mean of its rounds' log
// ratios without the rounds far off their repeat's median (OutlierK
// robust standard deviations: the median absolute deviation of every
// round from its repeat's median, over the test's rounds, × 1.4826), or
// the plain mean where the slices fall in two modes (mean). Dropping the
// wild rounds keeps a second of steal or a stall from moving its repeat
// (TestPairedHeavyTails: a 10 % change found in 97 % of experiments, the
// plain mean's 69 %), while rounds that agree are all averaged (a clean
// test's value is the geometric mean of its ratios exactly). Of slices in
// two modes a robust rule would drop one mode's as wild, and a median of
// four jumps between them, leaving the repeats' values too skewed for a
// t-interval on six (TestPairedBimodalCoverage: 83 % with medians where
// one label stalls twice as often; the mean 92 %).
func repeatValues(groups [][]float64, mean bool) []float64 {
	out := make([]float64, len(groups))
	if mean {
		for i, g := range groups {
			out[i] = stat.Mean(g, nil)
		}
		return out
	}
	meds := make([]float64, len(groups))
	var dev []float64
	for i, g := range groups {
		meds[i] = medianF(g)
		for _, v := range g {
			dev = append(dev, math.Abs(v-meds[i]))
		}
	}
	scale := 1.4826 * medianF(dev)
	for i, g := range groups {
		var sum float64
		n := 0
		for _, v := range g {
			if !(scale > 0) || math.Abs(v-meds[i]) <= OutlierK*scale {
				sum += v
				n++
			}
		}
		out[i] = meds[i]
		if n > 0 {
			out[i] = sum / float64(n)
		}
	}
	return out
}

// OutlierK is how many robust standard deviations from its repeat's
// median a round may lie and still count (repeatValues): 3.5, which a
// normal round exceeds about once in two thousand.
const OutlierK = 3.5

// medianF is the median of x (the mean of the middle two of an even
// count; NaN for none).
func medianF(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2
}

// bimodalRounds says whether either label's values of rounds fall in two
// modes (BimodalOf): the test is unstable, and its repeats' values are
// means (repeatValues).
func bimodalRounds(rounds []Round) bool {
	b, o := make([]float64, 0, len(rounds)), make([]float64, 0, len(rounds))
	for _, r := range rounds {
		b, o = append(b, r.Base), append(o, r.Other)
	}
	_, bb := BimodalOf(b)
	_, ob := BimodalOf(o)
	return bb || ob
}

// Trim is the share of the rounds left out at each end of a test's
// trimmed mean (Paired, by rounds).
const Trim = 0.2

// trimmed is Yuen's trimmed mean of x, its standard error and degrees of
// freedom: the mean of x without its ⌊trim·n⌋ smallest and largest values
// (g each), the standard error from the winsorized values (those g at
// each end set to the nearest kept value),
//
//	SE² = Σ(wᵢ − w̄)² / (h·(h − 1)),  h = n − 2g,  df = h − 1,
//
// which with g = 0 is the mean and its ordinary standard error. A round of
// a noisy host can be several times its neighbours (a second of steal, a
// stall): the mean and variance of the rounds follow it, the trimmed mean
// and the winsorized variance do not, and on normal rounds the interval
// covers as the t-interval does (Yuen 1974; TestPairedCoverage, and on
// this host's rounds docs/perf.md).
func trimmed(x []float64, trim float64) (mean, se, df float64) {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := len(s)
	g := int(math.Floor(trim * float64(n)))
	h := n - 2*g
	mean = stat.Mean(s[g:n-g], nil)
	if h < 2 {
		return mean, math.NaN(), math.NaN()
	}
	w := make([]float64, n)
	for i, v := range s {
		w[i] = min(max(v, s[g]), s[n-g-1])
	}
	wm := stat.Mean(w, nil)
	var ss float64
	for _, v := range w {
		ss += (v - wm) * (v - wm)
	}
	return mean, math.Sqrt(ss / float64(h*(h-1))), float64(h - 1)
}

// logRatios are the log ratios ln Other − ln Base of the rounds whose two
// values are finite numbers > 0, all of them and by block (in the blocks'
// order, so that sums do not depend on a map's).
func logRatios(rounds []Round) (logs []float64, groups [][]float64) {
	byBlock := map[int][]float64{}
	for _, r := range rounds {
		if !positive(r.Base) || !positive(r.Other) {
			continue
		}
		l := logPos(r.Other) - logPos(r.Base)
		logs = append(logs, l)
		byBlock[r.Block] = append(byBlock[r.Block], l)
	}
	keys := make([]int, 0, len(byBlock))
	for k := range byBlock {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	groups = make([][]float64, len(keys))
	for i, k := range keys {
		groups[i] = byBlock[k]
	}
	return logs, groups
}

// anova is a one-way analysis of variance of log ratios by repeat.
type anova struct {
	ssb, ssw float64 // between and within sums of squares
	dfb, dfw float64 // their degrees of freedom: k − 1, N − k
	sumSq    float64 // Σn_g²
	n        float64 // N
}

func anovaOf(groups [][]float64) anova {
	var a anova
	var all []float64
	for _, g := range groups {
		all = append(all, g...)
		a.sumSq += float64(len(g)) * float64(len(g))
	}
	a.n = float64(len(all))
	if len(all) == 0 {
		return a
	}
	mean := stat.Mean(all, nil)
	for _, g := range groups {
		gm := stat.Mean(g, nil)
		a.ssb += float64(len(g)) * (gm - mean) * (gm - mean)
		for _, v := range g {
			a.ssw += (v - gm) * (v - gm)
		}
	}
	a.dfb, a.dfw = float64(len(groups)-1), a.n-float64(len(groups))
	return a
}

// p is the F test's p-value of a repeat effect (1 where it cannot be
// tested: fewer than two repeats, or no round beside another in one).
func (a anova) p() float64 {
	if a.dfb < 1 || a.dfw < 1 {
		return 1
	}
	msb, msw := a.ssb/a.dfb, a.ssw/a.dfw
	switch {
	case msw > 0:
		return distuv.F{D1: a.dfb, D2: a.dfw}.Survival(msb / msw)
	case msb > 0:
		return 0
	}
	return 1
}

// tQuantile is Student's t quantile with df degrees of freedom.
func tQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// tTestP is the two-sided p-value of mean/se on df degrees of freedom.
func tTestP(mean, se, df float64) float64 {
	switch {
	case se > 0:
		return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(mean/se))
	case mean != 0:
		return 0
	}
	return 1
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// logPos is ln x for finite x > 0, exact to rounding for subnormal x too:
// math.Log on amd64 is off for subnormals (it returns ln 5e-324 for
// 1e-323 as well; golang/go#56600), so the exponent is split off first.
func logPos(x float64) float64 {
	f, e := math.Frexp(x)
	return math.Log(f) + float64(e)*math.Ln2
}
