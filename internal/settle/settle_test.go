package settle

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/testenv"
)

// SHOW ENGINE ROCKSDB STATUS lists each RocksDB background thread as a
// BG_THREADS row; those running a compaction are counted, idle ones and
// flushes are not.
func TestCompactingThreads(t *testing.T) {
	bg := func(op string) []string {
		return []string{"BG_THREADS", "1234", "\nthread_type: Low Pri\ncf_name: default\noperation_type: " + op + "\noperation_stage: \nelapsed_time_ms: 12\nstate_type: \n"}
	}
	rows := [][]string{
		{"STATISTICS", "rocksdb", "rocksdb.block.cache.miss COUNT : 0\noperation_type: Compaction"}, // not a thread
		bg(""), bg("Compaction"), bg("Flush"), bg("Compaction"),
		{"BG_THREADS", "1"}, // short row
	}
	if n := compactingThreads(rows); n != 2 {
		t.Errorf("compactingThreads = %d, want 2", n)
	}
	if n := compactingThreads(nil); n != 0 {
		t.Errorf("no rows: %d", n)
	}
}

// On MariaDB 10.11 with MyRocks: after writes the memtable holds rows and
// L0 has files; Run (which counts the running compactions from SHOW ENGINE
// ROCKSDB STATUS there) leaves the memtable empty and L0 compacted away,
// the reference's MyRocks wait, pausing between the two. With an InnoDB
// table too, InnoDB's flushing variables are put back as they were.
func TestRunMyRocks(t *testing.T) {
	ctx := context.Background()
	srv, _ := testenv.StartServerWith(t, "mariadb-system", "myrocks")
	ep := srv.Endpoint()
	dial := func(ctx context.Context) (client.Conn, error) {
		return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
	}
	c, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	scalar := func(q string) int64 {
		t.Helper()
		n, err := client.Scalar(ctx, c, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	exec := func(q string) {
		t.Helper()
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE rx (id INT PRIMARY KEY, v VARCHAR(100)) ENGINE = ROCKSDB")
	exec("CREATE TABLE inno (id INT PRIMARY KEY) ENGINE = InnoDB")
	// Several flushed batches make L0 files, then rows stay in the memtable.
	for batch := 0; batch < 3; batch++ {
		var vals []string
		for i := 0; i < 500; i++ {
			vals = append(vals, fmt.Sprintf("(%d, REPEAT('x', 90))", batch*500+i))
		}
		exec("INSERT INTO rx VALUES " + strings.Join(vals, ","))
		exec("SET GLOBAL rocksdb_force_flush_memtable_now = 1")
	}
	exec("INSERT INTO rx VALUES (100000, 'in the memtable')")
	memtable := "SELECT CAST(COALESCE(SUM(VALUE), 0) AS SIGNED) FROM information_schema.ROCKSDB_CFSTATS WHERE CF_NAME = 'default' AND STAT_TYPE = 'NUM_ENTRIES_ACTIVE_MEM_TABLE'"
	l0 := "SELECT CAST(COALESCE(SUM(VALUE), 0) AS SIGNED) FROM information_schema.ROCKSDB_COMPACTION_STATS WHERE CF_NAME = 'default' AND LEVEL = 'L0' AND TYPE = 'NumFiles'"
	if scalar(memtable) == 0 {
		t.Fatal("the write left nothing in the memtable: the test shows nothing")
	}
	if n, err := activeCompactions(ctx, c); err != nil || n < 0 {
		t.Fatalf("activeCompactions = %d, %v", n, err)
	}
	if scalar(l0) == 0 {
		t.Fatal("the flushes left no L0 file: the test shows nothing")
	}
	lwm := "SELECT CAST(@@global.innodb_max_dirty_pages_pct_lwm * 1000 AS SIGNED)"
	before := scalar(lwm)

	t0 := time.Now()
	if err := Run(ctx, Options{Dialect: client.MySQLDialect, Dial: dial, Tables: []string{"rx"}, Pause: 100 * time.Millisecond, PollEvery: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond {
		t.Errorf("Run took %s, less than its pause between the flush and the L0 compaction", d)
	}
	if n := scalar(memtable); n != 0 {
		t.Errorf("after Run the memtable holds %d entries, want 0 (flushed)", n)
	}
	if n := scalar(l0); n != 0 {
		t.Errorf("after Run L0 has %d files, want 0 (compacted)", n)
	}
	if n := scalar("SELECT COUNT(*) FROM rx"); n != 1501 {
		t.Errorf("rx has %d rows after Run, want 1501", n)
	}
	// The quiet wait before a read test counts MyRocks' compactions too.
	q, err := Quiet(ctx, QuietOptions{Dialect: client.MySQLDialect, Dial: dial, Max: time.Minute})
	if err != nil || !q.Quiet || q.CompactStart < 0 || q.CompactEnd != 0 || !strings.Contains(q.Says(), "MyRocks compactions") {
		t.Errorf("quiet wait on MyRocks: %+v (%s), %v", q, q.Says(), err)
	}

	// InnoDB's flushing is set for an InnoDB table, and restored.
	if err := Run(ctx, Options{Dialect: client.MySQLDialect, Dial: dial, Tables: []string{"inno", "rx"}}); err != nil {
		t.Fatal(err)
	}
	if after := scalar(lwm); after != before {
		t.Errorf("innodb_max_dirty_pages_pct_lwm is %s after Run, was %s", strconv.FormatInt(after, 10), strconv.FormatInt(before, 10))
	}
	err = Run(ctx, Options{Dialect: client.MySQLDialect, Dial: dial, Tables: []string{"rx'; DROP TABLE rx; --"}})
	testenv.WantErr(t, err, "is not one qpslab makes")
}

// slowAnalyze runs SELECT SLEEP(60) before each ANALYZE TABLE: a statement
// in flight when the test ends Run's context.
type slowAnalyze struct{ client.Conn }

func (s slowAnalyze) Query(ctx context.Context, q string, args ...any) (int64, error) {
	if strings.HasPrefix(q, "ANALYZE TABLE") {
		if _, err := s.Conn.Query(ctx, "SELECT SLEEP(60)"); err != nil {
			return 0, err
		}
	}
	return s.Conn.Query(ctx, q, args...)
}

// A context that ends while a statement is in flight ends Run with an
// error wrapping the context's, although the statement fails with the
// connection's own (the client closes the connection under it), so that
// an interrupted postwrite is told as interrupted, not failed.
func TestRunCancelledInAStatement(t *testing.T) {
	srv, _ := testenv.StartServer(t, "mariadb-system")
	ep := srv.Endpoint()
	bg := context.Background()
	look, err := client.Dial(bg, ep, client.Options{Transport: client.Blocking})
	if err != nil {
		t.Fatal(err)
	}
	defer look.Close()
	if _, err := look.Exec(bg, "CREATE TABLE t1 (id INT PRIMARY KEY) ENGINE = InnoDB"); err != nil {
		t.Fatal(err)
	}
	dial := func(ctx context.Context) (client.Conn, error) {
		c, err := client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
		if err != nil {
			return nil, err
		}
		return slowAnalyze{c}, nil
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, Options{Dialect: client.MySQLDialect, Dial: dial, Tables: []string{"t1"}}) }()
	testenv.WaitFor(t, time.Minute, "the ANALYZE's connection in its sleep", func() bool {
		n, _ := client.Scalar(bg, look, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(60)'")
		return n > 0
	})
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run cancelled in a statement: %v, want an error wrapping context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not end within a minute of its cancel")
	}
	if v, err := client.Scalar(bg, look, "SELECT CAST(@@global.innodb_max_dirty_pages_pct_lwm AS SIGNED)"); err != nil || v == 1 {
		t.Errorf("innodb_max_dirty_pages_pct_lwm after a cancelled Run: %d %v, want it put back", v, err)
	}
}

// The quiet wait on MariaDB: undo that a snapshot held open keeps from
// purge holds the history list above QuietHistory, so the wait reports the
// server busy at its bound; once the snapshot ends, purge catches up and
// the wait ends quiet, long before its bound. On PostgreSQL with no
// autovacuum running, it is quiet at once, with no InnoDB figures.
func TestQuiet(t *testing.T) {
	ctx := context.Background()
	srv, _ := testenv.StartServerWith(t, "mariadb-system", "default")
	ep := srv.Endpoint()
	dial := func(ctx context.Context) (client.Conn, error) {
		return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
	}
	c, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	holder, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	exec := func(c client.Conn, q string) {
		t.Helper()
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(c, "CREATE TABLE q (id INT PRIMARY KEY, v INT)")
	exec(c, "INSERT INTO q VALUES (1, 0)")
	exec(holder, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
	if _, err := holder.Query(ctx, "SELECT * FROM q"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3*QuietHistory; i++ {
		exec(c, "UPDATE q SET v = v + 1 WHERE id = 1")
	}
	o := QuietOptions{Dialect: client.MySQLDialect, Dial: dial, Max: 300 * time.Millisecond}
	r, err := Quiet(ctx, o)
	if err != nil || r.Quiet || r.HistoryEnd <= QuietHistory || r.Waited < o.Max {
		t.Fatalf("with a snapshot held: %+v, %v", r, err)
	}
	t.Logf("with a snapshot held: %s", r.Says())
	exec(holder, "COMMIT")
	o.Max = 5 * time.Minute
	r, err = Quiet(ctx, o)
	if err != nil || !r.Quiet || r.HistoryEnd > QuietHistory || r.HistoryStart < 0 || r.DirtyEnd < 0 || r.VacuumStart != -1 || r.CompactStart != -1 {
		t.Fatalf("after the snapshot: %+v, %v", r, err)
	}
	t.Logf("after the snapshot: %s", r.Says())
	if f := r.Figures(); f[FigureHistoryLen] != float64(r.HistoryEnd) || f[FigureQuietWait] != r.Waited.Seconds() {
		t.Errorf("figures %v of %+v", f, r)
	}

	pg, _ := testenv.StartServerWith(t, "postgres-system", "default")
	pep := pg.Endpoint()
	r, err = Quiet(ctx, QuietOptions{Dialect: client.PostgresDialect, Max: time.Minute, Dial: func(ctx context.Context) (client.Conn, error) {
		return client.Dial(ctx, pep, client.Options{Transport: client.Blocking})
	}})
	if err != nil || !r.Quiet || r.VacuumEnd != 0 || r.HistoryStart != -1 || r.DirtyStart != -1 {
		t.Errorf("PostgreSQL: %+v, %v", r, err)
	}
	if _, ok := r.Figures()[FigureHistoryLen]; ok {
		t.Errorf("PostgreSQL has no history list: %v", r.Figures())
	}
}
