package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	_ "github.com/qpslab/qpslab/internal/workload" // the figures' registry
)

// TPC-C on MariaDB with two configs, interleaved and repeated, from the
// command line: the load runs once per label, the test's slices alternate
// (bounded by events: it writes), every transaction is an operation of its
// own, the figures and the 90th-percentile verdicts are there, and compare
// pairs the labels' rounds with a verdict.
func TestRunTPCCCompare(t *testing.T) {
	h := newHome(t)
	cfg := filepath.Join(t.TempDir(), "lazy.cnf")
	if err := os.WriteFile(cfg, []byte("[mysqld]\ninnodb_flush_log_at_trx_commit = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := qpslab(t, h, "configs", "add", "lazy", cfg); r.code != 0 {
		t.Fatalf("configs add: exit %d %s", r.code, r.stderr)
	}
	r := qpslab(t, h, "run", "tpcc", "--warehouses", "1", "--build", "mariadb-system", "--config", "default,lazy",
		"--threads", "2", "--secs", "2", "--warmup", "0", "--repeat", "2", "--seed", "42",
		// Reload, not --restore auto: auto takes a snapshot where that measured faster, which a loaded machine can make it.
		"--restore", "reload", "--out", filepath.Join(t.TempDir(), "r.json"))
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	st, err := store.Open(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []string{"default", "lazy"} {
		runs, err := st.Runs(context.Background(), store.Filter{Build: "mariadb-system", Config: c, Test: "tpcc"})
		if err != nil || len(runs) != 2 {
			t.Fatalf("%s: %d runs of tpcc (%v)", c, len(runs), err)
		}
		for _, run := range runs {
			if run.Suite != "tpcc" || run.Totals.ReportedUnit != "new-orders/s" || run.Totals.Reported <= 0 || run.Pairing == "" {
				t.Errorf("%s: %s %s %v %s pairing %q", c, run.Suite, run.Test, run.Totals.Reported, run.Totals.ReportedUnit, run.Pairing)
			}
			for _, f := range []string{"NOPM", "TPM", "new-order.p90", "new-order.p99.9", "payment/s", "failed%", "retries/tx", "cpu/o"} {
				m, ok := result.Lookup(f)
				if !ok {
					t.Fatalf("no figure %s", f)
				}
				if v, ok := m.Of(run); !ok || (f != "failed%" && f != "retries/tx" && v <= 0) {
					t.Errorf("%s: %s %v %v", c, f, v, ok)
				}
			}
			if nopm, _ := result.Lookup("NOPM"); true {
				v, _ := nopm.Of(run)
				if d := v - 60*run.Totals.Reported; d > 1e-6*v || d < -1e-6*v {
					t.Errorf("%s: NOPM %v is not 60 × the headline %v", c, v, run.Totals.Reported)
				}
			}
			if len(run.Verdicts) == 0 || !strings.Contains(run.Verdicts[0].Name, "90th percentile") {
				t.Errorf("%s: verdicts %+v", c, run.Verdicts)
			}
		}
		load, err := st.Runs(context.Background(), store.Filter{Build: "mariadb-system", Config: c, Test: "load"})
		// The second repeat starts from the tables as loaded: loaded again
		// with the same seed (the step Reloads).
		if err != nil || len(load) != 2 || load[0].Totals.Rows < 500000 || load[0].Totals.Rows != load[1].Totals.Rows {
			t.Errorf("%s: load runs %d (%v)", c, len(load), err)
		}
	}
	cmp := qpslab(t, h, "compare", "mariadb-system.default", "mariadb-system.lazy")
	if cmp.code != 0 || !strings.Contains(cmp.stdout, "tpcc") || !strings.Contains(cmp.stdout, "geomean col-1 (mariadb-system.lazy)") {
		t.Errorf("compare: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	t.Log(cmp.stdout)
}
