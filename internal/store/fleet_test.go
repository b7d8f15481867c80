package store

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A fleet job's retry never counts a run twice: the runs of its earlier
// attempts are marked aborted (the one left running as lost, the finished
// ones as superseded), failed runs stay failed, other jobs' runs and runs
// outside the fleet are untouched; and a run keeps the agent's name as
// where it ran.
func TestSupersedeJob(t *testing.T) {
	s := open(t, "")
	store := func(test, job string, attempt int, status string) {
		t.Helper()
		m := meta(test, 1)
		w, err := s.Begin(ctx, m, Meta{Job: job, JobAttempt: attempt, Hostname: "agent-" + job})
		if err != nil {
			t.Fatal(err)
		}
		if status != "running" {
			if err := w.Done(ctx, finished(m, status, 100, 1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	store("point-query_range=100", "7", 1, result.OK)
	store("update-index_range=100", "7", 1, result.Failed)
	store("insert_range=100", "7", 1, "running") // its agent was killed here
	store("point-query_range=100", "8", 1, result.OK)
	store("point-query_range=100", "", 0, result.OK)
	lost, superseded, err := s.SupersedeJob(ctx, "7", 2)
	if err != nil || lost != 1 || superseded != 1 {
		t.Fatalf("supersede job 7: %d lost, %d superseded, %v", lost, superseded, err)
	}
	// Attempt 2 stored a run and was put back in the queue (its agent was
	// stopped): River runs it again under the same number, and its run
	// stops counting too.
	store("point-query_range=100", "7", 2, result.OK)
	if lost, superseded, err := s.SupersedeJob(ctx, "7", 2); err != nil || lost != 0 || superseded != 1 {
		t.Errorf("supersede job 7 again: %d lost, %d superseded, %v", lost, superseded, err)
	}
	store("point-query_range=100", "7", 2, result.OK)
	all := runsOf(t, s, Filter{Status: []string{result.OK, result.Failed, result.Aborted, "running"}})
	byStatus := map[string]int{}
	for _, r := range all {
		byStatus[r.Status]++
		if r.Status == result.Aborted && !strings.Contains(r.Error, "job 7 ran the plan again as attempt 2") {
			t.Errorf("%s aborted without saying why: %q", r.Test, r.Error)
		}
	}
	if byStatus[result.OK] != 3 || byStatus[result.Failed] != 1 || byStatus[result.Aborted] != 3 || byStatus["running"] != 0 {
		t.Errorf("statuses after the retries: %v", byStatus)
	}
	if rs := runsOf(t, s, Filter{Host: "agent-7"}); len(rs) != 1 {
		t.Errorf("--host agent-7 finds %d ok runs, want the second attempt's one", len(rs))
	}
	counts, err := s.JobRuns(ctx, []string{"7", "8"})
	if err != nil || counts["7"][1][result.Aborted] != 2 || counts["7"][2][result.OK] != 1 || counts["7"][2][result.Aborted] != 1 || counts["8"][1][result.OK] != 1 {
		t.Errorf("job runs: %v %v", counts, err)
	}
}

// On PostgreSQL the store's own migrations install the fleet: fleet_hosts
// and River's schema at the version qpslab's River needs, once; a SQLite
// store records migration 8 and has neither.
func TestFleetSchema(t *testing.T) {
	lite := open(t, "")
	var n int
	if err := lite.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name LIKE 'river%' OR name = 'fleet_hosts'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("SQLite has %d fleet tables (%v)", n, err)
	}
	_, dsn := testenv.FleetDatabase(t)
	for i := 0; i < 2; i++ { // the second open finds everything in place
		s := open(t, dsn)
		var versions []int
		rows, err := s.db.Query(`SELECT version FROM river_migration WHERE line = 'main' ORDER BY version`)
		if err != nil {
			t.Fatalf("River's schema: %v", err)
		}
		for rows.Next() {
			var v int
			rows.Scan(&v)
			versions = append(versions, v)
		}
		rows.Close()
		if len(versions) != RiverSchemaVersion || versions[len(versions)-1] != RiverSchemaVersion {
			t.Errorf("River's migrations applied: %v, want 1 to %d", versions, RiverSchemaVersion)
		}
		for _, table := range []string{"river_job", "river_leader", "river_queue", "fleet_hosts"} {
			if err := s.db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
				t.Errorf("%s: %v", table, err)
			}
		}
	}
}
