package importer

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

var src = Source{Build: "my8043_rel_o2nofp", Config: "z12a_c8r32"}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// check compares named figures with what testdata/README.md says they are.
func check(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func checkParams(t *testing.T, r result.Run, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if r.Params[k] != v {
			t.Errorf("%s: Params[%q] = %q, want %q", r.Test, k, r.Params[k], v)
		}
	}
}

// checkGroups checks an imported run carries the suite's placement of its
// test in both layouts.
func checkGroups(t *testing.T, r result.Run, g5, g4 string) {
	t.Helper()
	p5, ok5 := r.Placement("5")
	p4, ok4 := r.Placement("4")
	if !ok5 || !ok4 || p5.Group != g5 || p4.Group != g4 || r.Suite != "sysbench" {
		t.Errorf("%s: suite %q groups %+v, want %s and %s", r.Test, r.Suite, r.Groups, g5, g4)
	}
}

// Recorded with sysbench 1.0.20 against MariaDB 10.11 (testdata/README.md).
func TestSysbench10PointSelect(t *testing.T) {
	path := filepath.Join("testdata", "sysbench-1.0.20-point-select.txt")
	r, err := Sysbench(ctx, path, src, "point-query_range=100")
	if err != nil {
		t.Fatal(err)
	}
	if r.SchemaVersion != result.SchemaVersion || r.Suite != "sysbench" || r.Test != "point-query_range=100" ||
		r.Build != src.Build || r.Config != src.Config || r.Threads != 4 || r.Status != result.OK || r.Loop != "closed" {
		t.Errorf("run header wrong: %+v", r)
	}
	checkParams(t, r, map[string]string{
		"source": "sysbench-1.0", "file": "sysbench-1.0.20-point-select.txt", "sysbench_version": "1.0.20",
		"range": "100", "name": "point-query", "variant": "", "percentile": "95",
	})
	checkGroups(t, r, "point-1", "point")
	tot := r.Totals
	if tot.Events != 316868 || tot.Statements != 316868 || tot.Errors != 0 || tot.ReportedUnit != "qps" {
		t.Errorf("totals wrong: %+v", tot)
	}
	check(t, "seconds", tot.Seconds, 5.0294)
	check(t, "tps", tot.TPS, 62984.69)
	check(t, "qps", tot.QPS, 62984.69)
	check(t, "reported", tot.Reported, 62984.69)
	if tot.Response.Count != 316868 {
		t.Errorf("response count %d", tot.Response.Count)
	}
	check(t, "min µs", tot.Response.Min, 10)
	check(t, "mean µs", tot.Response.Mean, 60)
	check(t, "max µs", tot.Response.Max, 26510)
	check(t, "p95 µs", tot.Response.P95, 110)
	if tot.Service != tot.Response {
		t.Errorf("closed loop: service %+v should be the response %+v", tot.Service, tot.Response)
	}
	if len(r.Samples) != 4 {
		t.Fatalf("%d samples, want 4", len(r.Samples))
	}
	first, last := r.Samples[0], r.Samples[3]
	if first.Second != 0 || first.Events != 75219 || first.Statements != 75219 || last.Second != 3 || last.Events != 55486 {
		t.Errorf("samples wrong: first %+v last %+v", first, last)
	}
	check(t, "first sample p95", first.Response.P95, 90)
	check(t, "last sample p95", last.Response.P95, 130)
}

func TestSysbench10ReadOnlyCountsBeginCommit(t *testing.T) {
	r, err := Sysbench(ctx, filepath.Join("testdata", "sysbench-1.0.20-read-only.txt"), src, "read-only_range=100")
	if err != nil {
		t.Fatal(err)
	}
	tot := r.Totals
	if tot.Events != 9481 || tot.Statements != 151696 || r.Threads != 2 {
		t.Errorf("events %d statements %d threads %d", tot.Events, tot.Statements, r.Threads)
	}
	check(t, "tps", tot.TPS, 1894.78)
	check(t, "qps", tot.QPS, 30316.47)
	check(t, "reported", tot.Reported, 30316.47)
	check(t, "mean µs", tot.Response.Mean, 1050)
	check(t, "p95 µs", tot.Response.P95, 1550)
	if len(r.Samples) == 0 {
		t.Fatal("no samples, want the intermediate reports'")
	}
	if s := r.Samples[0]; s.Events != 2093 || s.Statements != 33520 {
		t.Errorf("first sample %+v", s)
	}
	checkParams(t, r, map[string]string{"statements_per_event": "16"})
	checkGroups(t, r, "range-2", "range-agg")
}

// Hand-written in sysbench 1.1's format (testdata/README.md).
func TestSysbench11ReadWrite(t *testing.T) {
	r, err := Sysbench(ctx, filepath.Join("testdata", "sysbench-1.1-read-write.txt"), src, "read-write_range=100")
	if err != nil {
		t.Fatal(err)
	}
	checkParams(t, r, map[string]string{"source": "sysbench-1.1", "sysbench_version": "1.1.0-3ceba0b"})
	checkGroups(t, r, "writes", "writes")
	tot := r.Totals
	if tot.Events != 29871 || tot.Statements != 597431 || tot.Errors != 3 || r.Threads != 4 {
		t.Errorf("totals wrong: %+v threads %d", tot, r.Threads)
	}
	check(t, "warmup", r.Warmup, 5)
	check(t, "seconds", tot.Seconds, 30.0015)
	check(t, "tps", tot.TPS, 995.65)
	check(t, "qps", tot.QPS, 19913.37)
	check(t, "min µs", tot.Response.Min, 2510)
	check(t, "mean µs", tot.Response.Mean, 4020)
	check(t, "max µs", tot.Response.Max, 41270)
	check(t, "p95 µs", tot.Response.P95, 5470)
	if len(r.Samples) != 5 {
		t.Fatalf("%d samples, want 5", len(r.Samples))
	}
	// --report-interval=5: each line covers 5 s.
	s0, s1, s4 := r.Samples[0], r.Samples[1], r.Samples[4]
	if s0.Second != 0 || s0.Events != 4951 || s0.Statements != 99018 || s1.Second != 5 || s1.Errors != 3 || s4.Second != 20 {
		t.Errorf("samples wrong: %+v %+v %+v", s0, s1, s4)
	}
	check(t, "sample 0 p95", s0.Response.P95, 5570)
}

func TestSysbenchScanNeedsTableSize(t *testing.T) {
	_, err := Sysbench(ctx, filepath.Join("testdata", "sysbench-1.0.20-point-select.txt"), src, "scan_range=100")
	if err == nil || !strings.Contains(err.Error(), "--table-size=") {
		t.Errorf("want an error asking for the table size, got %v", err)
	}
	// A mytools sb.o starts with its command line, which says it.
	r, err := Sysbench(ctx, filepath.Join(mytoolsDir, "sb.o.scan.range100.pk1.dop1"), src, "scan_range=100")
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.ReportedUnit != "Krows/s" || r.Params["table_size"] != "20000000" {
		t.Errorf("unit %q table_size %q", r.Totals.ReportedUnit, r.Params["table_size"])
	}
	check(t, "scan Krows/s", r.Totals.Reported, 20000000.0/1000/(2890.40/1000))
}

func TestSysbenchUnknownTest(t *testing.T) {
	path := filepath.Join("testdata", "sysbench-1.0.20-point-select.txt")
	for label, want := range map[string]string{
		"point-query_range=10": "<testType>[.<variant>]_range=<R>, and qpslab runs point-query with range 100",
		"point-query":          "<testType>[.<variant>]_range=<R>",
		"nosuch_range=100":     "<testType>[.<variant>]_range=<R>",
	} {
		_, err := Sysbench(ctx, path, src, label)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: want an error naming the file and %q, got %v", label, want, err)
		}
	}
}

// writeLines writes the first n lines of the fixture, with edits (line
// number → new text), to a temporary file.
func writeLines(t *testing.T, fixture string, n int, edits map[int]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if n > 0 {
		lines = lines[:n]
	}
	for i, s := range edits {
		lines[i-1] = s
	}
	p := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSysbenchBadInput(t *testing.T) {
	const fx = "sysbench-1.0.20-point-select.txt" // line 14 is "[ 2s ] …", 23 "transactions:", 24 "queries:", 34 "avg:"
	for _, c := range []struct {
		name  string
		n     int
		edits map[int]string
		want  string // after "import sysbench <path>:"
	}{
		{"cut after transactions", 23, nil, `23: no "queries:" line: is this sysbench run output?`},
		{"cut in the header", 5, nil, `5: no "transactions:" line: is this sysbench run output?`},
		{"not sysbench", 0, map[int]string{1: "hello"}, `43: no "sysbench 1.x" version line: is this sysbench run output?`},
		{"bad rate", 0, map[int]string{24: "    queries:                             316868 (fast per sec.)"},
			`24: cannot read "queries:" line: value "fast" is not a number: fix or remove the file`},
		{"latency overflows", 0, map[int]string{34: "         avg:                                    1e305"},
			`34: cannot read "avg:" line: value "1e305" is out of range (above 1e9): fix or remove the file`},
		{"latency beyond float64", 0, map[int]string{35: "         max:                                    1e400"},
			`35: cannot read "max:" line: value "1e400" is out of range: fix or remove the file`},
		{"count overflows", 0, map[int]string{23: "    transactions:                        99999999999999999999 (62984.69 per sec.)"},
			`23: cannot read "transactions:" line: value "99999999999999999999" is out of range (above 2^63-1): fix or remove the file`},
		{"total count overflows", 0, map[int]string{30: "    total number of events:              99999999999999999999"},
			`30: cannot read "total number of events:" line: value "99999999999999999999" is out of range (above 2^63-1): fix or remove the file`},
		{"negative rate", 0, map[int]string{24: "    queries:                             316868 (-62984.69 per sec.)"},
			`24: cannot read "queries:" line: value "-62984.69" is negative: fix or remove the file`},
		{"negative interval latency", 0, map[int]string{14: "[ 2s ] thds: 4 tps: 65124.64 qps: 65124.64 (r/w/o: 65124.64/0.00/0.00) lat (ms,95%): -0.12 err/s: 0.00 reconn/s: 0.00"},
			`14: cannot read the intermediate report: value "-0.12" is negative: fix or remove the file`},
		{"interval rate overflows", 0, map[int]string{15: "[ 3s ] thds: 4 tps: 6e200 qps: 65488.01 (r/w/o: 65488.01/0.00/0.00) lat (ms,95%): 0.10 err/s: 0.00 reconn/s: 0.00"},
			`15: cannot read the intermediate report: value "6e200" is out of range (above 1e9): fix or remove the file`},
		{"threads overflow", 0, map[int]string{4: "Number of threads: 99999999999999999999"},
			`4: thread count: value "99999999999999999999" is out of range (above 2^63-1): fix or remove the file`},
		{"no threads", 0, map[int]string{4: "Number of threads: 0"},
			`4: thread count: value "0" is out of range (1 to 1000000): fix or remove the file`},
		{"report interval overflows", 0, map[int]string{5: "Report intermediate results every 99999999999 second(s)"},
			`5: value "99999999999" is out of range (above 1e9): fix or remove the file`},
		{"report before its interval", 0, map[int]string{13: "[ 0s ] thds: 4 tps: 75219.38 qps: 75219.38 (r/w/o: 75219.38/0.00/0.00) lat (ms,95%): 0.09 err/s: 0.00 reconn/s: 0.00"},
			`13: the intermediate report at 0s ends before its first interval of 1s: fix or remove the file`},
		{"bad count", 0, map[int]string{24: "    queries:                             many (62984.69 per sec.)"},
			`24: cannot read "queries:" line: want`},
		{"bad interval", 0, map[int]string{14: "[ 2s ] thds: 4 tps: 65124.64 qps: lots"}, `14: cannot read the intermediate report`},
		{"bad latency", 0, map[int]string{34: "         avg:                                    nan"}, `34: cannot read "avg:" line`},
		{"sysbench 0.5", 0, map[int]string{1: "sysbench 0.5:  multi-threaded system evaluation benchmark"}, `1: sysbench 0.5 output: the importer reads sysbench 1.0 and 1.1`},
		{"failed run", 0, map[int]string{14: "FATAL: mysql_drv_query() returned error 2013 (Lost connection to MySQL server during query)"}, `14: sysbench failed: FATAL:`},
		{"two runs", 0, map[int]string{12: "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)"}, `12: a second sysbench version line (the first is line 1)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeLines(t, fx, c.n, c.edits)
			r, err := Sysbench(ctx, p, src, "point-query_range=100")
			want := fmt.Sprintf("import sysbench %s:%s", p, c.want)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("want an error starting %q, got %v", want, err)
			} else if strings.HasSuffix(want, "fix or remove the file") && err.Error() != want {
				t.Errorf("want the error %q, got %q", want, err)
			}
			if r.Test != "" || r.Params != nil {
				t.Errorf("an error must come with no run, got %+v", r)
			}
		})
	}
}

func TestSysbenchMissingFile(t *testing.T) {
	_, err := Sysbench(ctx, filepath.Join(t.TempDir(), "none.txt"), src, "point-query_range=100")
	if err == nil || !strings.Contains(err.Error(), "none.txt") {
		t.Errorf("want an error naming the file, got %v", err)
	}
}
