package ibench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/qpslab/qpslab/internal/client"
)

// The schema, indexes and statements as iibench.py writes them
// (create_table_mysql, create_table_postgres, create_index_*, the insert,
// delete and query makers).

// createTable is the table's CREATE statement for a server of dialect d,
// in storage engine engine on the MySQL family (the server's default when
// ""), ending with the dialect's table options.
func createTable(d client.Dialect, t, engine string) string {
	id, key := d.BigIdentity("transactionid")
	return "CREATE TABLE " + t + " (transactionid " + id + ", dateandtime " + d.LocalTimestamp + ", " +
		"cashregisterid int not null, customerid int not null, productid int not null, price int not null, data varchar(4000)" +
		key + ")" + d.TableOptions(engine)
}

// idCache is how many ids a session's sequence takes at a time where the
// server hands them out so (PostgreSQL), as the reference's does.
const idCache = 1000

// afterCreate are statements run once the table exists: the id's cache
// where the dialect has one (PostgreSQL's sequence caches 1000 values, as
// the reference's does).
func afterCreate(d client.Dialect, t string) []string {
	if q := d.CacheIdentity(t, "transactionid", idCache); q != "" {
		return []string{q}
	}
	return nil
}

// Index names, as the reference's: <table>_marketsegment and so on.
var indexes = []struct{ suffix, cols string }{
	{"marketsegment", "productid, customerid, price"},
	{"registersegment", "cashregisterid, customerid, price"},
	{"pdc", "price, dateandtime, customerid"},
}

// createIndexes are the statements that build the three secondary indexes:
// one ALTER TABLE with three ADD INDEX on MySQL (InnoDB), one ALTER TABLE
// per index on MyRocks (engine rocksdb), three CREATE INDEX on a server
// without ADD INDEX (PostgreSQL), as the reference does.
func createIndexes(d client.Dialect, t, engine string) []string {
	if !d.AlterAddIndex {
		var out []string
		for _, ix := range indexes {
			out = append(out, "CREATE INDEX "+t+"_"+ix.suffix+" ON "+t+" ("+ix.cols+")")
		}
		return out
	}
	if engine == "rocksdb" {
		var out []string
		for _, ix := range indexes {
			out = append(out, "ALTER TABLE "+t+" ADD INDEX "+t+"_"+ix.suffix+" ("+ix.cols+")")
		}
		return out
	}
	var adds []string
	for _, ix := range indexes {
		adds = append(adds, "ADD INDEX "+t+"_"+ix.suffix+" ("+ix.cols+")")
	}
	return []string{"ALTER TABLE " + t + " " + strings.Join(adds, ", ")}
}

// dataChars is the base64 alphabet the reference's data column draws from
// (a base64 buffer of random bytes).
const dataChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// rowGen makes rows as generate_cols does: cashregisterid in [0, 1000),
// productid in [0, 10000), customerid in [0, 100000), price in [0, 500),
// dateandtime the time the statement is made (one for the whole batch), and
// data of length uniform in [10, 20] whose first int(len·0.75·0.5)
// characters are random base64 and the rest 'a' (about half compressible).
type rowGen struct {
	r   *rand.Rand
	buf []byte // the statement being built, reused
}

// insert returns a multi-row INSERT of n rows into t, a string of its own
// (for a caller that keeps it beyond the next statement).
func (g *rowGen) insert(t string, n int, now time.Time) string {
	return string(g.build(t, n, now))
}

// build writes a multi-row INSERT of n rows into t in g's buffer, without
// allocating once the buffer has grown: it is good until the next call.
func (g *rowGen) build(t string, n int, now time.Time) []byte {
	b := g.buf[:0]
	b = append(b, "INSERT INTO "...)
	b = append(b, t...)
	b = append(b, " (dateandtime, cashregisterid, customerid, productid, price, data) VALUES "...)
	var tsBuf [32]byte
	ts := now.AppendFormat(tsBuf[:0], "2006-01-02 15:04:05")
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "('"...)
		b = append(b, ts...)
		b = append(b, "',"...)
		b = strconv.AppendInt(b, int64(g.r.IntN(1000)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(g.r.IntN(100000)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(g.r.IntN(10000)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(g.r.IntN(500)), 10)
		b = append(b, ",'"...)
		l := 10 + g.r.IntN(11)
		rnd := int(float64(l) * 0.75 * 0.5)
		for j := 0; j < l; j++ {
			if j < rnd {
				b = append(b, dataChars[g.r.IntN(len(dataChars))])
			} else {
				b = append(b, 'a')
			}
		}
		b = append(b, "')"...)
	}
	g.buf = b
	return b
}

// bufText is the statement built in b as a string that shares b's memory,
// without the copy (and, with the garbage collector off, the fresh pages)
// string(b) would cost per statement. It is safe because the caller passes
// it straight to a client.Conn's Exec or Query and does not touch b again
// until the next statement: the client copies a statement's text into its
// own request buffer during the call and keeps no reference to it, on the
// lean path (myWire and pgWire queryString) and on the drivers'
// (go-sql-driver's COM_QUERY packet, pgx's simple-protocol Query message,
// with pgx's statement caches off).
func bufText(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// deleteOldest is the delete of the n oldest rows from min on.
func deleteOldest(d client.Dialect, t string, min int64, n int) string {
	if !d.DeleteLimit {
		return fmt.Sprintf("DELETE FROM %s WHERE transactionid IN (SELECT transactionid FROM %s WHERE transactionid >= %d ORDER BY transactionid ASC LIMIT %d)", t, t, min, n)
	}
	return fmt.Sprintf("DELETE FROM %s WHERE transactionid >= %d ORDER BY transactionid ASC LIMIT %d", t, min, n)
}

// rangeQuery is one of the three range queries on the secondary indexes,
// LIMIT n: which picks the index (0 marketsegment, 1 registersegment, 2
// pdc). The index is named with the dialect's hint (MySQL's FORCE INDEX);
// the start is the dialect's first placeholder. The registersegment
// form's strict > is the reference's.
func rangeQuery(d client.Dialect, t string, which, n int) string {
	start := d.Placeholder(1)
	force := func(ix string) string { return d.ForceIndex(t + "_" + ix) }
	lim := strconv.Itoa(n)
	switch which {
	case 0:
		return "SELECT productid, customerid, price FROM " + t + force("marketsegment") + " WHERE productid >= " + start + " ORDER BY productid, customerid, price LIMIT " + lim
	case 1:
		return "SELECT cashregisterid, customerid, price FROM " + t + force("registersegment") + " WHERE cashregisterid > " + start + " ORDER BY cashregisterid, customerid, price LIMIT " + lim
	}
	return "SELECT price, dateandtime, customerid FROM " + t + force("pdc") + " WHERE price >= " + start + " ORDER BY price, dateandtime, customerid LIMIT " + lim
}

// rangeStart is the uniform start of a range query of form which.
func rangeStart(r *rand.Rand, which int) int {
	switch which {
	case 0:
		return r.IntN(10000)
	case 1:
		return r.IntN(1000)
	}
	return r.IntN(500)
}

// pointQuery is the point query on n primary-key values, with the
// dialect's placeholders.
func pointQuery(d client.Dialect, t string, n int) string {
	marks := make([]string, n)
	for i := range marks {
		marks[i] = d.Placeholder(i + 1)
	}
	return "SELECT transactionid, productid, data FROM " + t + " WHERE transactionid IN (" + strings.Join(marks, ", ") + ")"
}

// newRand is a random source for a seed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x51ed270b27f9a3c5)) }
