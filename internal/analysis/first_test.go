package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// firstRuns are two labels' paired runs of tests write tests, six
// repeats of three slices, the other label ratio × the base round by
// round (noise σ 0.05), its first repeat firstOff × more.
func firstRuns(r *rand.Rand, tests int, ratio, firstOff float64) (Set, Set) {
	a, b := Set{Label: "a.c"}, Set{Label: "b.c"}
	for ti := range tests {
		for rep := 1; rep <= 6; rep++ {
			ra := result.Run{Test: fmt.Sprintf("t%d", ti), Threads: 1, Status: result.OK, Plan: "p", Pairing: result.PairedSlices,
				Params: map[string]string{"repeat": fmt.Sprint(rep), "writes": "true"}}
			rb := ra
			rb.Params = map[string]string{"repeat": fmt.Sprint(rep), "writes": "true"}
			for rd := 1; rd <= 3; rd++ {
				base := 1000 * math.Exp(0.2*r.NormFloat64())
				other := base * ratio * math.Exp(0.05*r.NormFloat64())
				if rep == 1 {
					other *= firstOff
				}
				ra.Rounds = append(ra.Rounds, result.Round{Repeat: rep, Round: rd, Value: base, IdleCPU: -1})
				rb.Rounds = append(rb.Rounds, result.Round{Repeat: rep, Round: rd, Value: other, IdleCPU: -1})
			}
			ra.Totals, rb.Totals = result.Totals{Reported: ra.Rounds[0].Value, ReportedUnit: "qps"}, result.Totals{Reported: rb.Rounds[0].Value, ReportedUnit: "qps"}
			a.Runs, b.Runs = append(a.Runs, ra), append(b.Runs, rb)
		}
	}
	return a, b
}

// TestFirstRepeat: where every test's first repeat lies 12 % off the
// later ones (a warm-up the two labels take differently), the pool says
// so and leaves the first repeats out: an A/A pair is then judged the
// same, not worse; where the first repeats are like the others, they
// are kept and counted.
func TestFirstRepeat(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	a, b := firstRuns(r, 12, 1, 1.12)
	c, err := Compare(a, []Set{b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pools[0][0]
	if !p.FirstOut || math.Abs(p.FirstEffect-0.12) > 0.03 {
		t.Fatalf("the first repeats 12 %% off: %+v", p)
	}
	for _, row := range c.Rows {
		v := row.Others[0].Verdict
		if v.Blocks != 5 || v.Changed() {
			t.Errorf("%s: judged on %d repeats, %s %.3f", row.Test, v.Blocks, v.Kind, v.Rel)
		}
	}
	a, b = firstRuns(r, 12, 1, 1)
	if c, err = Compare(a, []Set{b}, Options{}); err != nil {
		t.Fatal(err)
	}
	if p := c.Pools[0][0]; p.FirstOut || c.Rows[0].Others[0].Verdict.Blocks != 6 {
		t.Errorf("first repeats like the rest: %+v, %d repeats judged", p, c.Rows[0].Others[0].Verdict.Blocks)
	}
}
