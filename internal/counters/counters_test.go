package counters_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
)

func TestParseSelection(t *testing.T) {
	s, err := counters.ParseSelection([]string{"default", "Innodb_Pages_Created", "all"})
	if err != nil || !s.All || s.None || len(s.Names) != 1 || s.Names[0] != "innodb_pages_created" {
		t.Errorf("default,Innodb_Pages_Created,all: %+v %v", s, err)
	}
	if s, err := counters.ParseSelection([]string{"none"}); err != nil || !s.None {
		t.Errorf("none: %+v %v", s, err)
	}
	for _, bad := range [][]string{{"none", "all"}, {"blks-hit"}, {"1abc"}} {
		if _, err := counters.ParseSelection(bad); err == nil || !strings.Contains(err.Error(), "--counters") {
			t.Errorf("%v: want an error naming --counters, got %v", bad, err)
		}
	}
}

// work runs the window's statements on their own connection, as a
// benchmark's client would: n inserts, n point selects, n/2 updates, one
// statement each (text protocol, so each is one statement to the server).
func work(t *testing.T, ep client.Endpoint, n int) {
	t.Helper()
	db, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for i := 1; i <= n; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO t (id, v) VALUES (%d, %d)", i, i))
	}
	for i := 1; i <= n; i++ {
		var v int
		if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT v FROM t WHERE id = %d", i)).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= n/2; i++ {
		mustExec(t, db, fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", i))
	}
}

// createT creates the InnoDB table t that work writes and reads.
func createT(t *testing.T, ep client.Endpoint) {
	t.Helper()
	setup, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	mustExec(t, setup, "CREATE TABLE t (id int primary key, v int) ENGINE=InnoDB")
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func value(t *testing.T, sc *result.ServerCounters, name string) float64 {
	t.Helper()
	v, ok := sc.Counter(name)
	if !ok {
		t.Fatalf("no %s in %+v", name, sc)
	}
	return v.Value
}

// MariaDB: the window's inserts, updates and statements are counted
// exactly (the reader's own status reads taken out), and the redo log and
// the buffer pool moved.
func TestMariaDBCounters(t *testing.T) {
	srv, _ := testenv.StartServer(t, "mariadb-system")
	ep := srv.Endpoint()
	createT(t, ep)

	r, err := counters.Open(context.Background(), srv.Flavor.Describe().Counters, ep, false, counters.Selection{Names: []string{"innodb_pages_created", "no_such_counter"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	const n = 200
	r.SetEvery(200 * time.Millisecond)
	r.Open()
	work(t, ep, n)
	// Level readings of the reader's loop inside the window (beside
	// Open's), whose own statements Result must take out.
	testenv.WaitFor(t, time.Minute, "two level readings of the loop", func() bool { return r.LevelReads() >= 3 })
	r.Close()
	sc := r.Result()
	if sc == nil || sc.Seconds <= 0 {
		t.Fatalf("result %+v", sc)
	}
	for _, c := range []struct {
		name string
		want float64
	}{{"handler_write", n}, {"handler_update", n / 2}} {
		if got := value(t, sc, c.name); got != c.want {
			t.Errorf("%s = %v, want %v (the window's statements, the reader's own taken out)", c.name, got, c.want)
		}
	}
	// The work's statements, and one or two its connection adds (the
	// driver's setup): none of the reader's own, which would add 1 a
	// second and some 560 rows read through a temporary table per full read.
	if got := value(t, sc, "questions"); got < n+n+n/2 || got > n+n+n/2+2 {
		t.Errorf("questions = %v, want %d or a little more (the work's connection)", got, n+n+n/2)
	}
	if got := value(t, sc, "select_scan"); got != 0 {
		t.Errorf("select_scan = %v: the work scans nothing; the reader's own reads were not taken out", got)
	}
	if got := value(t, sc, "handler_read_rnd_next"); got > 20 {
		t.Errorf("handler_read_rnd_next = %v: the work reads by key; the reader's own reads were not taken out", got)
	}
	for _, name := range []string{"innodb_os_log_written", "innodb_buffer_pool_read_requests", "handler_read_key"} {
		if value(t, sc, name) <= 0 {
			t.Errorf("%s did not move: %+v", name, sc.Values)
		}
	}
	if v, ok := sc.Counter("threads_running"); !ok || !v.Level || v.Value < 0 {
		t.Errorf("threads_running: %+v %v", v, ok)
	}
	if v, ok := sc.Counter("innodb_pages_created"); !ok || !v.Extra {
		t.Errorf("an asked-for counter is recorded as extra: %+v %v", v, ok)
	}
	if !strings.Contains(strings.Join(sc.Notes, "\n"), "no_such_counter") {
		t.Errorf("an unknown counter is not named in the notes: %q", sc.Notes)
	}
	// default.cnf turns performance_schema off: none of its counters.
	if _, ok := sc.Counter("ps_statements"); ok || sc.Source != "global status" {
		t.Errorf("performance_schema counters with performance_schema off: %s %+v", sc.Source, sc.Values)
	}
	// Per op, as the metric registry reads it: the window's 500
	// statements as o/s over its seconds.
	run := result.Run{HW: &result.HW{Samples: 2, Seconds: sc.Seconds, OpsPerSec: float64(n+n+n/2) / sc.Seconds, Server: sc}}
	m, err := result.MetricNamed("handler_write/o")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.Of(run); !ok || v < 0.39 || v > 0.41 {
		t.Errorf("handler_write/o = %v %v, want 200/500", v, ok)
	}
}

// MySQL with performance_schema on (the seeds' cz11d_bee; qpslab's
// default.cnf turns it off): its statement summary and wait events count
// the window's work per op, the reader's own statements taken out: 500
// statements, each a table IO wait or two (a row inserted, fetched, or
// fetched and updated), their time, the rows they examined.
func TestMySQLPerformanceSchema(t *testing.T) {
	srv, _ := testenv.StartServerFrom(t, testenv.MySQL, "cz11d_bee", config.Store{Dir: t.TempDir(), Memory: 2 << 30})
	ep := srv.Endpoint()
	createT(t, ep)
	r, err := counters.Open(context.Background(), srv.Flavor.Describe().Counters, ep, false, counters.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	const n = 200
	r.Open()
	work(t, ep, n)
	r.Close()
	sc := r.Result()
	if sc == nil || sc.Source != "global status, performance_schema" {
		t.Fatalf("result %+v", sc)
	}
	statements := float64(n + n + n/2)
	// performance_schema adds a statement to its summary after the client
	// has its answer, so the window's last statement may not be counted
	// yet when the reader closes (seen once in a fresh-clone check on a
	// busy host: 499): one fewer is the window's work too.
	for _, c := range []struct {
		name   string
		lo, hi float64
	}{
		{"ps_statements", statements - 1, statements + 5},
		{"ps_wait_io_table", 3 * n, 4 * n},
		{"ps_rows_examined", n, 3 * n},
		{"ps_statement_us", 1, 1e9},
		{"ps_wait_io_table_us", 1, 1e9},
	} {
		if got := value(t, sc, c.name); got < c.lo || got > c.hi {
			t.Errorf("%s = %v, want %v to %v", c.name, got, c.lo, c.hi)
		}
	}
	run := result.Run{HW: &result.HW{Samples: 2, Seconds: sc.Seconds, OpsPerSec: statements / sc.Seconds, Server: sc}}
	m, err := result.MetricNamed("ps_statements/o")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.Of(run); !ok || v < (statements-1)/statements || v > 1.01 {
		t.Errorf("ps_statements/o = %v %v, want 1", v, ok)
	}
}

// PostgreSQL: inserts and WAL bytes from the statistics views (after the
// backend that made them has published them), buffer hits, and the
// curated set's names.
func TestPostgresCounters(t *testing.T) {
	srv, _ := testenv.StartServer(t, "postgres-system")
	ep := srv.Endpoint()
	setup, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	mustExec(t, setup, "CREATE TABLE t (id int primary key, v int)")

	r, err := counters.Open(context.Background(), srv.Flavor.Describe().Counters, ep, false, counters.Selection{All: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	const n = 200
	var before float64
	setup.QueryRow("SELECT sum(tup_inserted) FROM pg_stat_database").Scan(&before)
	r.Open()
	work(t, ep, n)
	// The work's backend publishes its statistics as it exits; wait until
	// they are in the view, then close the window.
	testenv.WaitFor(t, time.Minute, "the work's inserts in pg_stat_database", func() bool {
		var now float64
		setup.QueryRow("SELECT sum(tup_inserted) FROM pg_stat_database").Scan(&now)
		return now-before >= n
	})
	r.Close()
	sc := r.Result()
	if sc == nil || sc.Seconds <= 0 {
		t.Fatalf("result %+v", sc)
	}
	if got := value(t, sc, "tup_inserted"); got < n || got > n+50 {
		t.Errorf("tup_inserted = %v, want %d (and what autoanalyze may add)", got, n)
	}
	if got := value(t, sc, "tup_updated"); got < n/2 {
		t.Errorf("tup_updated = %v, want at least %d", got, n/2)
	}
	for _, name := range []string{"wal_bytes", "blks_hit", "blks_requested", "xact_commit", "wal_records"} {
		if value(t, sc, name) <= 0 {
			t.Errorf("%s did not move", name)
		}
	}
	if req, hit, read := value(t, sc, "blks_requested"), value(t, sc, "blks_hit"), value(t, sc, "blks_read"); req != hit+read {
		t.Errorf("blks_requested %v, want blks_hit %v + blks_read %v", req, hit, read)
	}
	if v, ok := sc.Counter("active_backends"); !ok || !v.Level {
		t.Errorf("active_backends: %+v %v", v, ok)
	}
	// all: other columns too, marked extra; none twice.
	seen := map[string]bool{}
	extra := 0
	for _, v := range sc.Values {
		if seen[v.Name] {
			t.Errorf("%s twice", v.Name)
		}
		seen[v.Name] = true
		if v.Extra {
			extra++
		}
	}
	if !seen["n_tup_ins"] || extra == 0 {
		t.Errorf("--counters all: no extra counters: %+v", sc.Values)
	}
}

// A nil reader (--counters none) and a window that never opened have no
// result.
func TestNoReader(t *testing.T) {
	r, err := counters.Open(context.Background(), "", client.Endpoint{}, false, counters.Selection{None: true})
	if err != nil || r != nil {
		t.Fatalf("none: %v %v", r, err)
	}
	r.Open()
	r.Close()
	r.Release()
	if r.Result() != nil {
		t.Error("a nil reader has a result")
	}
}

// Every flavor with a server names a counter set the package has: a new
// flavor whose descriptor names none fails here, not in its first run's
// notes.
func TestEveryServerFlavorHasACounterSet(t *testing.T) {
	for _, f := range build.Flavors() {
		if !f.HasServer() {
			continue
		}
		if name := f.Describe().Counters; len(counters.Curated(name)) == 0 {
			t.Errorf("flavor %s names counter set %q, which has no counters", f, name)
		}
	}
	_, err := counters.Open(context.Background(), "nosuch", client.Endpoint{}, false, counters.Selection{})
	testenv.WantErr(t, err, `no counter set named "nosuch"`)
}
