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
	// performance_schema's, where the server runs with it on (MySQL 8.0
	// and later by default; the seeds' MySQL configs; qpslab's default.cnf
	// turns it off): its statement summary and its wait events, summed by
	// class, for the instruments the server has enabled (table and file IO
	// by default; mutexes and rw-locks only where enabled).
	{Name: "ps_statements", Unit: "statements", Help: "performance_schema: statements run (events_statements_summary_global_by_event_name)"},
	{Name: "ps_statement_us", Unit: "µs", Help: "performance_schema: time statements ran"},
	{Name: "ps_lock_us", Unit: "µs", Help: "performance_schema: time statements waited for table locks"},
	{Name: "ps_rows_examined", Unit: "rows", Help: "performance_schema: rows statements examined"},
	{Name: "ps_wait_io_table", Unit: "waits", Help: "performance_schema: table IO waits (wait/io/table: row fetches, inserts, updates, deletes)"},
	{Name: "ps_wait_io_table_us", Unit: "µs"},
	{Name: "ps_wait_io_file", Unit: "waits", Help: "performance_schema: file IO waits (wait/io/file: reads, writes, syncs of data, log and binlog files)"},
	{Name: "ps_wait_io_file_us", Unit: "µs"},
	{Name: "ps_wait_synch_mutex", Unit: "waits", Help: "performance_schema: mutex waits (wait/synch/mutex, where enabled)"},
	{Name: "ps_wait_synch_mutex_us", Unit: "µs"},
	{Name: "ps_wait_synch_rwlock", Unit: "waits", Help: "performance_schema: rw-lock waits (wait/synch/rwlock, where enabled)"},
	{Name: "ps_wait_synch_rwlock_us", Unit: "µs"},
	{Name: "ps_wait_synch_sxlock", Unit: "waits", Help: "performance_schema: InnoDB sx-lock waits (wait/synch/sxlock, where enabled)"},
	{Name: "ps_wait_synch_sxlock_us", Unit: "µs"},
	{Name: "ps_wait_synch_cond", Unit: "waits", Help: "performance_schema: condition waits (wait/synch/cond, where enabled)"},
	{Name: "ps_wait_synch_cond_us", Unit: "µs"},
	{Name: "ps_wait_lock_table", Unit: "waits", Help: "performance_schema: table lock waits (wait/lock/table)"},
	{Name: "ps_wait_lock_table_us", Unit: "µs"},
	// MyRocks' (the rocksdb plugin's SHOW GLOBAL STATUS), recorded by
	// default wherever the plugin is loaded (a MyRocks run; a server
	// without it skips them): rows by the engine, its block cache, bytes
	// read and written by the engine, flush, compaction and the WAL, and
	// its write stalls.
	{Name: "rocksdb_rows_read", Unit: "rows", Help: "MyRocks: rows read"},
	{Name: "rocksdb_rows_inserted", Unit: "rows", Help: "MyRocks: rows inserted"},
	{Name: "rocksdb_rows_updated", Unit: "rows", Help: "MyRocks: rows updated"},
	{Name: "rocksdb_rows_deleted", Unit: "rows", Help: "MyRocks: rows deleted"},
	{Name: "rocksdb_number_db_seek", Unit: "calls", Help: "MyRocks: iterator seeks (range scans, secondary index lookups)"},
	{Name: "rocksdb_number_db_next", Unit: "calls", Help: "MyRocks: iterator nexts"},
	{Name: "rocksdb_block_cache_hit", Unit: "blocks", Help: "MyRocks: block cache hits (data, index and filter blocks)"},
	{Name: "rocksdb_block_cache_miss", Unit: "blocks", Help: "MyRocks: block cache misses: blocks read from the files (the OS page cache, or the disk with O_DIRECT)"},
	{Name: "rocksdb_block_cache_data_miss", Unit: "blocks", Help: "MyRocks: data block misses"},
	{Name: "rocksdb_bloom_filter_useful", Unit: "lookups", Help: "MyRocks: point lookups a bloom filter spared a file read"},
	{Name: "rocksdb_bytes_read", Unit: "bytes", Help: "MyRocks: bytes of keys and values read by Get"},
	{Name: "rocksdb_bytes_written", Unit: "bytes", Help: "MyRocks: bytes of keys and values written"},
	{Name: "rocksdb_wal_bytes", Unit: "bytes", Help: "MyRocks: bytes written to the WAL"},
	{Name: "rocksdb_wal_synced", Unit: "syncs", Help: "MyRocks: WAL syncs"},
	{Name: "rocksdb_flush_write_bytes", Unit: "bytes", Help: "MyRocks: bytes written by memtable flushes"},
	{Name: "rocksdb_compact_read_bytes", Unit: "bytes", Help: "MyRocks: bytes read by compaction"},
	{Name: "rocksdb_compact_write_bytes", Unit: "bytes", Help: "MyRocks: bytes written by compaction (with flush's: the engine's write amplification)"},
	{Name: "rocksdb_stall_micros", Unit: "µs", Help: "MyRocks: time writes were stalled"},
	{Name: "rocksdb_stall_total_slowdowns", Unit: "stalls", Help: "MyRocks: write slowdowns"},
	{Name: "rocksdb_stall_total_stops", Unit: "stops", Help: "MyRocks: write stops"},
	{Name: "rocksdb_row_lock_deadlocks", Unit: "deadlocks", Help: "MyRocks: deadlocks"},
	{Name: "threads_running", Unit: "threads", Level: true, Help: "threads running a statement, not counting the counters' own"},
	{Name: "innodb_row_lock_current_waits", Unit: "waits", Level: true, Help: "row lock waits in progress"},
}

// mysqlFamily reads SHOW GLOBAL STATUS and, where the server runs with
// performance_schema on (ps), its summaries.
type mysqlFamily struct{ ps bool }

func openMySQL(ctx context.Context, db *sql.DB) (flavor, error) {
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	var on sql.NullInt64
	// A server built without performance_schema has no such variable:
	// it is off.
	if err := db.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		on.Int64 = 0
	}
	return mysqlFamily{ps: on.Int64 == 1}, nil
}

func (f mysqlFamily) source() string {
	if f.ps {
		return "global status, performance_schema"
	}
	return "global status"
}

func (f mysqlFamily) counters(ctx context.Context, db *sql.DB) (map[string]float64, error) {
	out, err := showStatus(ctx, db, "SHOW GLOBAL STATUS")
	if err != nil || !f.ps {
		return out, err
	}
	if err := psCounters(ctx, db, out); err != nil {
		return nil, err
	}
	return out, nil
}

// psQueries read performance_schema's statement summary and its wait
// events by class (wait/io/table, wait/synch/mutex …: the first three parts
// of the event name), each as NAME and its time NAME_us (the timers count
// picoseconds).
var psQueries = []string{
	"SELECT 'ps_statements', SUM(COUNT_STAR), SUM(SUM_TIMER_WAIT), SUM(SUM_LOCK_TIME), SUM(SUM_ROWS_EXAMINED) " +
		"FROM performance_schema.events_statements_summary_global_by_event_name",
	"SELECT CONCAT('ps_', REPLACE(SUBSTRING_INDEX(EVENT_NAME, '/', 3), '/', '_')), SUM(COUNT_STAR), SUM(SUM_TIMER_WAIT), 0, 0 " +
		"FROM performance_schema.events_waits_summary_global_by_event_name WHERE EVENT_NAME LIKE 'wait/%/%/%' GROUP BY 1",
}

// psCounters adds performance_schema's counters to out.
func psCounters(ctx context.Context, db *sql.DB, out map[string]float64) error {
	for _, q := range psQueries {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("performance_schema: %w", err)
		}
		for rows.Next() {
			var name string
			var count, wait, lock, examined sql.NullFloat64
			if err := rows.Scan(&name, &count, &wait, &lock, &examined); err != nil {
				rows.Close()
				return fmt.Errorf("performance_schema: %w", err)
			}
			name = strings.ToLower(name)
			out[name] = count.Float64
			if name == "ps_statements" {
				out["ps_statement_us"] = wait.Float64 / 1e6
				out["ps_lock_us"] = lock.Float64 / 1e6
				out["ps_rows_examined"] = examined.Float64
				continue
			}
			out[name+"_us"] = wait.Float64 / 1e6
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("performance_schema: %w", err)
		}
	}
	return nil
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
	for _, p := range []string{"questions", "queries", "com_", "handler_", "select_", "created_tmp_", "rows_", "bytes_", "sort_", "optimizer_", "table_locks_", "ps_statement", "ps_rows_", "ps_lock_", "ps_wait_io_table", "ps_wait_lock_table"} {
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
