package counters

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// MySQL is the curated set of the MySQL family (MariaDB, MySQL), from
// SHOW GLOBAL STATUS, in the order tables show it. A counter a server does
// not have (MariaDB 10.6 and later dropped Innodb_rows_*; Innodb_deadlocks
// is MariaDB's) is left out of its runs. An engine adds its own here (a
// MyRocks build's rocksdb_* counters): a name the server lacks is skipped,
// so one list serves every build of the family.
var MySQL = []Def{
	{Name: "questions", Unit: "statements", Help: "statements the server received (BEGIN and COMMIT count)"},
	{Name: "rows_read", Unit: "rows", Help: "rows read from any table (MariaDB)"},
	{Name: "innodb_rows_read", Unit: "rows", Help: "rows read from InnoDB tables (MySQL; MariaDB before 10.6)"},
	{Name: "innodb_rows_inserted", Unit: "rows"},
	{Name: "innodb_rows_updated", Unit: "rows"},
	{Name: "innodb_rows_deleted", Unit: "rows"},
	{Name: "handler_read_key", Unit: "calls", Help: "index lookups by key"},
	{Name: "handler_read_next", Unit: "calls", Help: "next row in index order (range scans)"},
	{Name: "handler_read_rnd_next", Unit: "calls", Help: "next row of a table scan"},
	{Name: "handler_write", Unit: "calls", Help: "rows inserted (temporary tables too)"},
	{Name: "handler_update", Unit: "calls"},
	{Name: "handler_delete", Unit: "calls"},
	{Name: "handler_commit", Unit: "calls"},
	{Name: "innodb_buffer_pool_read_requests", Unit: "pages", Help: "logical page reads: buffer pool hits and misses"},
	{Name: "innodb_buffer_pool_reads", Unit: "pages", Help: "page reads the buffer pool missed (read from disk)"},
	{Name: "innodb_buffer_pool_write_requests", Unit: "writes", Help: "writes to buffer pool pages"},
	{Name: "innodb_buffer_pool_pages_flushed", Unit: "pages", Help: "pages written from the buffer pool"},
	{Name: "innodb_pages_written", Unit: "pages"},
	{Name: "innodb_dblwr_pages_written", Unit: "pages", Help: "pages written to the doublewrite buffer"},
	{Name: "innodb_data_reads", Unit: "reads", Help: "InnoDB data file reads"},
	{Name: "innodb_data_read", Unit: "bytes", Help: "bytes read from InnoDB data files"},
	{Name: "innodb_data_writes", Unit: "writes", Help: "InnoDB data file writes"},
	{Name: "innodb_data_written", Unit: "bytes", Help: "bytes written to InnoDB data and log files"},
	{Name: "innodb_data_fsyncs", Unit: "fsyncs"},
	{Name: "innodb_os_log_written", Unit: "bytes", Help: "bytes written to the redo log"},
	{Name: "innodb_log_writes", Unit: "writes", Help: "redo log writes"},
	{Name: "innodb_os_log_fsyncs", Unit: "fsyncs", Help: "redo log fsyncs (MySQL; MariaDB before 10.5)"},
	{Name: "innodb_log_waits", Unit: "waits", Help: "waits for the redo log buffer to be flushed"},
	{Name: "innodb_row_lock_waits", Unit: "waits", Help: "row lock waits"},
	{Name: "innodb_row_lock_time", Unit: "ms", Help: "time spent waiting for row locks"},
	{Name: "innodb_deadlocks", Unit: "deadlocks"},
	{Name: "created_tmp_tables", Unit: "tables"},
	{Name: "created_tmp_disk_tables", Unit: "tables"},
	{Name: "select_scan", Unit: "statements", Help: "joins that scanned the first table"},
	{Name: "binlog_bytes_written", Unit: "bytes"},
	{Name: "threads_running", Unit: "threads", Level: true, Help: "threads running a statement, not counting the counters' own"},
	{Name: "innodb_row_lock_current_waits", Unit: "waits", Level: true, Help: "row lock waits in progress"},
}

// mysqlFamily reads SHOW GLOBAL STATUS.
type mysqlFamily struct{}

func openMySQL(ctx context.Context, db *sql.DB) (flavor, error) {
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return mysqlFamily{}, nil
}

func (mysqlFamily) source() string { return "global status" }

func (mysqlFamily) counters(ctx context.Context, db *sql.DB) (map[string]float64, error) {
	return showStatus(ctx, db, "SHOW GLOBAL STATUS")
}

// levels reads the curated levels; threads_running leaves out the thread
// that runs this query.
func (mysqlFamily) levels(ctx context.Context, db *sql.DB) (map[string]float64, error) {
	m, err := showStatus(ctx, db, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_running', 'Innodb_row_lock_current_waits')")
	if err != nil {
		return nil, err
	}
	if v, ok := m["threads_running"]; ok {
		m["threads_running"] = max(v-1, 0)
	}
	return m, nil
}

// ownCost: the counters a status read itself moves (it is a statement that
// reads a table through a temporary one, and sends rows).
func (mysqlFamily) ownCost(name string) bool {
	for _, p := range []string{"questions", "queries", "com_", "handler_", "select_", "created_tmp_", "rows_", "bytes_", "sort_", "optimizer_", "table_locks_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func showStatus(ctx context.Context, db *sql.DB, q string) (map[string]float64, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name string
		var val sql.NullString
		if err := rows.Scan(&name, &val); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
		if v, ok := number(val); ok {
			out[strings.ToLower(name)] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return out, nil
}
