package changepoint

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/mathext"
)

// twoSum returns s = a+b rounded and the rounding error e, so that
// a+b = s+e exactly (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return
}

// prefix holds compensated prefix sums of (x − ref) and (x − ref)² so that
// the mean and variance of any segment cost O(1) and lose no more precision
// than a direct sum over the segment would (the merge step tests segments
// of any length, so summing them directly would be quadratic).
type prefix struct {
	ref            float64
	s1, c1, s2, c2 []float64 // s: running sums, c: their rounding errors
	curS1, curC1   float64
	curS2, curC2   float64
	initialised    bool
}

func (p *prefix) push(v float64) {
	if !p.initialised {
		p.ref = v
		p.initialised = true
		p.s1, p.c1, p.s2, p.c2 = append(p.s1, 0), append(p.c1, 0), append(p.s2, 0), append(p.c2, 0)
	}
	d := v - p.ref
	var e float64
	p.curS1, e = twoSum(p.curS1, d)
	p.curC1 += e
	p.curS2, e = twoSum(p.curS2, d*d)
	p.curC2 += e
	p.s1, p.c1 = append(p.s1, p.curS1), append(p.c1, p.curC1)
	p.s2, p.c2 = append(p.s2, p.curS2), append(p.c2, p.curC2)
}

// truncate keeps the sums of the first k values, so that values from k on
// can be pushed again.
func (p *prefix) truncate(k int) {
	p.s1, p.c1, p.s2, p.c2 = p.s1[:k+1], p.c1[:k+1], p.s2[:k+1], p.c2[:k+1]
	p.curS1, p.curC1, p.curS2, p.curC2 = p.s1[k], p.c1[k], p.s2[k], p.c2[k]
}

// agg is the sum of (x − ref) and of (x − ref)² over some points, each as
// a value and its rounding error.
type agg struct {
	n              int
	s1, e1, s2, e2 float64
}

// seg returns the sums over x[a:b].
func (p *prefix) seg(a, b int) agg {
	return agg{n: b - a,
		s1: p.s1[b] - p.s1[a], e1: p.c1[b] - p.c1[a],
		s2: p.s2[b] - p.s2[a], e2: p.c2[b] - p.c2[a]}
}

// add returns the sums over the points of a and of b.
func (a agg) add(b agg) agg {
	s1, e1 := twoSum(a.s1, b.s1)
	s2, e2 := twoSum(a.s2, b.s2)
	return agg{n: a.n + b.n, s1: s1, e1: a.e1 + b.e1 + e1, s2: s2, e2: a.e2 + b.e2 + e2}
}

// meanVar returns the mean and the population variance of the points
// (ref is the prefix's reference value); 0, 0 for no points.
func (a agg) meanVar(ref float64) (mean, variance float64) {
	if a.n == 0 {
		return 0, 0
	}
	n := float64(a.n)
	m := (a.s1 + a.e1) / n
	variance = (a.s2+a.e2)/n - m*m
	if variance < 0 || a.n == 1 {
		variance = 0
	}
	return ref + m, variance
}

// meanVar returns the mean and the population variance of x (two passes).
func meanVar(x []float64) (mean, variance float64) {
	var s float64
	for _, v := range x {
		s += v
	}
	mean = s / float64(len(x))
	var ss float64
	for _, v := range x {
		d := v - mean
		ss += d * d
	}
	return mean, ss / float64(len(x))
}

// tTest is scipy.stats.ttest_ind_from_stats(equal_var=True, two-sided) fed
// with population variances, as Otava's TTestSignificanceTester does: the
// pooled variance is ((n1−1)·v1 + (n2−1)·v2)/(n1+n2−2) with v = SS/n. It
// returns 1 when the two samples have two points in all, NaN when both are
// constant and equal, and 0 when both are constant and differ.
func tTest(n1 int, m1, v1 float64, n2 int, m2, v2 float64) float64 {
	t2, df, p, fixed := tStat(n1, m1, v1, n2, m2, v2)
	if fixed {
		return p
	}
	return pValue(t2, df)
}

// tStat returns t² and the degrees of freedom of tTest, or the p-value
// itself (fixed) when it does not depend on the t distribution.
func tStat(n1 int, m1, v1 float64, n2 int, m2, v2 float64) (t2, df, p float64, fixed bool) {
	if n1+n2 <= 2 {
		return 0, 0, 1, true
	}
	f1, f2 := float64(n1), float64(n2)
	df = f1 + f2 - 2
	svar := ((f1-1)*v1 + (f2-1)*v2) / df
	denom := math.Sqrt(svar * (1/f1 + 1/f2))
	t := (m1 - m2) / denom
	switch {
	case math.IsNaN(t):
		return 0, df, math.NaN(), true
	case math.IsInf(t, 0):
		return 0, df, 0, true
	}
	return t * t, df, 0, false
}

// pValue is the two-sided tail of Student's t with df degrees of freedom:
// 2·sf(|t|) = I_{df/(df+t²)}(df/2, 1/2).
func pValue(t2, df float64) float64 {
	x := df / (df + t2)
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	return mathext.RegIncBeta(df/2, 0.5, x)
}

// critical answers "is the p-value below level?" from t² and the degrees
// of freedom without the incomplete beta function when t² is clearly on
// one side of the critical value; near it, the exact p-value decides, so
// the answers are exactly tTest's.
type critical struct {
	level float64
	t2    []float64 // local copy of critCache's values; 0: not fetched
}

// side returns −1 if p < level for sure, +1 if p > level for sure, and 0
// when the caller must compute p.
func (c *critical) side(t2, df float64) int {
	d := int(df)
	if c.level >= 0.5 || float64(d) != df || d > 1<<20 {
		return 0
	}
	if d >= len(c.t2) {
		c.t2 = append(c.t2, make([]float64, d+1-len(c.t2))...)
	}
	tc := c.t2[d]
	if tc == 0 {
		tc = criticalT2(c.level, d)
		c.t2[d] = tc
	}
	switch {
	case tc < 0:
		return 0
	case t2 >= tc*(1+critMargin):
		return -1
	case t2 <= tc*(1-critMargin):
		return 1
	}
	return 0
}

// critMargin is the relative distance from the critical t² beyond which
// side() decides without the exact p-value.
const critMargin = 1e-6

// critCache holds the critical t² per significance level and degrees of
// freedom for all engines: the inverse incomplete beta function costs more
// than the p-values it saves, so each value is computed once per process.
var critCache struct {
	sync.RWMutex
	t2 map[float64][]float64
}

// criticalT2 returns t² at which the two-sided p-value with df degrees of
// freedom equals level, or −1 if it cannot be computed.
func criticalT2(level float64, df int) float64 {
	critCache.RLock()
	s := critCache.t2[level]
	var tc float64
	if df < len(s) {
		tc = s[df]
	}
	critCache.RUnlock()
	if tc != 0 {
		return tc
	}
	f := float64(df)
	x := mathext.InvRegIncBeta(f/2, 0.5, level)
	tc = f * (1 - x) / x
	// Use it only if the margin that side() allows brackets the level
	// (the inverse is less accurate than that for tiny levels).
	if !(tc > 0) || math.IsInf(tc, 0) || !(pValue(tc*(1+critMargin), f) < level) || !(pValue(tc*(1-critMargin), f) > level) {
		tc = -1
	}
	critCache.Lock()
	if critCache.t2 == nil {
		critCache.t2 = map[float64][]float64{}
	}
	s = critCache.t2[level]
	if df >= len(s) {
		s = append(s, make([]float64, df+1-len(s))...)
	}
	s[df] = tc
	critCache.t2[level] = s
	critCache.Unlock()
	return tc
}

// atMost reports tTest(...) ≤ c.level.
func (c *critical) atMost(n1 int, m1, v1 float64, n2 int, m2, v2 float64) bool {
	t2, df, p, fixed := tStat(n1, m1, v1, n2, m2, v2)
	if !fixed {
		switch c.side(t2, df) {
		case -1:
			return true
		case 1:
			return false
		}
		p = pValue(t2, df)
	}
	return p <= c.level
}

// magnitude is Otava's TTestStats.change_magnitude: the larger of the
// forward and backward relative changes, each 0 when its denominator is 0.
func magnitude(before, after float64) float64 {
	var fwd, bwd float64
	if before != 0 {
		fwd = after/before - 1
	}
	if after != 0 {
		bwd = before/after - 1
	}
	return math.Max(math.Abs(fwd), math.Abs(bwd))
}

// calibratedP is the calibrated method's p-value of a change between two
// segments of n1 and n2 points (outliers clipped) that span span points
// between the neighbouring change points: Student's t with the pooled
// variance multiplied by the autocorrelation's inflation of the variance
// of a mean, two-sided, times the number of positions with minSeg points
// on either side that the change could have been placed at (Bonferroni:
// the split chose the position that looked most like a change). It is not
// capped at 1.
func (e *engine) calibratedP(n1 int, m1, v1 float64, n2 int, m2, v2 float64, span int) float64 {
	if n1 == 0 || n2 == 0 || n1+n2 <= 2 {
		return 1
	}
	f1, f2 := float64(n1), float64(n2)
	df := f1 + f2 - 2
	s2 := (f1*v1 + f2*v2) / df
	d := m2 - m1
	if !(s2 > 0) {
		if d == 0 {
			return math.NaN()
		}
		return 0
	}
	t2 := d * d / (s2 * (1/f1 + 1/f2)) / e.rb.inflate
	k := max(1, span-2*e.c.minSeg+1)
	return pValue(t2, df) * float64(k)
}
