package report

import "math"

// A chart's value axis, for any data: its ticks are a bounded list
// (MaxTicks at most) computed by count, never by adding a step until a
// bound is passed, so that an axis over ±MaxFloat64, a span too small for
// its magnitude (1e300 and the next float), a step that underflows or a
// non-finite bound draws a few ticks instead of looping for ever.

// MaxTicks is the most ticks an axis has.
const MaxTicks = 12

// NiceStep is 1, 2 or 5 times a power of ten, about span/n: finite and
// above zero whatever span is (0, negative, NaN: 1; +Inf: as for the
// largest float).
func NiceStep(span float64, n int) float64 {
	if n < 1 {
		n = 1
	}
	if !(span > 0) {
		return 1
	}
	raw := math.Min(span, math.MaxFloat64) / float64(n)
	if raw < math.SmallestNonzeroFloat64*10 || math.IsInf(raw, 0) {
		return math.Max(raw, math.SmallestNonzeroFloat64)
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if s := m * p; s >= raw && !math.IsInf(s, 0) {
			return s
		}
	}
	return raw // near the largest float, where no nicer step is finite
}

// Span is hi - lo, or the largest float where that overflows.
func Span(lo, hi float64) float64 { return Finite(hi - lo) }

// Finite is v with ±Inf as ±MaxFloat64 (and NaN as 0): where a figure
// goes into a coordinate or a step, never a non-finite one.
func Finite(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return 0
	case math.IsInf(v, 1):
		return math.MaxFloat64
	case math.IsInf(v, -1):
		return -math.MaxFloat64
	}
	return v
}

// AxisTicks are the multiples of step from lo to hi (lo and hi
// themselves where they are multiples), at most MaxTicks of them: where
// more multiples fall in the range, or the step is too fine to tell them
// apart, MaxTicks/2+1 values spread evenly from lo to hi instead. Never
// the same value twice; none for a range that is not one (hi < lo, NaN).
func AxisTicks(lo, hi, step float64) []float64 {
	if math.IsNaN(lo) || math.IsNaN(hi) || hi < lo {
		return nil
	}
	lo, hi = Finite(lo), Finite(hi)
	if step > 0 && !math.IsInf(step, 0) {
		a, b := math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
		if n := b - a; n >= 0 && n < MaxTicks && !math.IsInf(a, 0) && !math.IsInf(b, 0) {
			out := make([]float64, 0, int(n)+1)
			for i := 0; i <= int(n); i++ { // by count: a+i may not move a huge a
				out = appendTick(out, math.Min(math.Max(Finite((a+float64(i))*step), lo), hi)) // rounding stays inside
			}
			return out
		}
	}
	// Evenly from lo to hi, by halves so that the span never overflows.
	const k = MaxTicks / 2
	d := hi/k - lo/k
	out := make([]float64, 0, k+1)
	for i := 0; i <= k; i++ {
		out = appendTick(out, math.Min(math.Max(Finite(lo+d*float64(i)), lo), hi))
	}
	return out
}

// appendTick adds t to ticks unless it repeats the last.
func appendTick(ticks []float64, t float64) []float64 {
	if n := len(ticks); n > 0 && ticks[n-1] >= t {
		return ticks
	}
	return append(ticks, t)
}

// Axis is the value axis of data from lo to hi (lo ≤ hi, either may be
// ±Inf): a range [from, to] a little wider than the data, on multiples of
// step (about n steps), both finite and from < to whatever the data. What
// a chart draws a value v at is Scale(v, from, to).
func Axis(lo, hi float64, n int) (from, to, step float64) {
	lo, hi = Finite(lo), Finite(hi)
	if hi < lo {
		lo, hi = hi, lo
	}
	pad := math.Max(Span(lo, hi)*0.08, math.Max(math.Abs(hi)*0.01, 1e-9))
	from, to = Finite(lo-pad), Finite(hi+pad)
	step = NiceStep(Span(from, to), n)
	if f := math.Floor(from/step) * step; !math.IsInf(f, 0) && !math.IsNaN(f) {
		from = f
	}
	if t := math.Ceil(to/step) * step; !math.IsInf(t, 0) && !math.IsNaN(t) {
		to = t
	}
	if !(to > from) { // a span too small for the values' magnitude
		from, to = math.Nextafter(from, math.Inf(-1)), math.Nextafter(to, math.Inf(1))
	}
	return from, to, step
}

// Scale is where v falls between from and to, 0 at from and 1 at to,
// computed by halves so that no difference overflows; a non-finite v
// is clamped to the largest float first, and a v far outside the axis
// (a negative figure on an axis from 0) is drawn just outside it, from -1
// to 2, never at an infinite coordinate.
func Scale(v, from, to float64) float64 {
	d := to/2 - from/2
	if !(d > 0) {
		return 0.5
	}
	return math.Min(math.Max((Finite(v)/2-from/2)/d, -1), 2)
}
