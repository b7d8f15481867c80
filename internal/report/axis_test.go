package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// guard runs f and panics (failing the whole test binary at once) when it
// has not returned within d: an axis that loops for ever, as the old tick
// loop did over +Inf, must fail rather than hang or eat the machine's
// memory. The deadline is a failure guard only; f's return is the event.
func guard(d time.Duration, what string, f func()) {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		panic(what + " did not return within " + d.String() + ": an unbounded loop")
	}
}

// extremes are the values an axis must draw whatever they are.
var extremes = []float64{0, 1, -1, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 1e-9, 1e9, 1e300, 1.7e308, -1.7e308,
	math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), 1e300 + 1e285, 123456789.123}

// checkAxis holds an axis to its promise: finite, from < to around the
// data, at most MaxTicks ticks, increasing, within the axis.
func checkAxis(t *testing.T, lo, hi float64, n int) {
	t.Helper()
	var from, to, step float64
	var ticks []float64
	guard(5*time.Second, fmt.Sprintf("Axis(%g, %g)", lo, hi), func() {
		from, to, step = Axis(lo, hi, n)
		ticks = AxisTicks(from, to, step)
	})
	if math.IsInf(from, 0) || math.IsNaN(from) || math.IsInf(to, 0) || math.IsNaN(to) || !(to > from) || !(step > 0) || math.IsInf(step, 0) {
		t.Fatalf("Axis(%g, %g) = %g, %g step %g: not a finite range", lo, hi, from, to, step)
	}
	if f := Finite(math.Min(lo, hi)); from > f {
		t.Errorf("Axis(%g, %g) starts at %g, above the data", lo, hi, from)
	}
	if f := Finite(math.Max(lo, hi)); to < f {
		t.Errorf("Axis(%g, %g) ends at %g, below the data", lo, hi, to)
	}
	if len(ticks) == 0 || len(ticks) > MaxTicks {
		t.Fatalf("Axis(%g, %g): %d ticks", lo, hi, len(ticks))
	}
	for i, tk := range ticks {
		if math.IsInf(tk, 0) || math.IsNaN(tk) || tk < from || tk > to || (i > 0 && tk <= ticks[i-1]) {
			t.Fatalf("Axis(%g, %g): ticks %v over [%g, %g]", lo, hi, ticks, from, to)
		}
		if s := Scale(tk, from, to); !(s >= 0 && s <= 1) {
			t.Fatalf("Axis(%g, %g): tick %g scales to %g", lo, hi, tk, s)
		}
	}
}

// Every pair of extreme values has a finite axis with a few ticks, and
// an ordinary one keeps its nice ticks (multiples of 1, 2 or 5 times a
// power of ten).
func TestAxisExtremes(t *testing.T) {
	for _, a := range extremes {
		for _, b := range extremes {
			checkAxis(t, math.Min(a, b), math.Max(a, b), 5)
		}
	}
	from, to, step := Axis(800, 1003, 5)
	if from != 750 || to != 1050 || step != 50 {
		t.Errorf("Axis(800, 1003) = %g, %g, %g; want 750, 1050, 50", from, to, step)
	}
	if got := AxisTicks(from, to, step); len(got) != 7 || got[0] != 750 || got[6] != 1050 {
		t.Errorf("ticks %v", got)
	}
	// The old tick loop: a step too fine for a huge start never moves it.
	guard(5*time.Second, "AxisTicks(1e300, 1e300+1e285, 1)", func() {
		if got := AxisTicks(1e300, 1e300+1e285, 1); len(got) > MaxTicks {
			t.Errorf("%d ticks", len(got))
		}
	})
	for _, span := range []float64{0, -1, math.NaN(), math.Inf(1), math.MaxFloat64, 5e-324, 1e-310} {
		if s := NiceStep(span, 5); !(s > 0) || math.IsInf(s, 0) {
			t.Errorf("NiceStep(%g) = %g", span, s)
		}
	}
}

// FuzzAxis: for any data range, an axis is computed at once, finite, with
// at most MaxTicks increasing ticks.
func FuzzAxis(f *testing.F) {
	for i, a := range extremes {
		f.Add(a, extremes[(i+3)%len(extremes)], 5)
	}
	f.Fuzz(func(t *testing.T, a, b float64, n int) {
		if math.IsNaN(a) || math.IsNaN(b) {
			return // no data: a chart of NaN draws nothing
		}
		checkAxis(t, math.Min(a, b), math.Max(a, b), 1+abs(n)%12)
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// The report's charts over extreme values (a store written before the
// bounds): each is drawn at once, a few ticks, no coordinate that is not
// a number.
func TestReportChartsExtremes(t *testing.T) {
	for _, a := range extremes {
		for _, b := range []float64{0, 1, 5e-324, 1.7e308, -1.7e308, math.MaxFloat64} {
			if math.IsInf(a, 0) {
				continue
			}
			vals := []float64{a, b, a}
			var charts []string
			guard(5*time.Second, fmt.Sprintf("the charts of %v", vals), func() {
				bars := []svgBars{{Name: "x", Colour: "#000", Values: vals}}
				lines := []svgLine{{Name: "x", Colour: "#000", Values: vals}}
				charts = []string{
					string(svgBarChart(ChartHead{"bar", "t", "qps"}, []string{"a", "b", "c"}, bars, false)),
					string(svgBarChart(ChartHead{"rel", "t", "rel"}, []string{"a", "b", "c"}, bars, true)),
					string(svgLineChart(ChartHead{"line", "t", "qps"}, lines)),
					string(svgSweepChart(ChartHead{"sweep", "t", "qps"}, []int{1, 2, 4}, lines, false)),
					string(svgSweepChart(ChartHead{"sweeplog", "t", "p99"}, []int{1, 2, 4}, lines, true)),
				}
			})
			for _, c := range charts {
				if strings.Contains(c, "NaN") || strings.Contains(c, "Inf") {
					t.Errorf("a chart of %v has a coordinate that is not a number: %.300s", vals, c)
				}
				if n := strings.Count(c, `class="tick"`); n > 2*MaxTicks {
					t.Errorf("a chart of %v has %d ticks", vals, n)
				}
			}
		}
	}
}
