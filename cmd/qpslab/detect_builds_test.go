package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// The demo's question, 10.2.11 against 10.11 with repeats, on real runs:
// testdata/detect holds the results file of qpslab run sysbench with
// mariadb-10.2.11 and mariadb-system (10.11.19) interleaved, 6 tests and
// the load, 5 repeats (README.md there). Two builds are too few for change
// points, so detect compares them by their runs: one verdict per test,
// with compare's verdict on the same runs beside it (its p-value), and
// where the two answers differ the line says so.
func TestDetectDemoStore(t *testing.T) {
	h := newHome(t)
	if r := qpslab(t, h, "import", "results", filepath.Join("testdata", "detect", "mariadb-10.2.11-vs-10.11.json")); r.code != 0 {
		t.Fatalf("import: exit %d %s", r.code, r.stderr)
	}
	tests := []string{"load", "update-index_range=100", "read-only_range=100", "point-query_range=100", "hot-points_range=100", "scan_range=100", "insert_range=100"}
	r := qpslab(t, h, "detect")
	if r.code != 0 {
		t.Fatalf("detect: exit %d %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != len(tests)+1 {
		t.Fatalf("detect: %d lines, want a verdict per test and a count:\n%s", len(lines), r.stdout)
	}
	regressions := 0
	for _, test := range tests {
		n := 0
		for _, l := range lines {
			if !strings.Contains(l, " "+test+" thr=") {
				continue
			}
			n++
			verdict := false
			for _, v := range []string{"regression", "improvement", "no significant change"} {
				verdict = verdict || strings.Contains(l, ": "+v+" between mariadb-10.2.11 10.2.11 and mariadb-system 10.11.19: ")
			}
			if !verdict || !strings.Contains(l, "5 runs each, p=") || !strings.Contains(l, "% confidence)") {
				t.Errorf("%s: %q", test, l)
			}
			// Student's t and compare's rank test agree on these runs, or
			// the line says compare's answer.
			if strings.Contains(l, ": regression between") || strings.Contains(l, ": improvement between") {
				if !strings.Contains(l, "; compare says ") {
					t.Logf("%s: both call it: %q", test, l)
				}
			}
			if strings.Contains(l, ": regression between") {
				regressions++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d verdicts, want 1:\n%s", test, n, r.stdout)
		}
	}
	if !strings.Contains(lines[len(lines)-1], "no change points in 7 series; neighbouring builds compared by their runs in 7 series (Student's t on their logarithms, α 0.05)") {
		t.Errorf("count line: %q", lines[len(lines)-1])
	}

	// compare's verdict beside each is compare's own.
	r = qpslab(t, h, "detect", "--format", "json")
	var d struct {
		Builds []struct {
			Test       string
			Kind       string
			PValue     float64
			Confidence float64
			Tested     bool
			Newest     bool
			Compare    struct {
				Kind string
				P    float64
			}
			Note string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || len(d.Builds) != len(tests) {
		t.Fatalf("detect --format json: %v %s", err, r.stdout)
	}
	r = qpslab(t, h, "compare", "mariadb-10.2.11.default", "mariadb-system.default", "--format", "json")
	var c struct {
		Rows []struct {
			Test   string
			Others []struct{ P float64 }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil || len(c.Rows) != len(tests) {
		t.Fatalf("compare --format json: %v %s", err, r.stdout)
	}
	for _, b := range d.Builds {
		if !b.Tested || !b.Newest || !(b.PValue > 0 && b.PValue <= 1) || math.Abs(b.Confidence-(1-b.PValue)) > 1e-12 {
			t.Errorf("%+v", b)
		}
		for _, row := range c.Rows {
			if row.Test == b.Test && math.Abs(row.Others[0].P-b.Compare.P) > 1e-12 {
				t.Errorf("%s: detect's compare p %g, compare p %g", b.Test, b.Compare.P, row.Others[0].P)
			}
		}
		called := b.Kind == "regression" || b.Kind == "improvement"
		if compareCalls := b.Compare.Kind == "worse" || b.Compare.Kind == "better"; called != compareCalls && !strings.HasPrefix(b.Note, "compare says ") {
			t.Errorf("%s: detect %s, compare %s, and no note: %+v", b.Test, b.Kind, b.Compare.Kind, b)
		}
	}

	// A CI summary, and the gate's status matches the verdicts.
	r = qpslab(t, h, "detect", "--format", "markdown", "--fail-on", "regression")
	if !strings.HasPrefix(r.stdout, "### qpslab detect\n") || strings.Count(r.stdout, "| sysbench ") != len(tests) || !strings.Contains(r.stdout, "**Gate ") {
		t.Errorf("detect --format markdown:\n%s", r.stdout)
	}
	if want := map[bool]int{true: 3, false: 0}[regressions > 0]; r.code != want {
		t.Errorf("--fail-on regression with %d regressions: exit %d, want %d: %s", regressions, r.code, want, r.stderr)
	}
}

// storeRuns puts runs in h's store.
func storeRuns(t *testing.T, h home.Home, runs []result.Run) {
	t.Helper()
	st, err := store.Open(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Import(context.Background(), runs, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
}

// buildRuns makes repeats of one test on one build: QPS qps[i] for repeat
// i, and p99 following it.
func buildRuns(test, version string, start time.Time, qps ...float64) []result.Run {
	var out []result.Run
	for i, q := range qps {
		out = append(out, result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: test, Build: "ma" + version, Flavor: "mariadb",
			Version: version, Config: "default@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: start.Add(time.Duration(i) * time.Minute),
			Totals: result.Totals{Reported: q, ReportedUnit: "qps", QPS: q, Response: result.Latency{Count: 100, P99: 1e6 / q}}})
	}
	return out
}

// With a single run per build, detect says it cannot tell; with three runs
// each, Student's t on their runs calls a 20 % drop (compare's rank test
// cannot call three runs against three, and the line says so), and the
// gate fails on it.
func TestDetectFewBuildsRuns(t *testing.T) {
	h := newHome(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var runs []result.Run
	runs = append(runs, buildRuns("point-query_range=100", "10.2.1", t0, 1000)...)
	runs = append(runs, buildRuns("point-query_range=100", "10.2.2", t0.Add(time.Hour), 800)...)
	runs = append(runs, buildRuns("update-index_range=100", "10.2.1", t0, 1000, 1010, 990)...)
	runs = append(runs, buildRuns("update-index_range=100", "10.2.2", t0.Add(time.Hour), 800, 810, 790)...)
	storeRuns(t, h, runs)
	r := qpslab(t, h, "detect")
	if r.code != 0 ||
		!strings.Contains(r.stdout, "point-query_range=100 thr=1 config=default qps: cannot tell between ma10.2.1 10.2.1 and ma10.2.2 10.2.2: -20.0% (1000 → 800, 1 run each): one run per build") ||
		!strings.Contains(r.stdout, "update-index_range=100 thr=1 config=default qps: regression between ma10.2.1 10.2.1 and ma10.2.2 10.2.2: -20.0% (1000 → 800, 3 runs each, p=") ||
		!strings.Contains(r.stdout, "; compare says cannot tell: 3 runs each: too few for the Mann-Whitney test") ||
		!strings.Contains(r.stdout, "1 regression, 1 cannot tell") {
		t.Errorf("detect: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := qpslab(t, h, "detect", "--fail-on", "regression"); r.code != 3 || !strings.Contains(r.stderr, "regression in the newest build: sysbench update-index_range=100") {
		t.Errorf("--fail-on: exit %d %s", r.code, r.stderr)
	}
}

// The CI gate over a few builds: exit status 3 and one line per regression
// when the newest build brings one of at least the threshold; a regression
// between older builds, or one under the threshold, passes.
func TestDetectGateFewBuilds(t *testing.T) {
	h := newHome(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	noise := func(level float64) []float64 {
		return []float64{level * 1.004, level * 0.997, level * 1.001, level * 0.995, level * 1.003}
	}
	var runs []result.Run
	for i, v := range []string{"10.2.1", "10.2.2", "10.2.3"} {
		at := t0.Add(time.Duration(i) * time.Hour)
		// point-query drops 12 % in the newest build; update-index dropped
		// 12 % a build before and stays; insert is flat.
		runs = append(runs, buildRuns("point-query_range=100", v, at, noise([]float64{1000, 1000, 880}[i])...)...)
		runs = append(runs, buildRuns("update-index_range=100", v, at, noise([]float64{1000, 880, 880}[i])...)...)
		runs = append(runs, buildRuns("insert_range=100", v, at, noise(500)...)...)
	}
	storeRuns(t, h, runs)
	r := qpslab(t, h, "detect", "--metric", "qps,p99", "--fail-on", "regression:5%")
	if r.code != 3 {
		t.Fatalf("--fail-on regression:5%%: exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
	}
	errLines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(errLines) != 3 ||
		!strings.HasPrefix(errLines[0], "regression in the newest build: sysbench point-query_range=100 thr=1 config=default qps: regression between ma10.2.2 10.2.2 and ma10.2.3 10.2.3: -12.") ||
		!strings.HasPrefix(errLines[1], "regression in the newest build: sysbench point-query_range=100 thr=1 config=default p99: regression between ma10.2.2 10.2.2 and ma10.2.3 10.2.3: +13.") ||
		errLines[2] != "qpslab: --fail-on regression:5%: failed: 2 regression(s) of 5% or more in the newest build" {
		t.Errorf("gate lines:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "update-index_range=100 thr=1 config=default qps: regression between ma10.2.1 10.2.1 and ma10.2.2 10.2.2") ||
		!strings.Contains(r.stdout, "update-index_range=100 thr=1 config=default qps: no significant change between ma10.2.2 10.2.2 and ma10.2.3 10.2.3") {
		t.Errorf("detect:\n%s", r.stdout)
	}
	if r := qpslab(t, h, "detect", "--fail-on", "regression:15%"); r.code != 0 || !strings.Contains(r.stderr, "--fail-on regression:15%: passed: no regression of 15% or more in the newest build") {
		t.Errorf("--fail-on regression:15%%: exit %d %s", r.code, r.stderr)
	}
	r = qpslab(t, h, "detect", "--fail-on", "regression", "--format", "markdown")
	if r.code != 3 || !strings.Contains(r.stdout, "**Gate failed** (`--fail-on regression`): 1 regression(s) in the newest build.") ||
		!strings.Contains(r.stdout, "| sysbench point-query_range=100 thr=1 config=default qps | ma10.2.2 10.2.2 | ma10.2.3 10.2.3 | regression | -12.") {
		t.Errorf("--format markdown: exit %d\n%s", r.code, r.stdout)
	}
	for _, bad := range []string{"regresion", "regression:5", "regression:x%", "improvement"} {
		if r := qpslab(t, h, "detect", "--fail-on", bad); r.code != 1 || !strings.Contains(r.stderr, "regression:N%") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("--fail-on %s: exit %d %q", bad, r.code, r.stderr)
		}
	}
}

// The gate over a long history read with --input: a regression fails it on
// the build whose point establishes it (three points at the new level),
// and no more on later builds (it is no longer new).
func TestDetectGateInput(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	write := func(name string, after int) string {
		var b strings.Builder
		b.WriteString("time,commit,qps\n")
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < 60+after; i++ {
			q := 1000.0
			if i >= 60 {
				q = 880
			}
			q *= 1 + 0.004*math.Sin(float64(i)*1.7)
			fmt.Fprintf(&b, "%s,c%03d,%.1f\n", t0.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), i, q)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	r := qpslab(t, h, "detect", "--input", write("nightly.csv", 3), "--fail-on", "regression:5%")
	if r.code != 3 || !strings.Contains(r.stderr, "regression in the newest build: nightly qps: -12.") || !strings.Contains(r.stderr, "arrived in commit c060 at 2026-01-03 12:00:00, after commit c059") {
		t.Errorf("a regression established by the newest point: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = qpslab(t, h, "detect", "--input", write("nightly.csv", 10), "--fail-on", "regression:5%")
	if r.code != 0 || !strings.Contains(r.stdout, "nightly qps: regression -12.") || !strings.Contains(r.stderr, "passed") {
		t.Errorf("a regression established before the newest point: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = qpslab(t, h, "detect", "--input", write("nightly.csv", 2), "--fail-on", "regression:5%")
	if r.code != 0 || !strings.Contains(r.stdout, "no change points in 1 series") {
		t.Errorf("two points at the new level (fewer than --min-segment): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Two builds measured side by side (paired slices of one plan), whose
// rounds move together within a repeat: by its rounds alone a test's
// 15 % gain looks certain, but compare pools the write tests, finds that
// the repeats carry a variance of their own and judges each test by its
// repeats, which cannot tell it. detect's verdict on the two builds is
// compare's own (the update-index_range=100: compare 1.33 [0.66,
// 2.69] undecided, detect "improvement, p = 0.006").
func TestDetectPairedIsCompare(t *testing.T) {
	h := newHome(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(59, 2))
	tests := []string{"update-index_range=100", "update-nonindex_range=100", "insert_range=100", "delete_range=100", "update-one_range=100", "update-inlist_range=100"}
	var runs []result.Run
	for i, test := range tests {
		shift := []float64{1 + 0.2*r.NormFloat64(), 1 + 0.2*r.NormFloat64(), 1 + 0.2*r.NormFloat64()}
		for j, v := range []string{"10.11.1", "10.11.2"} {
			q := 1000.0 + 10*float64(i)
			if j == 1 {
				q *= 1.15
			}
			run := buildRuns(test, v, t0.Add(time.Duration(2*i+j)*time.Minute), q)[0]
			run.Plan, run.Pairing, run.Params = "20260101T000000-p", result.PairedSlices, map[string]string{"writes": "true"}
			for k := 0; k < 12; k++ {
				rep := k/4 + 1
				x := q * (1 + 0.005*r.NormFloat64())
				if j == 1 {
					x *= shift[rep-1] // the other build's repeats move together
				}
				run.Rounds = append(run.Rounds, result.Round{Repeat: rep, Round: k%4 + 1, Started: run.Started.Add(time.Duration(k) * time.Second), Seconds: 0.25, Value: x})
			}
			runs = append(runs, run)
		}
	}
	storeRuns(t, h, runs)
	rd := qpslab(t, h, "detect", "--format", "json")
	var d struct {
		Builds []struct {
			Test, Kind, Method, Why string
			Compare                 struct {
				Kind       string
				Rel, Lo, P float64
			}
		}
	}
	if err := json.Unmarshal([]byte(rd.stdout), &d); err != nil || len(d.Builds) != len(tests) {
		t.Fatalf("detect --format json: %v %s %s", err, rd.stdout, rd.stderr)
	}
	rc := qpslab(t, h, "compare", "ma10.11.1.default", "ma10.11.2.default", "--format", "json")
	var c struct {
		Rows []struct {
			Test   string
			Others []struct {
				Verdict struct {
					Kind       string
					Rel, Lo, P float64
					Pool       string
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(rc.stdout), &c); err != nil || len(c.Rows) != len(tests) {
		t.Fatalf("compare --format json: %v %s %s", err, rc.stdout, rc.stderr)
	}
	undecided := 0
	for _, b := range d.Builds {
		for _, row := range c.Rows {
			if row.Test != b.Test {
				continue
			}
			v := row.Others[0].Verdict
			if b.Method != "paired" || b.Compare.Kind != v.Kind || b.Compare.Rel != v.Rel || b.Compare.Lo != v.Lo || b.Compare.P != v.P {
				t.Errorf("%s: detect %+v, compare %+v", b.Test, b, v)
			}
			switch v.Kind {
			case "better":
				if b.Kind != "improvement" {
					t.Errorf("%s: compare better, detect %s", b.Test, b.Kind)
				}
			case "same":
				undecided++
				if b.Kind != "no significant change" || !strings.Contains(b.Why, "[") {
					t.Errorf("%s: compare undecided, detect %s (%s)", b.Test, b.Kind, b.Why)
				}
			}
			t.Logf("%s: compare %s %.2f (pool %s); detect %s %s", b.Test, v.Kind, v.Rel, v.Pool, b.Kind, b.Why)
		}
	}
	if undecided == 0 {
		t.Errorf("no test undecided by compare: the case this test is for did not arise")
	}
}
