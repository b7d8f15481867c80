package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// demoRuns are two labels' paired runs as the demo measures them: 32 read
// tests (round noise σ 0.1 a 0.25 s slice, no repeat effect) and 10 write
// tests (σ 0.25, repeat effect σ 0.116: DefaultComponents), 6 repeats of
// 2 slices, each test's ratio of the other label the planted one of its
// pool times one draw of a run effect of σ runSD (this plan's).
func demoRuns(r *rand.Rand, reads, writes, runSD float64) (Set, Set) {
	a, b := Set{Label: "a.c"}, Set{Label: "b.c"}
	for ti := range 42 {
		w := ti >= 32
		ratio, within, between := reads, 0.1, 0.0
		if w {
			ratio, within, between = writes, 0.25, 0.116
		}
		ratio *= math.Exp(runSD * r.NormFloat64())
		for rep := 1; rep <= 6; rep++ {
			eff := between * r.NormFloat64()
			ra := result.Run{Test: fmt.Sprintf("t%02d", ti), Threads: 1, Status: result.OK, Plan: "p", Pairing: result.PairedSlices,
				Params: map[string]string{"repeat": fmt.Sprint(rep), "writes": fmt.Sprint(w)}}
			rb := ra
			rb.Params = map[string]string{"repeat": fmt.Sprint(rep), "writes": fmt.Sprint(w)}
			for rd := 1; rd <= 2; rd++ {
				base := 1000 * math.Exp(0.2*r.NormFloat64())
				ra.Rounds = append(ra.Rounds, result.Round{Repeat: rep, Round: rd, Value: base, IdleCPU: -1})
				rb.Rounds = append(rb.Rounds, result.Round{Repeat: rep, Round: rd, Value: base * ratio * math.Exp(eff+within*r.NormFloat64()), IdleCPU: -1})
			}
			ra.Totals, rb.Totals = result.Totals{Reported: 1000, ReportedUnit: "qps"}, result.Totals{Reported: 1000 * ratio, ReportedUnit: "qps"}
			a.Runs, b.Runs = append(a.Runs, ra), append(b.Runs, rb)
		}
	}
	return a, b
}

// TestRuleCosts ranks what each rule of the verdict costs in power, on
// simulated comparisons at the demo's design (bench/verdicts.sh prints
// it, docs/perf.md has the figures): the calls each rule leaves, added one
// by one, on A/A comparisons (false calls) and on planted changes of the
// reads (10 %, 20 % slower) and the writes (20 % slower), each comparison
// with a run effect of σ 2 % that its own rounds cannot see. Each rule can
// only take calls away, and false-discovery control keeps the A/A
// comparisons that call anything at all to a few in a hundred.
func TestRuleCosts(t *testing.T) {
	const sims = 60
	type count struct{ sig, point, clears, fdr, runs, own, any, anyFDR, anyRuns, n, firstOut int }
	for _, c := range []struct {
		name          string
		reads, writes float64
		pool          string
	}{
		{"A/A", 1, 1, ""}, {"reads 0.9×", 0.9, 1, PoolReads}, {"reads 0.8×", 0.8, 1, PoolReads}, {"writes 0.8×", 1, 0.8, PoolWrites},
	} {
		r := rand.New(rand.NewPCG(101, uint64(c.reads*100+c.writes*10)))
		var k count
		for range sims {
			a, b := demoRuns(r, c.reads, c.writes, 0.02)
			plain, err := Compare(a, []Set{b}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			none := func(string, int, string, ...[]result.Run) ([]float64, []float64) { return nil, nil }
			withRuns, err := Compare(a, []Set{b}, Options{RunEffects: none})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range plain.Pools[0] {
				if p.FirstOut {
					k.firstOut++
				}
			}
			anyCall, anyFDR, anyRuns := false, false, false
			for ri, row := range plain.Rows {
				v := row.Others[0].Verdict
				isWrite := row.Test >= "t32"
				if c.pool == PoolReads && isWrite || c.pool == PoolWrites && !isWrite {
					continue
				}
				k.n++
				if v.Significant {
					k.sig++
				}
				if v.Significant && beyond(v.Rel, v.Floor) {
					k.point++
				}
				if v.Changed() {
					k.clears++
					anyCall = true
				}
				if v.Changed() && !v.NotAfterFDR {
					k.fdr++
					anyFDR = true
				}
				if w := withRuns.Rows[ri].Others[0].Verdict; w.Changed() && !w.NotAfterFDR {
					k.runs++
					anyRuns = true
				}
				// Each test on its own variance, no pool's prior.
				j := DefaultJudging()
				own := Judge(HeadlineSide(testRuns(a, row.Test)), HeadlineSide(testRuns(b, row.Test)), j)
				if own.Changed() {
					k.own++
				}
			}
			if anyCall {
				k.any++
			}
			if anyFDR {
				k.anyFDR++
			}
			if anyRuns {
				k.anyRuns++
			}
		}
		pct := func(x int) string { return fmt.Sprintf("%.1f %%", 100*float64(x)/float64(k.n)) }
		t.Logf("%s, %d comparisons, %d test verdicts: significant %s; + relative value beyond ±5 %% %s; + interval beyond ±5 %% %s; + false-discovery control %s; + run σ 2 %% in the interval %s; (interval beyond ±5 %% without the pool's prior: %s); comparisons calling any test changed: %d, after the correction %d, with the run σ too %d; pools leaving their first repeats out: %d of %d",
			c.name, sims, k.n, pct(k.sig), pct(k.point), pct(k.clears), pct(k.fdr), pct(k.runs), pct(k.own), k.any, k.anyFDR, k.anyRuns, k.firstOut, 2*sims)
		if !(k.sig >= k.point && k.point >= k.clears && k.clears >= k.fdr && k.fdr >= k.runs-k.n/50) {
			t.Errorf("%s: a rule added calls: %+v", c.name, k)
		}
		if c.pool == "" && k.anyRuns > sims/10 {
			t.Errorf("A/A: %d of %d comparisons call a test changed with every rule", k.anyRuns, sims)
		}
	}
}

func testRuns(s Set, test string) []result.Run {
	var out []result.Run
	for _, r := range s.Runs {
		if r.Test == test {
			out = append(out, r)
		}
	}
	return out
}
