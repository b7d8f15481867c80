package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// bruteSignRankCounts enumerates every subset of {1…n} and counts its sum:
// the definition of the null distribution, independent of the recurrence.
func bruteSignRankCounts(n int) []uint64 {
	c := make([]uint64, n*(n+1)/2+1)
	for mask := 0; mask < 1<<n; mask++ {
		s := 0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				s += i + 1
			}
		}
		c[s]++
	}
	return c
}

func TestWilcoxonExactCounts(t *testing.T) {
	// Tables of c(s), the subsets of {1…n} with sum s (e.g. Hollander &
	// Wolfe's null distribution of T⁺; P(T⁺ ≤ 3) = 5/64 for n = 6).
	known := map[int][]uint64{
		1: {1, 1},
		2: {1, 1, 1, 1},
		3: {1, 1, 1, 2, 1, 1, 1},
		5: {1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1},
		6: {1, 1, 1, 2, 2, 3, 4, 4, 4, 5, 5, 5, 5, 4, 4, 4, 3, 2, 2, 1, 1, 1},
	}
	for n, want := range known {
		if got := signRankCounts(n); !slices.Equal(got, want) {
			t.Errorf("n=%d: counts %v, want %v", n, got, want)
		}
	}
	for n := 1; n <= 12; n++ {
		got, want := signRankCounts(n), bruteSignRankCounts(n)
		if !slices.Equal(got, want) {
			t.Errorf("n=%d: recurrence %v, enumeration %v", n, got, want)
		}
	}
	// The recurrence's totals stay exact where enumeration is out of reach.
	for _, n := range []int{20, 50, 63} {
		var sum uint64
		for _, v := range signRankCounts(n) {
			sum += v
		}
		if sum != 1<<n {
			t.Errorf("n=%d: counts sum to %d, want 2^%d", n, sum, n)
		}
	}
}

func TestWilcoxonCriticalValues(t *testing.T) {
	// The classical table of two-sided critical values at α = 0.05: the
	// largest T with P(T⁺ ≤ T) ≤ 0.025, i.e. exact two-sided p ≤ 0.05.
	for _, c := range []struct{ n, crit int }{
		{6, 0}, {7, 2}, {8, 3}, {9, 5}, {10, 8}, {11, 10}, {12, 13},
		{13, 17}, {14, 21}, {15, 25}, {20, 52}, {25, 89}, {30, 137},
	} {
		if p := signRankExactP(c.n, c.crit); p > 0.05 {
			t.Errorf("n=%d: p(T=%d) = %g, want ≤ 0.05", c.n, c.crit, p)
		}
		if p := signRankExactP(c.n, c.crit+1); p <= 0.05 {
			t.Errorf("n=%d: p(T=%d) = %g, want > 0.05", c.n, c.crit+1, p)
		}
	}
}

func TestWilcoxonKnownAnswers(t *testing.T) {
	// R: wilcox.test(x, y, paired = TRUE) on Hollander & Wolfe's
	// depression data gives V = 40, p-value = 0.03906 (exact: 2·10/512).
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	neg := make([]float64, len(x))
	for i := range x {
		d[i], neg[i] = x[i]-y[i], y[i]-x[i]
	}
	for _, c := range []struct {
		name  string
		d     []float64
		w, p  float64
		exact bool
	}{
		{"depression x−y", d, 40, 0.0390625, true},
		{"depression y−x", neg, 5, 0.0390625, true},
		{"all positive n=6", []float64{1, 2, 3, 4, 5, 6}, 21, 0.03125, true},
		{"all positive n=5", []float64{1, 2, 3, 4, 5}, 15, 0.0625, true},
		{"one value", []float64{-3}, 0, 1, true},
		// Zeros are dropped (Wilcoxon's method) and force the normal
		// approximation, as in R: ranks of 1…6 all positive, w = 21,
		// z = (21 − 10.5 − 0.5)/√22.75.
		{"zeros dropped", []float64{0, 1, 2, 0, 3, 4, 5, 6}, 21, 2 * distuv.UnitNormal.Survival(10/math.Sqrt(22.75)), false},
		// Ties get mid-ranks: |d| = 1,1,2,3 → ranks 1.5,1.5,3,4; w = 1.5+3+4.
		{"ties", []float64{1, -1, 2, 3}, 8.5, 2 * distuv.UnitNormal.Survival((8.5-5-0.5)/math.Sqrt(7.5-6.0/48)), false},
		{"all zeros", []float64{0, 0, 0}, 0, 1, false},
		{"nothing finite", []float64{math.NaN(), math.Inf(1)}, 0, math.NaN(), false},
		{"empty", nil, 0, math.NaN(), false},
		{"non-finite ignored", []float64{math.NaN(), 1, 2, 3, 4, 5, 6, math.Inf(-1)}, 21, 0.03125, true},
	} {
		w, p, exact := WilcoxonSignedRank(c.d)
		if w != c.w || exact != c.exact || !(math.Abs(p-c.p) < 1e-12 || math.IsNaN(p) && math.IsNaN(c.p)) {
			t.Errorf("%s: got w=%g p=%.7g exact=%v, want w=%g p=%.7g exact=%v", c.name, w, p, exact, c.w, c.p, c.exact)
		}
	}
}

// TestWilcoxonTieVariance checks the tie-corrected variance against its
// definition: under the null each rank enters W⁺ with probability ½
// independently, so Var(W⁺) = Σ rank²/4.
func TestWilcoxonTieVariance(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	for _, c := range []struct {
		name   string
		n      int
		levels int // distinct |d| values to draw from: few means many ties
	}{
		{"no ties", 30, 1 << 30}, {"some ties", 30, 20}, {"many ties", 40, 4}, {"all tied", 10, 1},
	} {
		v := make([]float64, c.n)
		for i := range v {
			v[i] = float64(1 + r.IntN(c.levels))
		}
		ranks, tie := midRanks(v)
		var want, sum float64
		for _, rk := range ranks {
			want += rk * rk / 4
			sum += rk
		}
		if n := float64(c.n); sum != n*(n+1)/2 {
			t.Errorf("%s: mid-ranks sum to %g, want %g", c.name, sum, n*(n+1)/2)
		}
		if got := signRankVar(c.n, tie); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: variance %g, want Σr²/4 = %g", c.name, got, want)
		}
	}
}

// TestWilcoxonNormalNearExact compares the normal approximation with the
// exact p at n = 50, the largest exact n, over every attainable w, and
// the approximation with ties against the exact permutation p with the
// same mid-ranks (all 2^n sign patterns, n = 14).
func TestWilcoxonNormalNearExact(t *testing.T) {
	const n = 50
	worst, worstW := 0.0, 0
	for w := 0; w <= n*(n+1)/2; w++ {
		e, a := signRankExactP(n, w), signRankNormalP(n, float64(w), 0)
		if d := math.Abs(e - a); d > worst {
			worst, worstW = d, w
		}
	}
	t.Logf("n=50: largest |exact − normal| = %.2g at w=%d", worst, worstW)
	if worst > 0.005 {
		t.Errorf("n=50: normal approximation off the exact p by %g at w=%d", worst, worstW)
	}
	// Near α the relative error matters: p ≈ 0.05 and 0.01, where the
	// approximation is off by about 1 % and 9 % of p (hence exact to 50).
	for _, c := range []struct {
		w   int
		rel float64
	}{{434, 0.02}, {371, 0.10}} {
		e, a := signRankExactP(n, c.w), signRankNormalP(n, float64(c.w), 0)
		t.Logf("n=50 w=%d: exact %.5f, normal %.5f", c.w, e, a)
		if math.Abs(e-a) > c.rel*e {
			t.Errorf("n=50 w=%d: exact %.5f, normal %.5f", c.w, e, a)
		}
	}
	if _, _, exact := WilcoxonSignedRank(seq(50)); !exact {
		t.Error("n=50 without ties: not exact")
	}
	if _, _, exact := WilcoxonSignedRank(seq(51)); exact {
		t.Error("n=51: exact")
	}

	// With ties: the permutation distribution of the same mid-ranks.
	d := []float64{1, -1, 2, 2, -2, 3, 4, 4, 5, 6, 6, 6, -7, 8}
	w, p, exact := WilcoxonSignedRank(d)
	if exact {
		t.Fatal("ties: exact")
	}
	abs := make([]float64, len(d))
	for i, v := range d {
		abs[i] = math.Abs(v)
	}
	ranks, _ := midRanks(abs)
	var le, ge int
	for mask := 0; mask < 1<<len(d); mask++ {
		var s float64
		for i, rk := range ranks {
			if mask&(1<<i) != 0 {
				s += rk
			}
		}
		if s <= w+1e-9 {
			le++
		}
		if s >= w-1e-9 {
			ge++
		}
	}
	perm := math.Min(1, 2*float64(min(le, ge))/float64(int(1)<<len(d)))
	t.Logf("ties, n=14: w=%g normal p %.4f, permutation p %.4f", w, p, perm)
	if math.Abs(p-perm) > 0.01 {
		t.Errorf("ties: normal p %.4f, permutation p %.4f", p, perm)
	}
}

func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i + 1)
	}
	return v
}

func TestMinRounds(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		want  int
	}{
		{0.05, 6},   // 2/64 = 0.031 < 0.05 ≤ 2/32
		{0.01, 8},   // 2/256 = 0.0078 < 0.01 ≤ 2/128
		{0.1, 5},    // 2/32 = 0.0625 < 0.1 ≤ 2/16
		{0.0625, 6}, // p must fall below alpha: 2/32 is not below 0.0625
		{0.001, 11}, // 2/2048 = 0.00098
		{1.5, 1},    // one pair's p is 1
		{0, math.MaxInt},
		{-1, math.MaxInt},
		{math.NaN(), math.MaxInt},
	} {
		got := MinRounds(c.alpha)
		if got != c.want {
			t.Errorf("MinRounds(%g) = %d, want %d", c.alpha, got, c.want)
		}
		if got == math.MaxInt || c.alpha > 1 {
			continue
		}
		// Against the exact test itself: n pairs all one way reach alpha,
		// n − 1 do not.
		if p := signRankExactP(got, got*(got+1)/2); p >= c.alpha {
			t.Errorf("alpha %g: %d pairs all positive give p %g", c.alpha, got, p)
		}
		if p := signRankExactP(got-1, (got-1)*got/2); p < c.alpha {
			t.Errorf("alpha %g: %d pairs all positive already give p %g", c.alpha, got-1, p)
		}
	}
}

func TestPairedKnown(t *testing.T) {
	// Two blocks of two rounds with log ratios 0.1, 0.3 | 0.5, 0.7:
	// MSB = 0.16, MSW = 0.02, n₀ = 2, σ²_b = 0.07, ICC = 7/9, m = 2,
	// NEff = 4/(1 + 7/9) = 2.25, SE² = 0.09/2.25 = 0.04 (= MSB/N), df = 1.
	rounds := []Round{
		{0, 1, math.Exp(0.1)}, {0, 2, 2 * math.Exp(0.3)},
		{1, 10, 10 * math.Exp(0.5)}, {1, 3, 3 * math.Exp(0.7)},
	}
	res := Paired(rounds, 0.95, 0.05)
	half := 12.706204736174698 * 0.2 // t(0.975, 1)·SE
	check := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.12g, want %.12g", name, got, want)
		}
	}
	check("Ratio", res.Ratio, math.Exp(0.4))
	check("ICC", res.ICC, 7.0/9)
	check("NEff", res.NEff, 2.25)
	check("DF", res.DF, 1)
	check("Lo", res.Lo, math.Exp(0.4-half))
	check("Hi", res.Hi, math.Exp(0.4+half))
	if res.N != 4 || res.Blocks != 2 || res.CanReach || res.Significant || !res.Exact || res.P != 0.125 {
		t.Errorf("got %+v", res)
	}

	// One block: ICC 0, the ordinary t-interval with N − 1 df.
	one := make([]Round, len(rounds))
	logs := []float64{0.1, 0.3, 0.5, 0.7}
	for i, r := range rounds {
		one[i] = Round{Block: 7, Base: r.Base, Other: r.Other}
	}
	res = Paired(one, 0.9, 0.05)
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 3}.Quantile(0.95)
	se := stat.StdDev(logs, nil) / 2
	check("one block ICC", res.ICC, 0)
	check("one block NEff", res.NEff, 4)
	check("one block DF", res.DF, 3)
	check("one block Lo", res.Lo, math.Exp(0.4-tq*se))
	check("one block Hi", res.Hi, math.Exp(0.4+tq*se))

	// Swapping the labels inverts the ratio and its interval exactly.
	swapped := make([]Round, len(rounds))
	for i, r := range rounds {
		swapped[i] = Round{Block: r.Block, Base: r.Other, Other: r.Base}
	}
	a, b := Paired(rounds, 0.95, 0.05), Paired(swapped, 0.95, 0.05)
	check("swapped Ratio", b.Ratio*a.Ratio, 1)
	check("swapped Lo", b.Lo*a.Hi, 1)
	check("swapped Hi", b.Hi*a.Lo, 1)
	check("swapped P", b.P, a.P)

	// Eight rounds all one way, one block: Wilcoxon p = 2/256, the
	// interval well above 1, significant.
	var up []Round
	for i := range 8 {
		up = append(up, Round{Block: 0, Base: 100, Other: 120 + float64(i)})
	}
	res = Paired(up, 0.95, 0.05)
	if !res.CanReach || !res.Significant || res.P != 2.0/256 || !(res.Lo > 1) {
		t.Errorf("eight rounds up: %+v", res)
	}
	// Five rounds cannot reach 0.05 however clear they are.
	res = Paired(up[:5], 0.95, 0.05)
	if res.CanReach || res.Significant || res.P != 0.0625 {
		t.Errorf("five rounds up: %+v", res)
	}
}

// synthRounds draws rounds of a known ratio: log(Other/Base) =
// ln(ratio) + block effect (sd blockSD, shared by a block's rounds) +
// round noise (sd noiseSD); Base itself varies (lognormal around 1000),
// which the ratio must not see.
func synthRounds(r *rand.Rand, blocks, perBlock int, ratio, blockSD, noiseSD float64) []Round {
	var rounds []Round
	for b := range blocks {
		eff := r.NormFloat64() * blockSD
		for range perBlock {
			base := 1000 * math.Exp(0.3*r.NormFloat64())
			rounds = append(rounds, Round{Block: b, Base: base, Other: base * ratio * math.Exp(eff+noiseSD*r.NormFloat64())})
		}
	}
	return rounds
}

func TestPairedCoverage(t *testing.T) {
	const experiments = 2000
	const ratio = 1.25
	for _, c := range []struct {
		name             string
		blocks, perBlock int
		blockSD, noiseSD float64
		minCover         float64
		naiveUndercovers bool // the case has a block effect an iid interval misses
	}{
		{"iid n=8, one block", 1, 8, 0, 0.1, 0.94, false},
		{"iid n=20, one block", 1, 20, 0, 0.1, 0.94, false},
		{"iid n=20, blocks of one", 20, 1, 0.1, 0.1, 0.94, false}, // block effect is round noise here
		{"iid n=20, 4 blocks × 5", 4, 5, 0, 0.1, 0.94, false},
		{"4 blocks × 5, block effect (ICC 0.5)", 4, 5, 0.1, 0.1, 0.94, true},
		{"4 blocks × 5, strong block effect (ICC 0.8)", 4, 5, 0.2, 0.1, 0.94, true},
		// Two repeats (the demo's): pooled when the F test sees no block
		// effect, so a moderate one costs some coverage (Paired's table).
		{"iid n=16, 2 blocks × 8", 2, 8, 0, 0.1, 0.94, false},
		{"2 blocks × 8, block effect (ICC 0.3)", 2, 8, 0.065, 0.1, 0.90, true},
		{"2 blocks × 8, strong block effect (ICC 0.8)", 2, 8, 0.2, 0.1, 0.91, true},
	} {
		r := rand.New(rand.NewPCG(28, uint64(c.blocks*100+c.perBlock)))
		var cover, naive, neffDF int
		for range experiments {
			rounds := synthRounds(r, c.blocks, c.perBlock, ratio, c.blockSD, c.noiseSD)
			res := Paired(rounds, 0.95, 0.05)
			if res.Lo <= ratio && ratio <= res.Hi {
				cover++
			}
			// The naive interval: all rounds independent, df N − 1.
			logs := make([]float64, len(rounds))
			for i, rd := range rounds {
				logs[i] = math.Log(rd.Other / rd.Base)
			}
			m, sd := stat.MeanStdDev(logs, nil)
			n := float64(len(logs))
			h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975) * sd / math.Sqrt(n)
			if math.Abs(m-math.Log(ratio)) <= h {
				naive++
			}
			// The same SE with df = max(NEff − 1, Blocks − 1, 1).
			se := math.Log(res.Hi/res.Lo) / 2 / distuv.StudentsT{Mu: 0, Sigma: 1, Nu: res.DF}.Quantile(0.975)
			df := math.Max(math.Max(res.NEff-1, float64(res.Blocks-1)), 1)
			tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
			if math.Abs(m-math.Log(ratio)) <= tq*se {
				neffDF++
			}
		}
		got := float64(cover) / experiments
		t.Logf("%s: 95%% interval covers %.1f%%; naive iid interval %.1f%%; df = max(NEff−1, Blocks−1, 1) %.1f%%",
			c.name, 100*got, 100*float64(naive)/experiments, 100*float64(neffDF)/experiments)
		if got < c.minCover {
			t.Errorf("%s: coverage %.1f%%, want ≥ %.0f%%", c.name, 100*got, 100*c.minCover)
		}
		if c.naiveUndercovers && float64(naive)/experiments >= c.minCover {
			t.Errorf("%s: the naive interval covers %.1f%% too: the case does not test the block correction", c.name, 100*float64(naive)/experiments)
		}
	}
}

func TestPairedFalsePositivesAndPower(t *testing.T) {
	const experiments = 2000
	// Binomial slack: three standard errors of a 5 % rate.
	slack := 3 * math.Sqrt(0.05*0.95/experiments)
	for _, c := range []struct {
		name             string
		blocks, perBlock int
		ratio            float64
		blockSD, noiseSD float64
		maxRate, minRate float64
	}{
		{"A/A n=8", 1, 8, 1, 0, 0.1, 0.05 + slack, 0},
		{"A/A n=20", 1, 20, 1, 0, 0.1, 0.05 + slack, 0},
		{"A/A 4 blocks × 5, block effect", 4, 5, 1, 0.1, 0.1, 0.05 + slack, 0},
		{"A/A n=5 (cannot reach 0.05)", 1, 5, 1, 0, 0.1, 0, 0},
		{"1.3× n=16, sd 0.2", 1, 16, 1.3, 0, 0.2, 1, 0.95},
		{"1.3× 4 blocks × 4, sd 0.2", 4, 4, 1.3, 0, 0.2, 1, 0.5},
	} {
		r := rand.New(rand.NewPCG(29, uint64(c.blocks*100+c.perBlock)))
		sig := 0
		for range experiments {
			if Paired(synthRounds(r, c.blocks, c.perBlock, c.ratio, c.blockSD, c.noiseSD), 0.95, 0.05).Significant {
				sig++
			}
		}
		rate := float64(sig) / experiments
		t.Logf("%s: significant at α=0.05 in %.1f%%", c.name, 100*rate)
		if rate > c.maxRate || rate < c.minRate {
			t.Errorf("%s: significant in %.1f%%, want %.1f%%–%.1f%%", c.name, 100*rate, 100*c.minRate, 100*c.maxRate)
		}
	}
}

func TestPairedHostile(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name   string
		rounds []Round
		n      int
		blocks int
		ratio  float64 // NaN: want NaN
	}{
		{"empty", nil, 0, 0, nan},
		{"nothing usable", []Round{{0, nan, 1}, {0, 1, inf}, {0, 0, 1}, {0, 1, -1}, {0, -inf, 1}}, 0, 0, nan},
		{"bad rounds dropped", []Round{{0, nan, 1}, {0, 100, 200}, {1, 1, inf}, {2, 0, 5}, {3, -1, 2}, {0, 50, 100}, {4, 1, 0}}, 2, 1, 2},
		{"one round", []Round{{0, 2, 3}}, 1, 1, 1.5},
		{"huge values", []Round{{0, 1e308, 5e307}, {0, math.MaxFloat64, math.MaxFloat64 / 2}, {1, 1e308, 5e307}}, 3, 2, 0.5},
		{"huge against tiny", []Round{{0, 1e-300, 1e300}, {0, 2e-300, 2e300}}, 2, 1, math.Inf(1)}, // e^1381: beyond float64
		{"denormals", []Round{{0, 5e-324, 1e-323}, {0, 1e-323, 2e-323}}, 2, 1, 2},
	} {
		res := Paired(c.rounds, 0.95, 0.05)
		okRatio := math.IsNaN(c.ratio) && math.IsNaN(res.Ratio) || math.Abs(res.Ratio-c.ratio) <= 1e-12*c.ratio || math.IsInf(c.ratio, 1) && math.IsInf(res.Ratio, 1)
		if res.N != c.n || res.Blocks != c.blocks || !okRatio {
			t.Errorf("%s: N=%d Blocks=%d Ratio=%g, want %d %d %g", c.name, res.N, res.Blocks, res.Ratio, c.n, c.blocks, c.ratio)
		}
		if res.N == 0 && (!math.IsNaN(res.P) || res.Significant || res.CanReach) {
			t.Errorf("%s: %+v", c.name, res)
		}
		if res.N < 2 && !(math.IsNaN(res.Lo) && math.IsNaN(res.Hi)) {
			t.Errorf("%s: N=%d but interval %g–%g", c.name, res.N, res.Lo, res.Hi)
		}
		if res.N >= 2 && (math.IsNaN(res.Lo) || math.IsNaN(res.Hi) || math.IsNaN(res.P)) {
			t.Errorf("%s: NaN in %+v", c.name, res)
		}
	}
	// Bad confidence or alpha: no interval, never significant.
	rounds := synthRounds(rand.New(rand.NewPCG(1, 2)), 1, 10, 2, 0, 0.05)
	for _, ca := range [][2]float64{{0, 0.05}, {1, 0.05}, {nan, 0.05}, {0.95, 0}, {0.95, nan}} {
		res := Paired(rounds, ca[0], ca[1])
		if res.Significant || res.N != 10 {
			t.Errorf("confidence %g alpha %g: %+v", ca[0], ca[1], res)
		}
		if !(ca[0] > 0 && ca[0] < 1) && !math.IsNaN(res.Lo) {
			t.Errorf("confidence %g: interval %g–%g", ca[0], res.Lo, res.Hi)
		}
	}
}
