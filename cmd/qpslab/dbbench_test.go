package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// db_bench from the command line on Debian's rocksdb-tools: an option set
// added from a .flags file, two option sets compared in one command
// (several labels: the comparison and the per-op table with rareq-sz), then
// the stored runs through compare, metrics, detect, export and the HTML
// report; a bad option set and a server suite on a rocksdb build fail
// before anything runs, in one line.
func TestDBBench(t *testing.T) {
	h := newHome(t)
	if r := qpslab(t, h, "builds", "list"); !strings.Contains(r.stdout, "rocksdb-system") {
		t.Fatalf("no rocksdb-system (make setup installs rocksdb-tools): %s", r.stdout)
	}
	f := filepath.Join(t.TempDir(), "cra96k.flags")
	os.WriteFile(f, []byte("--compaction_readahead_size=96K\n"), 0o644)
	if r := qpslab(t, h, "configs", "add", "cra96k", f); r.code != 0 || !strings.Contains(r.stdout, "(rocksdb, based on default)") {
		t.Fatalf("configs add: %+v", r)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	r := qpslab(t, h, "run", "db_bench", "--build", "rocksdb-system", "--config", "default,cra96k", "--size", "0.01", "--seconds", "2",
		"--settle-secs", "0", "--tests", "readrandom,overwriteandwait", "--seed", "3", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"Comparison with rocksdb-system.default, of this run's runs (qpslab compare rocksdb-system.default rocksdb-system.cra96k judges every stored run of these labels)", "readrandom.cached", "overwriteandwait.cached",
		"rareq-sz", "wareq-sz", "Hardware cost per operation"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("run lacks %q:\n%s", want, r.stdout)
		}
	}
	res, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 6 {
		t.Errorf("%d runs, want 2 × (fillseq, readrandom, overwriteandwait)", len(res.Runs))
	}
	if !strings.Contains(string(res.Runs[0].Host), `"max_sectors_kb"`) {
		t.Errorf("the fingerprint lacks the storage: %s", res.Runs[0].Host)
	}
	labels := []string{"rocksdb-system.default", "rocksdb-system.cra96k"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{append([]string{"compare"}, labels...), []string{"readrandom.cached", "overwriteandwait.cached", "rocksdb-system.cra96k"}},
		{append([]string{"metrics"}, labels...), []string{"rareq-sz", "overwriteandwait.cached"}},
		{[]string{"detect", "--suite", "db_bench", "--metric", "w_amp,ops_sec"}, []string{"series"}},
		{[]string{"export", "otava-csv", t.TempDir(), "--suite", "db_bench", "--metric", "w_amp"}, nil},
		{append([]string{"report", "--html", filepath.Join(t.TempDir(), "r.html")}, labels...), nil},
	} {
		r := qpslab(t, h, c.args...)
		if r.code != 0 {
			t.Errorf("%s: exit %d: %s", c.args[0], r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s lacks %q:\n%s", c.args[0], w, r.stdout)
			}
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.flags")
	os.WriteFile(bad, []byte("--compaction_readahead_size=96K\n--no_such_flag=1\n"), 0o644)
	qpslab(t, h, "configs", "add", "bad", bad)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "db_bench", "--build", "rocksdb-system", "--config", "bad"}, "config bad: the db_bench of build rocksdb-system has no flag --no_such_flag"},
		{[]string{"run", "sysbench", "--build", "rocksdb-system", "--config", "default"}, "build rocksdb-system is rocksdb, which is no server"},
		{[]string{"run", "db_bench", "--build", "mariadb-system"}, "suite db_bench runs rocksdb builds"},
		{[]string{"run", "db_bench", "--build", "rocksdb-system", "--tcp"}, "unknown flag: --tcp: db_bench does not take it: db_bench runs no server"},
		{[]string{"server", "start", "rocksdb-system", "default"}, "which has no server to start"},
	} {
		r := qpslab(t, h, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// YCSB's workloads on db_bench from the command line (--ycsb): two option
// sets in one run, each workload a stored run named as YCSB's, lined up
// by the run's comparison and by compare, with each operation kind's
// figures (read.p99, update/s) for export; workloadd and an unknown
// workload refused in one line each.
func TestDBBenchYCSB(t *testing.T) {
	h := newHome(t)
	out := filepath.Join(t.TempDir(), "r.json")
	r := qpslab(t, h, "run", "db_bench", "--build", "rocksdb-system", "--config", "default,odirect", "--ycsb", "workloada,workloadc",
		"--size", "0.002", "--seconds", "2", "--seed", "3", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"Comparison with rocksdb-system.default", "workloada.cached", "workloadc.cached", "load.cached"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("run lacks %q:\n%s", want, r.stdout)
		}
	}
	res, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, run := range res.Runs {
		n[run.Test]++
		if run.Role == result.RoleTest && (run.Status != result.OK || run.Totals.Reported <= 0 || len(run.Totals.Ops) == 0) {
			t.Errorf("%s %s: %s, %.0f ops/s, ops %+v", run.Test, run.Config, run.Status, run.Totals.Reported, run.Totals.Ops)
		}
	}
	if n["workloada.cached"] != 2 || n["workloadc.cached"] != 2 || n["load.cached"] != 2 {
		t.Errorf("runs per test: %v", n)
	}
	if r := qpslab(t, h, "compare", "rocksdb-system.default", "rocksdb-system.odirect"); r.code != 0 || !strings.Contains(r.stdout, "workloada.cached") || !strings.Contains(r.stdout, "workloadc.cached") {
		t.Errorf("compare: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	dir := t.TempDir()
	if r := qpslab(t, h, "export", "otava-csv", dir, "--suite", "db_bench", "--metric", "read.p99,update/s"); r.code != 0 {
		t.Errorf("export: exit %d: %s", r.code, r.stderr)
	}
	csvs, _ := filepath.Glob(filepath.Join(dir, "db_bench.workloada.cached.*.csv"))
	for _, f := range csvs {
		b, _ := os.ReadFile(f)
		if !strings.HasPrefix(string(b), "time,build,version,commit,read.p99,update/s\n") {
			t.Errorf("%s: %s", f, b)
		}
	}
	if len(csvs) != 2 {
		t.Errorf("exported %v", csvs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ycsb", "workloadd"}, "--ycsb workloadd: db_bench has no read-latest request distribution"},
		{[]string{"--ycsb", "workloadg"}, "--ycsb workloadg matches no YCSB workload"},
	} {
		oneErrorLine(t, h, append([]string{"run", "db_bench", "--build", "rocksdb-system"}, c.args...), []string{c.want})
	}
}
