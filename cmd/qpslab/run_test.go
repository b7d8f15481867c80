package main_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// quick are the flags that make a whole run short: a small table, half a
// second per test, no warmup, no postwrite wait.
var quick = []string{"--tables", "1", "--rows", "2000", "--read-secs", "0.5", "--write-secs", "0.5",
	"--insert-secs", "0.5", "--warmup", "0", "--postwrite-scale", "0", "--seed", "42"}

// All 42 tests of the 2024 list run on MariaDB 10.11, MariaDB 10.2.11 and
// PostgreSQL 15, each reporting the statement count the reference says.
func TestRunAll42(t *testing.T) {
	want := map[string]sysbench.Test{}
	for _, tt := range sysbench.Report2024() {
		want[tt.Label()] = tt
	}
	if len(want) != 42 {
		t.Fatalf("the 2024 list has %d tests", len(want))
	}
	for _, b := range []string{"mariadb-system", "mariadb-10.2.11", "postgres-system"} {
		t.Run(b, func(t *testing.T) {
			h := newHome(t)
			if !strings.HasSuffix(b, "-system") {
				testenv.Build(t, h, b)
			}
			out := filepath.Join(t.TempDir(), "r.json")
			r := qpslab(t, h, append([]string{"run", "sysbench", "--build", b, "--threads", "2", "--out", out}, quick...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			f, err := result.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, run := range f.Runs {
				// Every result has its hardware cost per op.
				if run.HW == nil || run.HW.Samples < 2 || run.HW.OpsPerSec <= 0 || run.HW.CPUs == 0 {
					t.Errorf("%s: no hardware metrics: %+v", run.Test, run.HW)
				}
				if run.Test == "load" {
					if run.Status != result.OK || run.Totals.Rows != 2000 || run.Totals.ReportedUnit != "rows/s" || run.HW.Op != "row" {
						t.Errorf("load: status %s rows %d unit %s op %s", run.Status, run.Totals.Rows, run.Totals.ReportedUnit, run.HW.Op)
					}
					continue
				}
				if run.Status != result.OK || run.Totals.Events == 0 {
					t.Errorf("%s: status %s, %d events, error %q", run.Test, run.Status, run.Totals.Events, run.Error)
				}
				if !strings.Contains(string(run.Host), `"cpufreq_driver"`) {
					t.Errorf("%s: no host fingerprint recorded: %s", run.Test, run.Host)
				}
				if run.Build != b || run.Suite != "sysbench" || run.Seed == 0 || len(run.Samples) == 0 {
					t.Errorf("%s: build %q suite %q seed %d samples %d", run.Test, run.Build, run.Suite, run.Seed, len(run.Samples))
				}
				tt, ok := want[run.Test]
				if !ok {
					continue // the point-query.warm step
				}
				seen[run.Test] = true
				// Every event issued the reference's statement count (QPS
				// counts BEGIN and COMMIT): statements = events × count.
				if got := run.Totals.Statements; got != run.Totals.Events*int64(tt.Statements) {
					t.Errorf("%s: %d statements for %d events, want %d per event", run.Test, got, run.Totals.Events, tt.Statements)
				}
				if !strings.Contains(r.stdout, run.Test) {
					t.Errorf("%s is not in the printed table", run.Test)
				}
				if tt.Krows {
					if run.Totals.ReportedUnit != "Krows/s" || run.Totals.Reported <= 0 {
						t.Errorf("scan reports %v %s", run.Totals.Reported, run.Totals.ReportedUnit)
					}
				} else if run.Totals.Reported != run.Totals.QPS {
					t.Errorf("%s reports %v, QPS is %v", run.Test, run.Totals.Reported, run.Totals.QPS)
				}
			}
			if len(seen) != 42 {
				t.Errorf("%d of the 42 tests have results", len(seen))
			}
		})
	}
}

// A write test against a real sandbox: the hardware sampler sees the disk
// written, the server's CPU and the client's, kept apart (each is part of
// the host's and they do not overlap), on MariaDB's one process and on
// PostgreSQL's tree of backends.
func TestRunHardwareCost(t *testing.T) {
	for _, b := range []string{"mariadb-system", "postgres-system"} {
		t.Run(b, func(t *testing.T) {
			h := newHome(t)
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", "sysbench", "--build", b, "--threads", "2", "--tests", "update-index_range=100", "--out", out}, quick...)
			r := qpslab(t, h, append(args, "--write-secs", "3", "-v")...) // -v: every run's metric line
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			f, err := result.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			run := f.Runs[len(f.Runs)-1]
			hw := run.HW
			if run.Test != "update-index_range=100" || hw == nil {
				t.Fatalf("%s: %+v", run.Test, hw)
			}
			t.Logf("%s", hwSummary(hw))
			if hw.WriteKBPerOp <= 0 || hw.ServerCPUUsOp <= 0 || hw.ClientCPUUsOp <= 0 || len(hw.Device) == 0 {
				t.Errorf("want wKB/o, server and client CPU µs/op > 0 on a disk: %s", hwSummary(hw))
			}
			if hw.ServerCPUUsOp+hw.ClientCPUUsOp > hw.HostCPUUsOp*1.1 {
				t.Errorf("server + client CPU exceed the host's: one counts the other: %s", hwSummary(hw))
			}
			if !near(hw.OpsPerSec, run.Totals.QPS) || hw.Samples < 3 || hw.Seconds < 2.5 || hw.Seconds > 3.5 {
				t.Errorf("o/s %v (QPS %v), %d samples over %.2f s", hw.OpsPerSec, run.Totals.QPS, hw.Samples, hw.Seconds)
			}
			if b == "postgres-system" && hw.Avg.ServerProc < 3 {
				t.Errorf("PostgreSQL's tree has %d process(es): the backends are missed", hw.Avg.ServerProc)
			}
			if !strings.Contains(r.stdout, "hw: cpu/o ") {
				t.Errorf("no metric line printed:\n%s", r.stdout)
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-6*b && b-a < 1e-6*b }

// waitSamples waits until h's store holds n samples of the running run of
// test, stored as qpslab measures them (each second of the measured
// window); it fails at once if ended is closed first (the qpslab command
// ended; nil: not watched).
func waitSamples(t *testing.T, h home.Home, test string, n int, ended <-chan struct{}) {
	t.Helper()
	var st *store.Store
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	testenv.WaitFor(t, 3*time.Minute, fmt.Sprintf("%d sample(s) of %s in the store", n, test), func() bool {
		select {
		case <-ended:
			t.Fatalf("qpslab ended before %d sample(s) of %s were stored", n, test)
		default:
		}
		if st == nil {
			if _, err := os.Stat(h.StoreFile()); err != nil {
				return false
			}
			s, err := store.Open(context.Background(), "", h.StoreFile())
			if err != nil {
				return false
			}
			st = s
		}
		runs, err := st.Runs(context.Background(), store.Filter{Test: test, Status: []string{"running"}, Samples: true})
		return err == nil && len(runs) == 1 && len(runs[0].Samples) >= n
	})
}

func hwSummary(hw *result.HW) string {
	return fmt.Sprintf("device %v wKB/o %.3f cpu/o %.5f CPU µs/op host %.1f server %.1f client %.1f, %d samples",
		hw.Device, hw.WriteKBPerOp, hw.CPUPerOp, hw.HostCPUUsOp, hw.ServerCPUUsOp, hw.ClientCPUUsOp, hw.Samples)
}

// SIGINT in the middle of a test ends the run with the samples taken so far
// written (to the results file and the store), marked aborted, and no
// process left.
func TestRunSIGINTKeepsSamples(t *testing.T) {
	h := newHome(t)
	out := filepath.Join(t.TempDir(), "r.json")
	args := append([]string{"run", "sysbench", "--build", "mariadb-system", "--tests", "point-query.pre*", "--out", out}, quick...)
	args = append(args, "--read-secs", "60", "-v") // -v: "-- TEST" as each test starts
	cmd := exec.Command(bin, args...)
	cmd.Env = testenv.Env(h)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "-- point-query.pre") {
				started <- true
			}
		}
		close(started)
	}()
	select {
	case ok := <-started:
		if !ok {
			cmd.Wait()
			t.Fatal("the run ended before its test started")
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the test did not start")
	}
	waitSamples(t, h, "point-query.pre_range=100", 2, nil) // two seconds measured
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("want exit 130 after SIGINT, got %v", err)
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 2 || f.Runs[0].Test != "load" {
		t.Fatalf("%d runs saved, want the load and the interrupted test", len(f.Runs))
	}
	run := f.Runs[1]
	if run.Status != result.Aborted || len(run.Samples) < 2 || run.Totals.Events == 0 {
		t.Errorf("status %s, %d samples, %d events", run.Status, len(run.Samples), run.Totals.Events)
	}
	if run.Duration > 30 {
		t.Errorf("recorded duration %.0f s for a run stopped after its second sample", run.Duration)
	}
	st, err := store.Open(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored, err := st.Runs(context.Background(), store.Filter{Build: "mariadb-system", Config: "default", Status: []string{result.Aborted}, Samples: true})
	if err != nil || len(stored) != 1 || len(stored[0].Samples) < 2 || stored[0].Totals.Events == 0 || stored[0].HW == nil {
		t.Errorf("the store holds %d aborted runs (%v)", len(stored), err)
	}
}

// Open loop against a real server: a row lock held for about a second stalls
// update-one. The events queued behind the stall show it in their response
// time (from the intended start); their service time (from the actual send)
// does not, and the one event that waited for the lock shows it as service.
func TestRunOpenLoopShowsStall(t *testing.T) {
	h := newHome(t)
	if r := qpslab(t, h, "server", "start", "mariadb-system", "default", "--name", "stall"); r.code != 0 {
		t.Fatalf("start: %s", r.stderr)
	}
	defer qpslab(t, h, "server", "stop", "stall")
	if r := qpslab(t, h, append([]string{"run", "sysbench", "--sandbox", "stall", "--tests", "update-one*", "--out", filepath.Join(t.TempDir(), "load.json")}, quick...)...); r.code != 0 {
		t.Fatalf("load: %s", r.stderr)
	}
	st, err := sandbox.Get(h, "stall")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	locker, err := client.Dial(ctx, st.Endpoint, client.Options{Transport: client.Netpoll})
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()

	out := filepath.Join(t.TempDir(), "r.json")
	args := append([]string{"run", "sysbench", "--sandbox", "stall", "--no-load", "--tests", "update-one_range=100",
		"--out", out}, quick...)
	args = append(args, "--write-secs", "5", "--rate", "200", "--arrivals", "uniform", "--threads", "1")
	cmd := exec.Command(bin, args...)
	cmd.Env = testenv.Env(h)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { cmd.Wait(); close(ended) }()
	waitSamples(t, h, "update-one_range=100", 1, ended) // into the measured window
	if err := locker.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := locker.Query(ctx, "SELECT c FROM sbtest1 WHERE id = 1 FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the stall under test: the row lock held a second
	if err := locker.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	<-ended
	if !cmd.ProcessState.Success() {
		t.Fatalf("run: %v: %s", cmd.ProcessState, stderr.String())
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	tot := f.Runs[0].Totals
	if f.Runs[0].Loop != "open" {
		t.Fatalf("loop %s", f.Runs[0].Loop)
	}
	if tot.Response.P99 < 300_000 {
		t.Errorf("response p99 %.0f µs does not show the 1 s stall", tot.Response.P99)
	}
	if tot.Service.P99 > 100_000 {
		t.Errorf("service p99 %.0f µs: events queued behind the stall should not carry it in their service time", tot.Service.P99)
	}
	if tot.Service.Max < 500_000 {
		t.Errorf("service max %.0f µs: the event that waited for the lock took about 1 s", tot.Service.Max)
	}
	if tot.Late == 0 {
		t.Error("no event counted late")
	}
}

// The Insert Benchmark end to end on two builds at a tiny size: every step
// of both, the run's step tables (throughput with the best marked, relative
// to the first build, the background insert rate against its target with a
// step that cannot keep up marked), the response-time buckets, the hardware
// per step, and the HTML report with the inserts' per-second chart.
func TestRunIbench(t *testing.T) {
	h := newHome(t)
	testenv.Build(t, h, "mariadb-10.2.11")
	out, html := filepath.Join(t.TempDir(), "r.json"), filepath.Join(t.TempDir(), "r.html")
	// 200,000 rows/s per client for 0.2 s is 800 INSERTs of 50 rows in 0.2 s:
	// no server here keeps up, so qr200000 misses its SLA.
	r := qpslab(t, h, "run", "ibench", "--build", "mariadb-10.2.11,mariadb-system", "--mr1", "0.002", "--mr2", "0.001",
		"--query-secs", "0.2", "--rates", "100,200000", "--wait-scale", "0", "--seed", "7", "--out", out, "--html", html)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]int{}
	for _, run := range f.Runs {
		steps[run.Test]++
		if run.Status != result.OK || run.Suite != "ibench" {
			t.Errorf("%s on %s: %s %s", run.Test, run.Build, run.Status, run.Error)
		}
		// Every read+write step is judged; none keeps up with 200,000
		// rows/s (whether one keeps up with 100 depends on the machine's load).
		// From l.i1 on the default delete per insert keeps the live rows.
		if strings.HasPrefix(run.Test, "q") && (len(run.Verdicts) != 2 || run.Verdicts[0].Name != "insert SLA" || (run.Test[2:] == "200000" && run.Verdicts[0].OK)) {
			t.Errorf("%s on %s: verdicts %+v", run.Test, run.Build, run.Verdicts)
		}
		if run.Test != "l.i0" && run.Test != "l.x" {
			if n := len(run.Verdicts); n == 0 || run.Verdicts[n-1].Name != "live rows" || !run.Verdicts[n-1].OK || run.Params["delete_per_insert"] != "true" {
				t.Errorf("%s on %s: delete_per_insert=%s, verdicts %+v: want the live rows kept", run.Test, run.Build, run.Params["delete_per_insert"], run.Verdicts)
			}
		}
	}
	for _, s := range []string{"l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr200000", "qp200000"} {
		if steps[s] != 2 {
			t.Errorf("%s ran %d time(s), want once per build", s, steps[s])
		}
	}
	for _, want := range []string{
		"Throughput: rows/s for the load steps",
		"relative to mariadb-10.2.11.default",
		"Background insert rate (rows/s) in the read+write steps",
		"qr100, 1 client(s): query response time",
		"Hardware cost per operation, per step",
		"per inserted row",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, r.stdout)
		}
	}
	// The insert-rate table marks the steps below their target.
	var target, marked bool
	for _, l := range strings.Split(r.stdout, "\n") {
		target = target || strings.HasPrefix(l, "target ")
		if strings.HasPrefix(l, "mariadb-system.default") && strings.Contains(l, "!") {
			marked = true
		}
	}
	if !target || !marked {
		t.Errorf("no target row or no step marked below it:\n%s", r.stdout)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, "rows inserted per second") || !strings.Contains(page, "qr100, 1 thread(s)") {
		t.Errorf("the HTML report lacks the inserts' per-second chart")
	}
	// compare marks the SLA misses in its own table too.
	c := qpslab(t, h, "compare", "mariadb-10.2.11.default", "mariadb-system.default")
	if c.code != 0 || !strings.Contains(c.stdout, "missed its insert SLA") {
		t.Errorf("compare: exit %d, no SLA legend:\n%s%s", c.code, c.stdout, c.stderr)
	}
}

// A 2×2 config grid: four configs derived from default and named by their
// settings, every one run in one interleaved command, and compare says
// what each setting moved over the pairs that differ only in it.
func TestRunGrid(t *testing.T) {
	h := newHome(t)
	r := qpslab(t, h, append([]string{"run", "sysbench", "--build", "mariadb-system", "--tests", "point-query_range=100",
		"--set", "innodb_io_capacity=2000,20000", "--set", "innodb_flush_neighbors=0,1"}, quick...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var labels []string
	for _, io := range []string{"2000", "20000"} {
		for _, fn := range []string{"0", "1"} {
			l := "mariadb-system.default-innodb_io_capacity-" + io + "-innodb_flush_neighbors-" + fn
			labels = append(labels, l)
			if !strings.Contains(r.stdout, "default-innodb_io_capacity-"+io+"-innodb_flush_neighbors-"+fn) {
				t.Errorf("no runs of %s:\n%s", l, r.stdout)
			}
		}
	}
	c := qpslab(t, h, append([]string{"compare"}, labels...)...)
	if c.code != 0 {
		t.Fatalf("compare: exit %d: %s", c.code, c.stderr)
	}
	for _, want := range []string{"What each setting moved", "innodb_io_capacity      2000  20000  2", "innodb_flush_neighbors  0     1      2"} {
		if !strings.Contains(c.stdout, want) {
			t.Errorf("compare lacks %q:\n%s", want, c.stdout)
		}
	}
}

// A config per build (--config-for), as the reference's per-version
// folders: MariaDB 10.2 runs with cz11a_bee and 10.11 with cz11b_bee, and
// with no other (no cross product), the run's first line names each
// build's config, and its runs carry them in their labels; a build no rule
// names, and --config beside --config-for, are refused before anything
// runs.
func TestRunConfigPerBuild(t *testing.T) {
	h := newHome(t)
	testenv.Build(t, h, "mariadb-10.2.11")
	// Two small configs of the test's own: the reference's cz11 configs
	// preallocate gigabytes of redo log, more than a CI disk holds beside
	// the other packages' servers.
	for _, c := range []string{"cz11a_bee", "cz11b_bee"} {
		f := filepath.Join(t.TempDir(), c+".cnf")
		if err := os.WriteFile(f, []byte("[mysqld]\ninnodb_buffer_pool_size=64M\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := qpslab(t, h, "configs", "add", c, "--family", "mysql", f); r.code != 0 {
			t.Fatalf("configs add %s: %+v", c, r)
		}
	}
	out := filepath.Join(t.TempDir(), "r.json")
	r := qpslab(t, h, append([]string{"run", "sysbench", "--build", "mariadb-10.2.11,mariadb-system", "--tests", "point-query_range=100",
		"--config-for", "..10.4=cz11a_bee,10.5..=cz11b_bee", "--out", out}, quick...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "each with its config (--config-for: mariadb-10.2.11 with cz11a_bee, mariadb-system with cz11b_bee)") {
		t.Errorf("the run does not say each build's config:\n%s", r.stderr)
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	for _, run := range f.Runs {
		labels[run.Build+"."+strings.SplitN(run.Config, "@", 2)[0]] = true
	}
	if len(labels) != 2 || !labels["mariadb-10.2.11.cz11a_bee"] || !labels["mariadb-system.cz11b_bee"] {
		t.Errorf("labels %v, want mariadb-10.2.11.cz11a_bee and mariadb-system.cz11b_bee only", labels)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--config-for", "10.5..=cz11b_bee"}, "no rule names build mariadb-10.2.11 (version 10.2.11)"},
		{[]string{"--config-for", "cz11_bee", "--config", "default"}, "--config and --config-for exclude each other"},
		{[]string{"--config-for", "nosuchmap"}, "nor a shipped map"},
	} {
		b := qpslab(t, h, append([]string{"run", "sysbench", "--build", "mariadb-10.2.11,mariadb-system", "--tests", "point-query_range=100"}, bad.args...)...)
		if b.code == 0 || !strings.Contains(b.stderr, bad.want) || strings.Count(strings.TrimSpace(b.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q: want one line with %q", bad.args, b.code, b.stderr, bad.want)
		}
	}
}

// A concurrency sweep to 512 connections on MariaDB with the thread pool
// and with a thread per connection, in one interleaved command: every
// thread count runs, each with its fairness figures, compare prints the
// seeds' tables by clients, and a plan that opens more connections than
// the server's max_connections is refused before it runs.
func TestRunSweep(t *testing.T) {
	h := newHome(t)
	out := filepath.Join(t.TempDir(), "r.json")
	r := qpslab(t, h, "run", "sysbench", "--build", "mariadb-system", "--config", "pool-of-threads,one-thread-per-connection",
		"--tests", "point-query_range=100", "--threads", "4,64,512", "--rows", "2000", "--read-secs", "1", "--warmup", "0.5",
		"--postwrite-scale", "0", "--repeat", "1", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, run := range f.Runs {
		if run.Test == "load" {
			continue
		}
		seen[fmt.Sprintf("%s/%d", result.ConfigName(run.Config), run.Threads)] = true
		fg := run.Totals.Figures
		if run.Status != result.OK || fg["jain"] <= 0 || fg["jain"] > 1 || fg["conn/s.max"] < fg["conn/s.min"] {
			t.Errorf("%s at %d: %s, figures %v", run.Config, run.Threads, run.Status, fg)
		}
	}
	if len(seen) != 6 {
		t.Errorf("ran %v, want 3 thread counts × 2 configs", seen)
	}
	c := qpslab(t, h, "compare", "mariadb-system.pool-of-threads", "mariadb-system.one-thread-per-connection")
	for _, want := range []string{"by clients: qps", "by clients: p95 (ms)", "by clients: jain", "by clients: tps (events/s)"} {
		if !strings.Contains(c.stdout, want) {
			t.Errorf("compare lacks %q:\n%s", want, c.stdout)
		}
	}
	var norm []string // the lines with their cells one space apart
	for _, l := range strings.Split(c.stdout, "\n") {
		norm = append(norm, strings.Join(strings.Fields(l), " "))
	}
	if !strings.Contains(strings.Join(norm, "\n"), "\nlabel 4 64 512\n") {
		t.Errorf("compare lacks the clients as columns:\n%s", c.stdout)
	}
	// The default config allows 1,000 connections.
	r = qpslab(t, h, "run", "sysbench", "--build", "mariadb-system", "--tests", "point-query_range=100", "--threads", "1000")
	if r.code == 0 || !strings.Contains(r.stderr, "max_connections") || !strings.Contains(r.stderr, "one-thread-per-connection") {
		t.Errorf("1000 threads on the default config: exit %d: %s", r.code, r.stderr)
	}
}

// --server-cpus and --client-cpus pin both sides and are recorded with
// every run (part of its conditions); a CPU the host lacks is refused.
func TestRunPinned(t *testing.T) {
	h := newHome(t)
	out := filepath.Join(t.TempDir(), "r.json")
	r := qpslab(t, h, append([]string{"run", "sysbench", "--build", "mariadb-system", "--tests", "point-query_range=100",
		"--server-cpus", "0", "--client-cpus", "1", "--out", out}, quick...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range f.Runs {
		if run.Params["server_cpus"] != "0" || run.Params["client_cpus"] != "1" || !strings.Contains(run.Conditions(), "server_cpus=0") {
			t.Errorf("%s: params %v", run.Test, run.Params)
		}
	}
	r = qpslab(t, h, "run", "sysbench", "--build", "mariadb-system", "--server-cpus", "0-4096")
	if r.code == 0 || !strings.Contains(r.stderr, "--server-cpus") || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("a CPU the host lacks: exit %d: %s", r.code, r.stderr)
	}
}

// Every duration flag and parameter takes one set of forms (internal/
// duration): a number of seconds or a Go duration; --read-secs 1m plans
// what --read-secs 60 plans, and what it cannot take is refused in one
// line each, before anything runs.
func TestDurations(t *testing.T) {
	h := newHome(t)
	list := func(args ...string) outcome {
		return qpslab(t, h, append([]string{"run", "sysbench", "--build", "mariadb-system", "--tests", "point-query_range=100", "--list-tests"}, args...)...)
	}
	a, b := list("--read-secs", "60", "--warmup", "0", "--until-decided", "--budget", "6m"), list("--read-secs", "1m", "--warmup", "0s", "--until-decided", "--budget", "360")
	if a.code != 0 || b.code != 0 || a.stdout != b.stdout {
		t.Errorf("--read-secs 60 and 1m plan differently:\n%+v\n%+v", a, b)
	}
	for _, bad := range []struct{ args []string }{
		{[]string{"run", "sysbench", "--build", "mariadb-system", "--read-secs", "-1", "--list-tests"}},
		{[]string{"run", "sysbench", "--build", "mariadb-system", "--warmup", "1w", "--list-tests"}},
		{[]string{"run", "sysbench", "--build", "mariadb-system", "--pmp", "NaN", "--list-tests"}},
		{[]string{"run", "sysbench", "--build", "mariadb-system", "--read-secs", "169h", "--list-tests"}},
		{[]string{"server", "stop", "--timeout", "-1", "x"}},
		{[]string{"demo", "--secs", "1w"}},
		{[]string{"serve", "--poll", "0"}},
		{[]string{"fleet", "submit", "sysbench", "--timeout", "NaN"}},
	} {
		r := qpslab(t, h, bad.args...)
		if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "give") {
			t.Errorf("%v: exit %d, want one line naming the forms:\n%s", bad.args, r.code, r.stderr)
		}
	}
}
