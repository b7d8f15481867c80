package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// The runs of every release's store keep the conditions they had when
// result held one list of them for every suite: each run's conditions now
// (its suite's, as the suite declares them) are those of the same run
// under a suite qpslab does not know, which is keyed by that whole list
// (internal/workload's TestConditionsAsBefore holds it to the list).
func TestReleaseStoresKeepTheirConditions(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join("testdata", "release-*.db"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no release store in testdata (%v)", err)
	}
	n := 0
	for _, fixture := range fixtures {
		path := filepath.Join(t.TempDir(), filepath.Base(fixture))
		copyFile(t, fixture, path)
		s, err := Open(ctx, path, "")
		if err != nil {
			t.Fatalf("%s: %v", fixture, err)
		}
		runs, err := s.Runs(ctx, Filter{Status: []string{result.OK, result.Failed, result.Aborted, result.Saturated, "running"}})
		s.Close()
		if err != nil {
			t.Fatalf("%s: %v", fixture, err)
		}
		for _, r := range runs {
			n++
			unknown := r
			unknown.Suite = "a suite no qpslab registered"
			if now, before := r.Conditions(), unknown.Conditions(); now != before {
				t.Errorf("%s: %s %s %s at %d: conditions %q, were %q", fixture, r.Suite, r.Test, r.Build, r.Threads, now, before)
			}
			if !strings.Contains(r.Conditions(), "loop=") {
				t.Errorf("%s: %s %s: conditions %q", fixture, r.Suite, r.Test, r.Conditions())
			}
		}
		os.Remove(path)
	}
	if n == 0 {
		t.Fatal("the release stores hold no run")
	}
	t.Logf("%d runs of %d release stores", n, len(fixtures))
}
