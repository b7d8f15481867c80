package analysis_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// moveTest registers sysbench's layouts with test moved to group in the
// layout named layout, as a corrected layout would (issue 30), and puts
// the shipped ones back when t ends.
func moveTest(t *testing.T, layout, test, group string) {
	t.Helper()
	ls, ok := result.LayoutsOf(sysbench.Name)
	if !ok {
		t.Fatal("sysbench registered no layouts")
	}
	moved := slices.Clone(ls)
	for i, l := range moved {
		if l.Name != layout {
			continue
		}
		m := map[string][]string{}
		for g, tests := range l.Members {
			m[g] = slices.DeleteFunc(slices.Clone(tests), func(x string) bool { return x == test })
		}
		m[group] = append(m[group], test)
		moved[i].Members = m
	}
	prev := result.RegisterLayouts(sysbench.Name, moved)
	t.Cleanup(func() { result.RegisterLayouts(sysbench.Name, prev) })
}

// groupOf is the group of test's row in a comparison of runs with
// themselves, in layout ("" the default).
func groupOf(t *testing.T, runs []result.Run, layout, test string) string {
	t.Helper()
	c, err := analysis.Compare(analysis.Set{Label: "a", Runs: runs}, []analysis.Set{{Label: "b", Runs: runs}}, analysis.Options{Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Rows {
		if r.Test == test {
			return r.Group
		}
	}
	t.Fatalf("no row for %s in %+v", test, c.Rows)
	return ""
}

// A store written by the last release (86cc443) holds point-query.pre in
// point-1 of the five-group layout, as its runs were placed when they ran.
// Once sysbench's registered layout moves the test, the same store, not
// rewritten, shows it in the new group: in the comparison, in its groups'
// summaries, and in the runs the store reads back. Old code grouped by the
// stored placement and kept point-1.
func TestLayoutDecidesGroupsOfAnOldStore(t *testing.T) {
	ctx := context.Background()
	st := openOldStore(t, "release-86cc443.db")
	const pq = "point-query.pre_range=100"
	read := func() []result.Run {
		runs, err := st.Runs(ctx, store.Filter{Suite: sysbench.Name})
		if err != nil || len(runs) == 0 {
			t.Fatalf("%d runs, %v", len(runs), err)
		}
		return runs
	}
	if g := groupOf(t, read(), "", pq); g != sysbench.Point1 {
		t.Fatalf("before the move: %s in %q, want %s (as stored)", pq, g, sysbench.Point1)
	}
	moveTest(t, "5", pq, sysbench.Point2)
	runs := read()
	if g := groupOf(t, runs, "", pq); g != sysbench.Point2 {
		t.Errorf("after the move: %s in %q, want %s: the registered layout decides, not the stored placement", pq, g, sysbench.Point2)
	}
	c, err := analysis.Compare(analysis.Set{Label: "a", Runs: runs}, []analysis.Set{{Label: "b", Runs: runs}}, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, g := range c.Groups {
		groups = append(groups, g.Name)
	}
	if slices.Contains(groups, sysbench.Point1) || !slices.Contains(groups, sysbench.Point2) {
		t.Errorf("summaries by group %v: want point-2 and no point-1 (its one test moved)", groups)
	}
	for _, r := range runs {
		if r.Test != pq {
			continue
		}
		if p, ok := r.Placement("5"); !ok || p.Group != sysbench.Point2 || p.Pos != slices.Index(sysbench.Layout5, sysbench.Point2) {
			t.Errorf("the store reads %s back in %+v, want point-2", pq, r.Groups)
		}
		if p, ok := r.Placement("4"); !ok || p.Group != sysbench.Point {
			t.Errorf("the four-group layout, unchanged, has %s in %+v", pq, p)
		}
	}
}

// An import that brings its own grouping keeps it: a results file whose
// runs carry a placement marked own (it came with the data) is read,
// stored and compared in that group, whatever sysbench's layout says; its
// other placements follow the layout.
func TestImportKeepsItsOwnGrouping(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var runs []result.Run
	for i, test := range []string{"point-query.pre_range=100", "update-index_range=100"} {
		for j, b := range []string{"base", "other"} {
			v := 1000.0 * float64(1+i+j)
			r := result.Run{SchemaVersion: result.SchemaVersion, Suite: sysbench.Name, Test: test, Step: i + 1, Build: b, Flavor: "mariadb", Version: "10.11.1",
				Config: "demo@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Seed: uint64(1 + i), Started: t0.Add(time.Duration(2*i+j) * time.Minute),
				Duration: 2, Totals: result.Totals{Seconds: 2, Events: int64(2 * v), Statements: int64(2 * v), QPS: v, Reported: v, ReportedUnit: "qps", Series: result.SeriesStatements},
				// Placements as a run writes them: derived.
				Groups: []result.Placement{{Layout: "5", Group: "stale", Pos: 9}}}
			if i == 0 {
				r.Groups = []result.Placement{{Layout: "5", Group: "mine", Pos: 0, Own: true}, {Layout: "theirs", Group: "fast", Pos: 0}}
			}
			runs = append(runs, r)
		}
	}
	b, err := json.Marshal(result.File{SchemaVersion: result.SchemaVersion, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "posted.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := result.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(dir, "qpslab.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Import(ctx, f.Runs, store.Meta{Source: "results"}); err != nil {
		t.Fatal(err)
	}
	moveTest(t, "5", "update-index_range=100", sysbench.Point1) // the layout changes after the import
	stored, err := st.Runs(ctx, store.Filter{})
	if err != nil || len(stored) != 4 {
		t.Fatalf("%d runs, %v", len(stored), err)
	}
	var base, other []result.Run
	for _, r := range stored {
		if r.Build == "base" {
			base = append(base, r)
		} else {
			other = append(other, r)
		}
	}
	c, err := analysis.Compare(analysis.Set{Label: "base.demo", Runs: base}, []analysis.Set{{Label: "other.demo", Runs: other}}, analysis.Options{Layout: "5"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range c.Rows {
		got[r.Test] = r.Group
	}
	if got["point-query.pre_range=100"] != "mine" || got["update-index_range=100"] != sysbench.Point1 {
		t.Errorf("groups %v: want the import's own mine for point-query.pre, and the layout's point-1 for update-index (not the stale stored group)", got)
	}
	if c2, err := analysis.Compare(analysis.Set{Label: "base.demo", Runs: base}, []analysis.Set{{Label: "other.demo", Runs: other}}, analysis.Options{Layout: "theirs"}); err != nil || c2.Rows[0].Group != "fast" {
		t.Errorf("a layout sysbench does not register stands as stored: %v", err)
	}
	_, err = analysis.Compare(analysis.Set{Label: "base.demo", Runs: base}, []analysis.Set{{Label: "other.demo", Runs: other}}, analysis.Options{Layout: "seeds"})
	if err == nil || !strings.Contains(err.Error(), "--groups seeds: sysbench's runs are grouped by the layout(s) 5, 4, theirs") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--groups seeds: %v; want one line listing the registered layouts, then the import's", err)
	}
}

// A store written by an older release (da87266) placed scan in range-2,
// the layout of its day; read now, it is in range-1 with the ranges that
// do no aggregation (issue 30), and read-only stays in range-2.
func TestOldStoreShowsTheSeedsGroups(t *testing.T) {
	ctx := context.Background()
	runs, err := openOldStore(t, "release-da87266.db").Runs(ctx, store.Filter{Suite: sysbench.Name})
	if err != nil {
		t.Fatal(err)
	}
	if g := groupOf(t, runs, "5", "scan_range=100"); g != sysbench.Range1 {
		t.Errorf("scan in %q, want range-1", g)
	}
	if g := groupOf(t, runs, "5", "read-only_range=10"); g != sysbench.Range2 {
		t.Errorf("read-only in %q, want range-2", g)
	}
}

// openOldStore opens a copy of a store an older release wrote
// (internal/store/testdata), closed when t ends.
func openOldStore(t *testing.T, name string) *store.Store {
	t.Helper()
	old, err := os.ReadFile(filepath.Join("..", "store", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
