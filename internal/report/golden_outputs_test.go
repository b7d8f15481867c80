package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/stacks"
	_ "github.com/qpslab/qpslab/internal/workload" // every suite registers itself

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/suite"
)

// TestGoldenOutputs: what compare, compare --summary seeds, detect and the
// findings print in every format they offer, from the fixtures of the
// tests beside (textComparison, findFixture, detection), byte for byte.
func TestGoldenOutputs(t *testing.T) {
	small := textComparison(t)
	smallSets := []analysis.Set{{Label: small.Base}, {Label: small.Others[0]}}
	_, _, sets, big := findFixture(t, 9.5)
	for _, f := range []string{"text", "md", "csv", "tsv", "json", "qps.abs", "qps.rel"} {
		golden(t, "compare-small."+f, func(w io.Writer) error { return ComparisonAs(w, smallSets, small, f, SummaryFull) })
		golden(t, "compare-big."+f, func(w io.Writer) error { return ComparisonAs(w, sets, big, f, SummaryFull) })
	}
	for _, f := range []string{"text", "md", "csv", "tsv", "json"} {
		golden(t, "seeds-big."+f, func(w io.Writer) error { return ComparisonAs(w, sets, big, f, SummarySeeds) })
		golden(t, "seeds-apr2024-big."+f, func(w io.Writer) error { return ComparisonAs(w, sets, big, f, SummarySeedsApr2024) })
		d := detection()
		golden(t, "detect."+f, func(w io.Writer) error { return Detect(w, d, f, false) })
		g, _ := analysis.ParseGate("regression:10%")
		d.Gate = NewGateResult(g, d)
		golden(t, "detect-gate."+f, func(w io.Writer) error { return Detect(w, d, f, false) })
	}
	for _, f := range []string{"text", "md", "json"} {
		golden(t, "findings-big."+f, func(w io.Writer) error { return FindingsOut(w, analysis.FindingsFor(big, sets), f) })
	}
}

// TestGoldenSuites: qpslab suites, every registered suite, text and json.
func TestGoldenSuites(t *testing.T) {
	for _, f := range []string{"text", "json"} {
		golden(t, "suites."+f, func(w io.Writer) error { return Suites(w, suite.All(), f) })
	}
}

// TestGoldenStacks: qpslab stacks and stacks diff, text and json, from two
// labels' captures (one with a note, one with no samples).
func TestGoldenStacks(t *testing.T) {
	a := result.Stacks{Source: "pmp", Tool: "eu-stack", Interval: 1, Captures: 10, PauseMeanMs: 3.5, PauseMaxMs: 9,
		Stacks: []result.Stack{
			{Frames: "start_thread;do_command;dispatch;btr_cur_search", State: "R", Count: 60},
			{Frames: "start_thread;io_handler;os_aio_wait", State: "S", Count: 30},
			{Frames: "start_thread;purge_coordinator;sleep", Count: 10},
		}, Notes: []string{"2 captures failed"}}
	b := result.Stacks{Source: "pmp", Tool: "eu-stack", Interval: 1, Captures: 10,
		Stacks: []result.Stack{
			{Frames: "start_thread;do_command;dispatch;btr_cur_search", State: "R", Count: 40},
			{Frames: "start_thread;do_command;dispatch;lock_wait", State: "S", Count: 40},
			{Frames: "start_thread;io_handler;os_aio_wait", State: "S", Count: 20},
		}}
	sa := StackSet{Label: "mariadb-10.2.11.demo", Test: "update-one_range=100", Threads: 1, Runs: 6, Stacks: a}
	sb := StackSet{Label: "mariadb-system.demo", Test: "update-one_range=100", Threads: 1, Runs: 6, Stacks: b, Conditions: "open loop"}
	empty := StackSet{Label: "x.y", Test: "scan_range=100", Threads: 1, Runs: 1, Stacks: result.Stacks{Source: "perf", Tool: "perf", Interval: 0.01}}
	diffs := []StackDiff{{A: sa, B: sb, Diff: stacks.Compare(a, b, 0.01, 5)}, {A: sb, B: empty, Diff: stacks.Compare(b, empty.Stacks, 0.01, 5)}}
	for _, f := range []string{"text", "json"} {
		golden(t, "stacks-top."+f, func(w io.Writer) error { return StackTop(w, []StackSet{sa, sb, empty}, 2, f) })
		golden(t, "stacks-diff."+f, func(w io.Writer) error { return StackDiffs(w, diffs, f) })
	}
}

// TestGoldenMetrics: qpslab metrics in every format it offers, from the
// findings' fixture (one test with per-op figures).
func TestGoldenMetrics(t *testing.T) {
	_, _, sets, _ := findFixture(t, 9.5)
	for _, f := range []string{"text", "md", "csv", "tsv", "json"} {
		golden(t, "metrics."+f, func(w io.Writer) error {
			return MetricsOf(w, sets, "", analysis.ParseCounterChoice([]string{"default"}), f)
		})
	}
}

// TestGoldenStepTables: the Insert Benchmark's step tables (absolute with
// a target row, the best and missed marks; relative) and its
// response-time buckets, text and md, coloured too.
func TestGoldenStepTables(t *testing.T) {
	nan := math.NaN()
	st := analysis.StepTable{Metric: "ips", Threads: 8, Conditions: "rows=1000", Mixed: true,
		Steps: []string{"l.i0", "l.x", "qr100"}, Units: []string{"rows/s", "rows/s", "qps"},
		Labels:  []string{"mariadb-10.2.11.c", "mariadb-10.11.c", "mariadb-11.4.c"},
		Values:  [][]float64{{1000, 50, 120}, {900, 55, 80}, {1100, nan, 99.5}},
		Missed:  [][]bool{{false, false, false}, {false, false, true}, {false, false, false}},
		Targets: []float64{nan, nan, 100}, Best: []int{2, 1, 0}}
	secs := []StepSection{{Title: "Insert and query rates", Table: st, Relative: true}, {Title: "Rates, no target", Table: analysis.StepTable{
		Steps: []string{"l.i0"}, Labels: []string{"a", "b"}, Values: [][]float64{{10}, {12}}, Missed: [][]bool{{true}, {false}}, Targets: []float64{nan}, Best: []int{1}}}}
	bt := []analysis.BucketTable{{Test: "qr100", Threads: 8, Kind: "query", Rows: []analysis.BucketRow{
		{Label: "mariadb-10.2.11.c", Count: 12345, Shares: []float64{50, 40, 9.99, 0.01, 0.0001, 0, 0, 0, 0, 0}, MaxSec: 0.0512},
		{Label: "mariadb-10.11.c", Count: 9, Shares: []float64{0, 100, 0, 0, 0, 0, 0, 0, 0, 0}, MaxSec: nan}}}}
	for _, f := range []string{"text", "md"} {
		for _, colour := range []bool{false, true} {
			name := "steps." + f
			if colour {
				name = "steps-colour." + f
			}
			golden(t, name, func(w io.Writer) error {
				if err := StepTables(w, secs, f, colour); err != nil {
					return err
				}
				return BucketTables(w, bt, f)
			})
		}
	}
}

// TestGoldenSweeps: a concurrency sweep's tables (absolute, then relative,
// a response time whose rise is a loss), text and md, coloured too.
func TestGoldenSweeps(t *testing.T) {
	sw := []analysis.Sweep{{Test: "point-query_range=100", Threads: []int{1, 4, 16}, Labels: []string{"a.c", "b.c"},
		Metrics: []string{"qps", "p99"},
		Values:  [][][]float64{{{1000, 3900, 9000}, {1100, 3500, math.NaN()}}, {{0.5, 1.2, 5090}, {0.45, 1.5, 4000}}}}}
	for _, f := range []string{"text", "md"} {
		for _, colour := range []bool{false, true} {
			name := "sweeps." + f
			if colour {
				name = "sweeps-colour." + f
			}
			golden(t, name, func(w io.Writer) error { return sweepsAs(w, sw, f, colour) })
		}
	}
}

func sweepsAs(w io.Writer, sw []analysis.Sweep, f string, colour bool) error {
	return Sweeps(w, sw, f, colour)
}

// TestGoldenRunTables: a run's summary table, an A/A run's floors and a
// grid's effects (coloured too).
func TestGoldenRunTables(t *testing.T) {
	runs := []result.Run{
		{Build: "mariadb-10.2.11", Config: "demo@0123", Test: "point-query_range=100", Threads: 1, Status: result.OK, Totals: result.Totals{Reported: 4066.25, ReportedUnit: "qps", Errors: 0}},
		{Build: "mariadb-system", Config: "demo@0123", Test: "update-one_range=100", Threads: 4, Status: result.Failed, Error: "the server went away\nwhile it ran: " + strings.Repeat("x", 80)},
		{Build: "mariadb-system", Config: "demo@0123", Test: "l.i1", Threads: 8, Status: result.OK, Totals: result.Totals{Reported: 9000, ReportedUnit: "rows/s", Errors: 3},
			Verdicts: []result.Verdict{{Name: "insert SLA", OK: false, Detail: "8,100 of 9,000 rows/s"}}},
		{Build: "mariadb-system", Config: "demo@0123", Test: "qr100", Threads: 8, Status: result.Saturated, Totals: result.Totals{Reported: 0},
			Verdicts: []result.Verdict{{Name: "rate", OK: false, Detail: "the clients fell behind"}}},
	}
	golden(t, "run-summary.text", func(w io.Writer) error { Summary(w, runs); return nil })
	c := &analysis.Comparison{Base: "mariadb-system.aa-aa1", Others: []string{"mariadb-system.aa-aa2"}, Alpha: 0.05, Confidence: 0.95}
	floors := []analysis.Floor{{Test: "point-query_range=100", Threads: 1, Floor: 0.012, Rel: 1.004, Lo: 0.99, Hi: 1.02, Rounds: 12},
		{Test: "update-one_range=100", Threads: 1, Floor: 0.21, Rel: 0.79, Lo: 0.7, Hi: 0.9, Rounds: 12, Significant: true}}
	golden(t, "floors.text", func(w io.Writer) error { Floors(w, c, floors, "0123456789abcdef0123"); return nil })
	effects := []analysis.Effect{{Setting: "innodb_io_capacity", From: "2000", To: "20000", Pairs: 3, Geomean: []float64{1.1, 1.07, 0.98}, Median: 1.07},
		{Setting: "innodb_flush_neighbors", From: "0", To: "1", Pairs: 2, Geomean: []float64{0.9, 0.94}, Median: 0.92}}
	for _, colour := range []bool{false, true} {
		golden(t, fmt.Sprintf("effects-%v.text", colour), func(w io.Writer) error { Effects(w, effects, colour); return nil })
	}
}

// TestGoldenHTML: the HTML report of the html tests' model, whole.
func TestGoldenHTML(t *testing.T) {
	m := htmlTestModel(t)
	golden(t, "report.html", func(w io.Writer) error { return HTML(w, m) })
}

// The runs the comparison goldens are made from keep the conditions they
// had when result held one list of them for every suite: each run's
// conditions (its suite's, as the suite declares them) are those of the
// same run under a suite qpslab does not know, which is keyed by that
// whole list (internal/workload's TestConditionsAsBefore).
func TestGoldenRunsKeepTheirConditions(t *testing.T) {
	_, _, sets, _ := findFixture(t, 9.5)
	n := 0
	for _, s := range sets {
		for _, r := range s.Runs {
			n++
			unknown := r
			unknown.Suite = "a suite no qpslab registered"
			if now, before := r.Conditions(), unknown.Conditions(); now != before {
				t.Errorf("%s %s: conditions %q, were %q", s.Label, r.Test, now, before)
			}
		}
	}
	if n == 0 {
		t.Fatal("the fixture has no runs")
	}
}
