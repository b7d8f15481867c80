package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// TestBetweenRuns: known answers of the moment estimate, the default
// with too few plans, and the interval that takes the run effect in: a
// paired verdict's SE² gains σ²/plans, two plans halving it.
func TestBetweenRuns(t *testing.T) {
	// Var(0.01, −0.03, 0.02) = 0.0007; mean SE² = 0.0001: σ² = 0.0006.
	s, ok := BetweenRuns([]float64{0.01, -0.03, 0.02}, []float64{0.01, 0.01, 0.01})
	if !ok || math.Abs(s-math.Sqrt(0.0006)) > 1e-12 {
		t.Errorf("σ_run %v %v, want %v", s, ok, math.Sqrt(0.0006))
	}
	if s, ok := BetweenRuns([]float64{0.01, 0.01, 0.01}, []float64{0.05, 0.05, 0.05}); !ok || s != 0 {
		t.Errorf("plans that agree better than their SEs: %v %v, want 0", s, ok)
	}
	if _, ok := BetweenRuns([]float64{0.01, 0.02}, []float64{0.01, 0.01}); ok {
		t.Error("two plans gave an estimate")
	}
	b, o := repeatSides(1.08, 0.3)
	plain := Judge(b, o, DefaultJudging())
	j := DefaultJudging()
	j.RunSigma = 0.03
	wide := Judge(b, o, j)
	if want := math.Sqrt(plain.SE*plain.SE + 0.03*0.03); math.Abs(wide.SE-want) > 1e-12 || wide.Plans != 1 || wide.RunSigma != 0.03 {
		t.Errorf("one plan: SE %v, want %v (%+v)", wide.SE, want, wide)
	}
	// Welch–Satterthwaite: a known σ (the default) adds no term; the sum's
	// degrees of freedom grow with its share of the variance.
	se2, r2 := plain.SE*plain.SE, 0.03*0.03
	if want := (se2 + r2) * (se2 + r2) / (se2 * se2 / plain.DF); math.Abs(wide.DF/want-1) > 1e-9 {
		t.Errorf("df %v, want %v", wide.DF, want)
	}
	j.RunDF = 4
	if w4 := Judge(b, o, j); !(w4.DF < wide.DF) || math.Abs(w4.DF-(se2+r2)*(se2+r2)/(se2*se2/plain.DF+r2*r2/4)) > 1e-9 {
		t.Errorf("σ from 5 plans: df %v (known: %v)", w4.DF, wide.DF)
	}
	j.RunDF = 0
	if !plain.Changed() || wide.Changed() {
		t.Errorf("a 8 %% change clear of the floor within the run (%s) is not once another run's 3 %% is in (%s, %.3f to %.3f)", plain.Kind, wide.Kind, wide.Lo, wide.Hi)
	}
	// Two plans of the same labels: the run effect is a level, each plan
	// one draw of it.
	var b2, o2 Side
	for _, s := range []struct {
		plan string
		b, o Side
	}{{"p1", b, o}, {"p2", b, o}} {
		for _, x := range s.b.Obs {
			x.Plan = s.plan
			b2.Obs = append(b2.Obs, x)
		}
		for _, x := range s.o.Obs {
			x.Plan = s.plan
			o2.Obs = append(o2.Obs, x)
		}
	}
	two := Judge(b2, o2, j)
	plain2 := Judge(b2, o2, DefaultJudging())
	if want := math.Sqrt(plain2.SE*plain2.SE + 0.03*0.03/2); two.Plans != 2 || math.Abs(two.SE-want) > 1e-12 {
		t.Errorf("two plans: %d, SE %v, want %v", two.Plans, two.SE, want)
	}
}

// TestCompareRunEffects: a comparison given stored A/A effects takes
// their σ in; given none stored, the documented default; not given the
// lookup, none.
func TestCompareRunEffects(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	a, b := firstRuns(r, 4, 1.1, 1)
	for _, c := range []struct {
		name string
		look func(string, int, string, ...[]result.Run) ([]float64, []float64)
		want float64
	}{
		{"none asked", nil, 0},
		{"none stored", func(string, int, string, ...[]result.Run) ([]float64, []float64) { return nil, nil }, DefaultRunSigma},
		{"stored", func(string, int, string, ...[]result.Run) ([]float64, []float64) {
			return []float64{0.01, -0.03, 0.02}, []float64{0.01, 0.01, 0.01}
		}, math.Sqrt(0.0006)},
	} {
		cmp, err := Compare(a, []Set{b}, Options{RunEffects: c.look})
		if err != nil {
			t.Fatal(err)
		}
		if v := cmp.Rows[0].Others[0].Verdict; math.Abs(v.RunSigma-c.want) > 1e-12 {
			t.Errorf("%s: σ_run %v, want %v", c.name, v.RunSigma, c.want)
		}
	}
}
