// Package settle is the reference harness's flush-and-wait after a write
// phase (mytools run.sh's postwrite, the Insert Benchmark's vac_my and
// vac_pg after l.i2): make the server write back what the writes left dirty
// and refresh its statistics, then let it rest until a fixed time has
// passed since the wait began, so the next step starts from a settled
// server rather than from the last one's debt. InnoDB is told to flush its
// dirty pages; MyRocks is waited for until no compaction runs, then its
// memtable is flushed and its L0 compacted. Every suite that writes uses
// it; it knows SQL, not suites.
package settle

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/client"
)

// Options say what to settle and for how long.
type Options struct {
	// Dialect is the server's: what it has to flush, vacuum or analyze
	// with (ResetLog, Checkpoint, Vacuum, Analyze; StorageEngines: InnoDB's
	// flushing, MyRocks' wait).
	Dialect client.Dialect
	// Dial opens one dedicated connection to the database the tables are in.
	Dial   func(ctx context.Context) (client.Conn, error)
	Tables []string // vacuumed where the dialect has Vacuum (PostgreSQL), else analyzed (MySQL), in parallel
	// Wait is the least time from the start of Run to its end: the
	// reference's min(1200, 60 + rows/1e6) s, scaled (0: flush only).
	Wait time.Duration
	// ResetMaster drops the binary logs first (the dialect's ResetLog,
	// MySQL's RESET MASTER; the Insert Benchmark's vac_my does, so a long
	// run's binlogs do not fill the disk). A server without binary logging
	// skips it.
	ResetMaster bool
	// IndexCleanup vacuums with INDEX_CLEANUP ON where the dialect
	// vacuums (PostgreSQL 12 and later, Dialect.IndexCleanup, as the
	// Insert Benchmark's vac_pg does).
	IndexCleanup bool
	// Pause is MyRocks' pause between the memtable flush and the L0
	// compaction: the reference's RocksDBPause, scaled as Wait is.
	Pause time.Duration
	// PollEvery is how often MyRocks' running compactions are counted
	// while waiting for them to end (0: the reference's 10 s).
	PollEvery time.Duration
	// Shared: the server is not qpslab's (a target): nothing server-wide
	// is changed (no RESET MASTER, no SET GLOBAL to make InnoDB flush or
	// MyRocks compact, no CHECKPOINT, which needs a superuser); only the
	// tables are analyzed or vacuumed, and the wait is kept.
	Shared bool
	// Warn, if set, is told what the settle did not reach: on PostgreSQL,
	// a table whose pages VACUUM did not all mark all-visible.
	Warn func(line string)
}

// RocksDBPause is the reference's sleep between MyRocks' memtable flush
// and its L0 compaction.
const RocksDBPause = 20 * time.Second

// innodbFlush are the variables Run lowers to make InnoDB write back its
// dirty pages, in the order they are set (restored in reverse).
var innodbFlush = []struct {
	name  string
	value string
}{
	{"innodb_max_dirty_pages_pct_lwm", "1"},
	{"innodb_max_dirty_pages_pct", "1"},
	{"innodb_idle_flush_pct", "100"},
}

// Run settles the server, as its dialect says: on MySQL-family servers
// (RESET MASTER where asked, then) ANALYZE TABLE every table
// in parallel with InnoDB told to flush its dirty pages
// (innodb_max_dirty_pages_pct_lwm=1, innodb_max_dirty_pages_pct=1,
// innodb_idle_flush_pct=100; a variable the server lacks is skipped) unless
// every table is MyRocks', and, when a table is MyRocks', the reference's
// MyRocks wait (rocksdbSettle); on PostgreSQL CHECKPOINT, VACUUM (ANALYZE)
// every table in parallel, then CHECKPOINT again; then it sleeps out what
// is left of o.Wait and puts the InnoDB variables back. It returns an error wrapping
// ctx.Err() if ctx ends first, after restoring the variables.
func Run(ctx context.Context, o Options) (err error) {
	// A statement that ctx's end cut fails with its connection's error (the
	// client closes the connection under it): the error still says it was
	// ctx, so an interrupted settle is told as interrupted, not failed.
	defer func() {
		if cerr := ctx.Err(); err != nil && cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %v", cerr, err)
		}
	}()
	if o.Dial == nil {
		return fmt.Errorf("settle: no dial function")
	}
	deadline := time.Now().Add(o.Wait)
	conn, err := o.Dial(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()

	d := o.Dialect
	var jobs []func(context.Context, client.Conn) error
	rocks := false
	if d.ResetLog != "" && o.ResetMaster && !o.Shared {
		// Fails on a server without binary logging, which has none to drop.
		conn.Exec(ctx, d.ResetLog)
	}
	if d.StorageEngines {
		var innodb bool
		if rocks, innodb, err = storageEngines(ctx, conn, o.Tables); err != nil {
			return err
		}
		flush := innodbFlush
		if rocks && !innodb || o.Shared {
			flush = nil // no InnoDB table to flush for
		}
		var set []string
		for i, v := range flush {
			// Saved in a session variable of this connection, so no value
			// needs to be read back; a variable the version lacks fails here.
			if _, err := conn.Exec(ctx, "SET @qpslab_saved_"+strconv.Itoa(i)+" = @@global."+v.name); err != nil {
				continue
			}
			if _, err := conn.Exec(ctx, "SET GLOBAL "+v.name+" = "+v.value); err != nil {
				continue
			}
			set = append(set, "SET GLOBAL "+v.name+" = @qpslab_saved_"+strconv.Itoa(i))
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			for i := len(set) - 1; i >= 0; i-- {
				if _, rerr := conn.Exec(rctx, set[i]); rerr != nil && err == nil {
					err = fmt.Errorf("restore InnoDB flushing (%s): %w", set[i], rerr)
				}
			}
		}()
	}
	// A CHECKPOINT first: right after a load (the shipped configs,
	// synchronous_commit off) VACUUM marked no page all-visible (1,000
	// rows: none of 28 pages), 2 s later or after a CHECKPOINT all 28, so
	// the state it left depended on timing. A synchronous commit just
	// before the VACUUM did not change that: it is not the asynchronous
	// commits' WAL alone. On a loaded host the CHECKPOINT was not always
	// enough either: allVisible then vacuums again what is left.
	if d.Checkpoint != "" && !o.Shared {
		if _, err := conn.Exec(ctx, d.Checkpoint); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	vacuums := false
	for _, tb := range o.Tables {
		if q := d.Vacuum(tb, o.IndexCleanup); q != "" {
			vacuums = true
			jobs = append(jobs, func(ctx context.Context, c client.Conn) error {
				if _, err := c.Exec(ctx, q); err != nil {
					return fmt.Errorf("vacuum %s: %w", tb, err)
				}
				return nil
			})
			continue
		}
		jobs = append(jobs, func(ctx context.Context, c client.Conn) error {
			// ANALYZE TABLE returns a result set: read it, as a client must.
			if _, err := c.Query(ctx, d.Analyze(tb)); err != nil {
				return fmt.Errorf("analyze %s: %w", tb, err)
			}
			return nil
		})
	}
	if err := Parallel(ctx, min(len(o.Tables), 16), o.Dial, jobs); err != nil {
		return err
	}
	if vacuums {
		if err := allVisible(ctx, conn, o); err != nil {
			return err
		}
	}
	if d.Checkpoint != "" && !o.Shared {
		if _, err := conn.Exec(ctx, d.Checkpoint); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if rocks && !o.Shared {
		if err := rocksdbSettle(ctx, conn, o); err != nil {
			return fmt.Errorf("MyRocks: %w", err)
		}
	}
	if wait := time.Until(deadline); wait > 0 {
		tm := time.NewTimer(wait)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
			return fmt.Errorf("wait: %w", ctx.Err())
		}
	}
	return nil
}

// visiblePasses are the VACUUMs allVisible runs at most after the first,
// the first after visibleWait, each next after twice as long (3.2 s in all).
const (
	visiblePasses = 6
	visibleWait   = 50 * time.Millisecond
)

// allVisible vacuums again, with a growing pause before each pass, the
// tables VACUUM left with pages not all-visible (pg_class.relallvisible
// below relpages: the visibility map of a server that vacuums is
// PostgreSQL's), until none is left or visiblePasses are done; what is
// left then goes to o.Warn. A VACUUM skips the pages already all-visible,
// so a pass costs what is left, not the table. The state a settle leaves
// is then the same however soon it came after the writes (the load), so
// that every repeat's index-only scans find the same visibility map.
func allVisible(ctx context.Context, conn client.Conn, o Options) error {
	short := func() (map[string]int64, error) {
		left := map[string]int64{}
		for _, tb := range o.Tables {
			n, err := client.Scalar(ctx, conn, "SELECT relpages - relallvisible FROM pg_class WHERE oid = '"+tb+"'::regclass")
			if err != nil {
				return nil, fmt.Errorf("read the visibility of %s: %w", tb, err)
			}
			if n > 0 {
				left[tb] = n
			}
		}
		return left, nil
	}
	left, err := short()
	wait := visibleWait
	for pass := 0; err == nil && len(left) > 0 && pass < visiblePasses; pass++ {
		if err := sleep(ctx, wait); err != nil {
			return fmt.Errorf("vacuum again: %w", err)
		}
		wait *= 2
		for _, tb := range o.Tables {
			if left[tb] > 0 {
				if _, err := conn.Exec(ctx, "VACUUM "+tb); err != nil {
					return fmt.Errorf("vacuum %s again: %w", tb, err)
				}
			}
		}
		left, err = short()
	}
	if err != nil {
		return err
	}
	if len(left) > 0 && o.Warn != nil {
		var parts []string
		for _, tb := range o.Tables {
			if left[tb] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", tb, left[tb]))
			}
		}
		o.Warn(fmt.Sprintf("pages not all-visible after %d VACUUMs (%s): index-only scans read the heap for them, so repeats may not find the same state", visiblePasses+1, strings.Join(parts, ", ")))
	}
	return nil
}

// storageEngines says whether any of tables is a MyRocks table, and whether any is
// InnoDB's (or of an engine not known here: flushed as before MyRocks).
func storageEngines(ctx context.Context, conn client.Conn, tables []string) (rocks, innodb bool, err error) {
	if len(tables) == 0 {
		return false, true, nil
	}
	in := ""
	for i, t := range tables {
		if !identRE.MatchString(t) { // it goes into the query's text
			return false, false, fmt.Errorf("table name %q is not one qpslab makes", t)
		}
		if i > 0 {
			in += ", "
		}
		in += "'" + t + "'"
	}
	q := "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (" + in + ") AND UPPER(ENGINE) "
	nr, err := conn.Query(ctx, q+"= 'ROCKSDB'")
	if err != nil {
		return false, false, fmt.Errorf("look up the storage engine of %s: %w", in, err)
	}
	no, err := conn.Query(ctx, q+"<> 'ROCKSDB'")
	if err != nil {
		return false, false, fmt.Errorf("look up the storage engine of %s: %w", in, err)
	}
	return nr > 0, no > 0 || nr == 0, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// rocksdbSettle is the reference's wait for MyRocks after writes (run.sh's
// postwrite, iq.sh's vac_my): poll until no compaction runs, flush the
// memtable, pause o.Pause, then compact L0.
//
// Running compactions are the rows of
// information_schema.ROCKSDB_ACTIVE_COMPACTION_STATS where the server has
// that table (Facebook's and Percona's MyRocks), else (MariaDB's MyRocks,
// which lacks it) the RocksDB background threads that SHOW ENGINE ROCKSDB
// STATUS lists as running a compaction (its thread tracking,
// rocksdb_enable_thread_tracking, is on by default). L0 is compacted with
// rocksdb_compact_lzero_now where the server has it, else with MariaDB's
// rocksdb_force_flush_memtable_and_lzero_now, which flushes and compacts
// L0 in one.
func rocksdbSettle(ctx context.Context, conn client.Conn, o Options) error {
	every := o.PollEvery
	if every <= 0 {
		every = 10 * time.Second
	}
	for {
		n, err := activeCompactions(ctx, conn)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if err := sleep(ctx, every); err != nil {
			return fmt.Errorf("wait for %d running compaction(s): %w", n, err)
		}
	}
	if _, err := conn.Exec(ctx, "SET GLOBAL rocksdb_force_flush_memtable_now = 1"); err != nil {
		return fmt.Errorf("flush the memtable: %w", err)
	}
	if err := sleep(ctx, o.Pause); err != nil {
		return fmt.Errorf("pause after the memtable flush: %w", err)
	}
	if _, err := conn.Exec(ctx, "SET GLOBAL rocksdb_compact_lzero_now = 1"); err != nil {
		if !client.UnknownVariable(err) {
			return fmt.Errorf("compact L0: %w", err)
		}
		if _, err := conn.Exec(ctx, "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1"); err != nil {
			return fmt.Errorf("compact L0: %w", err)
		}
	}
	return nil
}

// activeCompactions counts the compactions MyRocks runs now.
func activeCompactions(ctx context.Context, conn client.Conn) (int64, error) {
	has, err := conn.Query(ctx, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'ROCKSDB_ACTIVE_COMPACTION_STATS'")
	if err != nil {
		return 0, fmt.Errorf("look for information_schema.ROCKSDB_ACTIVE_COMPACTION_STATS: %w", err)
	}
	if has > 0 {
		n, err := conn.Query(ctx, "SELECT 1 FROM information_schema.ROCKSDB_ACTIVE_COMPACTION_STATS")
		if err != nil {
			return 0, fmt.Errorf("count the running compactions: %w", err)
		}
		return n, nil
	}
	rows, err := client.Text(ctx, conn, "SHOW ENGINE ROCKSDB STATUS")
	if err != nil {
		return 0, fmt.Errorf("count the running compactions (SHOW ENGINE ROCKSDB STATUS): %w", err)
	}
	return compactingThreads(rows), nil
}

// compactingThreads counts the BG_THREADS rows of SHOW ENGINE ROCKSDB
// STATUS (Type, Name, Status) whose thread runs a compaction
// ("operation_type: Compaction").
func compactingThreads(rows [][]string) int64 {
	var n int64
	for _, r := range rows {
		if len(r) < 3 || r[0] != "BG_THREADS" {
			continue
		}
		for _, l := range strings.Split(r[2], "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "operation_type:"); ok && strings.TrimSpace(v) == "Compaction" {
				n++
			}
		}
	}
	return n
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait is the reference's wait after a write phase: min(1200, 60 +
// rows/1e6) seconds, rows being what the tables were loaded with.
func Wait(rows float64) time.Duration {
	secs := min(1200, 60+rows/1e6)
	return time.Duration(secs * float64(time.Second))
}

// Parallel runs jobs on n connections from dial, each job on one of them.
// The first error cancels the rest and is returned.
func Parallel(ctx context.Context, n int, dial func(context.Context) (client.Conn, error), jobs []func(context.Context, client.Conn) error) error {
	if len(jobs) == 0 {
		return nil
	}
	n = max(1, min(n, len(jobs)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan func(context.Context, client.Conn) error, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err; cancel() })
	}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(ctx)
			if err != nil {
				fail(fmt.Errorf("connect: %w", err))
				return
			}
			defer c.Close()
			for j := range queue {
				if ctx.Err() != nil {
					fail(ctx.Err())
					return
				}
				if err := j(ctx, c); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
