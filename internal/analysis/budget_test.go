package analysis

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// Kalibera and Jones's count: many rounds a repeat where repeats are
// alike or dear, few where they differ or are cheap; never fewer than
// two, never more than the test's time allows.
func TestSlicesPerRepeat(t *testing.T) {
	s := 250 * time.Millisecond
	for _, c := range []struct {
		between       float64
		round, repeat time.Duration
		most, want    int
	}{
		{0, time.Second, time.Second, 12, 12},                   // no repeat effect: as many as fit
		{0.1, time.Second, 4 * time.Second, 20, 2},              // √(4·0.01/0.01) = 2
		{0.05, time.Second, 4 * time.Second, 20, 4},             // √(4·0.01/0.0025) = 4
		{0.05, time.Second, 16 * time.Second, 20, 8},            // dearer repeats: more rounds each
		{0.5, time.Second, time.Second, 20, 2},                  // strong repeat effect: the fewest
		{0.01, time.Second, 100 * time.Second, 6, 6},            // capped by the time
		{0.05, 0, 4 * time.Second, 9, 9},                        // no cost known: as many as fit
		{math.NaN(), time.Second, time.Second, 5, 5},            // nothing known of the repeats
		{0.05, time.Second, time.Duration(math.MaxInt64), 7, 7}, // absurd costs
	} {
		got := SlicesPerRepeat(Components{Within: 0.1, Slice: s, Between: c.between}, s, c.round, c.repeat, c.most)
		if got != c.want {
			t.Errorf("σ_b %g, round %s, repeat %s, most %d: %d, want %d", c.between, c.round, c.repeat, c.most, got, c.want)
		}
	}
}

// A design's standard error and smallest change found at 80 % power, and
// that the smallest change it promises is found about that often: a
// simulation of the design's own rounds, judged as a comparison judges
// them.
func TestDesignOf(t *testing.T) {
	c := Components{Within: 0.1, Slice: 250 * time.Millisecond}
	d := DesignOf(3*time.Second, 6, 2, c, 0.05)
	// 6 repeats of 2 slices of 0.25 s: SE = 0.1/√12 on the repeats, df 5.
	if d.Unit != UnitRepeats || d.DF != 5 || d.Slice != 250*time.Millisecond || math.Abs(d.SE-0.1/math.Sqrt(12)) > 1e-12 {
		t.Errorf("%+v", d)
	}
	want := math.Expm1((tQuantile(0.975, 5) + tQuantile(0.8, 5)) * d.SE)
	if math.Abs(d.MDE-want) > 1e-12 {
		t.Errorf("MDE %g, want %g", d.MDE, want)
	}
	// Repeats of one slice each are judged as repeats (Paired): 12 of
	// them, 11 degrees of freedom, no trimming.
	if o := DesignOf(3*time.Second, 12, 1, c, 0.05); o.Unit != UnitRepeats || o.DF != 11 || math.Abs(o.SE-0.1/math.Sqrt(12)) > 1e-12 {
		t.Errorf("12 repeats of one slice: %+v", o)
	}
	// Half the slice: the noise per round as of twice the variance.
	if h := DesignOf(1500*time.Millisecond, 6, 2, c, 0.05); math.Abs(h.SE-d.SE*math.Sqrt2) > 1e-12 {
		t.Errorf("half the time: SE %g, want %g", h.SE, d.SE*math.Sqrt2)
	}
	// A repeat effect: the repeats are the units.
	c.Between = 0.05
	r := DesignOf(3*time.Second, 6, 2, c, 0.05)
	if r.Unit != UnitRepeats || r.DF != 5 || math.Abs(r.SE-math.Sqrt((0.0025+0.01/2)/6)) > 1e-12 {
		t.Errorf("%+v", r)
	}
	// The promise kept: a change of the MDE, planted in rounds of the
	// design's noise, is found in about 80 % of experiments (the normal
	// approximation is generous at few degrees of freedom: at least 70 %).
	rng := rand.New(rand.NewPCG(7, 8))
	found := 0
	const experiments = 1000
	for range experiments {
		var all [][]Round
		for range 12 {
			all = append(all, synthRounds(rng, d.Repeats, d.Slices, 1+d.MDE, 0, 0.1))
		}
		if judgePool(PoolReads, all, 0.05)[0].Significant {
			found++
		}
	}
	if p := float64(found) / experiments; p < 0.7 || p > 0.95 {
		t.Errorf("a change of the MDE (%.1f %%) found in %.1f %% of experiments, want about 80 %%", 100*d.MDE, 100*p)
	}
}

// The components a comparison's runs give: each sliced test's round noise
// and repeat effect, from rounds of a known σ, with its pool and slice;
// the load and tests that do not say whether they write are left out.
func TestComponentsOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	mk := func(label, test, writes string, ratio float64, role string) []result.Run {
		var out []result.Run
		for rep := 1; rep <= 8; rep++ {
			r := result.Run{Suite: "sysbench", Test: test, Build: label, Config: "c@1", Threads: 1, Status: result.OK, Role: role,
				Plan: "p", Pairing: result.PairedSlices, Params: map[string]string{"repeat": strconv.Itoa(rep)}}
			if writes != "" {
				r.Params["writes"] = writes
			}
			for round := 1; round <= 6; round++ {
				v := 1000.0
				if ratio != 1 {
					v *= ratio * math.Exp(0.1*rng.NormFloat64())
				}
				r.Rounds = append(r.Rounds, result.Round{Repeat: rep, Round: round, Seconds: 0.25, Value: v})
			}
			r.Totals.Reported = 1000
			out = append(out, r)
		}
		return out
	}
	base := Set{Label: "a.c"}
	other := Set{Label: "b.c"}
	for _, tc := range []struct{ test, writes, role string }{{"r", "false", result.RoleTest}, {"w", "true", result.RoleTest}, {"old", "", result.RoleTest}, {"load", "false", result.RoleLoad}} {
		base.Runs = append(base.Runs, mk("a", tc.test, tc.writes, 1, tc.role)...)
		other.Runs = append(other.Runs, mk("b", tc.test, tc.writes, 1.2, tc.role)...)
	}
	cs := ComponentsOf(base, other)
	if len(cs) != 2 || cs[0].Test != "r" || cs[0].Pool != PoolReads || cs[1].Test != "w" || cs[1].Pool != PoolWrites {
		t.Fatalf("%+v", cs)
	}
	for _, c := range cs {
		if c.Slice != 250*time.Millisecond || c.Rounds != 48 || c.Repeats != 8 || math.Abs(c.Within-0.1) > 0.03 || c.Between > 0.05 {
			t.Errorf("%+v: want σ_within about 0.1, no repeat effect", c)
		}
	}
}

// The database's state per repeat: each test's page reads per statement
// in every repeat, in the order they ran, and how far they spread; a
// test without the counter, the load and a test of one repeat have none.
func TestState(t *testing.T) {
	mk := func(test string, rep int, reads float64, role string) result.Run {
		r := result.Run{Suite: "sysbench", Test: test, Threads: 1, Status: result.OK, Role: role, Plan: "p", Step: len(test),
			Params: map[string]string{"repeat": strconv.Itoa(rep)}, Totals: result.Totals{Seconds: 1, Reported: 100}}
		if reads >= 0 {
			r.HW = &result.HW{Samples: 10, OpsPerSec: 100, Seconds: 1, Server: &result.ServerCounters{Values: []result.CounterValue{{Name: "innodb_buffer_pool_read_requests", Value: reads * 100}}}}
		}
		return r
	}
	s := Set{Label: "a.c", Runs: []result.Run{
		mk("point-query.pre_range=100", 2, 307, result.RoleTest), mk("point-query.pre_range=100", 1, 101, result.RoleTest),
		mk("scan_range=100", 1, 50, result.RoleTest), mk("scan_range=100", 2, 51, result.RoleTest),
		mk("load", 1, 10, result.RoleLoad), mk("load", 2, 10, result.RoleLoad),
		mk("once", 1, 10, result.RoleTest),
		mk("uncounted", 1, -1, result.RoleTest), mk("uncounted", 2, -1, result.RoleTest),
	}}
	rows := State([]Set{s})
	if len(rows) != 2 {
		t.Fatalf("%+v", rows)
	}
	scan, pq := rows[0], rows[1] // in the suite's order (Step)
	if pq.Test != "point-query.pre_range=100" || pq.Figure != "innodb_buffer_pool_read_requests/o" || len(pq.Values) != 2 || pq.Values[0] != 101 || pq.Values[1] != 307 || math.Abs(pq.Spread-(307.0/101-1)) > 1e-12 {
		t.Errorf("point-query: %+v", pq)
	}
	if scan.Spread > StateAgrees {
		t.Errorf("scan: %+v", scan)
	}
}
