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

// pgbench's select-only on PostgreSQL with two configs, interleaved and
// repeated, from the command line: the init runs once per label, the
// script set is the test, its statement an operation of its own, and
// compare pairs the labels' rounds.
func TestRunScriptCompare(t *testing.T) {
	h := newHome(t)
	cfg := filepath.Join(t.TempDir(), "small.conf")
	if err := os.WriteFile(cfg, []byte("shared_buffers = 64MB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := qpslab(t, h, "configs", "add", "small", cfg); r.code != 0 {
		t.Fatalf("configs add: exit %d %s", r.code, r.stderr)
	}
	r := qpslab(t, h, "run", "script", "--builtin", "select-only", "--build", "postgres-system", "--config", "default,small",
		"--threads", "2", "--secs", "1", "--warmup", "0", "--repeat", "2", "--seed", "42", "--out", filepath.Join(t.TempDir(), "r.json"))
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	st, err := store.Open(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []string{"default", "small"} {
		runs, err := st.Runs(context.Background(), store.Filter{Build: "postgres-system", Config: c, Test: "select-only"})
		if err != nil || len(runs) != 2 {
			t.Fatalf("%s: %d runs of select-only (%v)", c, len(runs), err)
		}
		for _, run := range runs {
			if run.Suite != "script" || run.Totals.ReportedUnit != "transactions/s" || run.Totals.Reported <= 0 || run.Seed == 0 {
				t.Errorf("%s: %s %s %v %s seed %d", c, run.Suite, run.Test, run.Totals.Reported, run.Totals.ReportedUnit, run.Seed)
			}
			for _, f := range []string{"client_cpu_us/stmt", "failed%", "retries/tx"} {
				m, _ := result.Lookup(f)
				if v, ok := m.Of(run); !ok || (f == "client_cpu_us/stmt") != (v > 0) {
					t.Errorf("%s: %s %v %v", c, f, v, ok)
				}
			}
			if o, ok := run.Totals.Op("select-only_1"); !ok || o.Count != run.Totals.Events {
				t.Errorf("%s: the statement's operation %+v, %d events", c, run.Totals.Ops, run.Totals.Events)
			}
		}
		init, err := st.Runs(context.Background(), store.Filter{Build: "postgres-system", Config: c, Test: "init"})
		if err != nil || len(init) != 1 || init[0].Totals.Rows != 100011 {
			t.Errorf("%s: init runs %d (%v)", c, len(init), err)
		}
	}
	cmp := qpslab(t, h, "compare", "postgres-system.default", "postgres-system.small")
	if cmp.code != 0 || !strings.Contains(cmp.stdout, "select-only") || !strings.Contains(cmp.stdout, "geomean col-1 (postgres-system.small)") {
		t.Errorf("compare: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	t.Log(cmp.stdout)
}
