package store

import (
	"math"
	"path/filepath"
	"testing"
	"time"
)

// Migration 16 adds the bisections and their steps to a store written by
// an earlier release (testdata/release-7fbc4be.db, migration 11): its runs
// read back as they were; a bisection is stored, found again by its
// question, its steps logged in order (an unmeasured step's figures NaN,
// as NULL), its end stored; an id that is none says so.
//
// testdata/release-28a017a.db was written by the release before this one
// (migration 14): release-86cc443.db migrated by it, with one sysbench
// import added (qpslab import sysbench … --label pg1518_rel.default).
func TestBisectionsOnStoreOfTheLastRelease(t *testing.T) {
	for fixture, runs := range map[string]int{"release-7fbc4be.db": 2, "release-28a017a.db": 7} {
		t.Run(fixture, func(t *testing.T) { testBisectionsOn(t, fixture, runs) })
	}
}

func testBisectionsOn(t *testing.T, fixture string, nruns int) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", fixture), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if runs, err := s.Runs(ctx, Filter{}); err != nil || len(runs) != nruns {
		t.Fatalf("%d runs, want the %d stored: %v", len(runs), nruns, err)
	}
	if bs, err := s.Bisections(ctx); err != nil || len(bs) != 0 {
		t.Fatalf("bisections of an upgraded store: %v %v", bs, err)
	}
	b, err := s.StartBisection(ctx, Bisection{Src: "/src/pg", Good: "aaaa", Bad: "bbbb", Suite: "sysbench", Test: "point-query", Metric: "qps",
		Threshold: 0.05, Params: map[string]string{"config": "default"}, State: BisectRunning})
	if err != nil || b.ID != 1 {
		t.Fatalf("start: %+v %v", b, err)
	}
	ct := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	if _, err := s.AddBisectStep(ctx, b.ID, BisectStep{Commit: "cccc", CommitTime: ct, Base: "aaaa", Build: "pg_cccc", Plan: "p1", Kind: "bad", Rel: 0.75, Lo: 0.7, Hi: 0.8, Rounds: 6}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.AddBisectStep(ctx, b.ID, BisectStep{Commit: "dddd", Kind: "skipped", Rel: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Note: "does not build"}); err != nil || st.Seq != 2 {
		t.Fatalf("second step: %+v %v", st, err)
	}
	b.State, b.Result, b.Ended = BisectFound, "first bad commit: cccc", time.Now().UTC()
	if err := s.SetBisection(ctx, b); err != nil {
		t.Fatal(err)
	}
	found, ok, err := s.FindBisection(ctx, Bisection{Src: "/src/pg", Good: "aaaa", Bad: "bbbb", Suite: "sysbench", Test: "point-query"})
	if err != nil || !ok || found.ID != 1 || found.Params["config"] != "default" || found.State != BisectFound || found.Ended.IsZero() {
		t.Fatalf("find: %+v %v %v", found, ok, err)
	}
	if _, ok, _ := s.FindBisection(ctx, Bisection{Src: "/src/pg", Good: "aaaa", Bad: "bbbb", Suite: "sysbench", Test: "other"}); ok {
		t.Error("found a bisection of another test")
	}
	got, steps, err := s.Bisection(ctx, 1)
	if err != nil || got.Result != "first bad commit: cccc" || len(steps) != 2 {
		t.Fatalf("read: %+v %+v %v", got, steps, err)
	}
	if st := steps[0]; st.Seq != 1 || st.Rel != 0.75 || st.Lo != 0.7 || st.Rounds != 6 || !st.CommitTime.Equal(ct) || st.Build != "pg_cccc" || st.Base != "aaaa" {
		t.Errorf("step 1: %+v", st)
	}
	if st := steps[1]; st.Kind != "skipped" || !math.IsNaN(st.Rel) || !math.IsNaN(st.Hi) || st.Note != "does not build" {
		t.Errorf("step 2: %+v", st)
	}
	if _, _, err := s.Bisection(ctx, 7); err == nil || err.Error() != "bisection 7: no such bisection (qpslab bisect status lists them)" {
		t.Errorf("an id that is none: %v", err)
	}
}
