package store

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
)

// The three fingerprints of testdata/vm-fingerprint-*.json are one VM
// checked three times within 20 minutes: only steal and the steal risk's
// text differ. The id qpslab gave them before host.ID (a hash of the whole
// fingerprint less steal, current frequencies and unreadable files) split
// them into three hosts:
var splitIDs = []string{"005546ddc629", "8b32ce063855", "3791295554e9"}

func fingerprint(t *testing.T, i int) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "vm-fingerprint-"+string(rune('1'+i))+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// splitHostsMerge makes the store at dsn what a store of the old ids looks
// like (three hosts for one VM, a run on each; a run stored with an empty
// totals column), takes it back to before migration 4, and opens it again:
// one host, under host.ID, with the oldest fingerprint and every run.
func splitHostsMerge(t *testing.T, dsn string) {
	s := open(t, dsn)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var runs []result.Run
	for i := range splitIDs {
		r := finished(meta("point-query_range=100", 1), result.OK, float64(1000+i), 2)
		r.Build, r.Host, r.Started = "split-host", fingerprint(t, i), t0.Add(time.Duration(i)*10*time.Minute)
		runs = append(runs, r)
	}
	if _, err := s.Import(ctx, runs, Meta{Source: "sysbench-1.0"}); err != nil {
		t.Fatal(err)
	}
	merged, err := host.ID(fingerprint(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(splitIDs); i++ {
		if id, err := host.ID(fingerprint(t, i)); err != nil || id != merged {
			t.Fatalf("fingerprint %d has id %s (%v), fingerprint 1 %s: the fixture is not one host", i+1, id, err, merged)
		}
	}
	// As the old ids stored them: a host row each, oldest first.
	for i, id := range splitIDs {
		mustExec(t, s, `INSERT INTO hosts (id, fingerprint, first_seen) VALUES (?, ?, ?)`, id, string(fingerprint(t, i)), ts(runs[i].Started))
		mustExec(t, s, `UPDATE runs SET host_id = ? WHERE build = ? AND reported = ?`, id, "split-host", runs[i].Totals.Reported)
	}
	mustExec(t, s, `DELETE FROM hosts WHERE id = ?`, merged)
	// And runs stored before encode errors were errors: one without
	// totals, one with a sample without latencies, one without hw.
	var broken []result.Run
	for i := 0; i < 3; i++ {
		r := finished(meta("point-query_range=100", 1), result.OK, float64(5+i), 2)
		r.Build, r.Host = "broken", nil
		broken = append(broken, r)
	}
	if _, err := s.Import(ctx, broken, Meta{Source: "sysbench-1.0"}); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, `UPDATE runs SET totals = '' WHERE build = ? AND reported = ?`, "broken", 5.0)
	mustExec(t, s, `UPDATE samples SET latency = '' WHERE second = 1 AND run_id IN (SELECT id FROM runs WHERE build = ? AND reported = ?)`, "broken", 6.0)
	mustExec(t, s, `UPDATE metrics SET hw = '' WHERE run_id IN (SELECT id FROM runs WHERE build = ? AND reported = ?)`, "broken", 7.0)
	// As a store of the release before migration 4 was: goose applies a
	// missing migration below the store's version (store.migrate allows it),
	// so the later ones may stay.
	mustExec(t, s, `DELETE FROM goose_db_version WHERE version_id = 4`)
	if got := hostIDs(t, s); strings.Join(got, " ") != strings.Join(slices.Sorted(slices.Values(splitIDs)), " ") {
		t.Fatalf("before the migration: hosts %v, want %v", got, splitIDs)
	}
	s.Close()

	s = open(t, dsn)
	if got := hostIDs(t, s); len(got) != 1 || got[0] != merged {
		t.Fatalf("after the migration: hosts %v, want only %s", got, merged)
	}
	var fp string
	if err := s.db.QueryRow(s.q(`SELECT fingerprint FROM hosts WHERE id = ?`), merged).Scan(&fp); err != nil {
		t.Fatal(err)
	}
	if fp != string(fingerprint(t, 0)) {
		t.Errorf("the merged host keeps fingerprint %.80s…, want the oldest", fp)
	}
	var onHost, orphans int
	if err := s.db.QueryRow(s.q(`SELECT count(*) FILTER (WHERE host_id = ?), count(*) FILTER (WHERE host_id IS NOT NULL AND host_id NOT IN (SELECT id FROM hosts)) FROM runs`), merged).Scan(&onHost, &orphans); err != nil {
		t.Fatal(err)
	}
	if onHost != 3 || orphans != 0 {
		t.Errorf("%d runs on the merged host (want 3), %d on a host that is gone", onHost, orphans)
	}
	rs := runsOf(t, s, Filter{Build: "split-host", Host: merged[:6]})
	if len(rs) != 3 {
		t.Errorf("--host %s finds %d runs, want 3: one series", merged[:6], len(rs))
	}
	// The runs stored without figures are kept, failed, and say why; the
	// one whose hw was empty reads as not measured.
	bad := runsOf(t, s, Filter{Build: "broken", Status: []string{result.Failed}, Samples: true})
	if len(bad) != 2 {
		t.Fatalf("%d failed runs, want the 2 stored without totals or latencies", len(bad))
	}
	for _, r := range bad {
		if !strings.Contains(r.Error, "not finite") || len(r.Samples) != 2 {
			t.Errorf("a run stored without figures: error %q, %d samples", r.Error, len(r.Samples))
		}
	}
	ok := runsOf(t, s, Filter{Build: "broken"})
	if len(ok) != 1 || ok[0].Totals.Reported != 7 || ok[0].HW != nil {
		t.Errorf("the run stored with an empty hw: %d ok runs %+v", len(ok), ok)
	}
	// A second pass changes nothing.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := s.migrate4(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := hostIDs(t, s); len(got) != 1 || got[0] != merged {
		t.Errorf("after a second pass: hosts %v", got)
	}
}

func hostIDs(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.db.Query(`SELECT id FROM hosts ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestSQLiteSplitHostsMerge(t *testing.T) {
	splitHostsMerge(t, filepath.Join(t.TempDir(), "q.db"))
}

// A figure JSON cannot hold (NaN, ±Inf) is an error naming what was being
// stored, and an import that holds one stores nothing.
func TestEncodeErrors(t *testing.T) {
	s := open(t, "")
	for name, tc := range map[string]struct {
		spoil func(*result.Run)
		want  string
	}{
		"totals":  {func(r *result.Run) { r.Totals.Response.Mean = math.Inf(1) }, "totals"},
		"hw":      {func(r *result.Run) { r.HW.CPUPerOp = math.NaN() }, "hardware figures"},
		"samples": {func(r *result.Run) { r.Samples[1].Service.P99 = math.Inf(1) }, "sample 1: latency"},
	} {
		t.Run(name, func(t *testing.T) {
			good := finished(meta("point-query_range=100", 1), result.OK, 100, 2)
			good.Build = "encode-" + name
			bad := finished(meta("scan_range=100", 1), result.OK, 100, 2)
			bad.Build = good.Build
			tc.spoil(&bad)
			_, err := s.Import(ctx, []result.Run{good, bad}, Meta{Source: "sysbench-1.0"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "unsupported value") {
				t.Fatalf("import of a run with a non-finite figure: %v, want an error about %s", err, tc.want)
			}
			for _, st := range []string{result.OK, result.Failed, result.Aborted, "running"} {
				if rs := runsOf(t, s, Filter{Build: good.Build, Status: []string{st}}); len(rs) != 0 {
					t.Errorf("%d %s runs stored by a failed import", len(rs), st)
				}
			}
			// A run written as it goes fails at its end, not silently.
			w := begin(t, s, meta("point-query_range=100", 2))
			if err := w.Done(ctx, bad); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Done with a non-finite figure: %v, want an error about %s", err, tc.want)
			}
		})
	}
}
