package sysbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

const (
	srvTables = 2
	srvRows   = 1000
)

// server is one sandboxed server with helpers to look at its tables.
type server struct {
	t      *testing.T
	ep     client.Endpoint
	pg     bool
	noPrep bool
	target Target
}

// startServer starts a sandbox of the named system build, stopped (and its
// processes checked for) when the test ends.
func startServer(t *testing.T, name string) *server {
	return startServerWith(t, name, "default", "")
}

// startServerWith starts the named system build with the named shipped
// config, its tables in engine.
func startServerWith(t *testing.T, name, config, engine string) *server {
	srv, _ := testenv.StartServerWith(t, name, config)
	ep := srv.Endpoint()
	return &server{t: t, ep: ep, pg: ep.Protocol == client.Postgres, target: Target{
		Dialect: ep.Dialect(), Tables: srvTables, Rows: srvRows, StorageEngine: engine,
		Dial: func(ctx context.Context) (client.Conn, error) {
			return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
		},
	}}
}

// q runs a query and returns its first column of its first row as text.
func (s *server) q(query string) string {
	s.t.Helper()
	_, rows, err := client.Query(context.Background(), s.ep, false, query)
	if err != nil {
		s.t.Fatalf("%s: %v", query, err)
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return ""
	}
	return rows[0][0]
}

func (s *server) row(query string) []string {
	s.t.Helper()
	_, rows, err := client.Query(context.Background(), s.ep, false, query)
	if err != nil || len(rows) != 1 {
		s.t.Fatalf("%s: %v %q", query, err, rows)
	}
	return rows[0]
}

// status is a MySQL-family server's status counter (SHOW GLOBAL STATUS,
// which every version has: MySQL 5.7 and later no longer have
// information_schema.GLOBAL_STATUS, and performance_schema's table is
// empty with it off).
func (s *server) status(name string) int64 {
	s.t.Helper()
	r := s.row("SHOW GLOBAL STATUS LIKE '" + name + "'")
	v, err := strconv.ParseInt(r[len(r)-1], 10, 64)
	if err != nil {
		s.t.Fatalf("status %s: %v", name, err)
	}
	return v
}

func (s *server) n(query string) int64 {
	s.t.Helper()
	v, err := strconv.ParseInt(s.q(query), 10, 64)
	if err != nil {
		s.t.Fatalf("%s: %v", query, err)
	}
	return v
}

// exec runs a statement on a connection of its own.
func (s *server) exec(stmt string) {
	s.t.Helper()
	c, err := s.target.Dial(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(context.Background(), stmt); err != nil {
		s.t.Fatalf("%s: %v", stmt, err)
	}
}

func (s *server) count() int64 {
	var n int64
	for tb := 1; tb <= srvTables; tb++ {
		n += s.n(fmt.Sprintf("SELECT count(*) FROM sbtest%d", tb))
	}
	return n
}

// checksum sums up the rows of sbtestN matching where.
func (s *server) checksum(tb int, where string) string {
	if s.pg {
		return s.q(fmt.Sprintf("SELECT md5(string_agg(id || ':' || k || ':' || c || ':' || pad, ',' ORDER BY id)) FROM sbtest%d WHERE %s", tb, where))
	}
	return s.q(fmt.Sprintf("SELECT SUM(CRC32(CONCAT(id, ':', k, ':', c, ':', pad))) FROM sbtest%d WHERE %s", tb, where))
}

func (s *server) exists(table string) bool {
	if s.pg {
		return s.n("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = '"+table+"'") > 0
	}
	return s.n("SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '"+table+"'") > 0
}

// worker makes a worker of test whose connection is recorded.
func (s *server) worker(test Test, id int, seed uint64) (*worker, *recConn) {
	s.t.Helper()
	rc := &recConn{}
	wl := &Workload{Target: s.target, Test: test, Seed: seed}
	wl.Dial = func(ctx context.Context) (client.Conn, error) {
		c, err := s.target.Dial(ctx)
		rc.inner = c
		return rc, err
	}
	w, err := wl.NewWorker(context.Background(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { w.Close() })
	rc.take()
	return w.(*worker), rc
}

func TestServers(t *testing.T) {
	for _, c := range []struct{ name, build, config, engine string }{
		{"mariadb-system", "mariadb-system", "default", ""},
		{"mariadb-system-myrocks", "mariadb-system", "myrocks", "rocksdb"}, // every test on MyRocks tables
		{"postgres-system", "postgres-system", "default", ""},
		{"mysql", testenv.MySQL, "default", ""}, // Debian's newest MySQL
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServerWith(t, c.build, c.config, c.engine)
			t.Run("refuse", s.testRefuse)
			t.Run("load", s.testLoad)
			if t.Failed() {
				t.FailNow()
			}
			t.Run("allocs", s.testAllocs)
			t.Run("update-one", s.testUpdateOne)
			t.Run("events-noprepare", s.noPrepare().testEvents)
			t.Run("events", s.testEvents)
			t.Run("delete-insert", s.testDeleteInsert)
			t.Run("postwrite", s.testPostwrite)
			t.Run("load-step", s.testLoadStep)
			if s.pg {
				t.Run("load-step-held-back", s.testLoadStepHeldBack)
			}
			t.Run("drop", s.testDrop)
		})
	}
}

// A sbtestN qpslab did not record is neither dropped nor reused.
func (s *server) testRefuse(t *testing.T) {
	ctx := context.Background()
	s.exec("CREATE TABLE sbtest2 (id INTEGER)")
	s.exec("INSERT INTO sbtest2 VALUES (42)")
	for what, err := range map[string]error{
		"Load": s.target.Load(ctx, LoadOptions{Threads: 2}),
		"Drop": s.target.Drop(ctx),
	} {
		if err == nil || !strings.Contains(err.Error(), "sbtest2") || !strings.Contains(err.Error(), "qpslab_tables") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s over someone else's sbtest2: %v, want a one-line refusal naming it", what, err)
		}
	}
	if s.exists("sbtest1") {
		t.Errorf("the refused load created sbtest1")
	}
	wl := &Workload{Target: s.target, Test: find(t, "update-index_range=100")}
	if _, err := wl.NewWorker(ctx, 0); err == nil || !strings.Contains(err.Error(), "sbtest1 does not exist") {
		t.Errorf("a worker on missing tables: %v", err)
	}
	s.exec("CREATE TABLE sbtest1 (id INTEGER)")
	if _, err := wl.NewWorker(ctx, 0); err == nil || !strings.Contains(err.Error(), "sbtest1 exists but qpslab did not create it") {
		t.Errorf("a worker on someone else's tables: %v", err)
	}
	s.exec("DROP TABLE sbtest1")
	if got := s.n("SELECT count(*) FROM sbtest2 WHERE id = 42"); got != 1 {
		t.Errorf("someone else's sbtest2 was touched")
	}
	s.exec("DROP TABLE sbtest2")
}

func (s *server) testLoad(t *testing.T) {
	ctx := context.Background()
	var seen []int64
	start := time.Now()
	if err := s.target.Load(ctx, LoadOptions{Threads: 3, Seed: 5, Progress: func(n int64) { seen = append(seen, n) }}); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d×%d rows in %v", srvTables, srvRows, time.Since(start).Round(time.Millisecond))
	if len(seen) == 0 || seen[len(seen)-1] != srvTables*srvRows {
		t.Errorf("progress ended at %v, want %d", seen[len(seen)-1:], srvTables*srvRows)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Errorf("progress went %d then %d", seen[i-1], seen[i])
		}
	}
	cre, pre := "c NOT REGEXP '^([0-9]{11}-){9}[0-9]{11}$'", "pad NOT REGEXP '^([0-9]{11}-){4}[0-9]{11}$'"
	idx := "SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'sbtest%d' AND index_name = 'k_%d' AND column_name = 'k'"
	if s.pg {
		cre, pre = "c::text !~ '^([0-9]{11}-){9}[0-9]{11}$'", "pad::text !~ '^([0-9]{11}-){4}[0-9]{11}$'"
		idx = "SELECT count(*) FROM pg_indexes WHERE tablename = 'sbtest%d' AND indexname = 'k_%d' AND indexdef LIKE '%%(k)'"
	}
	sums := map[int]string{}
	for tb := 1; tb <= srvTables; tb++ {
		got := strings.Join(s.row(fmt.Sprintf("SELECT count(*), count(DISTINCT id), min(id), max(id), min(k) >= 1, max(k) <= %d, count(DISTINCT k) > %d FROM sbtest%d", srvRows, srvRows/2, tb)), " ")
		want := "1000 1000 1 1000 1 1 1"
		if s.pg {
			want = "1000 1000 1 1000 true true true"
		}
		if got != want {
			t.Errorf("sbtest%d: count, distinct ids, min, max id, k in [1, rows], k spread = %s, want %s", tb, got, want)
		}
		if n := s.n(fmt.Sprintf("SELECT count(*) FROM sbtest%d WHERE %s OR %s", tb, cre, pre)); n != 0 {
			t.Errorf("sbtest%d: %d rows whose c or pad is not the digit-group template", tb, n)
		}
		if n := s.n(fmt.Sprintf(idx, tb, tb)); n != 1 {
			t.Errorf("sbtest%d: no index k_%d on k", tb, tb)
		}
		sums[tb] = s.checksum(tb, "1=1")
	}
	if sums[1] == sums[2] {
		t.Errorf("sbtest1 and sbtest2 hold the same rows")
	}
	if n := s.n("SELECT count(*) FROM qpslab_tables WHERE name IN ('sbtest1', 'sbtest2')"); n != 2 {
		t.Errorf("qpslab_tables records %d of the 2 tables", n)
	}
	if !s.pg {
		want := "innodb"
		if s.target.StorageEngine != "" {
			want = s.target.StorageEngine
		}
		if n := s.n("SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('sbtest1', 'sbtest2') AND LOWER(engine) = '" + want + "'"); n != 2 {
			t.Errorf("%d of the 2 tables are in engine %s", n, want)
		}
	}
	// A load never writes over tables: an earlier load's are dropped first.
	if err := s.target.Load(ctx, LoadOptions{Threads: 1, Seed: 5}); err == nil || !strings.Contains(err.Error(), "drop the tables first") {
		t.Errorf("a load over an earlier load's tables: %v", err)
	}
	// Dropped and loaded again, the same seed loads the same rows whatever
	// the number of threads.
	if err := s.target.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.target.Load(ctx, LoadOptions{Threads: 1, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	for tb := 1; tb <= srvTables; tb++ {
		if got := s.checksum(tb, "1=1"); got != sums[tb] {
			t.Errorf("sbtest%d: seed 5 with 1 thread loaded other rows than with 3", tb)
		}
	}
	// COPY or LOAD DATA loads the same rows as the INSERTs, reporting
	// progress to the last row.
	if err := s.target.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	seen = nil
	if err := s.target.Load(ctx, LoadOptions{Threads: 2, Seed: 5, Method: LoadCopy, Progress: func(n int64) { seen = append(seen, n) }}); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 || seen[len(seen)-1] != srvTables*srvRows {
		t.Errorf("copy: progress %v, want steps to %d", seen, srvTables*srvRows)
	}
	for tb := 1; tb <= srvTables; tb++ {
		if got := s.checksum(tb, "1=1"); got != sums[tb] {
			t.Errorf("sbtest%d: seed 5 loaded by copy holds other rows than by insert", tb)
		}
		if n := s.n(fmt.Sprintf(idx, tb, tb)); n != 1 {
			t.Errorf("sbtest%d: no index k_%d after a copy", tb, tb)
		}
	}
	if err := s.target.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.target.Load(ctx, LoadOptions{Method: "bulk"}); err == nil || !strings.Contains(err.Error(), "insert or copy") {
		t.Errorf("load method bulk: %v", err)
	}
	if err := s.target.Load(ctx, LoadOptions{Threads: 3, Seed: 5}); err != nil {
		t.Fatal(err)
	}
}

// noPrepare is s with connections that send text statements instead of
// preparing them (sysbench's --db-ps-mode=disable). It does not delete, so
// that the prepared run after it still finds every id.
func (s *server) noPrepare() *server {
	c := *s
	c.noPrep = true
	c.target.Dial = func(ctx context.Context) (client.Conn, error) {
		return client.Dial(ctx, s.ep, client.Options{Transport: client.Blocking, NoPrepare: true})
	}
	return &c
}

// Every test of both orders runs events without error, issues its statement
// count per event, and returns the rows its SQL must return.
func (s *server) testEvents(t *testing.T) {
	s.t = t
	ctx := context.Background()
	for _, test := range allTests() {
		if s.noPrep && test.Name == "delete" {
			continue
		}
		ids := []int{0}
		if test.BindTable {
			ids = []int{0, 1}
		}
		for _, id := range ids {
			// Another seed for the text run: MySQL counts an UPDATE that
			// writes the value a row already has as 0 rows changed.
			seed := uint64(11)
			if s.noPrep {
				seed = 12
			}
			w, rc := s.worker(test, id, seed)
			for e := range 6 {
				o, err := w.Event(ctx)
				calls := rc.take()
				if err != nil {
					t.Fatalf("%s event %d: %v", test.Label(), e, err)
				}
				if o.Statements != test.Statements || statements(calls) != test.Statements {
					t.Errorf("%s: %d statements (%d sent), want %d", test.Label(), o.Statements, statements(calls), test.Statements)
				}
				if msg := wantRows(test, calls, o.Rows); msg != "" {
					t.Errorf("%s event %d: %s", test.Label(), e, msg)
				}
			}
		}
		if test.Postwrite {
			if err := s.target.Postwrite(ctx, 0); err != nil {
				t.Fatalf("postwrite after %s: %v", test.Label(), err)
			}
		}
	}
}

// wantRows checks the rows of one event against its arguments, with ids
// 1..srvRows all present (as before the delete test).
func wantRows(test Test, calls []call, rows int64) string {
	var first call
	for _, c := range calls {
		if c.op != "begin" {
			first = c
			break
		}
	}
	v := ints(first)
	switch test.Name {
	case "point-query", "read-only-count", "update-index", "update-nonindex", "update-one", "update-zipf", "insert":
		if rows != 1 {
			return fmt.Sprintf("%d rows, want 1", rows)
		}
	case "random-points", "points-covered-pk", "points-notcovered-pk":
		want := 100
		if test.Name == "random-points" {
			want = test.Range
		}
		if len(v) != want || rows != int64(distinct(v)) {
			return fmt.Sprintf("%d rows for %d ids (%d distinct)", rows, len(v), distinct(v))
		}
	case "hot-points":
		if len(v) != 100 {
			return fmt.Sprintf("%d ids, want 100", len(v))
		}
		if rows != 100 || v[0] != srvRows/2+1 || v[99] != srvRows/2+100 {
			return fmt.Sprintf("%d rows for ids %d..%d, want 100 rows for 501..600", rows, v[0], v[len(v)-1])
		}
	case "range-covered-pk", "range-notcovered-pk":
		if len(v) != 2 {
			return fmt.Sprintf("BETWEEN %v: want two ids", v)
		}
		if want := min(v[0]+100, srvRows) - v[0] + 1; rows != want {
			return fmt.Sprintf("%d rows for BETWEEN %d AND %d, want %d", rows, v[0], v[1], want)
		}
	case "scan":
		if rows != 0 {
			return fmt.Sprintf("%d rows, want none", rows)
		}
	case "update-inlist":
		if rows < 1 || rows > 10 || rows != int64(distinct(v)) {
			return fmt.Sprintf("%d rows changed for ids %v, want one per distinct id, at most 10", rows, v)
		}
	case "read-only", "read-only-simple", "read-only-sum", "read-only-order", "read-only-distinct":
		if rows < 11 {
			return fmt.Sprintf("%d rows, want 10 from the point selects and more from the range", rows)
		}
	case "write-only":
		if rows != 4 {
			return fmt.Sprintf("%d rows changed, want 4 (2 updates, a delete, an insert)", rows)
		}
	case "read-write":
		if rows < 15 {
			return fmt.Sprintf("%d rows, want at least 10 point rows, 1 range row and 4 changed", rows)
		}
	case "delete":
		if rows > 1 {
			return fmt.Sprintf("%d rows deleted, want 0 or 1", rows)
		}
	}
	return ""
}

// update-one changes the c of id 1 and nothing else.
func (s *server) testUpdateOne(t *testing.T) {
	ctx := context.Background()
	var others, one [srvTables + 1]string
	for tb := 1; tb <= srvTables; tb++ {
		others[tb], one[tb] = s.checksum(tb, "id <> 1"), s.q(fmt.Sprintf("SELECT c FROM sbtest%d WHERE id = 1", tb))
	}
	w, rc := s.worker(find(t, "update-one_range=100"), 0, 3)
	touched := map[string]bool{}
	for range 20 {
		o, err := w.Event(ctx)
		if err != nil || o.Rows != 1 {
			t.Fatalf("update-one: %d rows, %v", o.Rows, err)
		}
		for _, c := range rc.take() {
			touched[strings.Fields(c.q)[1]] = true
		}
	}
	for tb := 1; tb <= srvTables; tb++ {
		if s.checksum(tb, "id <> 1") != others[tb] {
			t.Errorf("update-one changed rows other than id 1 in sbtest%d", tb)
		}
		changed := s.q(fmt.Sprintf("SELECT c FROM sbtest%d WHERE id = 1", tb)) != one[tb]
		if name := "sbtest" + strconv.Itoa(tb); changed != touched[name] {
			t.Errorf("%s: id 1 changed: %v, updated: %v", name, changed, touched[name])
		}
	}
}

// delete removes rows, insert adds them (on PostgreSQL through the id
// sequence the load set past the loaded ids).
func (s *server) testDeleteInsert(t *testing.T) {
	ctx := context.Background()
	before := s.count()
	w, _ := s.worker(find(t, "delete_range=100"), 0, 4)
	var deleted int64
	for range 30 {
		o, err := w.Event(ctx)
		if err != nil {
			t.Fatal(err)
		}
		deleted += o.Rows
	}
	after := s.count()
	if after != before-deleted || deleted < 20 {
		t.Errorf("delete: %d rows then %d, %d reported deleted in 30 events", before, after, deleted)
	}
	w, rc := s.worker(find(t, "insert_range=100"), 0, 4)
	for range 30 {
		if _, err := w.Event(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.count(); got != after+30 {
		t.Errorf("insert: %d rows then %d after 30 inserts", after, got)
	}
	for _, c := range rc.take() {
		if c.op != "exec" {
			t.Errorf("insert ran %s, want a text statement", c.op)
		}
	}
	for tb := 1; tb <= srvTables; tb++ {
		if n := s.n(fmt.Sprintf("SELECT count(*) FROM sbtest%d WHERE id > %d", tb, srvRows)); n == 0 {
			t.Errorf("sbtest%d: no inserted row got an id past %d", tb, srvRows)
		}
	}
}

// Postwrite with scale 0 only flushes; with scale 1 it waits until the
// context ends. Either way the InnoDB variables end as they began; on
// MyRocks tables InnoDB is not told to flush (MyRocks' memtable is). The
// variables are read while it runs once it has begun to analyze the
// tables (which it does after telling InnoDB to flush), and it is
// cancelled then, or on PostgreSQL once its CHECKPOINT is done (it waits
// after that).
func (s *server) testPostwrite(t *testing.T) {
	vars := "SELECT @@global.innodb_max_dirty_pages_pct, @@global.innodb_max_dirty_pages_pct_lwm"
	var before []string
	if !s.pg {
		before = s.row(vars)
	}
	start := time.Now()
	if err := s.target.Postwrite(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("postwrite, scale 0: %v", time.Since(start).Round(time.Millisecond))
	if d := s.target.PostwriteWait() - 60002*time.Millisecond; d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("PostwriteWait for 2×1000 rows = %v, want 60.002s", s.target.PostwriteWait())
	}
	// Where Postwrite is: the tables' ANALYZE started (MySQL family), a
	// CHECKPOINT done (PostgreSQL).
	progress := func() int64 {
		switch {
		case !s.pg:
			return s.status("Com_analyze")
		case s.n("SELECT current_setting('server_version_num')::int") >= 170000:
			return s.n("SELECT num_requested FROM pg_stat_checkpointer")
		default:
			return s.n("SELECT checkpoints_req FROM pg_stat_bgwriter")
		}
	}
	p0 := progress()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.target.Postwrite(ctx, 1) }()
	want := int64(1)
	if !s.pg {
		want = srvTables
	}
	testenv.WaitFor(t, 2*time.Minute, "postwrite analyzing the tables, or past its checkpoint", func() bool {
		select {
		case err := <-errc:
			t.Fatalf("postwrite ended before it was cancelled: %v", err)
		default:
		}
		return progress() >= p0+want
	})
	var got []string
	if !s.pg {
		got = s.row(vars)
	}
	cancel()
	start = time.Now()
	var err error
	select {
	case err = <-errc:
	case <-time.After(time.Minute):
		t.Fatal("postwrite did not end within a minute of its cancel")
	}
	if !s.pg {
		t.Logf("during postwrite: %q", got)
		want := []string{"1", "1"}
		if s.target.StorageEngine == "rocksdb" {
			want = before
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("while postwrite waits, InnoDB max dirty pages pct and lwm are %q, want %q", got, want)
		}
	}
	if !errors.Is(err, context.Canceled) || time.Since(start) > 20*time.Second {
		t.Errorf("postwrite cancelled: %v, %v after the cancel", err, time.Since(start))
	}
	if !s.pg {
		if after := s.row(vars); strings.Join(after, " ") != strings.Join(before, " ") {
			t.Errorf("InnoDB variables %v before postwrite, %v after", before, after)
		}
	}
}

func (s *server) testDrop(t *testing.T) {
	if err := s.target.Drop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for tb := 1; tb <= srvTables; tb++ {
		if s.exists("sbtest" + strconv.Itoa(tb)) {
			t.Errorf("sbtest%d still exists", tb)
		}
	}
	if n := s.n("SELECT count(*) FROM qpslab_tables"); n != 0 {
		t.Errorf("qpslab_tables still records %d tables", n)
	}
}

// withClient is s with connections opened with o (the lean path or the
// drivers', prepared or text).
func (s *server) withClient(o client.Options) *server {
	c := *s
	c.noPrep = o.NoPrepare
	c.target.Dial = func(ctx context.Context) (client.Conn, error) { return client.Dial(ctx, s.ep, o) }
	return &c
}

// Every test runs the same events on the drivers' path and on the lean
// one (on the blocking transport, and on io_uring where this kernel
// allows it, with a ring per connection and inside a loop worker), prepared and as text, from the same loaded tables: each
// reads and writes the same rows, issues the same statements, and leaves
// the same tables.
func TestPathsAgree(t *testing.T) {
	type path struct {
		drv bool
		tr  client.Transport
	}
	paths := []path{{true, client.Blocking}, {false, client.Blocking}}
	if client.UringWorks() {
		paths = append(paths, path{false, client.Uring}, path{false, client.Loop})
	}
	named := func(p path) string {
		if p.drv {
			return "the drivers' path on " + string(p.tr)
		}
		return "the lean path on " + string(p.tr)
	}
	for _, name := range []string{"mariadb-system", "postgres-system"} {
		t.Run(name, func(t *testing.T) {
			s := startServer(t, name)
			ctx := context.Background()
			loaded := ""
			sums := func() string {
				var out []string
				for tb := 1; tb <= srvTables; tb++ {
					out = append(out, s.checksum(tb, "1=1"), s.q(fmt.Sprintf("SELECT count(*) FROM sbtest%d", tb)))
				}
				return strings.Join(out, " ")
			}
			load := func() {
				if loaded != "" && sums() == loaded {
					return
				}
				if err := s.target.Drop(ctx); err != nil {
					t.Fatal(err)
				}
				if err := s.target.Load(ctx, LoadOptions{Threads: 2, Seed: 5}); err != nil {
					t.Fatal(err)
				}
				if got := sums(); loaded != "" && got != loaded {
					t.Fatalf("a load with the same seed loaded other rows: %s, then %s", loaded, got)
				} else {
					loaded = got
				}
			}
			for _, test := range allTests() {
				for _, noPrep := range []bool{false, true} {
					type outcome struct {
						stmts int
						rows  int64
						after string
					}
					got := make([]outcome, len(paths))
					for i, p := range paths {
						load()
						c := s.withClient(client.Options{Transport: p.tr, NoPrepare: noPrep, Driver: p.drv})
						c.t = t
						ids := []int{0}
						if test.BindTable {
							ids = []int{0, 1}
						}
						for _, id := range ids {
							w, _ := c.worker(test, id, 21)
							err := onTransport(ctx, p.tr, func(ctx context.Context) error {
								for e := range 25 {
									o, err := w.Event(ctx)
									if err != nil {
										return fmt.Errorf("event %d: %w", e, err)
									}
									got[i].stmts += o.Statements
									got[i].rows += o.Rows
								}
								return nil
							})
							w.Close()
							if err != nil {
								t.Fatalf("%s (%s, text %v): %v", test.Label(), named(p), noPrep, err)
							}
						}
						got[i].after = sums()
						if i > 0 && got[i] != got[0] {
							t.Errorf("%s, text %v: %s %+v, %s %+v", test.Label(), noPrep, named(paths[0]), got[0], named(p), got[i])
						}
						if !p.drv && got[i].rows == 0 && test.Name != "scan" && test.Name != "delete" {
							t.Errorf("%s, text %v: no row read or written in 25 events on %s", test.Label(), noPrep, named(p))
						}
					}
				}
			}
		})
	}
}

// onTransport runs f with ctx on tr: on the loop transport inside the one
// worker of a loop on one thread, with that worker's context (derived from
// ctx: TestPathsAgree's is never cancelled, testAllocs's is, as the
// engine's), so that the statements go through the loop's ring; on any
// other, as it is.
func onTransport(ctx context.Context, tr client.Transport, f func(ctx context.Context) error) error {
	if tr != client.Loop {
		return f(ctx)
	}
	var err error
	if lerr := (client.Loops{Threads: 1}).Run(ctx, 1, func(ctx context.Context, _ int) {
		if !client.OnLoop(ctx) {
			err = errors.New("the loop's worker is not on its loop")
			return
		}
		err = f(ctx)
	}); lerr != nil {
		return lerr
	}
	return err
}

// Once warm, an event of every test but insert (a new statement text per
// event, as sysbench's) allocates nothing on the lean path, on the
// blocking transport and on io_uring where this kernel allows it (a ring
// per connection, and inside a loop worker): the
// point and range reads, the writes, BEGIN and COMMIT.
func (s *server) testAllocs(t *testing.T) {
	s.t = t
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	trs := []client.Transport{client.Blocking}
	if client.UringWorks() {
		trs = append(trs, client.Uring, client.Loop)
	}
	for _, tr := range trs {
		for _, noPrep := range []bool{false, true} {
			c := s.withClient(client.Options{Transport: tr, NoPrepare: noPrep})
			c.t = t
			for _, test := range allTests() {
				if test.Name == "insert" || test.Name == "delete" {
					continue
				}
				wl := &Workload{Target: c.target, Test: test, Seed: 99}
				w, err := wl.NewWorker(ctx, 0)
				if err != nil {
					t.Fatal(err)
				}
				var failed error
				var allocs float64
				err = onTransport(ctx, tr, func(ctx context.Context) error {
					allocs = testing.AllocsPerRun(20, func() {
						if _, err := w.Event(ctx); err != nil {
							failed = err
						}
					})
					return nil
				})
				w.Close()
				if err != nil {
					t.Fatal(err)
				}
				if failed != nil {
					t.Fatalf("%s (%s, text %v): %v", test.Label(), tr, noPrep, failed)
				}
				if allocs != 0 {
					t.Errorf("%s (%s, text %v): %.1f allocations per event, want 0", test.Label(), tr, noPrep, allocs)
				}
			}
		}
	}
}

// BenchmarkEvent runs the point and range tests' events on the lean path
// and on the drivers': with -benchmem, allocations per event (and
// statements per event beside them).
func BenchmarkEvent(b *testing.B) {
	for _, name := range []string{"mariadb-system", "postgres-system"} {
		b.Run(name, func(b *testing.B) {
			srv, _ := testenv.StartServer(b, name)
			ep := srv.Endpoint()
			ctx := context.Background()
			target := Target{Dialect: ep.Dialect(), Tables: srvTables, Rows: srvRows, Dial: func(ctx context.Context) (client.Conn, error) {
				return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
			}}
			if err := target.Load(ctx, LoadOptions{Threads: 2, Seed: 1}); err != nil {
				b.Fatal(err)
			}
			for _, label := range []string{"point-query_range=100", "range-covered-pk_range=100", "range-notcovered-pk_range=100",
				"range-covered-si_range=100", "range-notcovered-si_range=100", "read-only_range=10", "read-only-count_range=1000"} {
				test, err := Lookup(label)
				if err != nil {
					b.Fatal(err)
				}
				for _, path := range []string{"lean", "driver"} {
					b.Run(path+"/"+label, func(b *testing.B) {
						wl := &Workload{Target: target, Test: test, Seed: 1}
						wl.Dial = func(ctx context.Context) (client.Conn, error) {
							return client.Dial(ctx, ep, client.Options{Transport: client.Blocking, Driver: path == "driver"})
						}
						w, err := wl.NewWorker(ctx, 0)
						if err != nil {
							b.Fatal(err)
						}
						defer w.Close()
						b.ReportAllocs()
						stmts := 0
						for b.Loop() {
							o, err := w.Event(ctx)
							if err != nil {
								b.Fatal(err)
							}
							stmts += o.Statements
						}
						b.ReportMetric(float64(stmts)/float64(b.N), "stmts/op")
					})
				}
			}
		})
	}
}

// A snapshot older than the load keeps VACUUM from marking its pages
// all-visible: the load step then says which tables and how many pages.
func (s *server) testLoadStepHeldBack(t *testing.T) {
	ctx := context.Background()
	c, err := s.target.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, stmt := range []string{"BEGIN ISOLATION LEVEL REPEATABLE READ", "SELECT 1"} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	_, warned := s.loadStep(t)
	if len(warned) != 1 || !strings.Contains(warned[0], "not all-visible after 7 VACUUMs") || !strings.Contains(warned[0], "sbtest1 ") || !strings.Contains(warned[0], "sbtest2 ") {
		t.Errorf("want one warning naming sbtest1 and sbtest2, got %q", warned)
	}
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
}

// The load step leaves its tables analyzed and flushed, whatever
// autovacuum did: on PostgreSQL each table has statistics and every page
// all-visible (or the step warned which were not), on the MySQL family
// each table was analyzed.
func (s *server) testLoadStep(t *testing.T) {
	analyzed := func() int64 {
		return s.status("Com_analyze")
	}
	var before int64
	if !s.pg {
		before = analyzed()
	}
	said, warned := s.loadStep(t)
	if !slices.Contains(said, "after the load: analyze, flush") {
		t.Errorf("the step did not say it analyzes: %q", said)
	}
	if !s.pg {
		if got := analyzed() - before; got < srvTables {
			t.Errorf("%d ANALYZE statement(s) after the load, want one per table (%d)", got, srvTables)
		}
		return
	}
	for tb := 1; tb <= srvTables; tb++ {
		name := fmt.Sprintf("sbtest%d", tb)
		if n := s.n("SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = '" + name + "'"); n == 0 {
			t.Errorf("%s after the load step: no statistics (not analyzed)", name)
		}
		left := s.n("SELECT relpages - relallvisible FROM pg_class WHERE oid = '" + name + "'::regclass")
		if left > 0 && !slices.ContainsFunc(warned, func(w string) bool { return strings.Contains(w, fmt.Sprintf("%s %d", name, left)) }) {
			t.Errorf("%s after the load step: %d page(s) not all-visible, and no warning says so (warned %q)", name, left, warned)
		}
		t.Logf("%s: %d page(s) not all-visible", name, left)
	}
}

// loadStep runs the suite's load step on the server as a plan does
// (Before, the task, After) and returns what it logged and warned.
func (s *server) loadStep(t *testing.T) (said, warned []string) {
	t.Helper()
	ctx := context.Background()
	st := Options{Tables: srvTables, Rows: srvRows, LoadThreads: 2}.loadStep()
	srv := &suite.Server{Protocol: s.ep.Protocol, Dialect: s.ep.Dialect(), StorageEngine: s.target.StorageEngine, Dial: s.target.Dial,
		Log: func(line string) { said = append(said, line) }, Warn: func(line string) { warned = append(warned, line) }}
	if err := st.Before(ctx, srv); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Task.Run(ctx, srv, 2, 7, suite.TaskIO{Progress: func(int64, int64) {}, Sample: func(result.Sample) {}}); err != nil {
		t.Fatal(err)
	}
	if err := st.After(ctx, srv); err != nil {
		t.Fatal(err)
	}
	return said, warned
}
