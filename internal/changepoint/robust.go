package changepoint

import (
	"math"
	"slices"
)

// The calibrated method's view of the series (docs/changepoint.md, "The
// calibrated method"): the values with outliers replaced, and how much the
// noise's autocorrelation inflates the variance of a segment's mean.

const (
	// sideSpan: a point is compared with the median of the sideSpan
	// points before it and with that of the sideSpan points after it.
	sideSpan = 7
	// outlierK: a point further than outlierK robust standard deviations
	// from both medians is an outlier (Gaussian noise: about once in
	// 10,000 points). A point next to a step is near the median of its own
	// side, so a step is never taken for outliers; in a run of up to
	// (sideSpan+1)/2 outliers each side's median stays in the noise.
	outlierK = 4.0
	// varioLag: the lag at which the noise counts as decorrelated for the
	// estimate of its autocorrelation (AR(1) with φ ≤ 0.7 keeps less than
	// 6 % of its correlation there).
	varioLag = 8
	// minAutoN: fewer points than this give no autocorrelation estimate
	// (a handful of differences says nothing about it); φ is then 0.
	minAutoN = 30
	// maxPhi caps the estimated lag-1 autocorrelation (a factor of 19).
	maxPhi = 0.9
	// scaleSpan: the noise's scale at a point is measured over the
	// residuals of the scaleSpan points up to it (the first scaleSpan
	// points share the scale of those points), so that it follows a
	// series whose noise changes, and a point's value is final once
	// sideSpan points follow it: appending a point changes only the last
	// few values.
	scaleSpan = 50
)

// robust holds the series y with outliers replaced and its prefix sums,
// kept up to date as points are appended, and the autocorrelation
// estimate, with the scratch space that computes them.
type robust struct {
	near    []float64 // the median of the side nearer to x_i
	res     []float64 // |x_i − the median of the points around it|
	both    []bool    // x_i has points on both sides
	flag    []bool    // x_i is far from both sides' medians (replaced unless its run is a level)
	y       []float64
	pre     prefix
	phi     float64
	inflate float64 // (1+φ)/(1−φ): variance of a mean of n points, in units of σ²/n
	scratch []float64
	win     [2*sideSpan + 1]float64
}

// final is the number of leading values of y that no appended point can
// change, in a series of n points.
func (r *robust) final(n int) int {
	if n < scaleSpan+3*sideSpan {
		return 0
	}
	return n - finalLag
}

// finalLag: a value is final once finalLag points follow it. Its flag
// needs sideSpan points after it, and whether its run of flagged points
// is a level (levelRun) needs the flag of the point after the run, which
// is at most sideSpan+1 points on.
const finalLag = 2*sideSpan + 2

// update brings y up to date with x, whose first len(r.y) points are those
// y was computed from. x_i is an outlier when it has points on both sides
// and is further than outlierK robust standard deviations from the median
// of the sideSpan points before it and from that of the sideSpan points
// after it (a Hampel identifier that keeps edges: a point next to a step
// agrees with its own side); y_i is then the nearer of the two medians,
// else x_i. The robust standard deviation is 1.4826 × the median of the
// residuals from the median of the 2·sideSpan+1 points around each point
// (fewer near the ends) over the scaleSpan points up to i. The
// first and the newest point are never outliers (one side only: the start
// of a step looks the same); a spike there is the minimum segment's.
func (r *robust) update(x []float64) {
	n := len(x)
	from := r.final(len(r.y))
	if n < len(r.y) {
		from = 0
	}
	r.near, r.res, r.both, r.y = extend(r.near, n), extend(r.res, n), extendBool(r.both, n), extend(r.y, n)
	r.flag = extendBool(r.flag, n)
	median := func(lo, hi int) float64 {
		w := r.win[:hi-lo]
		copy(w, x[lo:hi])
		return medianSmall(w)
	}
	// Away from the ends the three windows (centred, before, after) slide
	// by one point per point: kept sorted, each costs a removal and an
	// insertion instead of a sort.
	interior := func(j int) bool { return j >= sideSpan && j+sideSpan < n }
	var mid, left, right sorted
	for j := max(0, from-sideSpan); j < n; j++ {
		lo, hi := max(0, j-sideSpan), min(n, j+sideSpan+1)
		r.both[j] = lo < j && j+1 < hi
		if interior(j) {
			if !interior(j-1) || j == max(0, from-sideSpan) {
				mid.reset(x[j-sideSpan : j+sideSpan+1])
				left.reset(x[j-sideSpan : j])
				right.reset(x[j+1 : j+sideSpan+1])
			} else {
				mid.swap(x[j-sideSpan-1], x[j+sideSpan])
				left.swap(x[j-sideSpan-1], x[j-1])
				right.swap(x[j], x[j+sideSpan])
			}
			r.res[j] = math.Abs(x[j] - mid.median())
			ml, mr := left.median(), right.median()
			r.near[j] = ml
			if math.Abs(x[j]-mr) < math.Abs(x[j]-ml) {
				r.near[j] = mr
			}
			continue
		}
		// The scale's residual: from the median of a window centred on j
		// (narrower near the ends).
		h := min(j-lo, hi-1-j)
		r.res[j] = math.Abs(x[j] - median(j-h, j+h+1))
		if r.both[j] {
			ml, mr := median(lo, j), median(j+1, hi)
			r.near[j] = ml
			if math.Abs(x[j]-mr) < math.Abs(x[j]-ml) {
				r.near[j] = mr
			}
		}
	}
	// The residuals of [i−scaleSpan+1, i], or of the first scaleSpan
	// points for the first ones, kept sorted as the window slides (a
	// removal and an insertion of O(scaleSpan) each, instead of a
	// selection per point).
	var s float64
	win := sorted(r.scratch[:0])
	for i := from; i < n; i++ {
		lo, hi := i-scaleSpan+1, i+1
		if lo <= 0 {
			lo, hi = 0, min(n, scaleSpan)
		}
		switch {
		case i == from:
			win.reset(r.res[lo:hi])
		case lo > 0:
			win.swap(r.res[lo-1], r.res[i])
		}
		s = 1.4826 * win.median()
		r.flag[i] = r.both[i] && s > 0 && math.Abs(x[i]-r.near[i]) > outlierK*s
	}
	r.scratch = win
	// A flagged point takes its nearer median, unless its run of flagged
	// points is a level (levelRun): the middle of a dip of five points or
	// more is far from both sides' medians too, and its edges, which are
	// not, agree with it.
	st := from
	for st > 0 && r.flag[st-1] {
		st--
	}
	for i := st; i < n; {
		if !r.flag[i] {
			if i >= from {
				r.y[i] = x[i]
			}
			i++
			continue
		}
		j := i
		for j+1 < n && r.flag[j+1] {
			j++
		}
		keep := r.levelRun(x, i, j)
		for k := max(i, from); k <= j; k++ {
			r.y[k] = r.near[k]
			if keep {
				r.y[k] = x[k]
			}
		}
		i = j + 1
	}
	// Prefix sums from the first changed value.
	if from == 0 {
		r.pre = prefix{s1: r.pre.s1[:0], c1: r.pre.c1[:0], s2: r.pre.s2[:0], c2: r.pre.c2[:0]}
	} else {
		r.pre.truncate(from)
	}
	p := &r.pre
	p.s1, p.c1, p.s2, p.c2 = slices.Grow(p.s1, n+1-len(p.s1)), slices.Grow(p.c1, n+1-len(p.c1)), slices.Grow(p.s2, n+1-len(p.s2)), slices.Grow(p.c2, n+1-len(p.c2))
	for _, v := range r.y[from:] {
		r.pre.push(v)
	}
}

// levelRun says whether the flagged points x[i..j] are a level rather
// than outliers: more than sideSpan of them (outliers come in runs of a
// few), or all on one side of their medians with a neighbour, not
// flagged, nearer their median than its own (the edge of a dip: the
// first and last points of a dip of five or more are near the median of
// the dip's side). A run of outliers has neighbours at the level around
// it.
func (r *robust) levelRun(x []float64, i, j int) bool {
	if j-i+1 > sideSpan {
		return true
	}
	up := x[i] > r.near[i]
	w := r.win[:0]
	for k := i; k <= j; k++ {
		if (x[k] > r.near[k]) != up {
			return false
		}
		w = append(w, x[k])
	}
	m := medianSmall(w)
	for _, e := range []int{i - 1, j + 1} {
		if e < 0 || e >= len(x) || !r.both[e] {
			continue
		}
		base := r.near[i]
		if e > j {
			base = r.near[j]
		}
		if math.Abs(x[e]-m) < math.Abs(x[e]-base) {
			return true
		}
	}
	return false
}

// autocorrelation estimates the lag-1 autocorrelation φ of the noise of
// y and sets the variance inflation (1+φ)/(1−φ) (1 for fewer than
// minAutoN points).
func (r *robust) autocorrelation() {
	r.phi = 0
	if len(r.y) >= minAutoN {
		// The variogram γ(h) = ½E(y_{i+h} − y_i)² of AR(1) noise is
		// σ²(1 − φʰ), so φ ≈ 1 − γ(1)/γ(varioLag). Medians of absolute
		// differences stand for the expectations: a step or an outlier
		// moves a few differences, not their median.
		d1 := r.diffMedian(1)
		dl := r.diffMedian(varioLag)
		if dl > 0 {
			r.phi = min(max(1-(d1*d1)/(dl*dl), 0), maxPhi)
		}
	}
	r.inflate = (1 + r.phi) / (1 - r.phi)
}

// diffMedian is the median of |y[i+lag] − y[i]|.
func (r *robust) diffMedian(lag int) float64 {
	m := len(r.y) - lag
	r.scratch = resize(r.scratch, m)
	d := r.scratch
	for i := range d {
		d[i] = math.Abs(r.y[i+lag] - r.y[i])
	}
	return selectK(d, m/2)
}

// medianSmall returns the median of a few values (sorting them in place).
func medianSmall(w []float64) float64 {
	for i := 1; i < len(w); i++ {
		for j := i; j > 0 && w[j] < w[j-1]; j-- {
			w[j], w[j-1] = w[j-1], w[j]
		}
	}
	k := len(w)
	if k%2 == 1 {
		return w[k/2]
	}
	return (w[k/2-1] + w[k/2]) / 2
}

// medianSorted is the median of sorted values (0 for none).
func medianSorted(w []float64) float64 {
	k := len(w)
	switch {
	case k == 0:
		return 0
	case k%2 == 1:
		return w[k/2]
	}
	return (w[k/2-1] + w[k/2]) / 2
}

// selectK returns the k-th smallest value of a (0-based), reordering a:
// Hoare's quickselect, O(len(a)) on average. Neither the standard library
// nor gonum selects without sorting, and a median per Append must not cost
// a sort of the whole series.
func selectK(a []float64, k int) float64 {
	if len(a) == 0 {
		return 0
	}
	lo, hi := 0, len(a)-1
	for lo < hi {
		// Median of three as the pivot: deterministic, and good on sorted
		// or constant input.
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		p := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

// extend returns s with length n, keeping its values.
func extend(s []float64, n int) []float64 {
	if n <= len(s) {
		return s[:n]
	}
	return append(s, make([]float64, n-len(s))...)
}

func extendBool(s []bool, n int) []bool {
	if n <= len(s) {
		return s[:n]
	}
	return append(s, make([]bool, n-len(s))...)
}

// sorted is a small window of values kept in ascending order.
type sorted []float64

func (w *sorted) reset(v []float64) {
	*w = append((*w)[:0], v...)
	slices.Sort(*w)
}

// swap replaces out (a value of the window) by in, moving the values in
// between by one place.
func (w sorted) swap(out, in float64) {
	k, _ := slices.BinarySearch(w, out)
	for k+1 < len(w) && w[k+1] < in {
		w[k] = w[k+1]
		k++
	}
	for k > 0 && w[k-1] > in {
		w[k] = w[k-1]
		k--
	}
	w[k] = in
}

func (w sorted) median() float64 { return medianSorted(w) }
