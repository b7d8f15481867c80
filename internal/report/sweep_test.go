package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// sweepRun is a run of point-query at threads with its figures: events/s,
// QPS, the response times in ms (p50, p95, p99) and Jain's index.
func sweepRun(threads int, tps, qps, p50, p95, p99, jain float64) result.Run {
	r := result.Run{Test: "point-query_range=100", Threads: threads, Status: result.OK, Totals: result.Totals{
		Seconds: 10, TPS: tps, Reported: qps, ReportedUnit: "qps",
		Response: result.Latency{Count: 1000, P50: p50 * 1000, P95: p95 * 1000, P99: p99 * 1000},
		Figures:  map[string]float64{"jain": jain},
	}}
	sysbench.Stamp(&r)
	return r
}

// sweepSets are two labels at 1, 4 and 16 threads: the second ran 4 threads
// three times (the median counts) and never ran 16.
func sweepSets() []analysis.Set {
	a := analysis.Set{Label: "ma1011.pool", Runs: []result.Run{
		sweepRun(1, 100, 2000, 1, 2, 3, 1), sweepRun(4, 380, 7600, 1.2, 2.5, 4, 0.99), sweepRun(16, 1200, 24000, 10, 20, 40, 0.9),
	}}
	b := analysis.Set{Label: "ma1011.perconn", Runs: []result.Run{
		sweepRun(1, 110, 2200, 1, 1.8, 3, 1),
		sweepRun(4, 300, 6000, 2, 5, 8, 0.5), sweepRun(4, 340, 6800, 1.3, 3, 5, 0.7), sweepRun(4, 320, 6400, 1.5, 4, 6, 0.6),
	}}
	return []analysis.Set{a, b}
}

// tableOf finds the table titled title in out (text: the title line, the
// header, the rows, a blank line) and returns its lines with their cells
// joined by one space.
func tableOf(t *testing.T, out, title string) []string {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if l != title {
			continue
		}
		var rows []string
		for _, r := range lines[i+1:] {
			if r == "" {
				return rows
			}
			rows = append(rows, strings.Join(strings.Fields(r), " "))
		}
		return rows
	}
	t.Fatalf("no table %q in:\n%s", title, out)
	return nil
}

// Seed 001's tables for a concurrency sweep: per figure, the labels as
// rows and the client counts as columns, the median over repeats, "-"
// where a label did not run a count, and the values relative to the
// first label beneath; in compare's text and Markdown and in the HTML
// report.
func TestSweepTables(t *testing.T) {
	sets := sweepSets()
	sw := analysis.Sweeps(sets)
	if len(sw) != 1 || len(sw[0].Threads) != 3 {
		t.Fatalf("sweeps %+v", sw)
	}
	if got := strings.Join(sw[0].Metrics, ","); got != "tps,qps,p95,p99,p50,jain" {
		t.Errorf("figures %s, want the registry's sweep figures in order", got)
	}
	cmp, err := analysis.Compare(sets[0], sets[1:], analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := Comparison(&text, sets, cmp, "text"); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for title, want := range map[string][]string{
		"point-query_range=100 by clients: tps (events/s)": {
			"label 1 4 16", "ma1011.pool 100 380 1200", "ma1011.perconn 110 320 -"},
		"point-query_range=100 by clients: tps (events/s), relative to ma1011.pool": {
			"label 1 4 16", "ma1011.perconn 1.10 0.84 -"},
		"point-query_range=100 by clients: qps": {
			"label 1 4 16", "ma1011.pool 2000 7600 24000", "ma1011.perconn 2200 6400 -"},
		"point-query_range=100 by clients: p95 (ms)": {
			"label 1 4 16", "ma1011.pool 2 2.5 20", "ma1011.perconn 1.8 4 -"},
		"point-query_range=100 by clients: p95 (ms), relative to ma1011.pool": {
			"label 1 4 16", "ma1011.perconn 0.90 1.60 -"},
		"point-query_range=100 by clients: p99 (ms)": {
			"label 1 4 16", "ma1011.pool 3 4 40", "ma1011.perconn 3 6 -"},
		"point-query_range=100 by clients: p50 (ms)": {
			"label 1 4 16", "ma1011.pool 1 1.2 10", "ma1011.perconn 1 1.5 -"},
		"point-query_range=100 by clients: jain": {
			"label 1 4 16", "ma1011.pool 1.000 0.990 0.900", "ma1011.perconn 1.000 0.600 -"},
	} {
		if got := tableOf(t, out, title); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", title, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}

	// Markdown: the same cells, a relative gain or loss in bold (a p95 that
	// fell is a gain, one that rose a loss).
	var md bytes.Buffer
	if err := Comparison(&md, sets, cmp, "md"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"point-query_range=100 by clients: qps\n\n| label | 1 | 4 | 16 |\n|---|---:|---:|---:|\n| ma1011.pool | 2000 | 7600 | 24000 |\n| ma1011.perconn | 2200 | 6400 | - |\n",
		"| ma1011.perconn | **1.10** | **0.84** | - |",
		"| ma1011.perconn | **0.90** | **1.60** | - |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	// HTML: the tables, the p95 gain green and loss red, and the charts.
	var page bytes.Buffer
	if err := HTML(&page, Model{Comparison: cmp, Sweeps: sw}); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	for _, want := range []string{
		`<h2 id="sweeps">Concurrency</h2>`,
		"<h4>point-query_range=100 by clients: p95 (ms), relative to ma1011.pool</h4>",
		`<tr><td>ma1011.perconn</td><td class="num green">0.90</td><td class="num red">1.60</td><td class="num">-</td></tr>`,
		`<tr><td>ma1011.pool</td><td class="num">100</td><td class="num">380</td><td class="num">1200</td></tr>`,
		"point-query_range=100: p99 by clients",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}

// Two thread counts make a sweep; one does not.
func TestSweepNeedsTwoCounts(t *testing.T) {
	sets := sweepSets()
	if sw := analysis.Sweeps(sets); len(sw) != 1 {
		t.Fatalf("sweeps %+v", sw)
	}
	for i := range sets {
		var keep []result.Run
		for _, r := range sets[i].Runs {
			if r.Threads != 16 {
				keep = append(keep, r)
			}
		}
		sets[i].Runs = keep
	}
	if sw := analysis.Sweeps(sets); len(sw) != 1 || len(sw[0].Threads) != 2 {
		t.Errorf("1 and 4 threads: sweeps %+v, want one of two counts", sw)
	}
	for i := range sets {
		var keep []result.Run
		for _, r := range sets[i].Runs {
			if r.Threads == 1 {
				keep = append(keep, r)
			}
		}
		sets[i].Runs = keep
	}
	if sw := analysis.Sweeps(sets); len(sw) != 0 {
		t.Errorf("one thread count: sweeps %+v, want none", sw)
	}
}
