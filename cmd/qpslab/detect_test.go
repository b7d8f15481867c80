package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// Twelve builds of one test in a store, out of version order by time; QPS
// drops 20 % from 10.2.7 on, and p99 rises with it. detect names the build
// where the regression arrived; export (Otava CSV, in version order with
// the runs' own times) and --input give the same answer.
func TestDetectAndExport(t *testing.T) {
	h := newHome(t)
	st, err := store.Open(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	noise := []float64{3, -2, 1, -4, 2, 0, -1, 4, -3, 1, 2, -2}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var runs []result.Run
	for i := 0; i < 12; i++ {
		v := fmt.Sprintf("10.2.%d", i+1)
		q := 1000 + noise[i]
		if i >= 6 {
			q = 800 + noise[i]
		}
		runs = append(runs, result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "update-index_range=100", Build: "ma" + v, Flavor: "mariadb",
			Version: v, Config: "default@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: t0.Add(time.Duration(12-i) * time.Hour),
			Totals: result.Totals{Reported: q, ReportedUnit: "qps", QPS: q, Response: result.Latency{Count: 100, P99: 1e6 / q}}})
	}
	if _, err := st.Import(context.Background(), runs, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r := qpslab(t, h, "detect", "--metric", "qps,p99")
	if r.code != 0 {
		t.Fatalf("detect: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "update-index_range=100 thr=1 config=default qps: regression -20.") ||
		!strings.Contains(r.stdout, "arrived in ma10.2.7 10.2.7, after ma10.2.6 10.2.6") ||
		!strings.Contains(r.stdout, "p99: regression +2") || !strings.Contains(r.stdout, "2 change point(s) in 2 series") {
		t.Errorf("detect:\n%s", r.stdout)
	}
	if r := qpslab(t, h, "detect", "--test", "point-*"); r.code == 0 {
		t.Errorf("no series, yet exit 0: %s", r.stdout)
	}
	r = qpslab(t, h, "detect", "--format", "json", "--min-magnitude", "0.3")
	var got struct {
		Series       int               `json:"series"`
		ChangePoints []json.RawMessage `json:"change_points"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil || got.Series != 1 || len(got.ChangePoints) != 0 {
		t.Errorf("a 20 %% change passed --min-magnitude 0.3: %v %s %s", err, r.stdout, r.stderr)
	}
	// The change arrived between 10.2.6 and 10.2.7 at 95 %: the interval is
	// that one build.
	r = qpslab(t, h, "detect", "--format", "json")
	var one struct {
		ChangePoints []struct {
			Index            int
			Earliest, Latest struct{ Build string }
			Last, New        bool
		} `json:"change_points"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &one); err != nil || len(one.ChangePoints) != 1 || one.ChangePoints[0].Index != 6 ||
		one.ChangePoints[0].Earliest.Build != "ma10.2.7" || one.ChangePoints[0].Latest.Build != "ma10.2.7" || !one.ChangePoints[0].Last || one.ChangePoints[0].New {
		t.Errorf("detect --format json: %v %s", err, r.stdout)
	}
	// Per-test settings override the flags for the tests they match.
	os.WriteFile(filepath.Join(h.Root, "detect.yaml"), []byte("tests:\n  - match: \"update-*\"\n    min_magnitude: 0.5\n"), 0o644)
	if r := qpslab(t, h, "detect"); r.code != 0 || !strings.Contains(r.stdout, "no change points in 1 series") {
		t.Errorf("detect.yaml override: %s %s", r.stdout, r.stderr)
	}
	os.Remove(filepath.Join(h.Root, "detect.yaml"))

	dir := t.TempDir()
	r = qpslab(t, h, "export", "otava-csv", dir, "--metric", "qps,p99")
	if r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	csvs, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(csvs) != 1 {
		t.Fatalf("exported %v", csvs)
	}
	r = qpslab(t, h, "detect", "--input", csvs[0], "--metric", "qps")
	if r.code != 0 || !strings.Contains(r.stdout, "qps: regression -20.") || !strings.Contains(r.stdout, "arrived in ma10.2.7") {
		t.Errorf("detect --input the Otava CSV:\n%s%s", r.stdout, r.stderr)
	}
	// The rows keep the builds' own times, which fall as the versions rise:
	// Nyrkiö, which orders by time, is refused rather than given others.
	if b, _ := os.ReadFile(csvs[0]); !strings.Contains(string(b), "2026-01-01 12:00:00 +0000,ma10.2.1,10.2.1,") {
		t.Errorf("the first row is not 10.2.1 at its own time:\n%s", b)
	}
	r = qpslab(t, h, "export", "nyrkio-json", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "build ma10.2.2 10.2.2 ran before ma10.2.1 10.2.1") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("export nyrkio-json of builds run out of version order: exit %d %q", r.code, r.stderr)
	}
	for _, bad := range [][]string{{"detect", "--pvalue", "2"}, {"detect", "--metric", "qpz"}, {"export", "xml", dir}, {"detect", "--input", "nosuch.csv"}} {
		if r := qpslab(t, h, bad...); r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d %q", bad, r.code, r.stderr)
		}
	}
}

// --input refuses the flags that select from the store, and a --metric the
// file does not have names the ones it has.
func TestDetectInputErrors(t *testing.T) {
	h := newHome(t)
	f := filepath.Join(t.TempDir(), "h.csv")
	os.WriteFile(f, []byte("time,commit,tput\n1,a,10\n2,b,11\n3,c,10\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"detect", "--input", f, "--test", "x*"}, "--test selects results in the store"},
		{[]string{"detect", "--input", f, "--metric", "p99"}, "has tput"},
		{[]string{"detect", "--time-column", "t"}, "--time-column is for --input"},
		{[]string{"detect", "--threads", "-1"}, "--threads -1"},
		{[]string{"compare", "a.b", "c.d", "--threads", "-2"}, "--threads -2"},
		{[]string{"demo", "--secs", "0"}, "\"--secs\" flag: 0 is zero: give a duration above 0"},
		{[]string{"demo", "--secs", "nan"}, "\"--secs\" flag: nan is not a finite number"},
		{[]string{"demo", "--rows", "-5"}, "--rows"},
		{[]string{"detect", "--window", "0"}, "--window 0"},
		{[]string{"server", "start", "mariadb-system", "default", "--port", "99999"}, "--port 99999"},
	} {
		r := qpslab(t, h, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
	// Three points are too few for any change point: it says how many it needs.
	if r := qpslab(t, h, "detect", "--input", f); r.code != 0 || !strings.Contains(r.stderr, "fewer than the 6 points a change point needs") {
		t.Errorf("a short series: exit %d %q", r.code, r.stderr)
	}
	os.WriteFile(filepath.Join(h.Root, "detect.yaml"), []byte("tests:\n  - match: \"x*\"\n    pvalue: 2\n"), 0o644)
	if r := qpslab(t, h, "detect", "--input", f); r.code == 0 || !strings.Contains(r.stderr, "detect.yaml") {
		t.Errorf("a bad per-test pvalue: exit %d %q", r.code, r.stderr)
	}
}
