package store

import (
	"math"
	"path/filepath"
	"reflect"
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
				Seconds: 0.25, Events: 100 + int64(k), Statements: 100 + int64(k), Value: 400 + float64(k), IdleCPU: 1.5,
				Figures: map[string]float64{"cpu/o": 0.001 * float64(k), "server_cpu_us/o": 50 + float64(rep)}})
		}
	}
	r.Started, r.Seed = t0, 42
	g := storeAndRead(t, s, r)
	if g.Plan != r.Plan || g.Pairing != r.Pairing || len(g.Rounds) != 6 {
		t.Fatalf("read back: plan %q pairing %q, %d rounds", g.Plan, g.Pairing, len(g.Rounds))
	}
	for i, rd := range g.Rounds {
		if want := r.Rounds[i]; !reflect.DeepEqual(rd, want) {
			t.Errorf("round %d: %+v, want %+v", i, rd, want)
		}
	}
}

// Migration 10 adds the noise floor to a store of the last release: a
// floor is kept, read back by its host, and replaced by a newer
// calibration of the same test; a non-finite one is refused and nothing
// is stored.
func TestNoiseOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-86cc443.db"), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fl, err := s.Noise(ctx, ""); err != nil || len(fl) != 0 {
		t.Fatalf("a new store has floors %v (%v)", fl, err)
	}
	t0 := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	f := NoiseFloor{HostID: "h1", Suite: "sysbench", Test: "point-query_range=100", Threads: 1, Conditions: "loop=closed", Metric: "qps",
		Floor: 0.031, Rel: 1.01, Lo: 0.98, Hi: 1.031, Rounds: 8, Pairing: "slices", Plan: "p1", Build: "b", Config: "c", Budget: map[string]string{"read-secs": "1"}, Measured: t0}
	other := f
	other.HostID, other.Floor = "h2", 0.2
	if err := s.SaveNoise(ctx, []NoiseFloor{f, other}); err != nil {
		t.Fatal(err)
	}
	newer := f
	newer.Floor, newer.Plan, newer.Measured = 0.02, "p2", t0.Add(time.Hour)
	if err := s.SaveNoise(ctx, []NoiseFloor{newer}); err != nil {
		t.Fatal(err)
	}
	bad := f
	bad.Test, bad.Floor = "x", math.Inf(1)
	if err := s.SaveNoise(ctx, []NoiseFloor{bad}); err == nil {
		t.Error("an infinite floor was stored")
	}
	got, err := s.Noise(ctx, "h1")
	if err != nil || len(got) != 1 {
		t.Fatalf("floors of h1: %v (%v)", got, err)
	}
	if g := got[0]; g.Floor != 0.02 || g.Plan != "p2" || !g.Measured.Equal(newer.Measured) || g.Budget["read-secs"] != "1" {
		t.Errorf("floor read back: %+v", g)
	}
}
