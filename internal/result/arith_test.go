package result

import (
	"math"
	"testing"
)

// finite says v is a number and not infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// The statistics that combine figures stay finite for finite figures,
// near the largest float too: two runs of 1.7e308 have a median (and a
// mean) of 1.7e308, not +Inf.
func TestArithExtremes(t *testing.T) {
	if m := Midpoint(1.7e308, 1.7e308); m != 1.7e308 {
		t.Errorf("Midpoint(1.7e308, 1.7e308) = %g", m)
	}
	if m := Midpoint(-math.MaxFloat64, math.MaxFloat64); m != 0 {
		t.Errorf("Midpoint(-max, max) = %g", m)
	}
	if m := Midpoint(2, 4); m != 3 {
		t.Errorf("Midpoint(2, 4) = %g", m)
	}
	if m := Mean([]float64{1.7e308, 1.7e308, 1.7e308}); !finite(m) || math.Abs(m-1.7e308) > 1e294 {
		t.Errorf("Mean of 1.7e308s = %g", m)
	}
	if m := Mean([]float64{1, 2, 3, 4}); m != 2.5 {
		t.Errorf("Mean(1..4) = %g", m)
	}
	if s := StdDev([]float64{-math.MaxFloat64, math.MaxFloat64}); !finite(s) || s <= 0 {
		t.Errorf("StdDev(±max) = %g", s)
	}
	if s := StdDev([]float64{2, 4, 4, 4, 5, 5, 7, 9}); math.Abs(s-2.138089935299395) > 1e-12 {
		t.Errorf("StdDev = %g", s)
	}
	if g := GeoMean([]float64{math.MaxFloat64, math.MaxFloat64}); !finite(g) {
		t.Errorf("GeoMean(max, max) = %g", g)
	}
	if g := GeoMean([]float64{5e-324, 5e-324}); !finite(g) || g <= 0 {
		t.Errorf("GeoMean of subnormals = %g", g)
	}
	if r := Ratio(1.7e308, 1e-300); !finite(r) {
		t.Errorf("Ratio(1.7e308, 1e-300) = %g", r)
	}
	if _, l := Stalls([]Sample{{Second: 0, Statements: math.MaxInt64}, {Second: 1, Statements: math.MaxInt64}, {Second: 2, Statements: math.MaxInt64}, {Second: 3, Statements: math.MaxInt64}}, SeriesStatements, 4, StallFraction); l != 0 {
		t.Errorf("stalls in a steady series of the largest counts: %d", l)
	}
}
