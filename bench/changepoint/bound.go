package main

// The bound mode: what any test of a dip can do on the sweep that costs
// DetectSweep's level the most, so that its recall can be read against
// it (docs/perf.md, "Change points on short sweeps"). The generalised
// likelihood ratio for two changes (a dip or two steps, segments of two
// builds or more) of a Gaussian series with unknown level and noise is
// F = ((SSE₀ − SSE₂)/2) / (SSE₂/(n − 3)), maximised over the two places;
// its null distribution does not depend on the level or the noise, so
// simulating it gives the exact per-sweep threshold at each level (no
// Bonferroni count). Its power at that threshold is the most a test of
// such a dip can have at that level: DetectSweep, which also looks for
// steps, ends and odd builds, cannot do better on these sweeps.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/qpslab/qpslab/internal/changepoint"
)

// dipGLR is the largest F over the two-change segmentations of x.
func dipGLR(x []float64) float64 {
	n := len(x)
	p1, p2 := make([]float64, n+1), make([]float64, n+1)
	for i, v := range x {
		p1[i+1], p2[i+1] = p1[i]+v, p2[i]+v*v
	}
	sse := func(a, c int) float64 {
		d := p1[c] - p1[a]
		return math.Max(p2[c]-p2[a]-d*d/float64(c-a), 0)
	}
	s0, best := sse(0, n), 0.0
	for a := 2; a < n; a++ {
		for c := a + 2; c <= n-2; c++ {
			s2 := sse(0, a) + sse(a, c) + sse(c, n)
			best = math.Max(best, (s0-s2)/2/(s2/float64(n-3)))
		}
	}
	return best
}

// runBound: nulls flat sweeps of n builds of one run at ±3 % noise for
// the GLR's thresholds, then alt sweeps with a 30 % dip over builds 4 to
// 7, found by the GLR at each level and by DetectSweep at its defaults.
func runBound(nulls, alt int) {
	const n, cv = 12, 0.03
	r := rand.New(rand.NewPCG(59, 9))
	x := make([]float64, n)
	null := make([]float64, nulls)
	for s := range null {
		for i := range x {
			x[i] = math.Log(1 + cv*r.NormFloat64())
		}
		null[s] = dipGLR(x)
	}
	slices.Sort(null)
	levels := []float64{1e-3, 1e-4, 1e-5}
	found := make([]int, len(levels))
	calls, seen := 0, 0
	truth := []int{4, 8}
	for range alt {
		lv := dipAt(n, 4, 4, -0.3).level
		runs := make([][]float64, n)
		for i, l := range lv {
			v := l * (1 + cv*r.NormFloat64())
			runs[i], x[i] = []float64{v}, math.Log(v)
		}
		f := dipGLR(x)
		for k, p := range levels {
			if f > null[int(float64(nulls)*(1-p))] {
				found[k]++
			}
		}
		res, err := changepoint.DetectSweep(runs, changepoint.Options{}, changepoint.HigherIsBetter)
		if err != nil {
			panic(err)
		}
		if _, all, _ := score(res.ChangePoints, truth); all {
			calls++
		}
		if _, all, _ := score(slices.Concat(res.ChangePoints, res.Leads, res.Unconfirmed), truth); all {
			seen++
		}
	}
	fmt.Printf("A 30 %% dip over builds 4 to 7 of 12 builds of one run at ±3 %% noise, %d sweeps; the GLR's thresholds from %d flat sweeps.\n\n", alt, nulls)
	fmt.Println("| per-sweep level | GLR threshold (F) | found by the GLR |")
	fmt.Println("|---|---|---|")
	for k, p := range levels {
		fmt.Printf("| %g | %.1f | %.3f |\n", p, null[int(float64(nulls)*(1-p))], float64(found[k])/float64(alt))
	}
	fmt.Printf("\nDetectSweep at its defaults (called at 1e-05 a sweep): both edges called in %.3f, as change points or leads in %.3f.\n", float64(calls)/float64(alt), float64(seen)/float64(alt))
}

// runNoiseStep: the issue's step of the noise's size, −10 % in 15 + 15
// builds of one run at ±10 % noise (uniform), k sweeps at each p-value,
// and 2k flat sweeps of 30 builds for the false changes and leads.
func runNoiseStep(k int) {
	r := rand.New(rand.NewPCG(59, 77))
	draw := func(step float64) [][]float64 {
		lv := stepAt(30, 15, step).level
		out := make([][]float64, len(lv))
		for i, l := range lv {
			out[i] = []float64{l * (1 + 0.1*(2*r.Float64()-1))}
		}
		return out
	}
	fmt.Printf("\nA −10 %% step in 15 + 15 builds of one run at ±10 %% noise (uniform), %d sweeps; %d flat sweeps of 30 builds.\n\n", k, 2*k)
	fmt.Println("| --pvalue | called | a lead | flat: false changes | flat: leads |")
	fmt.Println("|---|---|---|---|---|")
	for _, pv := range []float64{0.001, 0.01, 0.1} {
		o := changepoint.Options{PValue: pv}
		var c, l, fa, fl int
		for range k {
			res, err := changepoint.DetectSweep(draw(-0.1), o, changepoint.HigherIsBetter)
			if err != nil {
				panic(err)
			}
			switch {
			case found(res.ChangePoints, 15):
				c++
			case found(res.Leads, 15):
				l++
			}
		}
		for range 2 * k {
			res, err := changepoint.DetectSweep(draw(0), o, changepoint.HigherIsBetter)
			if err != nil {
				panic(err)
			}
			fa += len(res.ChangePoints)
			fl += len(res.Leads)
		}
		fmt.Printf("| %g | %.0f %% | %.0f %% | %d | %d |\n", pv, 100*float64(c)/float64(k), 100*float64(l)/float64(k), fa, fl)
	}
}

// found: a change point within one build of i (score's rule).
func found(cps []changepoint.ChangePoint, i int) bool {
	n, _, _ := score(cps, []int{i})
	return n == 1
}

// runIssueCases: the issue's own sweeps (one run a build unless said, ±3 %
// noise), k draws each: called (the change points are the truth's), and
// in view (as change points, leads or unconfirmed changes).
func runIssueCases(k int) {
	r := rand.New(rand.NewPCG(59, 78))
	fmt.Printf("\nThe issue's own sweeps, ±3 %% noise, %d draws each.\n\n", k)
	fmt.Println("| sweep | runs | called | in view | unconfirmed |")
	fmt.Println("|---|---|---|---|---|")
	for _, c := range []struct {
		name  string
		runs  int
		truth sweepTruth
	}{
		{"1000 ×6, 500 ×6, 1000 ×6", 1, dipAt(18, 6, 6, -0.5)},
		{"1000 ×6, 500 ×6, 1000 ×6", 3, dipAt(18, 6, 6, -0.5)},
		{"8/8/8", 1, dipAt(24, 8, 8, -0.5)},
		{"12/6/12", 1, dipAt(30, 12, 6, -0.5)},
		{"a 30 % dip of 4 builds in 12", 1, dipAt(12, 4, 4, -0.3)},
		{"30 % lower from build 11 of 12", 1, stepAt(12, 10, -0.3)},
		{"30 % lower after build 1 of 6", 1, stepAt(6, 1, -0.3)},
		{"30 % lower after build 1 of 6", 3, stepAt(6, 1, -0.3)},
		{"the newest of 8 builds 30 % lower", 1, stepAt(8, 7, -0.3)},
		{"the newest of 8 builds 30 % lower", 3, stepAt(8, 7, -0.3)},
	} {
		sc := sweepCase{n: len(c.truth.level), runs: c.runs, cv: 0.03}
		var called, seen, unconf int
		for range k {
			res, err := changepoint.DetectSweep(sc.draw(r, c.truth), changepoint.Options{}, changepoint.HigherIsBetter)
			if err != nil {
				panic(err)
			}
			if _, all, fa := score(res.ChangePoints, c.truth.at); all && fa == 0 {
				called++
			}
			if _, all, _ := score(slices.Concat(res.ChangePoints, res.Leads, res.Unconfirmed), c.truth.at); all {
				seen++
			}
			if _, all, _ := score(res.Unconfirmed, c.truth.at); all && len(res.ChangePoints) == 0 {
				unconf++
			}
		}
		pc := func(x int) string { return fmt.Sprintf("%.0f %%", 100*float64(x)/float64(k)) }
		fmt.Printf("| %s | %d | %s | %s | %s |\n", c.name, c.runs, pc(called), pc(seen), pc(unconf))
	}
}
