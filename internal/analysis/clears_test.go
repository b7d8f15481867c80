package analysis

import (
	"math"
	"testing"
)

// repeatSides are two labels' paired observations: six repeats of two
// rounds, the other's rounds rel·exp(scale·dᵢ) of the base's in repeat i.
func repeatSides(rel, scale float64) (Side, Side) {
	d := []float64{-0.06, -0.03, 0, 0, 0.03, 0.06}
	var b, o Side
	for i, di := range d {
		for rd := 1; rd <= 2; rd++ {
			base := 1000 * (1 + 0.01*float64(rd))
			b.Obs = append(b.Obs, Obs{Plan: "p", Pairing: "slices", Repeat: i + 1, Round: rd, Value: base})
			o.Obs = append(o.Obs, Obs{Plan: "p", Pairing: "slices", Repeat: i + 1, Round: rd, Value: base * rel * math.Exp(scale*di)})
		}
	}
	b.Runs, o.Runs = 6, 6
	return b, o
}

// TestJudgeIntervalClearsFloor: a change is called beyond the noise only
// where its whole interval clears the floor, not where its point estimate
// alone does; inside the floor only where the interval lies within it;
// else undecided, with how many more repeats would decide it.
func TestJudgeIntervalClearsFloor(t *testing.T) {
	for _, c := range []struct {
		name       string
		rel, scale float64
		want       string
	}{
		{"beyond, the interval 1.033 to 1.129 reaching inside ±5 %", 1.08, 1, KindSame},
		{"beyond, the interval clear of ±5 %", 1.08, 0.3, KindBetter},
		{"worse, the interval clear of ±5 %", 1 / 1.08, 0.3, KindWorse},
		{"significant, inside ±5 %", 1.02, 0.3, KindInsideNoise},
		{"significant, the interval across 1.05", 1.045, 0.6, KindSame},
		{"not significant, across the floor", 1.03, 1, KindSame},
		{"not significant, inside ±5 %", 1.01, 1, KindEquivalent},
	} {
		b, o := repeatSides(c.rel, c.scale)
		v := Judge(b, o, DefaultJudging())
		if v.Kind != c.want {
			t.Errorf("%s: %s (rel %.3f, %.3f to %.3f, %s), want %s", c.name, v.Kind, v.Rel, v.Lo, v.Hi, v.Why, c.want)
			continue
		}
		if v.Kind == KindSame && v.Significant && (v.More < 1 || v.Why == "") {
			t.Errorf("%s: undecided without what decides it: more %d, why %q", c.name, v.More, v.Why)
		}
		if v.Changed() && !clears(v.Lo, v.Hi, v.Floor) {
			t.Errorf("%s: called %s with the interval %.3f to %.3f", c.name, v.Kind, v.Lo, v.Hi)
		}
	}
	// The first case's point estimate alone is beyond the floor: it was
	// called better before the interval had to clear it.
	b, o := repeatSides(1.08, 1)
	if v := Judge(b, o, DefaultJudging()); !(v.Significant && beyond(v.Rel, v.Floor) && v.Lo < 1+v.Floor) {
		t.Errorf("the straddling case is not what it claims: %+v", v)
	}
}
