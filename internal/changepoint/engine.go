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
	tail []window // windows cut short by the end of the series, in order
	next int      // start of the next window to run
	runs int      // windows run so far (for tests)

	wd   windowDetector
	m    merger
	crit critical // at c.p, for the merge
}

// window is a window that the end of the series cut short.
type window struct {
	start, end int
	weakOff    int // len(weak) before this window's change points
}

func newEngine(c config) *engine { return &engine{c: c, crit: critical{level: c.p}} }

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
// window found. Windows that the end of the series cut short are run again
// once the series is longer; full windows never change.
func (e *engine) split() {
	n := len(e.x)
	for len(e.tail) > 0 {
		w := e.tail[len(e.tail)-1]
		if w.end == n {
			break
		}
		e.next, e.weak, e.tail = w.start, e.weak[:w.weakOff], e.tail[:len(e.tail)-1]
	}
	for e.next < n {
		s := e.next
		end := min(s+e.c.window, n)
		cps := e.wd.detect(e.x[s:end], e.c.weakP)
		e.runs++
		off := len(e.weak)
		for _, c := range cps {
			e.weak = append(e.weak, s+c)
		}
		if end-s < e.c.window {
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
// the statistics of the final segments.
func (e *engine) result(alive []int) []ChangePoint {
	if len(alive) == 0 {
		return nil
	}
	out := make([]ChangePoint, 0, len(alive))
	for k, i := range alive {
		left := 0
		if k > 0 {
			left = alive[k-1] + 1
		}
		st := e.stats(e.m.seg[left], e.m.seg[i+1], true)
		cp := ChangePoint{
			Index:      e.weak[i],
			PValue:     st.p,
			MeanBefore: st.mb,
			MeanAfter:  st.ma,
			StdBefore:  math.Sqrt(st.vb),
			StdAfter:   math.Sqrt(st.va),
		}
		if st.mb != 0 {
			cp.Magnitude = (st.ma - st.mb) / st.mb
		}
		if e.c.dir == HigherIsBetter {
			cp.Regression = st.ma < st.mb
		} else {
			cp.Regression = st.ma > st.mb
		}
		out = append(out, cp)
	}
	return out
}

// segStats are the statistics of a change point between two segments.
type segStats struct {
	p, mag         float64
	mb, vb, ma, va float64
}

// stats returns the statistics of a change point between before and
// after. Unless exact, a p-value that is surely below c.p is not computed
// and is −1 (the merge only needs to know that it is below c.p).
func (e *engine) stats(before, after agg, exact bool) segStats {
	var s segStats
	s.mb, s.vb = before.meanVar(e.pre.ref)
	s.ma, s.va = after.meanVar(e.pre.ref)
	s.mag = magnitude(s.mb, s.ma)
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
// re-runs E-divisive only in the windows that reached the old end of the
// series (at most three), repeats the merge (O(k log k) in the k weak
// change points, no pass over the values) and returns exactly what Detect
// returns for all the values appended so far.
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
