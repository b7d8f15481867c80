package analysis

import (
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Round is one paired observation: the two labels' values measured next
// to each other in time. Block groups rounds that share more than time
// (the repeat they belong to); rounds of one block may be correlated.
type Round struct {
	Block       int
	Base, Other float64
}

// PairedResult is what Paired concludes from rounds.
type PairedResult struct {
	N      int     // rounds used (both values finite and > 0)
	Blocks int     // distinct blocks among them
	Ratio  float64 // geometric mean of the per-round ratios Other/Base
	Lo, Hi float64 // its confidence interval (see Paired)
	P      float64 // two-sided p-value of the Wilcoxon signed-rank test on the log ratios (NaN when N is 0)
	Exact  bool    // P from the exact null distribution (no ties/zeros and N <= 50), else the normal approximation with tie correction
	ICC    float64 // intraclass correlation of log ratios within blocks (0 when it cannot be estimated or is negative)
	NEff   float64 // effective number of rounds after the design effect: N / (1 + (m − 1)·ICC), m the size-weighted mean block size
	DF     float64 // degrees of freedom of the interval's t quantile (see Paired; NaN when N < 2)
	BlockP float64 // p-value of the F test of a block effect (1 with fewer than two blocks of two rounds); at most PoolLevel: the interval rests on the blocks

	CanReach    bool // N >= MinRounds(alpha): the test can reach alpha at all
	Significant bool // CanReach && P < alpha && the interval excludes 1
}

// Paired concludes what rounds say about Other relative to Base, working
// on the log ratios rᵢ = ln Otherᵢ − ln Baseᵢ (so values near the largest
// float64 do not overflow). Rounds with a value that is not a finite
// number > 0 are dropped and not counted. confidence is the interval's (0.95), alpha the
// test's level (0.05).
//
// The relative value is the geometric mean of the per-round ratios,
// Ratio = exp(r̄), r̄ = Σrᵢ/N, rather than their median or the ratio of
// means: it is symmetric (swapping the labels gives exactly 1/Ratio, which
// an arithmetic mean of ratios does not), it is the centre of the
// t-interval on the logs below (so the figure always lies inside its own
// interval, and Wilcoxon tests the same log ratios), and it composes with
// the geometric mean over tests that compare already reports (the geomean
// of per-test geomeans is the geomean of all ratios when tests have equal
// rounds). The median is more robust to one wild round but has no simple
// interval at the handful of rounds a plan gives.
//
// The interval is a t-interval on r̄, exp'd: [exp(r̄ − t·SE), exp(r̄ + t·SE)],
// with the variance corrected for rounds of one block being correlated.
// From a one-way ANOVA of the rᵢ by block (k blocks of sizes n_g):
//
//	MSB = Σ n_g (r̄_g − r̄)² / (k − 1),   MSW = ΣΣ (rᵢ − r̄_g)² / (N − k),
//	n₀ = (N − Σn_g²/N) / (k − 1),       σ²_b = (MSB − MSW) / n₀,
//	ICC = σ²_b / (σ²_b + MSW)           (0 when σ²_b ≤ 0, k < 2 or N = k),
//	m = Σn_g² / N                       (the size-weighted mean block size; N/k for equal blocks),
//	NEff = N / (1 + (m − 1)·ICC),       SE = σ / √NEff,
//
// where σ² is the ANOVA estimate of the variance of one log ratio,
// σ²_b + MSW, when ICC > 0, and the sample variance Σ(rᵢ − r̄)²/(N − 1)
// otherwise. With equal blocks and ICC > 0 this makes SE² = MSB/N
// exactly, the variance of the mean of the block means: the interval is
// then the textbook one for a mean under one-way random effects, exact
// when the log ratios are normal; with ICC = 0 it is wider than that one
// (the sample variance exceeds MSB then), so it never covers less.
//
// Whether rounds of one block are correlated is decided from the rounds
// themselves, by a preliminary F test of the block effect ("sometimes
// pool", Bancroft 1944): F = MSB/MSW on k − 1 and N − k degrees of
// freedom. Where its p-value is above PoolLevel (0.5: no sign of a block
// effect, MSB about MSW or below) the rounds are pooled: SE² = s²/N with
// the sample variance s² and df = N − 1. Otherwise the interval rests on
// the spread between blocks: SE² = MSB/N (the σ and NEff above), df =
// k − 1, the textbook interval for a mean under one-way random effects.
// With one block, or blocks of one round each, the rounds are pooled.
// Measured on synthetic normal log ratios (3,000 experiments per case,
// true ratio 1.25), a 95 % interval covers:
//
//	blocks × rounds   ICC 0    0.1    0.3    0.5    0.8
//	2 × 8             97.1 %  94.1 %  91.6 %  92.5 %  93.2 %
//	4 × 5             97.0 %  95.4 %  95.2 %  94.9 %  95.2 %
//	4 × 8             97.6 %  95.4 %  94.9 %  95.3 %  95.1 %
//	8 × 4             96.5 %  96.5 %  95.2 %  95.1 %  95.1 %
//
// where always df = k − 1 covers 95–100 % but makes two repeats useless
// (df = 1: a t quantile of 12.7), and pooling at the conventional 0.25
// level covers 86–93 % with a moderate block effect and two blocks. With
// N < 2, Lo = Hi = DF = NaN.
//
// P is WilcoxonSignedRank on the rᵢ, taking the rounds as exchangeable; it
// does not know the blocks, which is why Significant also needs the
// interval, which does, to exclude 1. CanReach is N ≥ MinRounds(alpha).
func Paired(rounds []Round, confidence, alpha float64) PairedResult {
	return paired(rounds, confidence, alpha, nil)
}

// PairedIn is Paired for one test of a comparison whose repeat effect was
// estimated over all its tests (PlanRepeatEffect, with MinRepeatDF or more
// between-repeat degrees of freedom): the rounds' variance is inflated by
// that effect's design effect, NEff = N / (1 + (m − 1)·ICC), m the
// size-weighted mean repeat size, SE² = s² / NEff with the rounds' sample
// variance s², and df = max(NEff − 1, 1). A test of one repeat, or a
// comparison with too few repeats for the estimate, is judged as Paired
// judges it.
func PairedIn(rounds []Round, confidence, alpha float64, e RepeatEffect) PairedResult {
	if e.DFB < MinRepeatDF {
		return paired(rounds, confidence, alpha, nil)
	}
	return paired(rounds, confidence, alpha, &e)
}

func paired(rounds []Round, confidence, alpha float64, plan *RepeatEffect) PairedResult {
	res := PairedResult{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), NEff: 0, DF: math.NaN(), BlockP: 1}
	var logs []float64
	byBlock := map[int][]float64{}
	for _, r := range rounds {
		if !positive(r.Base) || !positive(r.Other) {
			continue
		}
		l := logPos(r.Other) - logPos(r.Base)
		logs = append(logs, l)
		byBlock[r.Block] = append(byBlock[r.Block], l)
	}
	res.N, res.Blocks = len(logs), len(byBlock)
	res.CanReach = res.N >= MinRounds(alpha)
	if res.N == 0 {
		return res
	}
	_, res.P, res.Exact = WilcoxonSignedRank(logs)
	mean := stat.Mean(logs, nil)
	res.Ratio = math.Exp(mean)
	res.NEff = float64(res.N)
	if res.N < 2 {
		return res
	}

	// One-way ANOVA by block, in a fixed block order so sums do not
	// depend on map iteration.
	keys := make([]int, 0, len(byBlock))
	for k := range byBlock {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	n, k := float64(res.N), float64(res.Blocks)
	variance := stat.Variance(logs, nil)
	df := n - 1
	if plan != nil && res.Blocks >= 2 {
		// The comparison's repeat effect, estimated over its tests.
		var sumSq float64
		for _, g := range byBlock {
			sumSq += float64(len(g)) * float64(len(g))
		}
		res.ICC, res.BlockP = plan.ICC, plan.P
		res.NEff = n / (1 + (sumSq/n-1)*plan.ICC)
		df = math.Max(res.NEff-1, 1)
	} else if res.Blocks >= 2 && res.N > res.Blocks {
		var ssb, ssw, sumSq float64
		for _, b := range keys {
			g := byBlock[b]
			gm := stat.Mean(g, nil)
			ng := float64(len(g))
			ssb += ng * (gm - mean) * (gm - mean)
			for _, v := range g {
				ssw += (v - gm) * (v - gm)
			}
			sumSq += ng * ng
		}
		msb, msw := ssb/(k-1), ssw/(n-k)
		n0 := (n - sumSq/n) / (k - 1)
		if sb2 := (msb - msw) / n0; sb2 > 0 {
			res.ICC = sb2 / (sb2 + msw)
		}
		res.BlockP = 1
		if msw > 0 {
			res.BlockP = 1 - distuv.F{D1: k - 1, D2: n - k}.CDF(msb/msw)
		} else if msb > 0 {
			res.BlockP = 0
		}
		if res.BlockP <= PoolLevel {
			// The spread between blocks: SE² = MSB/N with equal blocks,
			// the design effect's for unequal ones.
			if res.ICC > 0 {
				variance = res.ICC*msw/(1-res.ICC) + msw
				res.NEff = n / (1 + (sumSq/n-1)*res.ICC)
			} else {
				variance = msb
			}
			df = k - 1
		}
	}
	res.DF = df
	if !(confidence > 0 && confidence < 1) {
		return res
	}
	se := math.Sqrt(variance / res.NEff)
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.5+confidence/2) * se
	res.Lo, res.Hi = math.Exp(mean-half), math.Exp(mean+half)
	res.Significant = res.CanReach && res.P < alpha && (res.Lo > 1 || res.Hi < 1)
	return res
}

// PoolLevel is the p-value of the block effect's F test above which
// Paired pools the rounds of all blocks (see Paired).
const PoolLevel = 0.5

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// logPos is ln x for finite x > 0, exact to rounding for subnormal x too:
// math.Log on amd64 is off for subnormals (it returns ln 5e-324 for
// 1e-323 as well; golang/go#56600), so the exponent is split off first.
func logPos(x float64) float64 {
	f, e := math.Frexp(x)
	return math.Log(f) + float64(e)*math.Ln2
}

// WilcoxonSignedRank is the two-sided Wilcoxon signed-rank test that the
// differences d are symmetric about 0. No Go library we use has it (gonum,
// go-moremath and x/perf/benchmath have only the two-sample Mann-Whitney
// U test), so it is written here, following R's wilcox.test.
//
// Values that are not finite are ignored. Zeros are dropped before
// ranking (Wilcoxon's method, as R does; Pratt's would rank them and then
// discard their ranks). The remaining n = |{dᵢ ≠ 0}| absolute values get
// ranks 1…n, tied values the mean of the ranks they span, and
// w = W⁺ = Σ rank(|dᵢ|) over dᵢ > 0 (R's V).
//
// When there are no ties, no zeros and n ≤ 50, p is exact: under the null
// each sign is + or − with probability ½ independently, so W⁺ is the sum
// of a uniformly random subset of {1…n}; the number c(s) of subsets with
// sum s comes from the recurrence cᵢ(s) = cᵢ₋₁(s) + cᵢ₋₁(s − i), and
// p = min(1, 2·min(P(W⁺ ≤ w), P(W⁺ ≥ w))), P(W⁺ ≤ w) = Σ_{s≤w} c(s)/2ⁿ.
// Otherwise p is the normal approximation with tie and continuity
// corrections:
//
//	μ = n(n+1)/4,  σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48  (t: sizes of tied groups),
//	z = (w − μ − ½·sign(w − μ)) / σ,  p = min(1, 2·min(Φ(z), 1 − Φ(z))).
//
// (R takes the exact path only for n < 50; here n = 50 is exact too.)
// With no nonzero finite d, w = 0, exact is false, and p is 1 when some d
// were zeros (no sign of a difference) and NaN when d held no finite value.
func WilcoxonSignedRank(d []float64) (w float64, p float64, exact bool) {
	var abs []float64
	var signs []bool
	finite := 0
	for _, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		finite++
		if v == 0 {
			continue
		}
		abs = append(abs, math.Abs(v))
		signs = append(signs, v > 0)
	}
	n := len(abs)
	if n == 0 {
		if finite == 0 {
			return 0, math.NaN(), false
		}
		return 0, 1, false
	}
	ranks, tieTerm := midRanks(abs)
	for i, r := range ranks {
		if signs[i] {
			w += r
		}
	}
	if tieTerm == 0 && finite == n && n <= 50 {
		return w, signRankExactP(n, int(w)), true
	}
	return w, signRankNormalP(n, w, tieTerm), false
}

// midRanks ranks v (all > 0) from 1, giving tied values the mean of the
// ranks they span, and returns Σ(t³ − t) over the groups of t tied values.
func midRanks(v []float64) (ranks []float64, tieTerm float64) {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	ranks = make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		mid := float64(i+1+j) / 2 // mean of ranks i+1 … j
		for q := i; q < j; q++ {
			ranks[idx[q]] = mid
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j
	}
	return ranks, tieTerm
}

// signRankCounts is c(s), s = 0 … n(n+1)/2: how many subsets of {1…n}
// sum to s. Counts stay exact in uint64 up to n = 63.
func signRankCounts(n int) []uint64 {
	c := make([]uint64, n*(n+1)/2+1)
	c[0] = 1
	top := 0
	for i := 1; i <= n; i++ {
		top += i
		for s := top; s >= i; s-- {
			c[s] += c[s-i]
		}
	}
	return c
}

// signRankExactP is the exact two-sided p-value of W⁺ = w with n
// untied nonzero differences.
func signRankExactP(n, w int) float64 {
	c := signRankCounts(n)
	var lo, hi uint64 // #subsets with sum ≤ w, ≥ w
	for s, v := range c {
		if s <= w {
			lo += v
		}
		if s >= w {
			hi += v
		}
	}
	tail := min(lo, hi)
	return math.Min(1, math.Ldexp(float64(tail), 1-n))
}

// signRankVar is the variance of W⁺ under the null with n nonzero
// differences and tie term Σ(t³ − t); it equals Σ rank²/4.
func signRankVar(n int, tieTerm float64) float64 {
	f := float64(n)
	return f*(f+1)*(2*f+1)/24 - tieTerm/48
}

// signRankNormalP is the normal approximation to the two-sided p-value,
// with tie and continuity corrections (R's wilcox.test, correct = TRUE).
func signRankNormalP(n int, w, tieTerm float64) float64 {
	f := float64(n)
	z := w - f*(f+1)/4
	var corr float64
	switch {
	case z > 0:
		corr = 0.5
	case z < 0:
		corr = -0.5
	}
	z = (z - corr) / math.Sqrt(signRankVar(n, tieTerm))
	p := 2 * math.Min(distuv.UnitNormal.CDF(z), distuv.UnitNormal.Survival(z))
	return math.Min(1, p)
}

// MinRounds is the fewest pairs for which the exact two-sided Wilcoxon
// p-value can fall below alpha: the smallest p with n pairs is 2/2ⁿ (all
// signs alike), so it is the smallest n with 2/2ⁿ < alpha — 6 for 0.05
// (2/2⁶ = 0.03125, 2/2⁵ = 0.0625), 8 for 0.01. Ties only raise the
// smallest p. For alpha ≤ 0 (or NaN) no number of pairs reaches it and
// MinRounds returns math.MaxInt.
func MinRounds(alpha float64) int {
	for n := 1; n <= 1100; n++ {
		if math.Ldexp(1, 1-n) < alpha {
			return n
		}
	}
	return math.MaxInt
}
