package store

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// testdata/release-da87266.db was written by the release before suites
// (commit da87266): a qpslab run sysbench of three tests and the load on
// MariaDB 10.11, and an import of the reference folder in
// internal/importer/testdata. It opens, migrates, and reads back as
// sysbench's runs with their roles, groups and order.
func TestOpenStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-da87266.db"), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 9 {
		t.Fatalf("%d runs, want 4 run and 5 imported", len(runs))
	}
	byTest := map[string]result.Run{}
	for _, r := range runs {
		if r.Suite != "sysbench" {
			t.Errorf("%s: suite %q", r.Test, r.Suite)
		}
		if r.Build == "mariadb-system" {
			byTest[r.Test] = r
		}
	}
	load, pq, upd, scan := byTest["load"], byTest["point-query.pre_range=100"], byTest["update-index_range=100"], byTest["scan_range=100"]
	if load.Role != result.RoleLoad || pq.Role != result.RoleTest || len(load.Groups) != 0 {
		t.Errorf("roles: load %q, point-query.pre %q", load.Role, pq.Role)
	}
	if g, ok := pq.Placement("5"); !ok || g.Group != "point-1" || g.Pos != 0 {
		t.Errorf("point-query.pre in layout 5: %+v", pq.Groups)
	}
	if g, ok := scan.Placement("4"); !ok || g.Group != "range-noagg" {
		t.Errorf("scan in layout 4: %+v", scan.Groups)
	}
	if !(pq.Step < upd.Step && upd.Step < scan.Step) {
		t.Errorf("order: point-query.pre %d, update-index %d, scan %d", pq.Step, upd.Step, scan.Step)
	}
	if scan.Totals.Series != result.SeriesEvents || pq.Totals.Series != result.SeriesStatements || load.Totals.Series != result.SeriesEvents {
		t.Errorf("series: scan %q, point-query %q, load %q", scan.Totals.Series, pq.Totals.Series, load.Totals.Series)
	}
	if pq.Totals.Reported <= 0 || pq.HW == nil || !pq.HW.Measured() {
		t.Errorf("figures lost: %+v", pq.Totals)
	}
	// Opening again changes nothing: the upgrade ran once.
	s.Close()
	s2, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	again, err := s2.Runs(ctx, Filter{Suite: "sysbench", Build: "mariadb-system"})
	if err != nil || len(again) != 4 {
		t.Fatalf("%d runs, %v", len(again), err)
	}
	var n int
	if err := s2.db.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE schema_version < 3`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d runs not upgraded (%v)", n, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// A store a later qpslab migrated past this one's migrations is refused at
// open, in one line that says to upgrade, and is left as it was: writing
// into it could fail after a whole run (a column this qpslab writes may be
// gone, as migration 11 dropped the per-op columns).
func TestStoreOfANewerReleaseRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "newer.db")
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, path, "")
	if err == nil || !strings.Contains(err.Error(), "schema version 9999, newer than this qpslab's") || !strings.Contains(err.Error(), "upgrade qpslab") {
		t.Fatalf("open a store of a newer qpslab: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("not one line: %q", err)
	}
}

// testdata/release-95f89a8-killed.db was written by the release before
// migration 20 (commit 95f89a8): a qpslab run of sysbench's load and
// point-query.pre on MariaDB 10.11, killed (SIGKILL) while the test ran.
// It migrates, and opened in a later boot (a reboot since: the test's own
// boot id) the run left running is marked aborted, saying the machine
// restarted, and the load it finished is kept.
func TestOpenKilledStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-95f89a8-killed.db"), path)
	fakeBoot(t, t.TempDir(), "a-later-boot")
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.Runs(ctx, Filter{Status: []string{result.OK, result.Aborted, result.Failed, "running"}})
	if err != nil || len(all) != 2 {
		t.Fatalf("%d runs (%v), want the load and the test", len(all), err)
	}
	for _, r := range all {
		switch r.Test {
		case "load":
			if r.Status != result.OK || r.Totals.Rows != 1000 {
				t.Errorf("the load: %s, %d rows", r.Status, r.Totals.Rows)
			}
		default:
			if r.Status != result.Aborted || !strings.Contains(r.Error, "the machine restarted while it ran (its boot e60529b6-b2e7-4807-9233-8a31aa102b36 ended; this is boot a-later-boot)") {
				t.Errorf("the killed run: %s %q", r.Status, r.Error)
			}
		}
	}
}
