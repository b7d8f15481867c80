package store

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"

	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

// RiverSchemaVersion is the version of River's schema that migration 8
// installs: the last migration of the River release in go.mod (v0.51.1
// has 1 to 8). Upgrading River to a release with more migrations takes a
// new qpslab migration that calls riverSchema with the new version, so
// that every store is brought to it once, in order, like any other
// migration (internal/fleet checks the version before an agent starts).
const RiverSchemaVersion = 8

// fleetHostsDDL is the fleet's registry of agents (internal/fleet reads
// and writes it): one row per agent name, with its labels, fingerprint,
// what it can run, and its heartbeat in the database's clock (so that
// machines whose clocks differ agree on which host is lost).
const fleetHostsDDL = `CREATE TABLE IF NOT EXISTS fleet_hosts (
    name        TEXT PRIMARY KEY,      -- qpslab agent --name; its River queue is host_<name>
    labels      TEXT[] NOT NULL,       -- qpslab agent --labels
    host_id     TEXT NOT NULL,         -- host.ID of its fingerprint
    fingerprint TEXT NOT NULL,         -- host check's JSON, with "agent" when the name is not the hostname
    hostname    TEXT NOT NULL,         -- the machine's
    builds      JSONB NOT NULL,        -- the builds it has: [{name, flavor, version}]
    configs     JSONB NOT NULL,        -- the configs it has: [{name, family, id}]
    runner      TEXT NOT NULL,         -- the agent process: boot id/pid/start time
    state       TEXT NOT NULL,         -- idle, working, stopping, stopped
    job         BIGINT,                -- the River job it is working on
    interval_ms BIGINT NOT NULL,       -- its heartbeat interval
    started     TIMESTAMPTZ NOT NULL,
    heartbeat   TIMESTAMPTZ NOT NULL
)`

// migrate8 is migration 8: the fleet (docs/fleet.md), on PostgreSQL only
// (a SQLite file cannot be shared by several machines; the migration is
// recorded there and does nothing). It creates fleet_hosts and River's
// schema (river_job, river_leader, river_queue, …).
//
// River's schema is River's own migrations, run by its rivermigrate
// package through its database/sql driver (riverdatabasesql, the driver
// River provides for migration frameworks such as goose) rather than
// copied SQL: River applies each of its migrations in a transaction of its
// own and records it in river_migration, which it needs to know what is
// applied. That is why this migration runs outside goose's transaction
// (RunDB): River's migration 6 uses an enum value that migration 4 adds,
// which PostgreSQL allows only after the transaction that added it has
// committed. A migration interrupted halfway is safe to run again: the
// table is created only if missing, and River skips what river_migration
// records as applied.
func (s *Store) migrate8(ctx context.Context, db *sql.DB) error {
	if !s.postgres {
		return nil
	}
	if _, err := db.ExecContext(ctx, fleetHostsDDL); err != nil {
		return fmt.Errorf("create fleet_hosts: %w", err)
	}
	return riverSchema(ctx, db, RiverSchemaVersion)
}

// riverSchema migrates River's schema up to version.
func riverSchema(ctx context.Context, db *sql.DB, version int) error {
	m, err := rivermigrate.New(riverdatabasesql.New(db), &rivermigrate.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), // its "applied" lines are not the user's business
	})
	if err != nil {
		return fmt.Errorf("River's schema: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{TargetVersion: version}); err != nil {
		return fmt.Errorf("River's schema: %w", err)
	}
	return nil
}

// SupersedeJob makes sure no run of fleet job job counts twice. It is
// called as an attempt of the job starts, before the attempt stores
// anything: every run the job stored so far is of an earlier attempt (or of
// one River put back in its queue when its agent stopped, which keeps its
// number), and this attempt runs the whole plan again, so those runs are
// marked aborted, each with why. A run left running (its agent was killed
// or its machine went down) is marked aborted as lost; one that ended ok or
// saturated as superseded; failed and aborted runs stay as they are. It
// returns how many runs were lost and superseded.
func (s *Store) SupersedeJob(ctx context.Context, job string, attempt int) (lost, superseded int, err error) {
	if job == "" {
		return 0, 0, fmt.Errorf("supersede the runs of a job: no job named")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("store %s: supersede the runs of job %s: %w", s.where, job, err)
	}
	defer tx.Rollback()
	for _, u := range []struct {
		n      *int
		status string
		why    string
	}{
		{&lost, "'running'", "its fleet agent was lost mid-run (killed, or its machine went down): job %s ran the plan again as attempt %d"},
		{&superseded, "'ok', 'saturated'", "superseded: job %s ran the plan again as attempt %d, after the attempt that stored this one did not finish it"},
	} {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET status = 'aborted', error = ? WHERE job = ? AND status IN (`+u.status+`)`),
			fmt.Sprintf(u.why, job, attempt), job)
		if err != nil {
			return 0, 0, fmt.Errorf("store %s: supersede the runs of job %s: %w", s.where, job, err)
		}
		n, _ := res.RowsAffected()
		*u.n = int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("store %s: supersede the runs of job %s: %w", s.where, job, err)
	}
	return lost, superseded, nil
}

// JobRuns counts the runs of each fleet job by attempt and status:
// counts[job][attempt][status].
func (s *Store) JobRuns(ctx context.Context, jobs []string) (map[string]map[int]map[string]int, error) {
	out := map[string]map[int]map[string]int{}
	if len(jobs) == 0 {
		return out, nil
	}
	args := make([]any, len(jobs))
	marks := ""
	for i, j := range jobs {
		args[i] = j
		if i > 0 {
			marks += ", "
		}
		marks += "?"
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT job, job_attempt, status, count(*) FROM runs WHERE job IN (`+marks+`) GROUP BY job, job_attempt, status`), args...)
	if err != nil {
		return nil, fmt.Errorf("read store %s: runs of fleet jobs: %w", s.where, err)
	}
	defer rows.Close()
	for rows.Next() {
		var job, status string
		var attempt, n int
		if err := rows.Scan(&job, &attempt, &status, &n); err != nil {
			return nil, fmt.Errorf("read store %s: runs of fleet jobs: %w", s.where, err)
		}
		if out[job] == nil {
			out[job] = map[int]map[string]int{}
		}
		if out[job][attempt] == nil {
			out[job][attempt] = map[string]int{}
		}
		out[job][attempt][status] = n
	}
	return out, rows.Err()
}
