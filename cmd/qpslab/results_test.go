package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

// interleaved says that the two labels' runs of one test (two repeats
// each) ran repeat by repeat: both repeat-1 runs started before either
// repeat-2 run, and each run's repeat is the one its turn gives. Within a
// repeat the labels' order is counterbalanced (A B, then B A), and a
// sliced test's runs are in progress together, so no order within a
// repeat is asked for.
func interleaved(a, b []result.Run) bool {
	if len(a) != 2 || len(b) != 2 {
		return false
	}
	for _, r := range [][]result.Run{a, b} {
		if r[0].Params["repeat"] != "1" || r[1].Params["repeat"] != "2" {
			return false
		}
	}
	last1 := a[0].Started
	if b[0].Started.After(last1) {
		last1 = b[0].Started
	}
	return last1.Before(a[1].Started) && last1.Before(b[1].Started)
}

// Two builds run interleaved with repeats; compare, metrics, labels and the
// HTML report read them back from the store.
func TestCompareMetricsReport(t *testing.T) {
	h := newHome(t)
	testenv.Build(t, h, "mariadb-10.2.11")
	args := append([]string{"run", "sysbench", "--build", "mariadb-10.2.11", "--build", "mariadb-system", "--repeat", "2",
		"--tests", "point-query_range=100,update-index_range=100,scan_range=100", "--out", filepath.Join(t.TempDir(), "r.json")}, quick...)
	if r := qpslab(t, h, args...); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	// The builds ran A B A B.
	st, err := store.Open(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, _ := st.Runs(context.Background(), store.Filter{Build: "mariadb-10.2.11", Config: "default", Test: "update-index_range=100", Samples: true})
	b, _ := st.Runs(context.Background(), store.Filter{Build: "mariadb-system", Config: "default", Test: "update-index_range=100"})
	if len(a) != 2 || len(b) != 2 || !interleaved(a, b) {
		t.Errorf("not interleaved, both builds in each repeat: %d and %d runs", len(a), len(b))
	}
	if len(a) > 0 && (len(a[0].Samples) == 0 || a[0].HW == nil || a[0].Params["repeat"] != "1") {
		t.Errorf("stored run lacks samples, metrics or params: %+v", a[0])
	}

	r := qpslab(t, h, "compare", "mariadb-10.2.11.default", "mariadb-system.default")
	if r.code != 0 {
		t.Fatalf("compare: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"point-query_range=100", "update-index_range=100", "scan_range=100", "[writes]", "GROUP", "MEDIAN", "STDDEV", "geomean", "or more repeats give one"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("compare lacks %q:\n%s", want, r.stdout)
		}
	}
	r = qpslab(t, h, "compare", "mariadb-10.2.11.default", "mariadb-system.default", "--format", "qps.abs", "--groups", "4")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "col-1 : mariadb-10.2.11.default\ncol-2 : mariadb-system.default\n\ncol-1\tcol-2\n") {
		t.Errorf("qps.abs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = qpslab(t, h, "metrics", "mariadb-10.2.11.default", "mariadb-system.default", "--test", "update-index*")
	if r.code != 0 || !strings.Contains(r.stdout, "cpu/o") || !strings.Contains(r.stdout, "relative to first result") || !strings.Contains(r.stdout, "server_cpu_us/o") {
		t.Errorf("metrics: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = qpslab(t, h, "labels")
	if r.code != 0 || !strings.Contains(r.stdout, "mariadb-10.2.11.default") || !strings.Contains(r.stdout, "mariadb-system.default") {
		t.Errorf("labels: exit %d\n%s", r.code, r.stdout)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	r = qpslab(t, h, "report", "mariadb-10.2.11.default", "mariadb-system.default", "--html", html)
	b2, err := os.ReadFile(html)
	if r.code != 0 || err != nil || !strings.Contains(string(b2), "update-index_range=100") || strings.Count(string(b2), "<svg") < 4 {
		t.Errorf("report: exit %d %v %s", r.code, err, r.stderr)
	}
	for _, bad := range [][]string{
		{"compare", "nodot", "mariadb-system.default"},
		{"compare", "mariadb-10.2.11.default", "nosuch.default"},
		{"compare", "mariadb-10.2.11.default", "mariadb-system.default", "--groups", "3"},
		{"compare", "mariadb-10.2.11.default", "mariadb-system.default", "--format", "xml"},
		{"compare", "mariadb-10.2.11.default", "mariadb-system.default", "--threads", "64"},
		{"report", "mariadb-10.2.11.default", "mariadb-system.default"},
	} {
		r := qpslab(t, h, bad...)
		if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.HasPrefix(r.stderr, "qpslab: ") {
			t.Errorf("%v: exit %d, want one error line: %q", bad, r.code, r.stderr)
		}
	}
}

// Imports land under their label and compare like runs; a bad file is one
// error line naming the file and line, and nothing of the batch is stored.
func TestImport(t *testing.T) {
	h := newHome(t)
	td := "../../internal/importer/testdata"
	r := qpslab(t, h, "import", "mytools", filepath.Join(td, "mytools/x.my8043_rel_o2nofp.z12a_c8r32.pk1"), "--label", "my8043_rel_o2nofp.z12a_c8r32")
	if r.code != 0 || !strings.Contains(r.stdout, "imported") {
		t.Fatalf("import mytools: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	r = qpslab(t, h, "import", "sysbench", filepath.Join(td, "sysbench-1.0.20-point-select.txt"), "--label", "ma101107.cz11a", "--test", "point-query_range=100")
	if r.code != 0 {
		t.Fatalf("import sysbench: exit %d %s", r.code, r.stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nnot a report\n"), 0o644)
	r = qpslab(t, h, "import", "sysbench", filepath.Join(td, "sysbench-1.0.20-point-select.txt"), bad, "--label", "ma110401.cz11a", "--test", "point-query_range=100")
	if r.code == 0 || !strings.Contains(r.stderr, "bad.txt:") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("a bad file: exit %d %q", r.code, r.stderr)
	}
	r = qpslab(t, h, "labels")
	if !strings.Contains(r.stdout, "my8043_rel_o2nofp.z12a_c8r32") || !strings.Contains(r.stdout, "ma101107.cz11a") || strings.Contains(r.stdout, "ma110401") {
		t.Errorf("labels after the imports (ma110401 must not be there):\n%s", r.stdout)
	}
	r = qpslab(t, h, "metrics", "my8043_rel_o2nofp.z12a_c8r32", "--test", "point-query.pre*")
	if r.code != 0 || !strings.Contains(r.stdout, "0.000597") {
		t.Errorf("metrics of an import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A results file of qpslab run imports whole.
	rf := filepath.Join(t.TempDir(), "r.json")
	result.Write(rf, []result.Run{{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "point-query_range=100", Build: "mariadb-system",
		Version: "10.11.14", Config: "default@0123456789ab", Threads: 1, Status: result.OK, Totals: result.Totals{Reported: 1000, ReportedUnit: "qps"}}})
	if r := qpslab(t, h, "import", "results", rf); r.code != 0 || !strings.Contains(r.stdout, "mariadb-system.default") {
		t.Errorf("import results: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range [][]string{
		{"import", "results", bad},
		{"import", "sysbench", bad, "--test", "point-query_range=100"},
		{"import", "sysbench", bad, "--label", "x.y"},
		{"import", "mytools", t.TempDir(), "--label", "x.y"},
	} {
		if r := qpslab(t, h, bad...); r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d %q", bad, r.code, r.stderr)
		}
	}
}

// Seed 000's hardware table, reproduced from the reference harness's
// folders of seven builds (testdata/seed000/README.md): imported, then
// `qpslab metrics` prints the seed's relative rows.
func TestImportSeedTable(t *testing.T) {
	h := newHome(t)
	builds := []string{"ma100244", "ma100339", "ma100433", "ma100524", "ma100617", "ma101107", "ma110401"}
	var labels []string
	for _, b := range builds {
		label := b + "_rel.cz11a"
		r := qpslab(t, h, "import", "mytools", filepath.Join("testdata", "seed000", label+".pk1"), "--label", label)
		if r.code != 0 {
			t.Fatalf("import %s: exit %d %s", b, r.code, r.stderr)
		}
		labels = append(labels, label)
	}
	r := qpslab(t, h, append([]string{"metrics", "--test", "update-inlist*"}, labels...)...)
	if r.code != 0 {
		t.Fatalf("metrics: exit %d %s", r.code, r.stderr)
	}
	out := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{
		"0.006937 36.076 0 0 90.665 3966 ma100244_rel.cz11a",
		"1.08 0.98 1 1 0.99 0.97 ma100339_rel.cz11a",
		"0.83 1.04 1 1 0.08 1.04 ma100524_rel.cz11a",
		"0.61 0.24 inf inf 0.37 0.97 ma101107_rel.cz11a",
		// an.sh computes no CPU time per op: unknown, not zero.
		"- - - ma110401_rel.cz11a",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lacks %q:\n%s", want, r.stdout)
		}
	}
}

// A PostgreSQL build pair and a config pair each compare in one
// interleaved command: the runs alternate (A B A B), and compare reads them.
func TestPostgresPairsInterleaved(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "small.conf")
	if err := os.WriteFile(cfg, []byte("shared_buffers = 64MB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []string{"--tests", "point-query_range=100,update-index_range=100", "--repeat", "2"}
	for _, c := range []struct {
		name       string
		args       []string
		base, next string
		filterA    store.Filter
		filterB    store.Filter
	}{
		{"builds", []string{"--build", "postgres-12.17.0,postgres-system", "--config", "default"}, "postgres-12.17.0.default", "postgres-system.default",
			store.Filter{Build: "postgres-12.17.0", Config: "default"}, store.Filter{Build: "postgres-system", Config: "default"}},
		{"configs", []string{"--build", "postgres-system", "--config", "default,small"}, "postgres-system.default", "postgres-system.small",
			store.Filter{Build: "postgres-system", Config: "default"}, store.Filter{Build: "postgres-system", Config: "small"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHome(t)
			testenv.Build(t, h, "postgres-12.17.0")
			if r := qpslab(t, h, "configs", "add", "small", cfg); r.code != 0 {
				t.Fatalf("configs add: exit %d %s", r.code, r.stderr)
			}
			args := append(append(append([]string{"run", "sysbench"}, c.args...), tests...), quick...)
			if r := qpslab(t, h, append(args, "--out", filepath.Join(t.TempDir(), "r.json"))...); r.code != 0 {
				t.Fatalf("run: exit %d: %s", r.code, r.stderr)
			}
			st, err := store.Open(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			fa, fb := c.filterA, c.filterB
			fa.Test, fb.Test = "update-index_range=100", "update-index_range=100"
			a, err1 := st.Runs(context.Background(), fa)
			b, err2 := st.Runs(context.Background(), fb)
			if err1 != nil || err2 != nil || len(a) != 2 || len(b) != 2 {
				t.Fatalf("%d and %d runs (%v %v)", len(a), len(b), err1, err2)
			}
			if !interleaved(a, b) {
				t.Errorf("not interleaved, both labels in each repeat")
			}
			r := qpslab(t, h, "compare", c.base, c.next)
			if r.code != 0 || !strings.Contains(r.stdout, "update-index_range=100") || !strings.Contains(r.stdout, "geomean col-1 ("+c.next+")") {
				t.Errorf("compare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
