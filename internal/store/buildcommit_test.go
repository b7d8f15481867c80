package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// testdata/release-86cc443.db was written by a release before migration
// 15: its builds read back with no commit, and a run of a build compiled
// from a commit records the build's commit, commit time and flags.
// The same on testdata/release-28a017a.db, written by the release before
// this one (migration 14).
func TestBuildCommitOnStoreOfTheLastRelease(t *testing.T) {
	for _, fixture := range []string{"release-86cc443.db", "release-28a017a.db"} {
		t.Run(fixture, func(t *testing.T) { testBuildCommitOn(t, fixture) })
	}
}

func testBuildCommitOn(t *testing.T, fixture string) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", fixture), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := runsOf(t, s, Filter{})
	if len(before) == 0 {
		t.Fatal("the release's store holds no runs")
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM builds WHERE "commit" <> '' OR commit_time <> '' OR flags <> ''`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("old builds with a commit: %d, %v", n, err)
	}
	buildOf := func(name string) (c, at, flags string) {
		t.Helper()
		if err := s.db.QueryRowContext(ctx, s.q(`SELECT "commit", commit_time, flags FROM builds WHERE name = ?`), name).Scan(&c, &at, &flags); err != nil {
			t.Fatal(err)
		}
		return
	}
	r := finished(meta("point-query", 1), result.OK, 1000, 2)
	r.Build, r.Flavor, r.Version = "pg1518_240723_2ee061c2", "postgres", "15.18"
	r.Params = map[string]string{"commit": "2ee061c2aabb", "commit_time": "2024-07-23T12:00:00Z", "build_flags": "CFLAGS=-O2"}
	w := begin(t, s, r)
	if err := w.Done(ctx, r); err != nil {
		t.Fatal(err)
	}
	if c, at, f := buildOf(r.Build); c != "2ee061c2aabb" || at != "2024-07-23T12:00:00Z" || f != "CFLAGS=-O2" {
		t.Errorf("build row: %q %q %q", c, at, f)
	}
	// A later run of the name at another commit (compiled again with
	// --replace) records its commit; an older run of the first commit,
	// stored after it, does not take it back.
	r2 := meta("point-query", 2)
	r2.Build, r2.Flavor, r2.Version = r.Build, "postgres", "15.18"
	r2.Params = map[string]string{"commit": "ffffffff", "commit_time": "2025-01-01T00:00:00Z", "build_flags": "CFLAGS=-O3"}
	r2.Started = r.Started.Add(time.Hour)
	r2 = finished(r2, result.OK, 900, 2)
	if err := begin(t, s, r2).Done(ctx, r2); err != nil {
		t.Fatal(err)
	}
	if c, at, f := buildOf(r.Build); c != "ffffffff" || at != "2025-01-01T00:00:00Z" || f != "CFLAGS=-O3" {
		t.Errorf("after a run at another commit: %q %q %q", c, at, f)
	}
	r3 := meta("point-query", 3)
	r3.Build, r3.Flavor, r3.Version, r3.Params = r.Build, "postgres", "15.18", r.Params
	r3.Started = r.Started.Add(time.Minute)
	r3 = finished(r3, result.OK, 900, 2)
	if err := begin(t, s, r3).Done(ctx, r3); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := buildOf(r.Build); c != "ffffffff" {
		t.Errorf("an older run took the commit back: %q", c)
	}
	if c, _, _ := buildOf(before[0].Build); c != "" {
		t.Errorf("an old build gained a commit: %q", c)
	}
	if after := runsOf(t, s, Filter{}); len(after) != len(before)+3 {
		t.Errorf("%d runs, want %d", len(after), len(before)+3)
	}
}
