package sysbench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/owned"
)

// Statement texts, as oltp_common.lua and his scripts write them (§1.3), with
// ? placeholders and %d for the table number. PostgreSQL gets $1, $2, … in
// their place (placeholders).
const (
	qPoint          = "SELECT c FROM sbtest%d WHERE id=?"
	qSimple         = "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?"
	qSum            = "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?"
	qOrder          = "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c"
	qDistinct       = "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c"
	qCount          = "SELECT count(c) FROM sbtest%d WHERE id BETWEEN ? AND ?"
	qIndexUpdate    = "UPDATE sbtest%d SET k=k+1 WHERE id=?"
	qNonIndexUpdate = "UPDATE sbtest%d SET c=? WHERE id=?"
	qDelete         = "DELETE FROM sbtest%d WHERE id=?"
	qInsert         = "INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)"
	qScan           = "SELECT * FROM sbtest%d WHERE LENGTH(c) < 0"
)

// marks is n placeholders for an IN list: "?, ?, ?".
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// templates are the statements a worker of testType name prepares for each
// table, in the order the event uses them. The insert test builds its text
// per event (insertText) and has none.
func templates(name string, r int) []string {
	switch name {
	case "point-query":
		return []string{qPoint}
	case "random-points":
		return []string{"SELECT c FROM sbtest%d WHERE id IN (" + marks(r) + ")"}
	case "hot-points":
		return []string{"SELECT c FROM sbtest%d WHERE id IN (" + marks(100) + ")"}
	case "points-covered-pk":
		return []string{"SELECT id FROM sbtest%d WHERE id IN (" + marks(100) + ")"}
	case "points-notcovered-pk":
		return []string{"SELECT id, c FROM sbtest%d WHERE id IN (" + marks(100) + ")"}
	case "points-covered-si":
		return []string{"SELECT k FROM sbtest%d WHERE k IN (" + marks(100) + ")"}
	case "points-notcovered-si":
		return []string{"SELECT k, c FROM sbtest%d WHERE k IN (" + marks(100) + ")"}
	case "range-covered-pk":
		return []string{"SELECT id FROM sbtest%d WHERE id BETWEEN ? AND ?"}
	case "range-notcovered-pk":
		return []string{"SELECT id, c FROM sbtest%d WHERE id BETWEEN ? AND ?"}
	case "range-covered-si":
		return []string{"SELECT k FROM sbtest%d WHERE k BETWEEN ? AND ?"}
	case "range-notcovered-si":
		return []string{"SELECT k, c FROM sbtest%d WHERE k BETWEEN ? AND ?"}
	case "read-only":
		return []string{qPoint, qSimple, qSum, qOrder, qDistinct}
	case "read-only-simple":
		return []string{qPoint, qSimple}
	case "read-only-sum":
		return []string{qPoint, qSum}
	case "read-only-order":
		return []string{qPoint, qOrder}
	case "read-only-distinct":
		return []string{qPoint, qDistinct}
	case "read-only-count":
		return []string{qCount}
	case "scan":
		return []string{qScan}
	case "update-index":
		return []string{qIndexUpdate}
	case "update-nonindex", "update-one", "update-zipf":
		return []string{qNonIndexUpdate}
	case "update-inlist":
		// --random-points is never set for update-inlist, so its default of
		// 10 holds whatever the label says (§1.3).
		return []string{"UPDATE sbtest%d SET c=? WHERE id IN (" + marks(inlistUpdateIDs) + ")"}
	case "write-only":
		return []string{qIndexUpdate, qNonIndexUpdate, qDelete, qInsert}
	case "read-write":
		return []string{qPoint, qSimple, qSum, qOrder, qDistinct, qIndexUpdate, qNonIndexUpdate, qDelete, qInsert}
	case "delete":
		return []string{qDelete}
	}
	return nil
}

// inlistUpdateIDs is how many ids update-inlist updates per event.
const inlistUpdateIDs = 10

// Queries returns the statements a worker of t prepares for table (1-based),
// in the dialect's placeholder style, in the order an event uses them.
// BEGIN and COMMIT are not listed. Scan's statement runs as text, not
// prepared; insert builds a text statement per event and lists none.
func (t Test) Queries(d client.Dialect, table int) []string {
	ts := templates(t.Name, t.Range)
	out := make([]string, len(ts))
	for i, q := range ts {
		out[i] = d.Rebind(fmt.Sprintf(q, table))
	}
	return out
}

// insertText is the insert test's statement (oltp_insert.lua): text, not
// prepared. Where id 0 lets auto-increment assign the id (MySQL: the
// dialect's ZeroNumbersID) it is given 0; elsewhere (PostgreSQL) the id
// column is left out and the SERIAL sequence assigns it.
func insertText(d client.Dialect, table int, k int64, c, pad string) string {
	return string(appendInsertText(nil, d, table, k, []byte(c), []byte(pad)))
}

// appendInsertText writes insertText's statement into b.
func appendInsertText(b []byte, d client.Dialect, table int, k int64, c, pad []byte) []byte {
	b = append(b, "INSERT INTO sbtest"...)
	b = strconv.AppendInt(b, int64(table), 10)
	if d.ZeroNumbersID {
		b = append(b, " (id, k, c, pad) VALUES (0, "...)
	} else {
		b = append(b, " (k, c, pad) VALUES ("...)
	}
	b = strconv.AppendInt(b, k, 10)
	b = append(b, ", '"...)
	b = append(b, c...)
	b = append(b, "', '"...)
	b = append(b, pad...)
	return append(b, "')"...)
}

// createTable is the DDL of sbtestN (oltp_common.lua create_table, §2.1, with
// a primary key as in his ".pk1" runs), in storage engine engine on the
// MySQL family (InnoDB when "", as sysbench's default
// --mysql-storage-engine), in the dialect's table options and
// auto-increment column.
func createTable(d client.Dialect, table int, engine string) string {
	if engine == "" {
		engine = owned.DefaultStorageEngine
	}
	id, engine := d.AutoIncrement, d.TableOptions(engine)
	return fmt.Sprintf("CREATE TABLE sbtest%d(\n"+
		"  id %s,\n"+
		"  k INTEGER DEFAULT '0' NOT NULL,\n"+
		"  c CHAR(120) DEFAULT '' NOT NULL,\n"+
		"  pad CHAR(60) DEFAULT '' NOT NULL,\n"+
		"  PRIMARY KEY (id)\n"+
		")%s", table, id, engine)
}

// createIndex is the secondary index, built after the load.
func createIndex(table int) string {
	return fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", table, table)
}
