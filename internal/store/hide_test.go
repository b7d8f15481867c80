package store

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testdata/release-7fbc4be-runs.db was written by the release before migration
// 12 (commit 7fbc4be): qpslab import mytools of the reference folder in
// internal/importer/testdata (label my8043_rel_o2nofp.z12a_c8r32, five
// runs) and qpslab import results of one paired run with three samples
// and two rounds (label paired-build.default). It opens and migrates, its
// runs are visible, and they hide, unhide and delete with the audit.
func TestHideOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-7fbc4be-runs.db"), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	curate(t, s)
}

// curate hides, unhides and deletes the paired run of the last release's
// store in s, checking every read path and the audit.
func curate(t *testing.T, s *Store) {
	t.Helper()
	all := runsOf(t, s, Filter{})
	if len(all) != 6 {
		t.Fatalf("%d runs, want 6", len(all))
	}
	list, _, err := s.RunList(ctx, RunQuery{Build: "paired-build"})
	if err != nil || len(list) != 1 {
		t.Fatalf("%d runs of paired-build, %v", len(list), err)
	}
	id := list[0].ID
	gen0, _ := s.Generation(ctx)
	at := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)

	// Hide: gone from every read.
	done, err := s.Curate(ctx, Hide, []string{id}, "token 0123456789ab (alice)", at)
	if err != nil || len(done) != 1 || done[0].Label != "paired-build.default" || done[0].Test == "" {
		t.Fatalf("hide: %+v, %v", done, err)
	}
	visible := func() (runs, labels, listed, tests int, gen string) {
		t.Helper()
		runs = len(runsOf(t, s, Filter{}))
		ls, err := s.Labels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		labels = len(ls)
		_, listed, err = s.RunList(ctx, RunQuery{})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := s.Tests(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ts {
			tests += x.Runs
		}
		gen, _ = s.Generation(ctx)
		return
	}
	runs, labels, listed, tests, gen1 := visible()
	if runs != 5 || labels != 1 || listed != 5 || tests != 5 || gen1 == gen0 {
		t.Errorf("hidden: %d runs, %d labels, %d listed, %d in tests, generation %s (was %s); want 5, 1, 5, 5 and a new one", runs, labels, listed, tests, gen1, gen0)
	}
	if rs := runsOf(t, s, Filter{ID: id}); len(rs) != 0 {
		t.Errorf("the hidden run read by its id")
	}
	// Unhide: back.
	if _, err := s.Curate(ctx, Unhide, []string{id}, "cli bob", at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	runs, labels, listed, tests, gen2 := visible()
	if runs != 6 || labels != 2 || listed != 6 || tests != 6 || gen2 == gen1 {
		t.Errorf("unhidden: %d runs, %d labels, %d listed, %d in tests, generation %s; want 6, 2, 6, 6 and a new one", runs, labels, listed, tests, gen2)
	}
	// An unknown id refuses the whole call: the known one before it is
	// not deleted.
	_, err = s.Curate(ctx, Delete, []string{id, "no-such-run"}, "cli bob", at)
	var nr *NoRunError
	if !errors.As(err, &nr) || nr.ID != "no-such-run" {
		t.Fatalf("unknown id: %v", err)
	}
	if rs := runsOf(t, s, Filter{ID: id}); len(rs) != 1 {
		t.Fatal("a refused delete deleted")
	}
	// Delete: the run and every row of it.
	if _, err := s.Curate(ctx, Delete, []string{id}, "cli bob", at.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"runs WHERE id", "samples WHERE run_id", "metrics WHERE run_id", "rounds WHERE run_id", "stacks WHERE run_id"} {
		var n int
		if err := s.db.QueryRowContext(ctx, s.q(`SELECT count(*) FROM `+table+` = ?`), id).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows left (%v)", table, n, err)
		}
	}
	if _, err := s.Curate(ctx, Unhide, []string{id}, "cli bob", at); !errors.As(err, &nr) {
		t.Errorf("unhide a deleted run: %v", err)
	}
	log, err := s.AuditLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ action, who string }{{Hide, "token 0123456789ab (alice)"}, {Unhide, "cli bob"}, {Delete, "cli bob"}}
	if len(log) != len(want) {
		t.Fatalf("audit: %+v", log)
	}
	for i, w := range want {
		if log[i].Action != w.action || log[i].Who != w.who || log[i].RunID != id || log[i].Label != "paired-build.default" || log[i].At.IsZero() {
			t.Errorf("audit line %d: %+v, want %s by %s", i, log[i], w.action, w.who)
		}
	}
}

// hideOnPostgres hides and unhides a run of s (PostgreSQL): its label's
// runs drop by one and come back, with the audit.
func hideOnPostgres(t *testing.T, s *Store) {
	t.Helper()
	list, _, err := s.RunList(ctx, RunQuery{})
	if err != nil || len(list) == 0 {
		t.Fatalf("%d runs, %v", len(list), err)
	}
	before := len(list)
	if _, err := s.Curate(ctx, Hide, []string{list[0].ID}, "cli pg", time.Now()); err != nil {
		t.Fatal(err)
	}
	if after, _, _ := s.RunList(ctx, RunQuery{}); len(after) != before-1 {
		t.Errorf("hidden on PostgreSQL: %d runs, want %d", len(after), before-1)
	}
	if _, err := s.Curate(ctx, Unhide, []string{list[0].ID}, "cli pg", time.Now()); err != nil {
		t.Fatal(err)
	}
	if after, _, _ := s.RunList(ctx, RunQuery{}); len(after) != before {
		t.Errorf("unhidden on PostgreSQL: %d runs, want %d", len(after), before)
	}
	if log, err := s.AuditLog(ctx); err != nil || len(log) != 2 {
		t.Errorf("audit on PostgreSQL: %+v, %v", log, err)
	}
}

// Every read of results goes through visibleRuns: the only statements that
// name the runs table itself are the writes, Curate's own, the import's
// check for runs already stored, the upgrade of old rows, the reaping of
// dead writers, the build row's commit (written from the newest run of
// the build, hidden or not: it describes the build) and the fleet's count
// of a job's runs. A new read of runs
// must read visibleRuns, or be added here with why.
func TestReadsLeaveHiddenRunsOut(t *testing.T) {
	allowed := map[string]int{"hide.go": 3, "store.go": 4, "fleet.go": 1}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?i)\b(FROM|JOIN)\s+runs\b`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(re.FindAll(b, -1)); n != allowed[f] {
			t.Errorf("%s reads the runs table %d times, %d allowed: read visibleRuns, so that hidden runs are left out", f, n, allowed[f])
		}
	}
}
