package store

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	_ "github.com/qpslab/qpslab/internal/workload" // the metric registry, as the binary has it
)

// The nine per-op columns of metrics were written and never read.
var oldMetricColumns = []string{"cpu_o", "cs_o", "r_o", "rkb_o", "wkb_o", "o_s", "host_cpu_us_o", "server_cpu_us_o", "client_cpu_us_o"}

// Migration 11 drops the metrics table's write-only columns from a store
// written by the last release (86cc443): each run reads back with every
// figure the columns held, found by the column's name (an alias of the
// figure's one name), and a new run with hardware figures is stored and
// read back.
func TestMetricColumnsDroppedOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-86cc443.db"), path)
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]float64{}
	rows, err := raw.QueryContext(ctx, `SELECT run_id, cpu_o, cs_o, r_o, rkb_o, wkb_o, o_s, host_cpu_us_o, server_cpu_us_o, client_cpu_us_o FROM metrics`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		v := make([]float64, len(oldMetricColumns))
		p := []any{&id}
		for i := range v {
			p = append(p, &v[i])
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		before[id] = v
	}
	rows.Close()
	raw.Close()
	if len(before) == 0 {
		t.Fatal("the release's store has no hardware figures")
	}

	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range oldMetricColumns {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('metrics') WHERE name = ?`, c).Scan(&n); err != nil || n != 0 {
			t.Errorf("column %s still there (%v)", c, err)
		}
	}
	var r result.Run
	for id, v := range before {
		runs, err := s.Runs(ctx, Filter{ID: id})
		if err != nil || len(runs) != 1 {
			t.Fatalf("run %s: %d runs, %v", id, len(runs), err)
		}
		r = runs[0]
		for i, c := range oldMetricColumns {
			m, ok := result.Lookup(c)
			if !ok {
				t.Fatalf("column %s names no figure", c)
			}
			if got, ok := m.Of(r); !ok || got != v[i] {
				t.Errorf("%s %s (was column %s) = %v %v, the column held %v", r.Test, m.Name, c, got, ok, v[i])
			}
		}
	}

	r.HW.ServerCPUUsOp = 123.5
	if got := storeAndRead(t, s, r); got.HW == nil || got.HW.ServerCPUUsOp != 123.5 {
		t.Fatalf("a new run's hardware figures: %+v", got.HW)
	}
}

// storeAndRead stores r as a new run, whole, and reads it back.
func storeAndRead(t *testing.T, s *Store, r result.Run) result.Run {
	t.Helper()
	w, err := s.Begin(ctx, r, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Done(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Runs(ctx, Filter{ID: w.ID()})
	if err != nil || len(got) != 1 {
		t.Fatalf("%d runs, %v", len(got), err)
	}
	return got[0]
}
