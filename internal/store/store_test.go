package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
)

var ctx = context.Background()

func open(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(ctx, dsn, filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func meta(test string, threads int) result.Run {
	return result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: test, Build: "mariadb-10.2.11", Flavor: "mariadb", Version: "10.2.11",
		Config: "default@0123456789ab", Threads: threads, Loop: "closed", Seed: 1<<63 + 5, Started: time.Now().UTC(),
		Params: map[string]string{"range": "100"}, Host: []byte(`{"kernel":"6.1","cpus":2,"steal_pct_since_boot":0.5}`)}
}

func finished(r result.Run, status string, qps float64, samples int) result.Run {
	r.Status, r.Ended = status, time.Now().UTC()
	r.Totals = result.Totals{Seconds: float64(samples), Events: int64(qps) * int64(samples), Reported: qps, ReportedUnit: "qps", QPS: qps, ServiceHist: []byte{7, 8, 9}}
	for i := 0; i < samples; i++ {
		r.Samples = append(r.Samples, result.Sample{Second: i, Events: int64(qps), Statements: int64(qps), Service: result.Latency{P99: float64(100 + i)}, ServiceHist: []byte{byte(i)}})
	}
	r.HW = &result.HW{Op: "statement", CPUPerOp: 0.0042, OpsPerSec: qps, Samples: samples + 1, Flags: []result.Flag{{Name: "steal", Detail: "x"}}}
	return r
}

// A run written as it goes reads back whole: samples, totals, histograms,
// per-op metrics, host fingerprint, the seed's 64 bits.
func roundTrip(t *testing.T, s *Store) {
	m := meta("point-query_range=100", 2)
	w, err := s.Begin(ctx, m, Meta{ConfigContent: []byte("[mysqld]\ninnodb_buffer_pool_size=1G\n")})
	if err != nil {
		t.Fatal(err)
	}
	// While it runs, it is there as running, with the samples so far.
	done := finished(m, result.OK, 1000, 3)
	for _, smp := range done.Samples[:2] {
		w.Sample(smp)
	}
	// The writer's goroutine stores them: wait until both are there.
	var running []result.Run
	testenv.WaitFor(t, 30*time.Second, "the running run's 2 samples stored", func() bool {
		running, err = s.Runs(ctx, Filter{Build: m.Build, Config: "default", Status: []string{"running"}, Samples: true})
		return err != nil || len(running) != 1 || len(running[0].Samples) >= 2
	})
	if err != nil || len(running) != 1 || len(running[0].Samples) != 2 {
		t.Fatalf("a running run: %d runs, %v", len(running), err)
	}
	done.HW.Server = &result.ServerCounters{Source: "global status", Seconds: 3, Values: []result.CounterValue{{Name: "innodb_os_log_written", Unit: "bytes", Value: 3e6}}}
	done.Stacks = []result.Stacks{
		{Source: "pmp", Tool: "eu-stack", Interval: 1, Captures: 3, PauseMeanMs: 12, PauseMaxMs: 20, Stacks: []result.Stack{{Frames: "start_thread;do_command", State: "S", Count: 9}}},
		{Source: "perf", Tool: "perf", Interval: 1.0 / 49, Captures: 100, Stacks: []result.Stack{{Frames: "start_thread;do_command;my_hash", State: "R", Count: 100}}},
	}
	if err := w.Done(ctx, done); err != nil {
		t.Fatal(err)
	}
	// The stacks come back when asked for, and only then.
	withStacks := runsOf(t, s, Filter{Build: m.Build, Config: "default", Stacks: true})
	if len(withStacks) != 1 || len(withStacks[0].Stacks) != 2 {
		t.Fatalf("with stacks: %+v", withStacks)
	}
	if p, ok := withStacks[0].StacksOf("pmp"); !ok || p.Captures != 3 || p.PauseMaxMs != 20 || p.Stacks[0].Frames != "start_thread;do_command" || p.Stacks[0].State != "S" || p.Stacks[0].Count != 9 {
		t.Errorf("pmp stacks read back: %+v", p)
	}
	if p, ok := withStacks[0].StacksOf("perf"); !ok || p.Stacks[0].Count != 100 {
		t.Errorf("perf stacks read back: %+v", p)
	}
	runs, err := s.Runs(ctx, Filter{Build: m.Build, Config: "default", Samples: true})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	r := runs[0]
	if r.Test != m.Test || r.Threads != 2 || r.Seed != m.Seed || r.Status != result.OK || r.Totals.Reported != 1000 ||
		string(r.Totals.ServiceHist) != "\x07\x08\x09" || len(r.Samples) != 3 || r.Samples[2].Service.P99 != 102 ||
		string(r.Samples[1].ServiceHist) != "\x01" || r.HW == nil || r.HW.CPUPerOp != 0.0042 || len(r.HW.Flags) != 1 ||
		!strings.Contains(string(r.Host), `"kernel"`) || r.Params["range"] != "100" || r.Version != "10.2.11" || len(r.Stacks) != 0 {
		t.Errorf("read back: %+v", r)
	}
	if v, ok := r.HW.Server.Counter("innodb_os_log_written"); !ok || v.Value != 3e6 {
		t.Errorf("server counters read back: %+v", r.HW.Server)
	}
	name, content, err := s.Config(ctx, m.Config)
	if err != nil || name != "default" || !strings.Contains(content, "buffer_pool") {
		t.Errorf("config: %q %q %v", name, content, err)
	}
	labels, err := s.Labels(ctx)
	if err != nil || len(labels) != 1 || labels[0].Label != "mariadb-10.2.11.default" || labels[0].Runs != 1 {
		t.Errorf("labels: %+v %v", labels, err)
	}
	// Narrowed by thread count and host.
	if rs := runsOf(t, s, Filter{Build: m.Build, Config: "default", Threads: 4}); len(rs) != 0 {
		t.Errorf("--threads 4 found %d runs", len(rs))
	}
	if rs := runsOf(t, s, Filter{Build: m.Build, Config: "default", Host: s.hostname}); len(rs) != 1 {
		t.Errorf("--host %s found %d runs", s.hostname, len(rs))
	}
}

func TestSQLiteRoundTrip(t *testing.T) { roundTrip(t, open(t, "")) }

// runsOf is s.Runs(f), failing the test on an error.
func runsOf(t *testing.T, s *Store, f Filter) []result.Run {
	t.Helper()
	rs, err := s.Runs(ctx, f)
	if err != nil {
		t.Fatalf("runs %+v: %v", f, err)
	}
	return rs
}

// begin is s.Begin, failing the test on an error.
func begin(t *testing.T, s *Store, r result.Run) *Writer {
	t.Helper()
	w, err := s.Begin(ctx, r, Meta{})
	if err != nil {
		t.Fatalf("begin %s: %v", r.Test, err)
	}
	return w
}

// mustExec runs a statement on the store's database, failing the test on an error.
func mustExec(t *testing.T, s *Store, query string, args ...any) {
	t.Helper()
	if _, err := s.db.Exec(s.q(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// An interrupted run is stored as aborted with its samples; a run whose
// process was killed is marked aborted when the store is next opened.
func TestAbortedRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	s := open(t, path)
	m := meta("update-index_range=100", 1)
	w := begin(t, s, m)
	w.Sample(result.Sample{Second: 0, Events: 5})
	if err := w.Done(ctx, finished(m, result.Aborted, 10, 2)); err != nil {
		t.Fatal(err)
	}
	w2 := begin(t, s, meta("insert_range=100", 1))
	w2.Sample(result.Sample{Second: 0, Events: 5})
	w2.Sample(result.Sample{Second: 1, Events: 6})
	// Its process is "killed" below once the writer's goroutine has stored
	// both samples.
	testenv.WaitFor(t, 30*time.Second, "the running run's 2 samples stored", func() bool {
		var n int
		s.db.QueryRow(s.q(`SELECT count(*) FROM samples WHERE run_id = ?`), w2.ID()).Scan(&n)
		return n >= 2
	})
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	me := runnerOf(os.Getpid())
	if me == "" {
		t.Fatal("this process has no runner id: /proc cannot say its boot and start time")
	}
	mustExec(t, s, `UPDATE runs SET pid = ?, runner = ? WHERE id = ?`, dead.Process.Pid, strings.Replace(me, fmt.Sprintf("/%d/", os.Getpid()), fmt.Sprintf("/%d/", dead.Process.Pid), 1), w2.ID()) // as if a killed process had written it
	// A run written on another machine (in another boot) is not judged:
	// it is that machine's to judge (TestRebootReapsRuns has this one's).
	w3 := begin(t, s, meta("delete_range=100", 1))
	mustExec(t, s, `UPDATE runs SET pid = ?, runner = ?, machine = ? WHERE id = ?`, dead.Process.Pid, "another-boot/1/1", "another-machine", w3.ID())
	s2 := open(t, path)
	runs, err := s2.Runs(ctx, Filter{Build: m.Build, Config: "default", Status: []string{result.Aborted}, Samples: true})
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d aborted runs, %v", len(runs), err)
	}
	for _, r := range runs {
		if len(r.Samples) != 2 {
			t.Errorf("%s: %d samples kept", r.Test, len(r.Samples))
		}
	}
	if rs := runsOf(t, s2, Filter{Build: m.Build, Config: "default", Status: []string{"running"}}); len(rs) != 1 || rs[0].Test != "delete_range=100" {
		t.Errorf("the other machine's run was judged: %d running", len(rs))
	}
	if rs := runsOf(t, s2, Filter{Build: m.Build, Config: "default"}); len(rs) != 0 {
		t.Errorf("aborted runs are compared: %d", len(rs))
	}
}

// Import is all or nothing.
func TestImportAllOrNothing(t *testing.T) {
	s := open(t, "")
	good := finished(meta("point-query_range=100", 1), result.OK, 100, 0)
	bad := good
	bad.Host = []byte(`not json`)
	bad.Totals.Reported = 99
	if _, err := s.Import(ctx, []result.Run{good, bad}, Meta{Source: "sysbench-1.0"}); err == nil {
		t.Fatal("a bad run imported")
	}
	if rs := runsOf(t, s, Filter{Build: good.Build, Config: "default"}); len(rs) != 0 {
		t.Errorf("half an import stored: %d runs", len(rs))
	}
	other := good
	other.Totals.Reported = 101
	if skipped, err := s.Import(ctx, []result.Run{good, other}, Meta{Source: "sysbench-1.0"}); err != nil || skipped != 0 {
		t.Fatal(skipped, err)
	}
	if rs := runsOf(t, s, Filter{Build: good.Build, Config: "default"}); len(rs) != 2 {
		t.Errorf("%d runs imported", len(rs))
	}
	// The same import again stores nothing: no value counts twice.
	if skipped, err := s.Import(ctx, []result.Run{good, other}, Meta{Source: "sysbench-1.0"}); err != nil || skipped != 2 {
		t.Errorf("a repeated import: %d skipped, %v", skipped, err)
	}
	if rs := runsOf(t, s, Filter{Build: good.Build, Config: "default"}); len(rs) != 2 {
		t.Errorf("%d runs after importing twice", len(rs))
	}
}

// A build imported without a version takes one when its results are
// imported again with it (the runs themselves are skipped); a version once
// recorded is kept.
func TestImportFillsVersion(t *testing.T) {
	s := open(t, "")
	r := finished(meta("update-inlist_range=100", 1), result.OK, 3966, 0)
	r.Build, r.Flavor, r.Version, r.Host, r.Started = "ma100244_rel", "", "", nil, time.Time{}
	if _, err := s.Import(ctx, []result.Run{r}, Meta{Source: "mytools"}); err != nil {
		t.Fatal(err)
	}
	if rs := runsOf(t, s, Filter{Build: r.Build}); len(rs) != 1 || rs[0].Version != "" {
		t.Fatalf("imported without a version: %+v", rs)
	}
	r.Flavor, r.Version = "mariadb", "10.2.44"
	if skipped, err := s.Import(ctx, []result.Run{r}, Meta{Source: "mytools"}); err != nil || skipped != 1 {
		t.Fatalf("again: %d skipped, %v", skipped, err)
	}
	if rs := runsOf(t, s, Filter{Build: r.Build}); len(rs) != 1 || rs[0].Version != "10.2.44" || rs[0].Flavor != "mariadb" {
		t.Errorf("imported again with its version: %+v", rs)
	}
	r.Version = "10.2.45"
	if _, err := s.Import(ctx, []result.Run{r}, Meta{Source: "mytools"}); err != nil {
		t.Fatal(err)
	}
	if rs := runsOf(t, s, Filter{Build: r.Build}); len(rs) != 1 || rs[0].Version != "10.2.44" {
		t.Errorf("a recorded version changed: %+v", rs)
	}
}

// Two qpslab processes writing one new store at once both succeed.
func TestConcurrentWriters(t *testing.T) {
	if os.Getenv("QPSLAB_STORE_WRITER") != "" {
		return // the helper process below
	}
	path := filepath.Join(t.TempDir(), "q.db")
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := 0; i < 2; i++ {
		c := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
		c.Env = append(os.Environ(), "QPSLAB_STORE_WRITER="+path, "QPSLAB_STORE_WRITER_ID="+strconv.Itoa(i))
		out := &strings.Builder{}
		c.Stdout, c.Stderr = out, out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, c), append(outs, out)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", i, err, outs[i])
		}
	}
	s := open(t, path)
	for i := 0; i < 2; i++ {
		rs, err := s.Runs(ctx, Filter{Build: fmt.Sprintf("writer-%d", i), Config: "default", Samples: true})
		if err != nil || len(rs) != 20 {
			t.Errorf("writer %d stored %d of 20 runs: %v", i, len(rs), err)
		}
		for _, r := range rs {
			if len(r.Samples) != 5 {
				t.Errorf("writer %d: a run with %d samples", i, len(r.Samples))
			}
		}
	}
}

// TestWriterProcess is not a test of its own: it is the writer process that
// TestConcurrentWriters starts (this test binary, run with
// QPSLAB_STORE_WRITER set). In any other run it returns at once, and is no
// skip.
func TestWriterProcess(t *testing.T) {
	path := os.Getenv("QPSLAB_STORE_WRITER")
	if path == "" {
		return // a subprocess helper of TestConcurrentWriters
	}
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for n := 0; n < 20; n++ {
		m := meta("point-query_range=100", 1)
		m.Build = "writer-" + os.Getenv("QPSLAB_STORE_WRITER_ID")
		w, err := s.Begin(ctx, m, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		r := finished(m, result.OK, 100, 5)
		for _, smp := range r.Samples {
			w.Sample(smp)
		}
		if err := w.Done(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

// The same schema and code on PostgreSQL (a sandbox of the Debian build);
// the connection's password is used, never stored.
func TestPostgresStore(t *testing.T) {
	srv, _ := testenv.StartServer(t, "postgres-system")
	ep := srv.Endpoint()
	db, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE ROLE lab LOGIN PASSWORD 'sekrit-pw'`); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"results", "split"} {
		if _, err := db.Exec(`CREATE DATABASE ` + name + ` OWNER lab`); err != nil {
			t.Fatal(err)
		}
	}
	dsn := fmt.Sprintf("postgres://lab:sekrit-pw@127.0.0.1:%d/results?sslmode=disable", ep.Port)
	s := open(t, dsn)
	if strings.Contains(s.Where(), "sekrit") {
		t.Errorf("the password shows in %s", s.Where())
	}
	roundTrip(t, s)
	var n, all int
	if err := s.db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE r.params LIKE '%sekrit%' OR c.content LIKE '%sekrit%' OR h.fingerprint LIKE '%sekrit%' OR r.error LIKE '%sekrit%')
		FROM runs r JOIN configs c ON c.id = r.config JOIN hosts h ON h.id = r.host_id`).Scan(&all, &n); err != nil {
		t.Fatalf("look for the password in the store: %v", err)
	}
	if all == 0 {
		t.Fatal("no run with its config and host to look for the password in")
	}
	if n != 0 {
		t.Errorf("the password is stored in %d of %d runs", n, all)
	}
	// A second open of a migrated store migrates nothing and works.
	roundTripAgain := open(t, dsn)
	if rs, err := roundTripAgain.Runs(ctx, Filter{Build: "mariadb-10.2.11", Config: "default"}); err != nil || len(rs) != 1 {
		t.Errorf("reopened: %d runs, %v", len(rs), err)
	}
	// What qpslab serve keeps, on PostgreSQL too.
	serveTables(t, roundTripAgain)
	sessionTables(t, roundTripAgain, "ba9876543210") // serveTables' second ci token
	triageRoundTrip(t, roundTripAgain)
	// A hidden run is left out on PostgreSQL too (migration 12).
	hideOnPostgres(t, roundTripAgain)
	// The variance components (migration 17) on PostgreSQL too.
	componentsRoundTrip(t, roundTripAgain)
	// Migration 4 merges split hosts on PostgreSQL too.
	splitHostsMerge(t, strings.Replace(dsn, "/results?", "/split?", 1))
	// store check says what PostgreSQL keeps.
	postgresCheck(t, dsn)
}

// Runs of two storage engines under one build and config are two labels,
// and a filter by engine reads one's: a run that records no engine is
// InnoDB's, as every run before --engine was.
func TestEngineLabels(t *testing.T) {
	s := open(t, "")
	for i, e := range []string{"", "innodb", "rocksdb"} {
		m := meta("point-query_range=100", 1)
		m.Seed = uint64(i + 1)
		if e != "" {
			m.Params = map[string]string{"engine": e}
		}
		w, err := s.Begin(ctx, m, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Done(ctx, finished(m, result.OK, float64(1000+i), 1)); err != nil {
			t.Fatal(err)
		}
	}
	labels, err := s.Labels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range labels {
		got = append(got, fmt.Sprintf("%s %d", l.Label, l.Runs))
	}
	if strings.Join(got, ", ") != "mariadb-10.2.11.default 2, mariadb-10.2.11.default:rocksdb 1" {
		t.Errorf("labels: %v", got)
	}
	for engine, want := range map[string]int{"": 3, "innodb": 2, "rocksdb": 1, "tokudb": 0} {
		if rs := runsOf(t, s, Filter{Build: "mariadb-10.2.11", Config: "default", StorageEngine: engine}); len(rs) != want {
			t.Errorf("engine %q: %d runs, want %d", engine, len(rs), want)
		}
	}
	// The list of runs labels each with its engine, as the run itself is,
	// and so does the audit line of a run hidden.
	infos, _, err := s.RunList(ctx, RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, ri := range infos {
		got = append(got, ri.Label()+" "+ri.StorageEngine)
	}
	if g, w := strings.Join(got, ", "), "mariadb-10.2.11.default:rocksdb rocksdb, mariadb-10.2.11.default innodb, mariadb-10.2.11.default "; g != w {
		t.Errorf("RunList labels %q, want %q", g, w)
	}
	for _, ri := range infos {
		if _, err := s.Curate(ctx, Hide, []string{ri.ID}, "test", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	log, err := s.AuditLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, a := range log {
		got = append(got, a.Label)
	}
	if g, w := strings.Join(got, ", "), "mariadb-10.2.11.default:rocksdb, mariadb-10.2.11.default, mariadb-10.2.11.default"; g != w {
		t.Errorf("the audit log labels %q, want %q", g, w)
	}
}

// fakeBoot points the store's view of the kernel at a root of the test's
// own whose boot id is boot (a reboot when it changes), where this
// process's own facts are the real ones.
func fakeBoot(t *testing.T, root, boot string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "sys/kernel/random"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sys/kernel/random/boot_id"), []byte(boot+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(root, strconv.Itoa(os.Getpid()))
	if _, err := os.Lstat(self); err != nil {
		if err := os.Symlink(fmt.Sprintf("/proc/%d", os.Getpid()), self); err != nil {
			t.Fatal(err)
		}
	}
	old := proc
	proc = root
	t.Cleanup(func() { proc = old })
}

// A reboot (or a power loss) in the middle of runs: the runs its boot left
// running are marked aborted, saying the machine restarted, when the store
// is next opened in a later boot; a run it finished keeps its result, and
// another machine's run in the store is left to that machine. Before, a
// run of an earlier boot stayed running for ever.
func TestRebootReapsRuns(t *testing.T) {
	root := t.TempDir()
	fakeBoot(t, root, "boot-a")
	path := filepath.Join(t.TempDir(), "q.db")
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	done := meta("point-query_range=100", 1)
	w := begin(t, s, done)
	if err := w.Done(ctx, finished(done, result.OK, 100, 3)); err != nil {
		t.Fatal(err)
	}
	cut := meta("update-index_range=100", 1)
	wc := begin(t, s, cut)
	wc.Sample(result.Sample{Second: 0, Events: 5})
	testenv.WaitFor(t, 30*time.Second, "the cut run's sample stored", func() bool {
		var n int
		s.db.QueryRow(s.q(`SELECT count(*) FROM samples WHERE run_id = ?`), wc.ID()).Scan(&n)
		return n == 1
	})
	other := begin(t, s, meta("delete_range=100", 1))
	mustExec(t, s, `UPDATE runs SET machine = ? WHERE id = ?`, "another-machine", other.ID())
	// The same boot, the same live process: nothing is judged.
	s2, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	if rs := runsOf(t, s2, Filter{Build: cut.Build, Status: []string{"running"}}); len(rs) != 2 {
		t.Fatalf("%d running before the reboot, want 2", len(rs))
	}
	s2.Close()
	s.Close() // the power goes: nothing more is written

	fakeBoot(t, root, "boot-b")
	s3 := open(t, path)
	ab, err := s3.Runs(ctx, Filter{Build: cut.Build, Status: []string{result.Aborted}, Samples: true})
	if err != nil || len(ab) != 1 {
		t.Fatalf("%d aborted after the reboot (%v), want 1", len(ab), err)
	}
	if r := ab[0]; r.Test != cut.Test || len(r.Samples) != 1 || !strings.Contains(r.Error, "the machine restarted while it ran (its boot boot-a ended; this is boot boot-b)") {
		t.Errorf("the cut run: %s, %d samples, %q", r.Test, len(r.Samples), r.Error)
	}
	if rs := runsOf(t, s3, Filter{Build: cut.Build, Status: []string{"running"}}); len(rs) != 1 || rs[0].Test != "delete_range=100" {
		t.Errorf("running after the reboot: %d, want another machine's", len(rs))
	}
	if rs := runsOf(t, s3, Filter{Build: cut.Build}); len(rs) != 1 || rs[0].Test != done.Test || rs[0].Totals.Reported != 100 {
		t.Errorf("the finished run: %+v", rs)
	}
	// The next run, in the new boot, is kept as any other.
	next := meta("point-query_range=100", 2)
	if err := begin(t, s3, next).Done(ctx, finished(next, result.OK, 200, 2)); err != nil {
		t.Fatal(err)
	}
	if rs := runsOf(t, s3, Filter{Build: cut.Build}); len(rs) != 2 {
		t.Errorf("%d ok runs after the next, want 2", len(rs))
	}
}
