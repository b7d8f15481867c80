package main_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// InnoDB against MyRocks on MariaDB 10.11 in one interleaved command: the
// runs alternate engines in each repeat, each is recorded with its engine
// under its own label, the run ends with the comparison and the hardware
// tables of both, and compare, metrics and labels read them back apart.
// Without a config that loads MyRocks, nothing runs and one line says
// which config does.
func TestRunEnginesInterleaved(t *testing.T) {
	h := newHome(t)
	out := filepath.Join(t.TempDir(), "r.json")
	args := append([]string{"run", "sysbench", "--build", "mariadb-system", "--config", "myrocks", "--engine", "innodb,rocksdb",
		"--repeat", "2", "--tests", "point-query_range=100,update-index_range=100,read-write_range=100", "--out", out}, quick...)
	r := qpslab(t, h, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, run := range f.Runs {
		if run.Status != result.OK {
			t.Errorf("%s %s: %s %s", run.Label(), run.Test, run.Status, run.Error)
		}
		if run.Test == "load" {
			order = append(order, run.Params["repeat"]+" "+run.Label())
		}
	}
	// Both engines' servers stay up for the whole run (test-level
	// interleaving): each repeat starts from the tables as loaded (these
	// are small, so each repeat reloads them), and every test's slices
	// alternate between them in each repeat.
	slices.Sort(order)
	if got := strings.Join(order, ", "); got != "1 mariadb-system.myrocks, 1 mariadb-system.myrocks:rocksdb, 2 mariadb-system.myrocks, 2 mariadb-system.myrocks:rocksdb" {
		t.Errorf("the loads were %s, want each engine's once in each repeat", got)
	}
	sliced := map[string]int{}
	for _, run := range f.Runs {
		if run.Pairing == result.PairedSlices && len(run.Rounds) > 0 {
			sliced[run.Label()]++
		}
	}
	if sliced["mariadb-system.myrocks"] != 6 || sliced["mariadb-system.myrocks:rocksdb"] != 6 {
		t.Errorf("sliced runs per label: %v, want 6 each (3 tests, 2 repeats)", sliced)
	}
	for _, want := range []string{
		"sysbench: 1 build(s) × 1 config(s) × 2 engines × 2 repeat(s)",
		"label mariadb-system.myrocks, label mariadb-system.myrocks:rocksdb",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, want := range []string{
		"myrocks:rocksdb", // the table's CONFIG column
		"Comparison with mariadb-system.myrocks, of this run's runs (qpslab compare mariadb-system.myrocks mariadb-system.myrocks:rocksdb judges every stored run of these labels)",
		"update-index_range=100",
		"Hardware cost per operation, per test (qpslab metrics mariadb-system.myrocks mariadb-system.myrocks:rocksdb)",
		"cpu/o",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	cmp := qpslab(t, h, "compare", "mariadb-system.myrocks:innodb", "mariadb-system.myrocks:RocksDB")
	if cmp.code != 0 || !strings.Contains(cmp.stdout, "mariadb-system.myrocks:rocksdb") || !strings.Contains(cmp.stdout, "point-query_range=100") {
		t.Errorf("compare of the two engines: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	if strings.Contains(cmp.stdout, "engine=") {
		t.Errorf("compare mixed the engines' runs:\n%s", cmp.stdout)
	}
	labels := qpslab(t, h, "labels")
	if !strings.Contains(labels.stdout, "mariadb-system.myrocks ") || !strings.Contains(labels.stdout, "mariadb-system.myrocks:rocksdb ") {
		t.Errorf("labels:\n%s", labels.stdout)
	}
	// The dashboard lists each run under its own label, with its engine:
	// the API's list of runs, the runs page and each run's page.
	srv := startServe(t, h)
	status, body := httpDo(t, http.DefaultClient, "GET", srv.url+"/api/v1/runs?limit=1000&test=point-query_range%3D100", "", "", nil)
	var list struct {
		Runs []struct{ ID, Label, Engine string }
	}
	if err := json.Unmarshal([]byte(body), &list); status != http.StatusOK || err != nil {
		t.Fatalf("/api/v1/runs: %d %v %s", status, err, body)
	}
	byLabel := map[string]int{}
	for _, ri := range list.Runs {
		byLabel[ri.Label+" "+ri.Engine]++
		status, page := httpDo(t, http.DefaultClient, "GET", srv.url+"/runs/"+ri.ID, "", "", nil)
		if status != http.StatusOK || !strings.Contains(page, `title="`+ri.Label+`"`) {
			t.Errorf("the page of run %s does not show its label %s (%d)", ri.ID, ri.Label, status)
		}
	}
	if byLabel["mariadb-system.myrocks innodb"] != 2 || byLabel["mariadb-system.myrocks:rocksdb rocksdb"] != 2 || len(byLabel) != 2 {
		t.Errorf("/api/v1/runs of point-query_range=100: %v, want 2 runs of each engine under its label", byLabel)
	}
	if status, page := httpDo(t, http.DefaultClient, "GET", srv.url+"/runs?test=point-query_range%3D100", "", "", nil); status != http.StatusOK || !strings.Contains(page, `title="mariadb-system.myrocks:rocksdb"`) {
		t.Errorf("/runs does not list the MyRocks runs under mariadb-system.myrocks:rocksdb (%d)", status)
	}

	// Without MyRocks in the config: one line, nothing stored.
	bad := qpslab(t, h, append([]string{"run", "sysbench", "--build", "mariadb-system", "--engine", "rocksdb", "--tests", "point-query_range=100"}, quick...)...)
	if bad.code != 1 || !strings.Contains(bad.stderr, "has no storage engine rocksdb") || !strings.Contains(bad.stderr, "--config myrocks") {
		t.Errorf("a run of MyRocks without it: exit %d: %s", bad.code, bad.stderr)
	}
	if l := qpslab(t, h, "labels"); strings.Contains(l.stdout, "mariadb-system.default") {
		t.Errorf("the refused run stored results:\n%s", l.stdout)
	}
}
