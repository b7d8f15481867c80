package analysis

import (
	"math"
	"sort"
)

// False-discovery control across the tests of one comparison: 42 tests
// judged at α = 0.05 each expect about two false calls per A/A compare.
// Benjamini and Hochberg's step-up procedure (1995) over the p-values of
// one other label's tests keeps the expected share of false calls among
// the calls at the level. Written by hand: gonum's stat has no multiple-
// testing procedure, golang.org/x/perf's benchmath none either, and the
// procedure is the ten lines below.

// BHAdjust are the Benjamini–Hochberg adjusted p-values (q-values) of p,
// in p's order: q₍ᵢ₎ = min over j ≥ i of m·p₍ⱼ₎/j on the p-values sorted
// ascending (m = len(p)), capped at 1. A test is kept at level q where its
// adjusted p-value is at or below q: exactly the step-up rule "reject
// the k smallest, k the largest with p₍ₖ₎ ≤ k·q/m". NaN p-values (no test)
// stay NaN and do not count in m.
func BHAdjust(p []float64) []float64 {
	out := make([]float64, len(p))
	idx := make([]int, 0, len(p))
	for i, v := range p {
		out[i] = math.NaN()
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	m := float64(len(idx))
	run := 1.0
	for r := len(idx) - 1; r >= 0; r-- {
		run = math.Min(run, m*p[idx[r]]/float64(r+1))
		out[idx[r]] = run
	}
	return out
}

// correctFDR applies BHAdjust to each other label's tests of c (not the
// load; those with a p-value): each verdict gets its Q, and a change whose
// Q is above the level it was judged at is marked NotAfterFDR and counted
// in the label's Tally.NotAfterFDR. The level is each verdict's own
// (Judging.Level: α for one look, Pocock's per-look level for a plan of
// --until-decided's looks), so that the correction composes with the
// sequential looks as docs/results.md says. The verdicts on the server's
// CPU per operation (Cell.Cost) are a family of their own, corrected the
// same way over the label's tests and counted in Tally.CostNotAfterFDR: a
// rate and a cost are two questions, and neither's calls should thin the
// other's.
func correctFDR(c *Comparison) {
	for i := range c.Others {
		var rate, cost []*Verdict
		for ri := range c.Rows {
			r := &c.Rows[ri]
			if r.Group == "load" || i >= len(r.Others) || r.Others[i].Missing {
				continue
			}
			rate = append(rate, &r.Others[i].Verdict)
			if r.Others[i].Cost != nil {
				cost = append(cost, r.Others[i].Cost)
			}
		}
		n := CorrectFDR(rate)
		nc := CorrectFDR(cost)
		if i < len(c.Tally) {
			c.Tally[i].NotAfterFDR += n
			c.Tally[i].CostNotAfterFDR += nc
		}
	}
}

// CorrectFDR is the false-discovery correction over one family of
// verdicts (the tests of one label on one question): each verdict with a
// p-value gets its Benjamini–Hochberg Q, and a change whose Q is above its
// own level is marked NotAfterFDR. It returns how many it marked.
func CorrectFDR(family []*Verdict) int {
	var ps []float64
	var at []*Verdict
	for _, v := range family {
		if v == nil || math.IsNaN(v.P) {
			continue
		}
		ps = append(ps, v.P)
		at = append(at, v)
	}
	q := BHAdjust(ps)
	marked := 0
	for j, v := range at {
		v.Q = q[j]
		if v.Changed() && v.Q > v.Level {
			v.NotAfterFDR = true
			marked++
		}
	}
	return marked
}
