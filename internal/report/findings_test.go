package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// findTests are 42 of sysbench's tests, in its five-group layout's order.
func findTests(t *testing.T) []string {
	t.Helper()
	l := sysbench.Layouts[0]
	var out []string
	for _, g := range l.Groups {
		out = append(out, l.Members[g]...)
	}
	if len(out) < 42 {
		t.Fatalf("sysbench's layout lists %d tests", len(out))
	}
	return out[:42]
}

// findRuns are five repeats of test at about qps, stamped as sysbench
// stamps an import, with cs/o where cs is not 0.
func findRuns(t *testing.T, test, version string, qps, cs float64) []result.Run {
	stamped := result.Run{Test: test}
	if err := sysbench.Stamp(&stamped); err != nil { // once: it is slow
		t.Fatal(err)
	}
	var out []result.Run
	for rep, j := range []float64{1, 1.003, 0.997, 1.001, 0.999} {
		r := stamped
		r.Threads, r.Status, r.Version, r.Params = 1, result.OK, version, map[string]string{"repeat": fmt.Sprint(rep)}
		for k, v := range stamped.Params {
			r.Params[k] = v
		}
		r.Totals = result.Totals{Reported: qps * j, ReportedUnit: "qps"}
		if cs != 0 {
			r.HW = &result.HW{Op: "statement", Samples: 60, OpsPerSec: qps, CPUPerOp: 0.0069 * j, CSPerOp: cs * j}
		}
		out = append(out, r)
	}
	return out
}

// findFixture: the new build faster on 41 of 42 tests, beyond the noise
// on 35 (six are 2 % faster, inside the ±5 % floor), the max 1.97 on the
// 17th test, the 30th 22 % slower with cs/o going from 8.44 to csNew.
func findFixture(t *testing.T, csNew float64) (string, string, []analysis.Set, *analysis.Comparison) {
	tests := findTests(t)
	a, b := analysis.Set{Label: "mariadb-10.6.1.c"}, analysis.Set{Label: "mariadb-11.4.1.c"}
	for i, test := range tests {
		rel, csA, csB := 1.10+float64(i)/200, 0.0, 0.0
		switch i + 1 {
		case 17:
			rel = 1.97
		case 30:
			rel, csA, csB = 0.78, 8.44, csNew
		case 3, 9, 14, 22, 35, 40:
			rel = 1.02
		}
		a.Runs = append(a.Runs, findRuns(t, test, "10.6.1", 1000, csA)...)
		b.Runs = append(b.Runs, findRuns(t, test, "11.4.1", 1000*rel, csB)...)
	}
	sets := []analysis.Set{a, b}
	c, err := analysis.Compare(a, sets[1:], analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tests[16], tests[29], sets, c
}

func TestFindingsSentences(t *testing.T) {
	maxTest, slow, sets, c := findFixture(t, 36.08)
	var b bytes.Buffer
	if err := Comparison(&b, sets, c, "md"); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"**tl;dr.** mariadb-11.4.1.c against mariadb-10.6.1.c: faster on 41 of 42 microbenchmarks, beyond the noise on 35; slower on 1, beyond the noise on 1 (verdicts: 35 +, 1 -, 0 ≈, 0 ~, 6 =, 0 ?).",
		fmt.Sprintf("Its relative values run from 0.78 (%s) to 1.97 (%s)", slow, maxTest),
		fmt.Sprintf("The largest regression is %s at 0.78, with cs/o 4.27×.", slow),
		"Findings for `mariadb-11.4.1.c` against `mariadb-10.6.1.c`:\n\n- Faster on 41 of 42 microbenchmarks, beyond the noise on 35;",
		fmt.Sprintf("- The max, 1.97, is at %s; the min, 0.78, at %s;", maxTest, slow),
		fmt.Sprintf("- Regression: %s at 0.78 (-); cs/o 8.440 → 36.080 (4.27×): more context switches per operation, the seeds' usual sign of a mutex or wake-up problem.", slow),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	// Findings head the comparison; each group has its median line.
	if i, j := strings.Index(md, "**tl;dr.**"), strings.Index(md, "| test | threads |"); i != 0 || j < i {
		t.Errorf("findings at %d, the table at %d:\n%s", i, j, md)
	}
	for _, g := range c.Groups {
		if g.Name != "load" && !strings.Contains(md, fmt.Sprintf("- %s: median %.2f over %d tests", g.Name, g.Stats[0].Median, g.Stats[0].N)) {
			t.Errorf("no median line for %s:\n%s", g.Name, md)
		}
	}
	if strings.Contains(md, "more CPU per operation") || strings.Contains(md, "IO per operation") {
		t.Errorf("a figure that did not move is told of:\n%s", md)
	}

	// cs/o unmoved: the regression stays, its context-switch sentence goes.
	_, slow, sets, c = findFixture(t, 8.45)
	b.Reset()
	if err := Comparison(&b, sets, c, "text"); err != nil {
		t.Fatal(err)
	}
	if txt := b.String(); strings.Contains(txt, "context switches") || !strings.Contains(txt, fmt.Sprintf("Regression: %s at 0.78 (-); none of its per-op figures (cpu/o, cs/o, rKB/o, wKB/o) went up.", slow)) {
		t.Errorf("cs/o 8.44 → 8.45:\n%s", txt)
	}

	// JSON: the comparison's fields with the findings beside them.
	b.Reset()
	if err := Comparison(&b, sets, c, "json"); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Base     string `json:"base"`
		Findings struct {
			Words    FindingsSection `json:"words"`
			Findings struct {
				Labels []struct {
					Faster, Better int
					Max            struct{ Test string }
				}
			} `json:"findings"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	if l := j.Findings.Findings.Labels; j.Base != c.Base || len(l) != 1 || l[0].Faster != 41 || l[0].Better != 35 || l[0].Max.Test != maxTest || len(j.Findings.Words.TLDR) < 2 {
		t.Errorf("JSON: %+v", j)
	}

	// The HTML report: the section first, linked from the head.
	page := htmlRender(t, NewModel(sets, c, func(json.RawMessage) (string, error) { return "", nil }, func(string) string { return "" }, time.Time{}))
	f, cmp := strings.Index(page, `<h2 id="findings">`), strings.Index(page, `<h2 id="comparison">`)
	if f < 0 || cmp < f || !strings.Contains(page, `<a href="#findings">`) || !strings.Contains(page, "faster on 41 of 42 microbenchmarks, beyond the noise on 35") {
		t.Errorf("the findings section at %d, the comparison at %d", f, cmp)
	}
}

// A sweep of five builds in version order: a regression arrives at the
// third build and stays; the findings say where.
func TestFindingsSweep(t *testing.T) {
	tests := findTests(t)[:3]
	var sets []analysis.Set
	for bi, v := range []string{"10.2.11", "10.4.1", "10.5.1", "10.6.1", "10.11.5"} {
		s := analysis.Set{Label: "mariadb-" + v + ".c"}
		for ti, test := range tests {
			qps := 1000.0
			if ti == 1 && bi >= 2 {
				qps = 700
			}
			s.Runs = append(s.Runs, findRuns(t, test, v, qps, 0)...)
		}
		sets = append(sets, s)
	}
	c, err := analysis.Compare(sets[0], sets[1:], analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Comparison(&b, sets, c, "md"); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	// The findings, whole: the regression arrives in the third build.
	g := c.Rows[0].Group // the layout's, whatever the suite calls it
	// Ties go to the first in the table (the layout's order): the max at
	// 1.00 is the first row other than T1's.
	first, top := c.Rows[0].Test, ""
	for _, r := range c.Rows {
		if r.Test != tests[1] {
			top = r.Test
			break
		}
	}
	golden := strings.NewReplacer("T0 first", first+" first", "T0", top, "T1", tests[1], "G", g).Replace(`**tl;dr.** mariadb-10.11.5.c against mariadb-10.2.11.c: faster on 0 of 3 microbenchmarks, beyond the noise on 0; slower on 1, beyond the noise on 1 (verdicts: 0 +, 1 -, 0 ≈, 2 ~, 0 =, 0 ?). Its relative values run from 0.70 (T1) to 1.00 (T0), geomean 0.89. The largest regression is T1 at 0.70. Across the sweep, 1 change arrived beyond the noise between neighbouring builds: 1 in mariadb-10.5.1.c.

Findings for ` + "`mariadb-10.4.1.c` against `mariadb-10.2.11.c`" + `:

- Faster on 0 of 3 microbenchmarks, beyond the noise on 0; slower on 0, beyond the noise on 0 (verdicts: 0 +, 0 -, 0 ≈, 3 ~, 0 =, 0 ?).
- All 3 tests are at 1.00, T0 first in the table.
- G: median 1.00 over 3 tests, each at 1.00.
`)
	for _, later := range []string{"10.5.1", "10.6.1", "10.11.5"} {
		golden += strings.NewReplacer("T0", top, "T1", tests[1], "L", later, "G", g).Replace(`
Findings for ` + "`mariadb-L.c` against `mariadb-10.2.11.c`" + `:

- Faster on 0 of 3 microbenchmarks, beyond the noise on 0; slower on 1, beyond the noise on 1 (verdicts: 0 +, 1 -, 0 ≈, 2 ~, 0 =, 0 ?).
- The max, 1.00, is at T0; the min, 0.70, at T1; the geomean is 0.89.
- G: median 1.00 over 3 tests, from 0.70 (T1) to 1.00 (T0).
- Regression: T1 at 0.70 (-).
`)
	}
	golden += strings.NewReplacer("T1", tests[1]).Replace(`
Where each change arrived (neighbouring builds):

- T1 changed in mariadb-10.5.1.c (0.70 - against mariadb-10.4.1.c).

`)
	if !strings.HasPrefix(md, golden) {
		t.Errorf("the sweep's findings:\n%s\nwant:\n%s", md[:min(len(md), len(golden))], golden)
	}
	if strings.Contains(md, tests[0]+" changed") || strings.Contains(md, tests[2]+" changed") {
		t.Errorf("a test that did not change has an arrival:\n%s", md)
	}
}

// pairedCPUSets: one write test measured in paired slices, four repeats
// of three slices each; the new build is 20 % slower round by round and
// costs 1.12× the CPU per operation in every slice, while the runs' own
// cpu/o (each run's whole window, which the other label's slices
// interleave with) has medians that fall to 0.90×. The verdict on cpu/o
// is paired: worse, at 1.12.
func pairedCPUSets(t *testing.T) []analysis.Set {
	t.Helper()
	return pairedSets(t, 0.8, 1.12)
}

// pairedSets are pairedCPUSets with the other label's rate qpsRatio and
// its slices' CPU per operation (cpu/o and the server's) cpuRatio × the
// base's.
func pairedSets(t *testing.T, qpsRatio, cpuRatio float64) []analysis.Set {
	t.Helper()
	a, b := analysis.Set{Label: "mariadb-10.2.11.c"}, analysis.Set{Label: "mariadb-10.11.c"}
	runCPU := map[string][]float64{a.Label: {10, 10, 10, 10}, b.Label: {9, 9, 9, 9}}
	for _, s := range []*analysis.Set{&a, &b} {
		other := s.Label == b.Label
		for rep := 1; rep <= 4; rep++ {
			r := result.Run{Test: "update-index_range=100", Threads: 1, Status: result.OK, Version: map[bool]string{false: "10.2.11", true: "10.11"}[other],
				Plan: "plan-1", Pairing: result.PairedSlices, Params: map[string]string{"repeat": fmt.Sprint(rep), "writes": "true"}}
			r.HW = &result.HW{Op: "statement", Samples: 60, OpsPerSec: 1000, CPUPerOp: runCPU[s.Label][rep-1], CSPerOp: 5, ServerCPUUsOp: 40}
			var sum float64
			for rd := 1; rd <= 3; rd++ {
				j := 1 + 0.01*float64((rep*3+rd)%5-2) // slice to slice, the same for both labels
				qps, cpu := 1000*j, 4*j
				if other {
					qps, cpu = qps*qpsRatio*(1+0.002*float64(rd-2)), cpu*cpuRatio*(1+0.002*float64(rep-2))
				}
				sum += qps
				r.Rounds = append(r.Rounds, result.Round{Repeat: rep, Round: rd, Seconds: 1, Value: qps, IdleCPU: -1,
					Figures: map[string]float64{"cpu/o": cpu, "cs/o": 5, "server_cpu_us/o": 10 * cpu}})
			}
			r.Totals = result.Totals{Reported: sum / 3, ReportedUnit: "qps"}
			s.Runs = append(s.Runs, r)
		}
	}
	return []analysis.Set{a, b}
}

// TestFindingsPairedRatio: a findings sentence and the metrics table print
// the paired verdict's own ratio beside its mark, never the medians' ratio
// pointing the other way ("cpu/o 0.90×: more CPU per operation").
func TestFindingsPairedRatio(t *testing.T) {
	sets := pairedCPUSets(t)
	c, err := analysis.Compare(sets[0], sets[1:], analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := analysis.FindingsFor(c, sets)
	if len(f.Labels) != 1 || len(f.Labels[0].Regressions) != 1 {
		t.Fatalf("want one regression: %+v", f.Labels)
	}
	hw := f.Labels[0].Regressions[0].Hardware
	if len(hw) != 1 || hw[0].Metric != "cpu/o" || !hw[0].Paired || math.Abs(hw[0].Rel-1.12) > 0.01 || math.Abs(hw[0].Medians-0.9) > 1e-9 {
		t.Fatalf("cpu/o's change: %+v", hw)
	}
	var b bytes.Buffer
	if err := FindingsOut(&b, f, "text"); err != nil {
		t.Fatal(err)
	}
	txt := b.String()
	for _, want := range []string{"with cpu/o 1.12×.", "cpu/o 1.12× paired round by round (medians 10.000000 → 9.000000): more CPU per operation"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the findings lack %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "0.90×") {
		t.Errorf("the findings print the medians' ratio as the change:\n%s", txt)
	}
	b.Reset()
	if err := MetricsOf(&b, sets, "", analysis.ParseCounterChoice([]string{"default"}), "text"); err != nil {
		t.Fatal(err)
	}
	if txt := b.String(); !strings.Contains(txt, "1.12-") || strings.Contains(txt, "0.90-") {
		t.Errorf("the metrics table's cpu/o is not the paired verdict's 1.12-:\n%s", txt)
	}
}

// TestVerdictLineFDR: the verdict line counts the changes the
// false-discovery correction does not keep, and names each.
func TestVerdictLineFDR(t *testing.T) {
	c := &analysis.Comparison{Base: "a.c", Others: []string{"b.c"}, Tally: []analysis.Tally{{Worse: 18, NotAfterFDR: 3}}}
	c.Rows = []analysis.Row{{Test: "update-index_range=100", Threads: 1, Group: "writes", Others: []analysis.Cell{{Verdict: analysis.Verdict{
		Method: analysis.MethodPaired, Pairing: result.PairedSlices, N: 24, Rel: 0.9, Lo: 0.85, Hi: 0.94, P: 0.01, Q: 0.07, Level: 0.05, Kind: analysis.KindWorse, NotAfterFDR: true}}}}}
	var b bytes.Buffer
	VerdictSummary(&b, c)
	for _, want := range []string{"18 test(s) changed beyond the noise (18 worse, 0 better, 3 of them not after false-discovery correction)",
		"update-index_range=100, 1 thread(s): 0.90 [0.85, 0.94] (24 rounds, slices; not after false-discovery correction, q=0.07)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the verdict lacks %q:\n%s", want, b.String())
		}
	}
}

// TestVerdictUnstable: a test whose slices fall in two modes is flagged
// unstable in compare's verdict, its two modes shown.
func TestVerdictUnstable(t *testing.T) {
	sets := pairedCPUSets(t)
	for i := range sets[1].Runs {
		for j := range sets[1].Runs[i].Rounds {
			if j == 0 { // one slice in three stalls, at a tenth of the rate
				sets[1].Runs[i].Rounds[j].Value /= 13
			}
		}
	}
	c, err := analysis.Compare(sets[0], sets[1:], analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Rows[0].Others[0].Modes; m == nil || c.Rows[0].Base.Modes != nil {
		t.Fatalf("modes: base %+v, other %+v", c.Rows[0].Base.Modes, m)
	}
	var b bytes.Buffer
	VerdictSummary(&b, c)
	if want := "unstable update-index_range=100, 1 thread(s): mariadb-10.11.c's 12 slices in two modes, 61.7 (33 %) and 798 (67 %); its interval covers the geometric mean of the paired slices' ratios"; !strings.Contains(b.String(), want) {
		t.Errorf("the verdict lacks %q:\n%s", want, b.String())
	}
}

// TestVerdictCost: compare judges the server's CPU per operation beside
// the rate, marked as a cost; a rate better at a CPU cost worse shows
// both, in the verdict and the tl;dr.
func TestVerdictCost(t *testing.T) {
	sets := pairedSets(t, 1.25, 1.3)
	c, err := analysis.Compare(sets[0], sets[1:], analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cell := c.Rows[0].Others[0]
	if cell.Verdict.Kind != analysis.KindBetter || cell.Cost == nil || cell.Cost.Kind != analysis.KindWorse || math.Abs(cell.Cost.Rel-1.3) > 0.01 {
		t.Fatalf("rate %s, cost %+v", cell.Verdict.Kind, cell.Cost)
	}
	var b bytes.Buffer
	VerdictSummary(&b, c)
	for _, want := range []string{
		"cost (server CPU per operation, lower is better; a cost, not a rate, and not in the counts above): 1 of 1 test(s) changed beyond the noise, 0 lower, 1 higher",
		"cost higher update-index_range=100, 1 thread(s): server CPU/op 1.30 [",
		"(rate better, 1.25×; the rate and the cost disagree: both are real)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the verdict lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := FindingsOut(&b, analysis.FindingsFor(c, sets), "text"); err != nil {
		t.Fatal(err)
	}
	if want := "Its cost, the server's CPU per operation (a cost, not a rate), is lower beyond the noise on 0 and higher on 1 of the 1 test measured; on 1 the rate and the cost go opposite ways, both real."; !strings.Contains(b.String(), want) {
		t.Errorf("the tl;dr lacks %q:\n%s", want, b.String())
	}
}
