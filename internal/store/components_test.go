package store

import (
	"math"
	"path/filepath"
	"testing"
	"time"
)

// Migration 17 adds the variance components to a store the previous
// release wrote (testdata/release-93393be.db, migration 16): its runs read
// back as before; components are kept per host, suite, test and kind of
// comparison, read back by host and suite, and replaced by a newer
// measurement of the same; a non-finite one is refused and nothing of its
// batch is stored.
func TestComponentsOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-93393be.db"), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := runsOf(t, s, Filter{})
	if len(before) == 0 {
		t.Fatal("the release's store holds no runs")
	}
	componentsRoundTrip(t, s)
	if after := runsOf(t, s, Filter{}); len(after) != len(before) {
		t.Errorf("%d runs before the migration, %d after", len(before), len(after))
	}
}

func componentsRoundTrip(t *testing.T, s *Store) {
	t.Helper()
	if cs, err := s.Components(ctx, "h1", "sysbench"); err != nil || len(cs) != 0 {
		t.Fatalf("a new store has components %v (%v)", cs, err)
	}
	t0 := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	c := VarianceComponents{HostID: "h1", Suite: "sysbench", Test: "update-index_range=100", Threads: 1, Conditions: "loop=closed", Kind: ComponentsAB,
		Pool: "writes", Slice: 0.25, Within: 0.21, Between: 0.1, Rounds: 24, Repeats: 6, Plan: "p1", Measured: t0}
	aa := c
	aa.Kind, aa.Between, aa.Within = ComponentsAA, 0, 0.19
	other := c
	other.HostID = "h2"
	if err := s.SaveComponents(ctx, []VarianceComponents{c, aa, other}); err != nil {
		t.Fatal(err)
	}
	newer := c
	newer.Between, newer.Plan, newer.Measured = 0.12, "p2", t0.Add(time.Hour)
	if err := s.SaveComponents(ctx, []VarianceComponents{newer}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []VarianceComponents{
		{HostID: "h1", Suite: "sysbench", Test: "x", Kind: ComponentsAB, Slice: 0.25, Within: math.Inf(1)},
		{HostID: "h1", Suite: "sysbench", Test: "x", Kind: ComponentsAB, Slice: 0.25, Within: 0.2, Between: math.NaN()},
		{HostID: "h1", Suite: "sysbench", Test: "x", Kind: ComponentsAB, Slice: 0, Within: 0.2},
		{HostID: "h1", Suite: "sysbench", Test: "x", Kind: "b/a", Slice: 0.25, Within: 0.2},
	} {
		if err := s.SaveComponents(ctx, []VarianceComponents{newer, bad}); err == nil {
			t.Errorf("%+v was stored", bad)
		}
	}
	got, err := s.Components(ctx, "h1", "sysbench")
	if err != nil || len(got) != 2 {
		t.Fatalf("components of h1: %+v (%v)", got, err)
	}
	if a := got[0]; a.Kind != ComponentsAA || a.Within != 0.19 {
		t.Errorf("the A/A's: %+v", a)
	}
	if b := got[1]; b.Kind != ComponentsAB || b.Between != 0.12 || b.Plan != "p2" || !b.Measured.Equal(newer.Measured) || b.Pool != "writes" || b.Slice != 0.25 || b.Repeats != 6 {
		t.Errorf("the A/B's: %+v", b)
	}
	if cs, err := s.Components(ctx, "h1", "ibench"); err != nil || len(cs) != 0 {
		t.Errorf("another suite's: %v (%v)", cs, err)
	}
}
