package script

import (
	"context"
	"fmt"
	"strconv"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/owned"
)

// Builtins are pgbench's built-in scripts by name, as its manual gives
// them ("Built-in scripts"), in pgbench's order.
var Builtins = []string{"tpcb-like", "simple-update", "select-only"}

// builtinText is built-in script name with its END written end (the
// dialect's End: COMMIT; on the MySQL family): pgbench's transactions.
func builtinText(name string, end string) (string, bool) {
	head := `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`
	history := "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n"
	switch name {
	case "tpcb-like":
		return head + `UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
` + history + end + "\n", true
	case "simple-update":
		return head + history + end + "\n", true
	case "select-only":
		return `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`, true
	}
	return "", false
}

// The pgbench tables, as pgbench -i makes them: rows per unit of scale.
const (
	branchesPerScale = 1
	tellersPerScale  = 10
	accountsPerScale = 100000
)

var tableNames = []string{"pgbench_history", "pgbench_tellers", "pgbench_accounts", "pgbench_branches"}

// tables are the pgbench tables' DDL in dialect d, in engine (the MySQL
// family): pgbench -i's columns, without the primary keys, which keys adds
// after the load, as pgbench -i does. aid is a bigint above scale 20000,
// as in pgbench.
func tables(d client.Dialect, engine string, scale int64) []owned.Table {
	aid := "int"
	if scale > 20000 {
		aid = "bigint"
	}
	e := d.TableOptions(engine)
	return []owned.Table{
		{Name: "pgbench_history", DDL: "CREATE TABLE pgbench_history (tid int, bid int, aid " + aid + ", delta int, mtime timestamp NULL, filler char(22))" + e},
		{Name: "pgbench_tellers", DDL: "CREATE TABLE pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84))" + e},
		{Name: "pgbench_accounts", DDL: "CREATE TABLE pgbench_accounts (aid " + aid + " not null, bid int, abalance int, filler char(84))" + e},
		{Name: "pgbench_branches", DDL: "CREATE TABLE pgbench_branches (bid int not null, bbalance int, filler char(88))" + e},
	}
}

var keys = []string{
	"ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid)",
	"ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid)",
	"ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)",
}

// initTables (re)creates and fills the pgbench tables at scale through
// the loader (COPY on PostgreSQL, LOAD DATA LOCAL INFILE on the MySQL
// family), then adds the primary keys and, on PostgreSQL, vacuums and
// analyzes them, as pgbench -i does. Tables qpslab did not make are never
// dropped (owned). It returns the rows loaded.
func initTables(ctx context.Context, d client.Dialect, engine string, dial func(context.Context) (client.Conn, error), scale int64, progress func(done, total int64)) (int64, error) {
	conn, err := dial(ctx)
	if err != nil {
		return 0, fmt.Errorf("init: connect: %w", err)
	}
	defer conn.Close()
	if err := owned.Drop(ctx, d, conn, tableNames); err != nil {
		return 0, fmt.Errorf("init: %w", err)
	}
	if err := owned.Create(ctx, d, conn, tables(d, engine, scale)); err != nil {
		return 0, fmt.Errorf("init: %w", err)
	}
	total := scale * (branchesPerScale + tellersPerScale + accountsPerScale)
	var done int64
	for _, t := range []struct {
		name string
		cols []string
		rows int64
		line func(b []byte, i int64) []byte
	}{
		{"pgbench_branches", []string{"bid", "bbalance"}, scale * branchesPerScale, func(b []byte, i int64) []byte {
			return append(strconv.AppendInt(b, i, 10), "\t0\n"...)
		}},
		{"pgbench_tellers", []string{"tid", "bid", "tbalance"}, scale * tellersPerScale, func(b []byte, i int64) []byte {
			b = append(strconv.AppendInt(b, i, 10), '\t')
			return append(strconv.AppendInt(b, (i-1)/tellersPerScale+1, 10), "\t0\n"...)
		}},
		{"pgbench_accounts", []string{"aid", "bid", "abalance", "filler"}, scale * accountsPerScale, func(b []byte, i int64) []byte {
			b = append(strconv.AppendInt(b, i, 10), '\t')
			return append(strconv.AppendInt(b, (i-1)/accountsPerScale+1, 10), "\t0\t\n"...)
		}},
	} {
		r := client.Lines(t.rows, t.line, func(k int64) { done += k; progress(done, total) })
		n, err := client.Copy(ctx, conn, t.name, t.cols, r)
		if err != nil {
			return 0, fmt.Errorf("init: load %s: %w", t.name, err)
		}
		if n != t.rows {
			return 0, fmt.Errorf("init: load %s: the server took %d of %d rows", t.name, n, t.rows)
		}
	}
	for _, q := range keys {
		if _, err := conn.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("init: %s: %w", q, err)
		}
	}
	for _, t := range tableNames {
		// The dialect's Analyze: VACUUM ANALYZE on PostgreSQL, as pgbench -i.
		if _, err := conn.Query(ctx, d.Analyze(t)); err != nil {
			return 0, fmt.Errorf("init: analyze %s: %w", t, err)
		}
	}
	return total, nil
}
