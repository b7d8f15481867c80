package main_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// The Insert Benchmark at --clients 1,2 on MariaDB, at a tiny size: every
// step runs once at each count, the second pass on tables of its own size,
// and the step tables of the run's output and of the HTML report show both
// counts; a bad list is refused in one line before anything runs.
func TestRunIbenchClients(t *testing.T) {
	h := newHome(t)
	out, html := filepath.Join(t.TempDir(), "r.json"), filepath.Join(t.TempDir(), "r.html")
	r := qpslab(t, h, "run", "ibench", "--build", "mariadb-system", "--clients", "1,2", "--mr1", "0.001", "--mr2", "0.0005",
		"--query-secs", "0.2", "--rates", "100", "--wait-scale", "0", "--out", out, "--html", html)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	var order []string
	for _, run := range f.Runs {
		key := run.Test + "@" + run.Params["clients"]
		ran[key] = true
		order = append(order, key)
		if run.Status != result.OK || run.Params["clients"] != strconv.Itoa(run.Threads) {
			t.Errorf("%s at %d client(s): %s %s, params %v", run.Test, run.Threads, run.Status, run.Error, run.Params)
		}
		wantRows := map[int]string{1: "1000", 2: "2000"}[run.Threads]
		if run.Params["rows"] != wantRows || run.Params["tables"] != strconv.Itoa(run.Threads) {
			t.Errorf("%s at %d client(s): rows %s, tables %s, want %s and %d", run.Test, run.Threads, run.Params["rows"], run.Params["tables"], wantRows, run.Threads)
		}
	}
	for _, s := range []string{"l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100"} {
		for _, n := range []string{"1", "2"} {
			if !ran[s+"@"+n] {
				t.Errorf("%s did not run at %s client(s): %v", s, n, order)
			}
		}
	}
	if got := strings.Join(order, " "); got != "l.i0@1 l.x@1 l.i1@1 l.i2@1 qr100@1 qp100@1 l.i0@2 l.x@2 l.i1@2 l.i2@2 qr100@2 qp100@2" {
		t.Errorf("run order %s: want every step at 1 client, then every step at 2", got)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"1 client(s)", "2 client(s)"} {
		if !strings.Contains(r.stdout, "Throughput: rows/s for the load steps") || !containsLine(r.stdout, "Throughput", n) {
			t.Errorf("the run's step tables lack %s:\n%s", n, r.stdout)
		}
		if !strings.Contains(string(page), n) {
			t.Errorf("the HTML report's step tables lack %s", n)
		}
	}
	for given, want := range map[string]string{"1,1": "--clients 1,1: 1 clients given twice", "1,x": "--clients 1,x: give whole numbers"} {
		b := qpslab(t, h, "run", "ibench", "--build", "mariadb-system", "--clients", given)
		if b.code == 0 || !strings.Contains(b.stderr, want) || strings.Count(strings.TrimSpace(b.stderr), "\n") != 0 {
			t.Errorf("--clients %s: exit %d: %q", given, b.code, b.stderr)
		}
	}
}

// containsLine says whether a line of out holds both a and b.
func containsLine(out, a, b string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, a) && strings.Contains(l, b) {
			return true
		}
	}
	return false
}
