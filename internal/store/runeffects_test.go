package store

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// Migration 19 adds the A/A plans' run effects to a store the previous
// release wrote (testdata/release-95f89a8-killed.db, migration 18): its
// runs read back as before; effects are kept per host, test and plan, a
// plan's replaced by a newer one of the same plan, a non-finite one
// refused; the lookup gives a test the effects of its runs' host only.
func TestRunEffectsOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-95f89a8-killed.db"), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := runsOf(t, s, Filter{})
	if len(before) == 0 {
		t.Fatal("the release's store holds no runs")
	}
	if es, err := s.RunEffects(ctx); err != nil || len(es) != 0 {
		t.Fatalf("the migrated store has run effects %v (%v)", es, err)
	}
	host := before[0].Host
	id, _ := HostID(host)
	if id == "" {
		t.Fatal("the release's run has no host fingerprint")
	}
	t0 := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	e := RunEffect{HostID: id, Suite: "sysbench", Test: "point-query_range=100", Threads: 1, Conditions: "c", Plan: "p1", LogRatio: 0.01, SE: 0.02, Measured: t0}
	e2, e3, other := e, e, e
	e2.Plan, e2.LogRatio = "p2", -0.03
	e3.Plan, e3.LogRatio = "p3", 0.02
	other.HostID = "elsewhere"
	if err := s.SaveRunEffects(ctx, []RunEffect{e, e2, e3, other}); err != nil {
		t.Fatal(err)
	}
	e.LogRatio = 0.015 // p1 again: replaces
	if err := s.SaveRunEffects(ctx, []RunEffect{e}); err != nil {
		t.Fatal(err)
	}
	bad := e
	bad.Plan, bad.SE = "p4", math.NaN()
	if err := s.SaveRunEffects(ctx, []RunEffect{e2, bad}); err == nil {
		t.Error("a NaN standard error was stored")
	}
	all, err := s.RunEffects(ctx)
	if err != nil || len(all) != 4 {
		t.Fatalf("%d run effects (%v): %+v", len(all), err, all)
	}
	look, err := s.RunEffectsOf(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logs, ses := look("point-query_range=100", 1, "c", []result.Run{{Host: host, Suite: "sysbench"}})
	if len(logs) != 3 || len(ses) != 3 || logs[0] != 0.015 || logs[1] != -0.03 {
		t.Errorf("the host's effects: %v %v", logs, ses)
	}
	if logs, _ := look("point-query_range=100", 1, "c", []result.Run{{Suite: "sysbench"}}); len(logs) != 0 {
		t.Errorf("a run of no host got %v", logs)
	}
	if after := runsOf(t, s, Filter{}); len(after) != len(before) {
		t.Errorf("%d runs before the migration, %d after", len(before), len(after))
	}
}
