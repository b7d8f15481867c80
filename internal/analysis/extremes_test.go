package analysis

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// checkStatistics holds the statistics that combine figures to finite
// answers for finite values (a, b repeated): the describe line, compare's
// summary and geomean, and detect's change over a step from a to b.
func checkStatistics(t *testing.T, a, b float64) {
	t.Helper()
	v := []float64{a, b, a, b}
	d := Describe(v)
	for what, x := range map[string]float64{"avg": d.Avg, "median": d.Median, "stddev": d.Stddev, "min": d.Min, "max": d.Max} {
		if !isFinite(x) {
			t.Errorf("Describe(%v).%s = %g", v, what, x)
		}
	}
	if s := summarize(v, 0.95); !isFinite(s.Center) {
		t.Errorf("summarize(%v).Center = %g", v, s.Center)
	}
	if a > 0 && b > 0 {
		if g := geomean(v); !isFinite(g) {
			t.Errorf("geomean(%v) = %g", v, g)
		}
	}
	if m := median(v); !isFinite(m) {
		t.Errorf("median(%v) = %g", v, m)
	}
	s := history.Series{Suite: "sysbench", Test: "t", Metric: "qps", HigherIsBetter: true, Order: history.OrderVersion}
	for i := 0; i < 16; i++ {
		x := a
		if i >= 8 {
			x = b
		}
		x *= 1 + 1e-3*float64(i%3) // some noise, where the magnitude has room
		s.Points = append(s.Points, history.Point{Build: fmt.Sprint("b", i), Version: fmt.Sprint("1.", i), Value: result.ClampFinite(x), N: 1})
	}
	cs, err := Detect([]history.Series{s}, DetectSettings{}, changepoint.Options{Window: changepoint.DefaultWindow, PValue: changepoint.DefaultPValue, MinSegment: changepoint.DefaultMinSegment})
	if err != nil {
		t.Fatalf("detect over %g → %g: %v", a, b, err)
	}
	for _, c := range cs {
		if !isFinite(c.MeanBefore) || !isFinite(c.MeanAfter) || !isFinite(c.Magnitude) {
			t.Errorf("detect over %g → %g: %+v", a, b, c)
		}
	}
}

var statExtremes = []float64{0, 1, 5e-324, 2.2250738585072014e-308, 1e-300, 1e9, 1e300, 1.7e308, math.MaxFloat64, -1.7e308, -math.MaxFloat64, -1}

// Two runs of 1.7e308 have a median and a mean of 1.7e308, and every
// pair of extreme values finite statistics.
func TestStatisticsExtremes(t *testing.T) {
	if m := median([]float64{1.7e308, 1.7e308}); m != 1.7e308 {
		t.Errorf("the median of two 1.7e308 runs: %g", m)
	}
	for _, a := range statExtremes {
		for _, b := range statExtremes {
			checkStatistics(t, a, b)
		}
	}
	// A step between the largest floats is still found, its means those
	// of the data (detect scales such a series, exactly, by a power of two).
	s := history.Series{Suite: "sysbench", Test: "t", Metric: "qps", HigherIsBetter: true, Order: history.OrderVersion}
	for i := 0; i < 16; i++ {
		v := 1.6e308
		if i >= 8 {
			v = 0.8e308
		}
		v *= 1 + 1e-3*float64(i%3)
		s.Points = append(s.Points, history.Point{Build: fmt.Sprint("b", i), Version: fmt.Sprint("1.", i), Value: v, N: 1})
	}
	cs, err := Detect([]history.Series{s}, DetectSettings{}, changepoint.Options{Window: changepoint.DefaultWindow, PValue: changepoint.DefaultPValue, MinSegment: changepoint.DefaultMinSegment})
	if err != nil || len(cs) != 1 || cs[0].Index != 8 || math.Abs(cs[0].Magnitude+0.5) > 0.01 || math.Abs(cs[0].MeanBefore/1.6e308-1) > 0.01 {
		t.Errorf("a halving near the largest float: %+v %v", cs, err)
	}
}

// FuzzStatistics: for any finite figures, the statistics are finite.
func FuzzStatistics(f *testing.F) {
	for i, a := range statExtremes {
		f.Add(a, statExtremes[(i+5)%len(statExtremes)])
	}
	f.Fuzz(func(t *testing.T, a, b float64) {
		if !isFinite(a) || !isFinite(b) {
			return
		}
		checkStatistics(t, a, b)
		v := []float64{a, b}
		slices.Sort(v)
		if m := history.Median(v); !isFinite(m) || m < v[0] || m > v[1] {
			t.Errorf("Median(%v) = %g", v, m)
		}
	})
}
