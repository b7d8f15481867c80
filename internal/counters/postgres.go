package counters

import (
	"context"
	"database/sql"
	"fmt"
)

// Postgres is PostgreSQL's curated set, in the order tables show it:
// pg_stat_database summed over databases, WAL bytes from the WAL position
// (every version; pg_stat_wal's records and full-page images from 14 on),
// the checkpointer and background writer (pg_stat_bgwriter up to 16,
// pg_stat_checkpointer from 17), and autovacuum runs from the benchmark
// database's pg_stat_all_tables. A counter a version lacks is left out of
// its runs.
//
// PostgreSQL's backends publish their statistics at most once a second
// (when idle, or every 60 s when busy, from 15 on; through the stats
// collector before), so a short window's counts may lag by up to a second
// of work; wal_bytes, read from the WAL position, never lags.
var Postgres = []Def{
	{Name: "xact_commit", Unit: "transactions"},
	{Name: "xact_rollback", Unit: "transactions"},
	{Name: "tup_returned", Unit: "rows", Help: "rows returned by scans"},
	{Name: "tup_fetched", Unit: "rows", Help: "rows fetched by index scans"},
	{Name: "tup_inserted", Unit: "rows"},
	{Name: "tup_updated", Unit: "rows"},
	{Name: "tup_deleted", Unit: "rows"},
	{Name: "blks_hit", Unit: "blocks", Help: "block reads found in shared buffers"},
	{Name: "blks_read", Unit: "blocks", Help: "block reads that missed shared buffers (the OS cache or disk)"},
	{Name: "blks_requested", Unit: "blocks", Help: "block requests, blks_hit + blks_read: what statements asked of shared buffers, found there or not (the tables' state, whatever the cache holds)"},
	{Name: "temp_files", Unit: "files"},
	{Name: "temp_bytes", Unit: "bytes"},
	{Name: "wal_bytes", Unit: "bytes", Help: "WAL written: the change of pg_current_wal_lsn()"},
	{Name: "wal_records", Unit: "records", Help: "WAL records (pg_stat_wal, 14 and later)"},
	{Name: "wal_fpi", Unit: "pages", Help: "full-page images in the WAL (pg_stat_wal, 14 and later)"},
	{Name: "wal_buffers_full", Unit: "times", Help: "WAL writes because the WAL buffers were full (14 and later)"},
	{Name: "checkpoints_timed", Unit: "checkpoints", Help: "scheduled checkpoints (up to 16)"},
	{Name: "checkpoints_req", Unit: "checkpoints", Help: "requested checkpoints (up to 16)"},
	{Name: "num_timed", Unit: "checkpoints", Help: "scheduled checkpoints (17 and later)"},
	{Name: "num_requested", Unit: "checkpoints", Help: "requested checkpoints (17 and later)"},
	{Name: "buffers_checkpoint", Unit: "buffers", Help: "buffers written by the checkpointer (up to 16)"},
	{Name: "buffers_written", Unit: "buffers", Help: "buffers written by the checkpointer (17 and later)"},
	{Name: "buffers_clean", Unit: "buffers", Help: "buffers written by the background writer"},
	{Name: "buffers_backend", Unit: "buffers", Help: "buffers written by backends themselves (up to 16)"},
	{Name: "autovacuum_count", Unit: "runs", Help: "autovacuum runs on the benchmark database's tables"},
	{Name: "autoanalyze_count", Unit: "runs"},
	{Name: "deadlocks", Unit: "deadlocks"},
	{Name: "active_backends", Unit: "backends", Level: true, Help: "backends running a statement, not counting the counters' own"},
	{Name: "lock_waiting", Unit: "backends", Level: true, Help: "backends waiting for a lock"},
}

// postgres reads the statistics views of a server of version (its
// server_version_num).
type postgres struct{ version int }

func openPostgres(ctx context.Context, db *sql.DB) (flavor, error) {
	pg := &postgres{}
	if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int").Scan(&pg.version); err != nil {
		return nil, fmt.Errorf("read the server's version: %w", err)
	}
	return pg, nil
}

func (*postgres) source() string { return "statistics views" }

// pgView is a view whose numeric columns are summed over its rows.
type pgView struct {
	name string
	from int             // the first version that has it
	only map[string]bool // the columns to keep; nil: all but skip's
}

// pgSkip are columns that are identities or levels, not counters.
var pgSkip = map[string]bool{"datid": true, "relid": true, "numbackends": true, "wal_bytes": true}

var pgViews = []pgView{
	{name: "pg_stat_database", from: 0},
	{name: "pg_stat_bgwriter", from: 0},
	{name: "pg_stat_wal", from: 140000},
	{name: "pg_stat_checkpointer", from: 170000},
	{name: "pg_stat_all_tables", from: 0, only: map[string]bool{
		"seq_scan": true, "seq_tup_read": true, "idx_scan": true, "idx_tup_fetch": true, "n_tup_ins": true, "n_tup_upd": true,
		"n_tup_del": true, "n_tup_hot_upd": true, "vacuum_count": true, "autovacuum_count": true, "analyze_count": true, "autoanalyze_count": true,
	}},
}

func (p *postgres) counters(ctx context.Context, db *sql.DB) (map[string]float64, error) {
	out := map[string]float64{}
	for _, v := range pgViews {
		if p.version < v.from {
			continue
		}
		if err := sumView(ctx, db, v, out); err != nil {
			return nil, err
		}
	}
	var lsn float64
	if err := db.QueryRowContext(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8").Scan(&lsn); err != nil {
		return nil, fmt.Errorf("read the WAL position: %w", err)
	}
	out["wal_bytes"] = lsn
	hit, okHit := out["blks_hit"]
	read, okRead := out["blks_read"]
	if okHit && okRead {
		out["blks_requested"] = hit + read
	}
	return out, nil
}

// sumView adds the numeric columns of every row of v to out.
func sumView(ctx context.Context, db *sql.DB, v pgView, out map[string]float64) error {
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+v.name)
	if err != nil {
		return fmt.Errorf("read %s: %w", v.name, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("read %s: %w", v.name, err)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read %s: %w", v.name, err)
		}
		for i, c := range cols {
			if pgSkip[c] || (v.only != nil && !v.only[c]) {
				continue
			}
			if x, ok := number(vals[i]); ok {
				out[c] += x
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", v.name, err)
	}
	return nil
}

// ownCost is false: a backend publishes its statistics up to a second
// after its statements (when idle), so the reader's own cannot be timed
// against the window; they are few (two reads, a query a second), and
// docs/metrics.md says which counters they touch.
func (*postgres) ownCost(string) bool { return false }

// levels counts the backends running a statement (this one left out) and
// those waiting for a lock.
func (*postgres) levels(ctx context.Context, db *sql.DB) (map[string]float64, error) {
	var active, waiting float64
	err := db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE state = 'active' AND pid <> pg_backend_pid()),
		count(*) FILTER (WHERE wait_event_type = 'Lock') FROM pg_stat_activity`).Scan(&active, &waiting)
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_activity: %w", err)
	}
	return map[string]float64{"active_backends": active, "lock_waiting": waiting}, nil
}
