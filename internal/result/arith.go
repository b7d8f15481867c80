package result

import "math"

// Overflow-safe arithmetic over figures: what combines figures (a
// build's median, a bucket's mean, a comparison's geomean) gives a finite
// figure from finite figures, even near the largest float (two runs of
// 1.7e308 have a median of 1.7e308, not +Inf). A store written before
// the bounds (CheckFigures) can hold such values; they must still render.

// Midpoint is (a+b)/2 without overflow.
func Midpoint(a, b float64) float64 {
	if (a >= 0) == (b >= 0) {
		return a + (b-a)/2 // same sign: b-a cannot overflow
	}
	return (a + b) / 2 // opposite signs: a+b cannot overflow
}

// Mean is the arithmetic mean of v (NaN for none): the plain sum where
// it is finite, else the sum of each value's share, which is.
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range v {
		s += x
	}
	n := float64(len(v))
	if !math.IsInf(s, 0) || math.IsInf(maxAbs(v), 0) {
		return s / n
	}
	s = 0
	for _, x := range v {
		s += x / n
	}
	return s
}

// StdDev is the sample standard deviation of v (0 for fewer than two
// values), computed on v scaled by its largest magnitude so that the
// squares do not overflow; the largest float where the true one is
// larger still.
func StdDev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	sc := maxAbs(v)
	if sc == 0 || math.IsInf(sc, 0) || math.IsNaN(sc) {
		if sc == 0 {
			return 0
		}
		return math.NaN()
	}
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = x / sc
	}
	m := Mean(w)
	var ss float64
	for _, x := range w {
		ss += (x - m) * (x - m)
	}
	return ClampFinite(sc * math.Sqrt(ss/float64(len(v)-1)))
}

// GeoMean is the geometric mean of v, in log space (NaN for none, or
// where a value is not above 0).
func GeoMean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range v {
		if !(x > 0) {
			return math.NaN()
		}
		s += math.Log(x)
	}
	return ClampFinite(math.Exp(s / float64(len(v))))
}

// Ratio is a/b, the largest float in place of an overflow (NaN where b
// is 0 or either is NaN, as a/b).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	r := a / b
	if math.IsInf(r, 0) && !math.IsInf(a, 0) {
		return ClampFinite(r)
	}
	return r
}

// ClampFinite is v with ±Inf as ±MaxFloat64; NaN stays NaN (missing).
func ClampFinite(v float64) float64 {
	switch {
	case math.IsInf(v, 1):
		return math.MaxFloat64
	case math.IsInf(v, -1):
		return -math.MaxFloat64
	}
	return v
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
