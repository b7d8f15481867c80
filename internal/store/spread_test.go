package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// Migration 18 adds the spread runs' tables and the runs' parts to a
// store the previous release wrote (testdata/release-c3525cf.db,
// migration 17): its runs read back as before, without parts; a run merged
// from two client hosts keeps each host's part.
func TestSpreadOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-c3525cf.db"), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := runsOf(t, s, Filter{})
	if len(before) == 0 {
		t.Fatal("the release's store holds no runs")
	}
	for _, r := range before {
		if len(r.Parts) != 0 {
			t.Errorf("%s: parts %+v in a run of the last release", r.Test, r.Parts)
		}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM spreads`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("spreads: %d rows, %v", n, err)
	}
	r := before[len(before)-1]
	r.Plan = "spread-1"
	r.Parts = []result.Part{
		{Host: "load-a", Threads: 2, Events: 100, Reported: 50, P99: 900, ClientCPUUsOp: 12.5, ClientCPU: 40, Status: result.OK},
		{Host: "load-b", Threads: 2, Events: 80, Reported: 40, P99: 1200, NoClientCPU: true, Status: result.OK},
	}
	r.Started = time.Now().UTC()
	w := begin(t, s, r)
	if err := w.Done(ctx, r); err != nil {
		t.Fatal(err)
	}
	var got *result.Run
	for _, x := range runsOf(t, s, Filter{}) {
		if x.Plan == "spread-1" {
			got = &x
		}
	}
	if got == nil || len(got.Parts) != 2 || got.Parts[0] != r.Parts[0] || got.Parts[1] != r.Parts[1] {
		t.Fatalf("the merged run's parts read back as %+v", got)
	}
	if after := runsOf(t, s, Filter{}); len(after) != len(before)+1 {
		t.Errorf("%d runs before, %d after one more", len(before), len(after))
	}
}
