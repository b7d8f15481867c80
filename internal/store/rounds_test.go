package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// testdata/release-86cc443.db was written by the last release before
// paired runs (commit 86cc443): qpslab run sysbench, two tests and the
// load on MariaDB 10.11, two repeats. Migration 9 adds plans, pairings and
// rounds: the old runs read back unpaired, with nothing lost, and a new
// run's rounds are kept and read back in order.
func TestRoundsOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-86cc443.db"), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != 6 {
		t.Fatalf("%d runs, want the release's 6", len(old))
	}
	for _, r := range old {
		if r.Plan != "" || r.Pairing != "" || len(r.Rounds) != 0 || r.Totals.Reported <= 0 {
			t.Errorf("%s: plan %q pairing %q, %d rounds, reported %v", r.Test, r.Plan, r.Pairing, len(r.Rounds), r.Totals.Reported)
		}
	}
	r := old[1]
	r.Plan, r.Pairing = "20261126T000000-0a0b0c0d", result.PairedSlices
	t0 := time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC)
	for rep := 1; rep <= 2; rep++ {
		for k := 1; k <= 3; k++ {
			r.Rounds = append(r.Rounds, result.Round{Repeat: rep, Round: k, Started: t0.Add(time.Duration(rep*10+k) * time.Second),
				Seconds: 0.25, Events: 100 + int64(k), Statements: 100 + int64(k), Value: 400 + float64(k), IdleCPU: 1.5})
		}
	}
	r.Started, r.Seed = t0, 42
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
	g := got[0]
	if g.Plan != r.Plan || g.Pairing != r.Pairing || len(g.Rounds) != 6 {
		t.Fatalf("read back: plan %q pairing %q, %d rounds", g.Plan, g.Pairing, len(g.Rounds))
	}
	for i, rd := range g.Rounds {
		if want := r.Rounds[i]; rd != want {
			t.Errorf("round %d: %+v, want %+v", i, rd, want)
		}
	}
}
