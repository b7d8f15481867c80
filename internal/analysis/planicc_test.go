package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Over a comparison of many tests, the repeat effect estimated from all
// of them keeps each test's 95 % interval at its coverage whatever the
// effect (none, moderate, strong), with two repeats as with four: where a
// test's own two repeats would leave it one degree of freedom (a t
// quantile of 12.7) or, pooled, undercover.
func TestPlanRepeatEffectCoverage(t *testing.T) {
	const plans, tests, ratio = 60, 40, 1.25
	for _, c := range []struct {
		blocks, perBlock int
		icc              float64
	}{{2, 8, 0}, {2, 8, 0.1}, {2, 8, 0.3}, {2, 8, 0.6}, {4, 4, 0.3}, {4, 8, 0.1}} {
		noise := 0.15
		blockSD := noise * math.Sqrt(c.icc/(1-c.icc))
		r := rand.New(rand.NewPCG(31, uint64(c.blocks*1000+int(c.icc*100))))
		cover, own, sig, n := 0, 0, 0, 0
		var iccSum float64
		for range plans {
			var all [][]Round
			for range tests {
				all = append(all, synthRounds(r, c.blocks, c.perBlock, ratio, blockSD, noise))
			}
			e := PlanRepeatEffect(all)
			iccSum += e.ICC
			for _, rounds := range all {
				res := PairedIn(rounds, 0.95, 0.05, e)
				n++
				if res.Lo <= ratio && ratio <= res.Hi {
					cover++
				}
				if res.Significant {
					sig++
				}
				if p := Paired(rounds, 0.95, 0.05); p.Lo <= ratio && ratio <= p.Hi {
					own++
				}
			}
		}
		got := float64(cover) / float64(n)
		t.Logf("%d repeats × %d rounds, ICC %.1f (estimated %.2f): the plan's effect covers %.1f %% (each test's own %.1f %%), power %.0f %%",
			c.blocks, c.perBlock, c.icc, iccSum/plans, 100*got, 100*float64(own)/float64(n), 100*float64(sig)/float64(n))
		if got < 0.94 {
			t.Errorf("%d × %d, ICC %.1f: coverage %.1f %%, want ≥ 94 %%", c.blocks, c.perBlock, c.icc, 100*got)
		}
	}
	// Too few repeats over the comparison: each test judged alone.
	e := PlanRepeatEffect([][]Round{synthRounds(rand.New(rand.NewPCG(1, 2)), 2, 8, 1, 0, 0.1)})
	if e.DFB >= MinRepeatDF || e.Tests != 1 {
		t.Errorf("one test of two repeats: %+v", e)
	}
}
