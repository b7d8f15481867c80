package changepoint

import (
	"math"
	"slices"
)

// engine holds one series and the state of its split step, so that points
// can be appended and only the windows that reached the old end of the
// series are run again. Detect and Analysis share it, which is what makes
// Analysis.Append return exactly Detect's answer.
type engine struct {
	c       config
	x       []float64 // values, missing ones filled
	pre     prefix
	leading int // missing values before the first value, not yet filled

	// Split state. Every window's change points are beyond the previous
	// windows' (a window starts at or after the last change point of the one
	// before), so weak is the concatenation of the windows' change points
	// and is sorted.
	weak []int
	tail []window // windows to run again when points are appended, in order
	next int      // start of the next window to run
	runs int      // windows run so far (for tests)
	// splitN is the series length the split last ran at.
	splitN int

	wd   windowDetector
	m    merger
	crit critical // at c.p, for the merge

	// The merge's statistics: over x (sp = &pre), or, for the calibrated
	// method, over the clipped series (sp = &rb.pre).
	rb   robust
	sp   *prefix
	post []float64 // locate's scratch
}

// window is a window to run again when points are appended.
type window struct {
	start, end int
	weakOff    int // len(weak) before this window's change points
}

func newEngine(c config) *engine {
	e := &engine{c: c, crit: critical{level: c.p}}
	e.wd.local = c.calibrated
	return e
}

// push appends one value. NaN is a missing value: it repeats the previous
// value, and missing values at the start take the first value, as Otava's
// fill_missing does.
func (e *engine) push(v float64) error {
	if math.IsInf(v, 0) {
		return ErrInfinite
	}
	if math.IsNaN(v) {
		if len(e.x) == 0 {
			e.leading++
			return nil
		}
		v = e.x[len(e.x)-1]
	}
	for ; e.leading > 0; e.leading-- {
		e.add(v)
	}
	e.add(v)
	return nil
}

// reserve makes room for n more values.
func (e *engine) reserve(n int) {
	e.x = slices.Grow(e.x, n)
	p := &e.pre
	p.s1, p.c1, p.s2, p.c2 = slices.Grow(p.s1, n+1), slices.Grow(p.c1, n+1), slices.Grow(p.s2, n+1), slices.Grow(p.c2, n+1)
}

func (e *engine) add(v float64) {
	e.x = append(e.x, v)
	e.pre.push(v)
}

// split brings the weak change points up to date with the series: Otava's
// split step. Windows of c.window points start at 0; each next window
// starts at the later of (start + window/2) and the last change point the
// window found. Windows that the end of the series cut short, and for the
// calibrated method windows that hold a clipped value that a new point can
// still change, are run again once the series is longer; the others never
// change.
func (e *engine) split() {
	n := len(e.x)
	if n == e.splitN {
		return
	}
	e.splitN = n
	if len(e.tail) > 0 {
		w := e.tail[0]
		e.next, e.weak, e.tail = w.start, e.weak[:w.weakOff], e.tail[:0]
	}
	z, final := e.x, n
	if e.c.calibrated {
		e.rb.update(e.x)
		z, final = e.rb.y, e.rb.final(n)
	}
	for e.next < n {
		s := e.next
		end := min(s+e.c.window, n)
		cps := e.wd.detect(z[s:end], e.splitLevel())
		e.runs++
		off := len(e.weak)
		for _, c := range cps {
			e.weak = append(e.weak, s+c)
		}
		if end-s < e.c.window || end > final {
			e.tail = append(e.tail, window{start: s, end: end, weakOff: off})
		}
		last := 0
		if len(cps) > 0 {
			last = s + cps[len(cps)-1]
		}
		e.next = max(last, s+e.c.step)
	}
}

// result turns the merge's surviving change points into ChangePoints, with
// the statistics of the final segments and the interval where each
// arrived. The calibrated method first settles them (see settle).
func (e *engine) result(alive []int) []ChangePoint {
	if len(alive) == 0 {
		return nil
	}
	n := len(e.x)
	idx := make([]int, len(alive))
	for k, i := range alive {
		idx[k] = e.weak[i]
	}
	if e.c.calibrated {
		idx = e.settle(idx)
	}
	out := make([]ChangePoint, 0, len(idx))
	for k, tau := range idx {
		a, c := 0, n
		if k > 0 {
			a = idx[k-1]
		}
		if k+1 < len(idx) {
			c = idx[k+1]
		}
		var before, after agg
		if e.c.calibrated {
			before, after = e.sp.seg(a, tau), e.sp.seg(tau, c)
		} else {
			// The merge's segments: a spike's points left out.
			left := 0
			if k > 0 {
				left = alive[k-1] + 1
			}
			before, after = e.m.seg[left], e.m.seg[alive[k]+1]
		}
		st := e.stats(before, after, c-a, true)
		cp := ChangePoint{
			Index:      tau,
			PValue:     st.p,
			MeanBefore: st.mb,
			MeanAfter:  st.ma,
			StdBefore:  math.Sqrt(st.vb),
			StdAfter:   math.Sqrt(st.va),
		}
		if st.p > 1 {
			cp.PValue = 1
		}
		_, cp.Lo, cp.Hi = e.locate(a, tau, c)
		cp.Lo, cp.Hi = min(cp.Lo, tau), max(cp.Hi, tau)
		e.c.finish(&cp)
		out = append(out, cp)
	}
	return out
}

// settle places the calibrated method's change points where they most
// probably are and checks them again. The split places a change where the
// energy distance within a window is largest, which for Gaussian noise is
// often a few points from where the level changes; locate finds the
// position with the values between the neighbouring change points. So
// each change point moves, left to right, to where locate puts it. Moving
// one changes its neighbours' segments, so then each is tested again on
// its final segments, all points counted (outliers are clipped already):
// while one fails (p ≥ PValue, or magnitude ≤ MinMagnitude), the weakest
// goes and its two neighbours, whose segments grew, are placed again.
func (e *engine) settle(idx []int) []int {
	n := len(e.x)
	bounds := func(k int) (a, c int) { return around(idx, k, n) }
	place := func(k int) {
		if k >= 0 && k < len(idx) {
			a, c := bounds(k)
			idx[k], _, _ = e.locate(a, idx[k], c)
		}
	}
	for k := range idx {
		place(k)
	}
	for len(idx) > 0 {
		worst, worstP, weakest, weakestMag := -1, 0.0, -1, 0.0
		for k, tau := range idx {
			a, c := bounds(k)
			st := e.stats(e.sp.seg(a, tau), e.sp.seg(tau, c), c-a, true)
			if p := st.p; math.IsNaN(p) || p >= e.c.p {
				if math.IsNaN(p) {
					p = math.Inf(1)
				}
				if worst < 0 || p > worstP {
					worst, worstP = k, p
				}
			}
			if st.mag <= e.c.minMag && (weakest < 0 || st.mag < weakestMag) {
				weakest, weakestMag = k, st.mag
			}
		}
		if worst < 0 {
			worst = weakest
		}
		if worst < 0 {
			break
		}
		idx = append(idx[:worst], idx[worst+1:]...)
		place(worst - 1)
		place(worst)
	}
	return idx
}

// locateRadius: a change point's index is the centre of the run of
// 2·locateRadius+1 positions most likely to hold the change.
const locateRadius = 2

// locateReach: locate looks for a change at most max(Window, locateReach)
// points from where the split put it, so that placing a change costs
// O(Window), not O(n). The split's position is within a few points of the
// change unless the change is too small to place (its interval is then
// cut at that distance).
const locateReach = 50

// credible is the probability that the interval where a change arrived
// holds it.
const credible = 0.95

// locate returns where the change between a and c most probably arrived
// and the interval that holds it with probability credible, given the
// values of [a, c) and one change among the positions τ' that leave
// minSeg points on either side and are within locateReach of tau, the
// split's position (tau is taken if there is no such τ').
//
// For Gaussian noise of variance σ² and a flat prior over positions, the
// posterior probability of τ' is proportional to exp(−SSE(τ')/(2σ²)),
// SSE(τ') being the sum of squares of the values around the means of
// [a, τ') and [τ', c) (the levels profiled out). σ² is the pooled
// variance at the best split, times the autocorrelation's inflation for
// the calibrated method. The index is the centre of the 2·locateRadius+1
// positions with the most posterior mass (the Bayes choice when an answer
// within locateRadius points counts as right; the least-squares split,
// the posterior mode, is within 2 points of a 2.5σ step about 98 % of the
// time, this choice about 99 %); the interval is the shortest run of
// positions around it whose mass reaches credible.
func (e *engine) locate(a, tau, c int) (idx, lo, hi int) {
	reach := max(e.c.window, locateReach)
	first, last := max(a+e.c.minSeg, tau-reach), min(c-e.c.minSeg, tau+reach)
	if first > last {
		return tau, tau, tau
	}
	w := resize(e.post, last-first+1)
	e.post = w
	best, bestSSE := tau, math.Inf(1)
	for t := first; t <= last; t++ {
		sse := e.sse(a, t, c)
		w[t-first] = sse
		if sse < bestSSE || (sse == bestSSE && abs(t-tau) < abs(best-tau)) {
			best, bestSSE = t, sse
		}
	}
	s2 := bestSSE / float64(max(c-a-2, 1))
	if e.c.calibrated {
		s2 *= e.rb.inflate
	}
	if !(s2 > 0) || math.IsInf(bestSSE, 0) {
		return best, best, best
	}
	var total float64
	for i, sse := range w {
		w[i] = math.Exp(-(sse - bestSSE) / (2 * s2))
		total += w[i]
	}
	// The most probable run of 2·locateRadius+1 positions (the nearest to
	// the best split of equal ones).
	idx = best
	var run, bestRun float64
	for t := first; t <= last; t++ {
		// run = mass of [t−r, t+r] ∩ [first, last]
		if t == first {
			for u := first; u <= min(last, first+locateRadius); u++ {
				run += w[u-first]
			}
		} else {
			if u := t + locateRadius; u <= last {
				run += w[u-first]
			}
			if u := t - locateRadius - 1; u >= first {
				run -= w[u-first]
			}
		}
		if run > bestRun*(1+1e-12) || (run >= bestRun*(1-1e-12) && abs(t-best) < abs(idx-best)) {
			idx, bestRun = t, run
		}
	}
	// Grow the interval from idx towards the heavier side until it holds
	// credible of the mass.
	lo, hi = idx, idx
	mass := w[idx-first]
	for mass < credible*total {
		l, r := -1.0, -1.0
		if lo > first {
			l = w[lo-1-first]
		}
		if hi < last {
			r = w[hi+1-first]
		}
		if l < 0 && r < 0 {
			break
		}
		if l >= r {
			lo--
			mass += l
		} else {
			hi++
			mass += r
		}
	}
	return idx, lo, hi
}

// sse is the sum of squares of the values of [a, c) around the means of
// [a, t) and [t, c) (of the values the merge's statistics are of).
func (e *engine) sse(a, t, c int) float64 {
	_, vl := e.sp.seg(a, t).meanVar(e.sp.ref)
	_, vr := e.sp.seg(t, c).meanVar(e.sp.ref)
	return vl*float64(t-a) + vr*float64(c-t)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// segStats are the statistics of a change point between two segments.
type segStats struct {
	p, mag         float64
	mb, vb, ma, va float64
}

// stats returns the statistics of a change point between before and
// after, which span span points (excluded ones included). Unless exact, a
// p-value that is surely below c.p is not computed and is −1 (the merge
// only needs to know that it is below c.p). The calibrated method's
// p-value is not capped at 1 (so that the merge can order large ones);
// result caps it.
func (e *engine) stats(before, after agg, span int, exact bool) segStats {
	var s segStats
	s.mb, s.vb = before.meanVar(e.sp.ref)
	s.ma, s.va = after.meanVar(e.sp.ref)
	s.mag = magnitude(s.mb, s.ma)
	if e.c.calibrated {
		s.p = e.calibratedP(before.n, s.mb, s.vb, after.n, s.ma, s.va, span)
		return s
	}
	t2, df, p, fixed := tStat(before.n, s.mb, s.vb, after.n, s.ma, s.va)
	switch {
	case fixed:
		s.p = p
	case !exact && e.crit.side(t2, df) < 0:
		s.p = -1
	default:
		s.p = pValue(t2, df)
	}
	return s
}

// Analysis is a series analysed incrementally: Append adds one point,
// re-runs E-divisive only in the windows whose values the point can change
// (those that reached the old end of the series, and for the calibrated
// method those holding one of the last sideSpan values, whose outlier test
// looks ahead), repeats the merge (O(k log k) in the k weak change points;
// the calibrated method adds O(n) for the autocorrelation and O(Window)
// per change point to place it) and returns exactly what Detect returns
// for all the values appended so far.
type Analysis struct {
	e   *engine
	cps []ChangePoint
}

// NewAnalysis returns an empty series with the given options.
func NewAnalysis(o Options, dir Direction) (*Analysis, error) {
	c, err := resolve(o, dir)
	if err != nil {
		return nil, err
	}
	return &Analysis{e: newEngine(c)}, nil
}

// Append adds v to the end of the series and returns the change points of
// the whole series. An infinite v is refused (ErrInfinite) and leaves the
// series unchanged; NaN is a missing value (see ErrInfinite).
func (a *Analysis) Append(v float64) ([]ChangePoint, error) {
	if err := a.e.push(v); err != nil {
		return nil, err
	}
	return a.update(), nil
}

// Extend appends all of values and analyses once; it is Append for a batch,
// for example the stored history before new points arrive one at a time.
// An infinite value refuses the whole batch.
func (a *Analysis) Extend(values ...float64) ([]ChangePoint, error) {
	for _, v := range values {
		if math.IsInf(v, 0) {
			return nil, ErrInfinite
		}
	}
	a.e.reserve(len(values))
	for _, v := range values {
		_ = a.e.push(v)
	}
	return a.update(), nil
}

func (a *Analysis) update() []ChangePoint {
	a.e.split()
	a.cps = a.e.result(a.e.merge())
	return slices.Clone(a.cps)
}

// ChangePoints returns the change points as of the last Append or Extend.
func (a *Analysis) ChangePoints() []ChangePoint { return slices.Clone(a.cps) }

// Len returns the number of values appended, missing ones included.
func (a *Analysis) Len() int { return len(a.e.x) + a.e.leading }

// localWeak divides the weak level of the calibrated method's split. Its
// test of a candidate against the segment E-divisive chose, rather than
// the whole rest of the window, picks the second segment too, and at the
// weak level itself made seven times as many weak change points in noise
// (1,108 against 148 in BenchmarkDetect20k's series), all of which the
// merge must test again: five times the merge's cost, for 63 % of steps
// as large as the noise found within ±2 points where the whole rest of
// the window found 52 %. At a tenth of it: 192 weak change points, the
// same final ones, 50 % of those steps, and the dips that recover (a
// hundredth: 67, and 22 %).
const localWeak = 10.0

// splitLevel is the level of the split's test: the weak level, divided by
// localWeak for the calibrated method.
func (e *engine) splitLevel() float64 {
	if e.c.calibrated {
		return e.c.weakP / localWeak
	}
	return e.c.weakP
}
