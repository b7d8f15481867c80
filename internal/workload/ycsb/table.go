package ycsb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/owned"
	"github.com/qpslab/qpslab/internal/settle"
)

// TableName is YCSB's table (CoreWorkload's table default).
const TableName = "usertable"

// Table is the usertable on a server: YCSB's JDBC binding's schema,
// YCSB_KEY VARCHAR(255) PRIMARY KEY and FIELD0 … FIELDn-1 TEXT.
type Table struct {
	Dialect       client.Dialect // the server's SQL (suite.Server.Dialect)
	Dial          func(ctx context.Context) (client.Conn, error)
	StorageEngine string // the MySQL family's storage engine (the dialect's TableOptions)
	Records       int64
	FieldCount    int
	FieldLength   int
	Warn          func(line string) // told what the settle after the load did not reach
	Shared        bool              // the server is not qpslab's (settle.Options.Shared)
}

// loadChunk is the rows one COPY or LOAD DATA carries (its own
// transaction), and loadSeedBlock the rows drawn from one random stream:
// the rows depend only on the seed.
const (
	loadChunk     = 100_000
	loadSeedBlock = 100
)

// fieldAlphabet are the characters of the fields' random values: none
// needs escaping in COPY's text format.
const fieldAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// appendValue appends a field's random value of n characters.
func appendValue(b []byte, r interface{ Uint64() uint64 }, n int) []byte {
	for n > 0 {
		x := r.Uint64()
		for i := 0; i < 10 && n > 0; i++ {
			b = append(b, fieldAlphabet[x&63])
			x >>= 6
			n--
		}
	}
	return b
}

// column is field i's column name as the loader writes it: lower case,
// which both protocols take for the unquoted FIELDi of the DDL.
func column(i int) string { return "field" + strconv.Itoa(i) }

// comment is what the table records of its load, checked before a run
// that keeps it (--no-load).
func (t Table) comment() string {
	return fmt.Sprintf("qpslab ycsb records=%d fieldcount=%d fieldlength=%d", t.Records, t.FieldCount, t.FieldLength)
}

func (t Table) ddl() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + TableName + " (YCSB_KEY VARCHAR(255) NOT NULL PRIMARY KEY")
	for i := range t.FieldCount {
		fmt.Fprintf(&b, ", FIELD%d TEXT", i)
	}
	b.WriteString(")" + t.Dialect.TableOptions(t.StorageEngine) + t.Dialect.CommentClause(t.comment()))
	return b.String()
}

// Drop drops the usertable if qpslab made it (owned.Drop).
func (t Table) Drop(ctx context.Context) error {
	conn, err := t.Dial(ctx)
	if err != nil {
		return fmt.Errorf("drop the usertable: connect: %w", err)
	}
	defer conn.Close()
	if err := owned.Drop(ctx, t.Dialect, conn, []string{TableName}); err != nil {
		return fmt.Errorf("drop the usertable: %w", err)
	}
	return nil
}

// Load creates the usertable and fills it with key numbers 0 … Records-1
// (YCSB's load: the keys hashed, so in no order), each field a random
// value of FieldLength characters drawn from seed, through COPY or LOAD
// DATA in chunks of loadChunk rows. progress gets the rows loaded so far.
func (t Table) Load(ctx context.Context, seed uint64, progress func(rows int64)) error {
	conn, err := t.Dial(ctx)
	if err != nil {
		return fmt.Errorf("load the usertable: connect: %w", err)
	}
	defer conn.Close()
	if err := owned.Create(ctx, t.Dialect, conn, []owned.Table{{Name: TableName, DDL: t.ddl()}}); err != nil {
		return fmt.Errorf("load the usertable: %w", err)
	}
	if q := t.Dialect.CommentOn(TableName, t.comment()); q != "" {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("load the usertable: %w", err)
		}
	}
	cols := []string{"ycsb_key"}
	for i := range t.FieldCount {
		cols = append(cols, column(i))
	}
	var done int64
	for lo := int64(0); lo < t.Records; lo += loadChunk {
		n := min(loadChunk, t.Records-lo)
		var r interface{ Uint64() uint64 }
		line := func(b []byte, i int64) []byte {
			k := lo + i - 1
			if k%loadSeedBlock == 0 {
				r = newRand(seed, 1<<63|uint64(k/loadSeedBlock))
			}
			b = append(AppendKey(b, k), '\t')
			for f := range t.FieldCount {
				if f > 0 {
					b = append(b, '\t')
				}
				b = appendValue(b, r, t.FieldLength)
			}
			return append(b, '\n')
		}
		src := client.Lines(n, line, func(k int64) { done += k; progress(done) })
		got, err := client.Copy(ctx, conn, TableName, cols, src)
		if err != nil {
			return fmt.Errorf("load the usertable: %w", err)
		}
		if got != n {
			return fmt.Errorf("load the usertable: the server took %d of %d rows", got, n)
		}
	}
	return nil
}

// Settle analyzes and flushes the usertable after the load, with no wait
// (settle.Run), so every workload finds the same statistics after every
// load.
func (t Table) Settle(ctx context.Context) error {
	err := settle.Run(ctx, settle.Options{Dialect: t.Dialect, Dial: t.Dial, Tables: []string{TableName}, Warn: t.Warn, Shared: t.Shared})
	if err != nil {
		return fmt.Errorf("analyze and flush after the load: %w", err)
	}
	return nil
}

// check verifies, before a workload runs on it, that the usertable is
// qpslab's, of the plan's storage engine, and loaded with the plan's
// records, fields and field length (the comment its load left), and
// returns how many rows it has now (the load's and the inserts' since),
// counted where the workload inserts (count: its insert counter starts
// after them). A workload that does not insert reads only the loaded keys,
// and is spared the count, a scan of the whole table that would also
// warm an IO-bound run's cache just before it.
func (t Table) check(ctx context.Context, conn client.Conn, count bool) (int64, error) {
	names := []string{TableName}
	if err := owned.Verify(ctx, t.Dialect, conn, names); err != nil {
		return 0, err
	}
	if err := owned.VerifyStorageEngine(ctx, t.Dialect, conn, names, t.StorageEngine); err != nil {
		return 0, err
	}
	_, row, _, err := client.Row(ctx, conn, t.Dialect.ReadComment(TableName), nil)
	if err != nil {
		return 0, fmt.Errorf("read how the usertable was loaded: %w", err)
	}
	var got string
	if len(row) > 0 && row[0] != nil {
		got = fmt.Sprint(row[0])
		if b, ok := row[0].([]byte); ok {
			got = string(b)
		}
	}
	if got != t.comment() {
		return 0, fmt.Errorf("the usertable was loaded %s, and this run wants --records %d --fieldcount %d --fieldlength %d: give those of its load, or load it again (leave out --no-load)",
			loadedAs(got), t.Records, t.FieldCount, t.FieldLength)
	}
	if !count {
		return t.Records, nil
	}
	n, err := client.Scalar(ctx, conn, "SELECT count(*) FROM "+TableName)
	if err != nil {
		return 0, fmt.Errorf("count the usertable's rows: %w", err)
	}
	if n < t.Records {
		return 0, fmt.Errorf("the usertable has %d rows, fewer than the %d it was loaded with: load it again (leave out --no-load)", n, t.Records)
	}
	return n, nil
}

// loadedAs says how the comment says the table was loaded.
func loadedAs(comment string) string {
	f := strings.Fields(comment)
	if len(f) != 5 || f[0] != "qpslab" || f[1] != "ycsb" {
		return "by no ycsb load qpslab knows"
	}
	var out []string
	for _, kv := range f[2:] {
		out = append(out, "--"+strings.Replace(kv, "=", " ", 1))
	}
	return "with " + strings.Join(out, " ")
}
