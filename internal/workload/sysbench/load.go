package sysbench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/owned"
	"github.com/qpslab/qpslab/internal/settle"
)

// Target says where the sbtestN tables live.
type Target struct {
	Dialect client.Dialect // the server's SQL (suite.Server.Dialect)
	// Dial opens one dedicated connection to qpslab's own database. Workers
	// get theirs from it (prepared or not, as the caller opened it), and so
	// do the loader and Postwrite.
	Dial   func(ctx context.Context) (client.Conn, error)
	Tables int   // sbtest1..Tables
	Rows   int64 // rows per table (sysbench --table-size)
	// StorageEngine is the storage engine of the tables on the MySQL family
	// (the Dialect's TableOptions); "" for InnoDB.
	StorageEngine string
	// Warn, if set, is told what Postwrite's settle did not reach.
	Warn func(line string)
	// Shared: the server is not qpslab's (suite.Server.External), and
	// Postwrite changes nothing on it but its tables (settle.Options.Shared).
	Shared bool
}

func (t Target) check() error {
	if t.Dial == nil || t.Tables < 1 || t.Rows < 0 {
		return fmt.Errorf("sysbench: need a dial function, tables >= 1 and rows >= 0 (have %d tables, %d rows)", t.Tables, t.Rows)
	}
	if t.Dialect.Placeholder == nil {
		return fmt.Errorf("sysbench: no SQL dialect: the server speaks no protocol qpslab knows")
	}
	return nil
}

// Load bounds: a multi-row INSERT carries this many rows (about 100 KB; 2,000
// placeholders, well under both protocols' 65,535), and a transaction this
// many INSERTs.
const (
	loadRowsPerInsert = 500
	loadTrxStatements = 20
	loadMaxChunk      = 1 << 20 // rows a loader connection takes at a time
	loadSeedBlock     = 100     // rows drawn from one random stream
)

// Load methods.
const (
	// LoadInsert writes the rows as multi-row INSERTs, as sysbench prepare
	// does (the measured load, comparable with it).
	LoadInsert = "insert"
	// LoadCopy writes them with COPY (PostgreSQL) or LOAD DATA LOCAL INFILE
	// (the MySQL family): faster, when the load is only setup.
	LoadCopy = "copy"
)

// LoadOptions shape a load.
type LoadOptions struct {
	Threads int    // connections loading at once (default 1)
	Method  string // LoadInsert (the default) or LoadCopy
	Seed    uint64 // seeds k, c and pad: the same seed loads the same rows, whatever the method
	// Progress, if set, is called after every INSERT with the rows loaded so
	// far over all tables (Tables*Rows at the end). Calls never overlap.
	Progress func(rowsDone int64)
}

// Load (re)creates sbtest1..Tables and fills each with ids 1..Rows (explicit
// ids, in multi-row INSERTs or with COPY / LOAD DATA: o.Method), k uniform
// in [1, Rows] and the c and pad digit strings (§2.2). The work is split into id ranges shared by Threads
// connections, so one table loads in parallel as well as several. The k_N
// indexes are built after the load; on PostgreSQL the id sequence is then set
// past Rows so that the insert test's SERIAL ids do not collide.
//
// The tables must not exist: Drop them first (a table that exists makes the
// load fail before it writes a row, so nothing of anyone's is touched).
func (t Target) Load(ctx context.Context, o LoadOptions) error {
	if err := t.check(); err != nil {
		return err
	}
	load := t.loadChunk
	switch o.Method {
	case "", LoadInsert:
	case LoadCopy:
		load = t.copyChunk
	default:
		return fmt.Errorf("load sbtest tables: unknown load method %q: use insert or copy", o.Method)
	}
	threads := max(o.Threads, 1)
	conn, err := t.Dial(ctx)
	if err != nil {
		return fmt.Errorf("load sbtest tables: connect: %w", err)
	}
	defer conn.Close()
	var tables []owned.Table
	for tb, name := range t.names() {
		tables = append(tables, owned.Table{Name: name, DDL: createTable(t.Dialect, tb+1, t.StorageEngine)})
	}
	if err := owned.Create(ctx, t.Dialect, conn, tables); err != nil {
		return fmt.Errorf("load sbtest tables: %w", err)
	}

	var jobs []func(context.Context, client.Conn) error
	var mu sync.Mutex
	var done int64
	// With at least as many tables as threads, each thread loads whole
	// tables (as sysbench prepare does): two connections appending to the
	// same B-tree contend for it. With fewer tables, tables are split.
	// Chunks are whole seed blocks, so that the rows do not depend on threads.
	perTable := max(1, (threads+t.Tables-1)/t.Tables)
	chunk := min((t.Rows+int64(perTable)-1)/int64(perTable), loadMaxChunk)
	chunk = max((chunk+loadSeedBlock-1)/loadSeedBlock*loadSeedBlock, loadSeedBlock)
	// Jobs go round the tables, so that threads start on different ones.
	for lo := int64(1); lo <= t.Rows; lo += chunk {
		hi := min(lo+chunk-1, t.Rows)
		for tb := 1; tb <= t.Tables; tb++ {
			jobs = append(jobs, func(ctx context.Context, c client.Conn) error {
				return load(ctx, c, t.rowSource(o.Seed, tb, lo, hi), func(n int64) {
					mu.Lock()
					defer mu.Unlock()
					done += n
					if o.Progress != nil {
						o.Progress(done)
					}
				})
			})
		}
	}
	if err := settle.Parallel(ctx, threads, t.Dial, jobs); err != nil {
		return fmt.Errorf("load sbtest tables: %w", err)
	}

	jobs = jobs[:0]
	for tb := 1; tb <= t.Tables; tb++ {
		jobs = append(jobs, func(ctx context.Context, c client.Conn) error {
			if _, err := c.Exec(ctx, createIndex(tb)); err != nil {
				return fmt.Errorf("create index k_%d: %w", tb, err)
			}
			if q := t.Dialect.ResyncAutoIncrement(fmt.Sprintf("sbtest%d", tb), "id"); q != "" {
				if _, err := c.Query(ctx, q); err != nil {
					return fmt.Errorf("set the id sequence of sbtest%d: %w", tb, err)
				}
			}
			return nil
		})
	}
	if err := settle.Parallel(ctx, min(threads, t.Tables), t.Dial, jobs); err != nil {
		return fmt.Errorf("load sbtest tables: %w", err)
	}
	return nil
}

// rowSource draws the rows of ids lo..hi of a table; lo-1 is a multiple
// of loadSeedBlock. Each block of ids draws from a stream of its own, so
// the rows depend only on the seed, never on the threads, the method or
// which connection loads them.
type rowSource struct {
	seed   uint64
	tb     int
	rows   int64 // the table's size: k is uniform in [1, rows]
	id, hi int64 // the next id and the last
	r      *rand.Rand
	k      int64
	c      [cLen]byte
	pad    [padLen]byte
}

func (t Target) rowSource(seed uint64, tb int, lo, hi int64) *rowSource {
	return &rowSource{seed: seed, tb: tb, rows: t.Rows, id: lo, hi: hi}
}

// next draws the next row into s.k, s.c and s.pad and returns its id, or
// 0 after the last.
func (s *rowSource) next() int64 {
	if s.id > s.hi {
		return 0
	}
	id := s.id
	s.id++
	if (id-1)%loadSeedBlock == 0 {
		s.r = newRand(s.seed, 1<<63|uint64(s.tb)<<40|uint64(id-1)/loadSeedBlock)
	}
	digits(s.r, s.c[:])
	digits(s.r, s.pad[:])
	s.k = 1 + s.r.Int64N(s.rows)
	return id
}

// insertRows returns the multi-row INSERT of rows rows into sbtest tb.
func (t Target) insertRows(tb, rows int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO sbtest%d (id, k, c, pad) VALUES ", tb)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, ?)")
	}
	return t.Dialect.Rebind(b.String())
}

// loadChunk inserts the rows of rs (ids lo..hi of table tb) as prepared multi-row INSERTs
// of loadRowsPerInsert rows (the server parses the statement once, not
// once per INSERT), loadTrxStatements statements to a transaction, and a
// last short INSERT for the rest. The arguments are typed and the c and pad
// values sit in one reused buffer: binding allocates nothing.
func (t Target) loadChunk(ctx context.Context, c client.Conn, rs *rowSource, progress func(int64)) error {
	tb, lo, hi := rs.tb, rs.id, rs.hi
	var full client.Stmt
	if hi-lo+1 >= loadRowsPerInsert {
		var err error
		if full, err = c.Prepare(ctx, t.insertRows(tb, loadRowsPerInsert)); err != nil {
			return fmt.Errorf("prepare the insert into sbtest%d: %w", tb, err)
		}
	}
	args := make([]client.Arg, 0, 4*loadRowsPerInsert)
	text := make([]byte, 0, (cLen+padLen)*loadRowsPerInsert)
	inTrx, stmts := false, 0
	flush := func() error {
		n := len(args) / 4
		if n == 0 {
			return nil
		}
		if !inTrx {
			if err := c.Begin(ctx); err != nil {
				return fmt.Errorf("insert into sbtest%d: BEGIN: %w", tb, err)
			}
			inTrx = true
		}
		s := full
		if n < loadRowsPerInsert {
			var err error
			if s, err = c.Prepare(ctx, t.insertRows(tb, n)); err != nil {
				c.Rollback(context.WithoutCancel(ctx))
				return fmt.Errorf("prepare the last insert into sbtest%d: %w", tb, err)
			}
		}
		if _, err := s.ExecArgs(ctx, args); err != nil {
			c.Rollback(context.WithoutCancel(ctx))
			return fmt.Errorf("insert into sbtest%d: %w", tb, err)
		}
		if stmts++; stmts%loadTrxStatements == 0 {
			if err := c.Commit(ctx); err != nil {
				return fmt.Errorf("insert into sbtest%d: COMMIT: %w", tb, err)
			}
			inTrx = false
		}
		progress(int64(n))
		args, text = args[:0], text[:0]
		return nil
	}
	for id := rs.next(); id != 0; id = rs.next() {
		at := len(text)
		text = append(append(text, rs.c[:]...), rs.pad[:]...)
		args = append(args, client.Int(id), client.Int(rs.k), client.Bytes(text[at:at+cLen]), client.Bytes(text[at+cLen:]))
		if len(args) == 4*loadRowsPerInsert {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if inTrx {
		if err := c.Commit(ctx); err != nil {
			return fmt.Errorf("insert into sbtest%d: COMMIT: %w", tb, err)
		}
	}
	return nil
}

// copyChunk loads the rows of rs (ids lo..hi of table tb) in one COPY
// (PostgreSQL) or LOAD DATA LOCAL INFILE (MySQL family), the rows written
// as text as the server reads them.
func (t Target) copyChunk(ctx context.Context, c client.Conn, rs *rowSource, progress func(int64)) error {
	tb, lo, hi := rs.tb, rs.id, rs.hi
	r := &copyReader{src: rs, progress: progress}
	n, err := client.Copy(ctx, c, "sbtest"+strconv.Itoa(tb), []string{"id", "k", "c", "pad"}, r)
	if err != nil {
		return err
	}
	if want := hi - lo + 1; n != want {
		return fmt.Errorf("copy into sbtest%d: the server took %d of %d rows", tb, n, want)
	}
	return nil
}

// copyReader writes a rowSource's rows in COPY's and LOAD DATA's text
// format ("id\tk\tc\tpad\n"; the values hold no tab, newline or
// backslash), and reports progress every loadRowsPerInsert rows.
type copyReader struct {
	src      *rowSource
	line     []byte
	off      int
	n        int64 // rows written, not yet reported
	progress func(int64)
}

func (r *copyReader) Read(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		if r.off == len(r.line) {
			id := r.src.next()
			if id == 0 {
				if r.n > 0 {
					r.progress(r.n)
					r.n = 0
				}
				if written == 0 {
					return 0, io.EOF
				}
				break
			}
			b := strconv.AppendInt(r.line[:0], id, 10)
			b = append(b, '\t')
			b = strconv.AppendInt(b, r.src.k, 10)
			b = append(b, '\t')
			b = append(b, r.src.c[:]...)
			b = append(b, '\t')
			b = append(b, r.src.pad[:]...)
			r.line, r.off = append(b, '\n'), 0
			if r.n++; r.n == loadRowsPerInsert {
				r.progress(r.n)
				r.n = 0
			}
		}
		k := copy(p[written:], r.line[r.off:])
		r.off += k
		written += k
	}
	return written, nil
}

// Drop drops sbtest1..Tables and forgets them. Every one of them that exists
// must be recorded in qpslab_tables; if one is not, nothing is dropped.
func (t Target) Drop(ctx context.Context) error {
	if err := t.check(); err != nil {
		return err
	}
	conn, err := t.Dial(ctx)
	if err != nil {
		return fmt.Errorf("drop sbtest tables: connect: %w", err)
	}
	defer conn.Close()
	if err := t.dropRecorded(ctx, conn); err != nil {
		return fmt.Errorf("drop sbtest tables: %w", err)
	}
	return nil
}

// names are sbtest1..Tables.
func (t Target) names() []string {
	var out []string
	for tb := 1; tb <= t.Tables; tb++ {
		out = append(out, "sbtest"+strconv.Itoa(tb))
	}
	return out
}

// dropRecorded drops sbtest1..Tables if qpslab made them (owned.Drop).
func (t Target) dropRecorded(ctx context.Context, conn client.Conn) error {
	return owned.Drop(ctx, t.Dialect, conn, t.names())
}

// verify checks that sbtest1..Tables exist, that qpslab recorded them and
// that they are tables of t.StorageEngine, before a test reads or writes them.
func (t Target) verify(ctx context.Context, conn client.Conn) error {
	if err := owned.Verify(ctx, t.Dialect, conn, t.names()); err != nil {
		return err
	}
	return owned.VerifyStorageEngine(ctx, t.Dialect, conn, t.names(), t.StorageEngine)
}

// PostwriteWait is the wait run.sh's postwrite step aims for (§1.2):
// min(1200, 60 + tables*rows/1e6) seconds.
func (t Target) PostwriteWait() time.Duration {
	return settle.Wait(float64(t.Tables) * float64(t.Rows))
}

// Postwrite is run.sh's "flush and wait" after a write step (§1.2, §4.6):
// settle.Run over sbtest1..Tables, waiting PostwriteWait()*scale (scale 1
// as the reference; tests use 0), and pausing settle.RocksDBPause*scale
// between MyRocks' memtable flush and L0 compaction.
func (t Target) Postwrite(ctx context.Context, scale float64) error {
	if err := t.check(); err != nil {
		return err
	}
	err := settle.Run(ctx, settle.Options{Dialect: t.Dialect, Dial: t.Dial, Tables: t.names(),
		Wait: time.Duration(float64(t.PostwriteWait()) * scale), Pause: time.Duration(float64(settle.RocksDBPause) * scale), Warn: t.Warn,
		Shared: t.Shared})
	if err != nil {
		return fmt.Errorf("postwrite: %w", err)
	}
	return nil
}
