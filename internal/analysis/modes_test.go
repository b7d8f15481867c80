package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bimodalSlice is one 0.25 s slice of a write test like MariaDB 10.2.11's
// on the demo: 5 k/s while it stalls, 67 k/s else (±10 %), stalled with
// probability q.
func bimodalSlice(r *rand.Rand, q float64) float64 {
	v := 67000.0
	if r.Float64() < q {
		v = 5000
	}
	return v * math.Exp(0.1*r.NormFloat64())
}

// TestModes: one noisy mode is never split, two modes always are, with
// their medians and shares.
func TestModes(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for range 200 {
		var one, two []float64
		for range 48 {
			one = append(one, 1000*math.Exp(0.3*r.NormFloat64()))
			two = append(two, bimodalSlice(r, 0.3))
		}
		if m, ok := BimodalOf(one); ok {
			t.Fatalf("one lognormal mode split: %+v", m)
		}
		m, ok := BimodalOf(two)
		if !ok || math.Abs(m.Low/5000-1) > 0.1 || math.Abs(m.High/67000-1) > 0.1 || m.LowShare+m.HighShare != 1 {
			t.Fatalf("two modes: %+v %v", m, ok)
		}
	}
}

// TestPairedBimodalCoverage: slices in two modes (each repeat its own
// share of stalled slices, each slice of each label stalling on its own),
// resampled as the demo's writes fall: the interval on repeats covers
// what it says it covers at about 95 %: the mean over repeats of each
// repeat's mean slice log ratio (the slices being bimodal, Paired takes
// each repeat's mean, not its median). With the same stall share on both
// labels that is the planted ratio; with the other label stalling twice
// as often it is not the ratio of mean rates, and the truth is computed
// by simulating far more repeats than a comparison has.
func TestPairedBimodalCoverage(t *testing.T) {
	const sims, tests, repeats, slices = 400, 12, 6, 4
	for _, c := range []struct {
		name  string
		ratio float64
		more  float64 // the other label's stall share, times the base's
	}{{"the same stalls", 1.2, 1}, {"twice the stalls", 1.2, 2}} {
		r := rand.New(rand.NewPCG(71, uint64(c.more*10)))
		rounds := func() []Round {
			var rs []Round
			for b := range repeats {
				q := 0.3 * r.Float64()
				for range slices {
					rs = append(rs, Round{Block: b, Base: bimodalSlice(r, q), Other: c.ratio * bimodalSlice(r, q*c.more)})
				}
			}
			return rs
		}
		// The quantity: E[median of a repeat's slice log ratios].
		var sum float64
		const big = 200000
		for range big / repeats {
			_, groups := logRatios(rounds())
			for _, y := range repeatValues(groups, true) {
				sum += y
			}
		}
		truth := math.Exp(sum / float64(big/repeats*repeats))
		cover, n, seen := 0, 0, 0
		for range sims / tests {
			var all [][]Round
			for range tests {
				all = append(all, rounds())
			}
			for _, res := range judgePool(PoolWrites, all, 0.05) {
				n++
				if res.Bimodal {
					seen++
				}
				if res.Lo <= truth && truth <= res.Hi {
					cover++
				}
			}
		}
		got := float64(cover) / float64(n)
		t.Logf("%s: the covered quantity %.3f (planted ratio %.2f), covered in %.1f %% of %d (%d seen as in two modes)", c.name, truth, c.ratio, 100*got, n, seen)
		if got < 0.9 || got > 0.99 {
			t.Errorf("%s: coverage %.1f %%, want 90–99 %%", c.name, 100*got)
		}
		if c.more == 1 && math.Abs(truth/c.ratio-1) > 0.01 {
			t.Errorf("the same stalls on both labels: the quantity %.3f is not the ratio %.2f", truth, c.ratio)
		}
	}
}
