package script

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// servers are the flavors every script runs on.
var servers = []string{"mariadb-system", "postgres-system", testenv.MySQL}

type db struct {
	t  *testing.T
	ep client.Endpoint
	s  *suite.Server
}

func start(t *testing.T, build string) db {
	srv, _ := testenv.StartServer(t, build)
	ep := srv.Endpoint()
	return db{t: t, ep: ep, s: &suite.Server{Protocol: ep.Protocol, Dialect: ep.Dialect(), Flavor: string(srv.Flavor), Log: func(string) {}, Warn: func(string) {},
		Dial: func(ctx context.Context) (client.Conn, error) {
			return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
		}}}
}

func (d db) n(q string) int64 {
	d.t.Helper()
	return testenv.Int(d.t, d.ep, q)
}

func (d db) exec(q string) {
	d.t.Helper()
	c, err := d.s.Dial(context.Background())
	if err != nil {
		d.t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(context.Background(), q); err != nil {
		d.t.Fatalf("%s: %v", q, err)
	}
}

// configure configures the suite with args as the command would give them.
func configure(t *testing.T, args ...string) *suite.Plan {
	t.Helper()
	v := suite.Defaults(scriptSuite{}.Params())
	for i := 0; i+1 < len(args); i += 2 {
		v = v.With(args[i], args[i+1])
	}
	p, err := scriptSuite{}.Configure(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs p's steps on d: the init as its task, the test for events
// events (2 threads unless given) with the engine's retries, as the plan
// would, and returns the test's run.
func run(t *testing.T, d db, p *suite.Plan, threads int, events int64) result.Run {
	t.Helper()
	return runSeed(t, d, p, threads, events, 7)
}

func runSeed(t *testing.T, d db, p *suite.Plan, threads int, events int64, seed uint64) result.Run {
	t.Helper()
	ctx := context.Background()
	var r result.Run
	for _, st := range p.Steps {
		if st.Task != nil {
			if _, err := st.Task.Run(ctx, d.s, 1, 7, suite.TaskIO{Progress: func(int64, int64) {}, Sample: func(result.Sample) {}}); err != nil {
				t.Fatalf("%s: %v", st.Test, err)
			}
			continue
		}
		res, err := engine.Run(ctx, st.Drive.Workload(d.s, seed), engine.Options{Threads: threads, Warmup: -1, Events: events, RetryErrors: st.Drive.Retry})
		if err != nil {
			t.Fatalf("%s: %v", st.Test, err)
		}
		r = *res
		r.Suite, r.Test, r.Role, r.Params = Name, st.Test, st.Role, p.Params // as the plan records them
		st.Headline.Of(&r.Totals)
	}
	return r
}

// figures are the names of the registered figures r has.
func figures(r result.Run) []string {
	var out []string
	for _, m := range result.All() {
		if m.Of == nil {
			continue
		}
		if _, ok := m.Of(r); ok {
			out = append(out, m.Name)
		}
	}
	for _, o := range r.Totals.Ops {
		out = append(out, "op:"+o.Kind)
	}
	sort.Strings(out)
	return out
}

// pgbench's built-ins at scale 1 on MariaDB and PostgreSQL: the tables as
// pgbench -i makes them, tpcb-like keeping TPC-B's invariant (the
// balances' sums agree, a history row per transaction), every statement
// an operation of its own, and select-only reading; both flavors record
// the same set of figures.
func TestBuiltinsOnServers(t *testing.T) {
	got := map[string][]string{}
	for _, b := range servers {
		t.Run(b, func(t *testing.T) {
			d := start(t, b)
			p := configure(t, "builtin", "tpcb-like")
			if len(p.Steps) != 2 || p.Steps[0].Test != InitTest || p.Steps[1].Test != "tpcb-like" {
				t.Fatalf("steps %+v", p.Steps)
			}
			r := run(t, d, p, 2, 300)
			for table, want := range map[string]int64{"pgbench_branches": 1, "pgbench_tellers": 10, "pgbench_accounts": 100000} {
				if n := d.n("SELECT count(*) FROM " + table); n != want {
					t.Errorf("%s: %d rows, want %d", table, n, want)
				}
			}
			pk := "SELECT count(*) FROM information_schema.table_constraints WHERE constraint_type = 'PRIMARY KEY' AND table_name LIKE 'pgbench_%'"
			if d.s.Protocol == client.MySQL {
				pk += " AND table_schema = DATABASE()"
			}
			if n := d.n(pk); n != 3 {
				t.Errorf("%d primary keys, want 3 (branches, tellers, accounts)", n)
			}
			if r.Totals.Events != 300 || r.Totals.Statements != 300*7 {
				t.Errorf("%d events, %d statements: want 300 and 2100", r.Totals.Events, r.Totals.Statements)
			}
			if n := d.n("SELECT count(*) FROM pgbench_history"); n != 300 {
				t.Errorf("%d history rows, want one per transaction (300)", n)
			}
			a, te, br := d.n("SELECT sum(abalance) FROM pgbench_accounts"), d.n("SELECT sum(tbalance) FROM pgbench_tellers"), d.n("SELECT sum(bbalance) FROM pgbench_branches")
			if a != te || te != br || a != d.n("SELECT sum(delta) FROM pgbench_history") {
				t.Errorf("balances disagree: accounts %d, tellers %d, branches %d", a, te, br)
			}
			for i := 1; i <= 7; i++ {
				o, ok := r.Totals.Op("tpcb-like_" + strconv.Itoa(i))
				if !ok || o.Count != 300 || o.Response.Count != 300 {
					t.Errorf("statement %d: %+v", i, o)
				}
			}
			if r.Totals.ReportedUnit != "transactions/s" || r.Totals.Reported != r.Totals.TPS {
				t.Errorf("headline %v %s, TPS %v", r.Totals.Reported, r.Totals.ReportedUnit, r.Totals.TPS)
			}
			got[b] = figures(r)

			// select-only on the same tables, without its init.
			p = configure(t, "builtin", "select-only", "no-init", "true", "sandbox", "x")
			if len(p.Steps) != 1 {
				t.Fatalf("steps with --no-init: %+v", p.Steps)
			}
			r = run(t, d, p, 2, 500)
			if o, ok := r.Totals.Op("select-only_1"); !ok || o.Count != 500 || r.Totals.Rows != 500 {
				t.Errorf("select-only: %+v, %d rows", r.Totals.Ops, r.Totals.Rows)
			}
		})
	}
	if a, b := got[servers[0]], got[servers[1]]; len(a) > 0 && !slices.Equal(a, b) {
		t.Errorf("the flavors record different figures:\n%s: %v\n%s: %v", servers[0], a, servers[1], b)
	}
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A user's script with \set, \gset and \if runs the same on both flavors,
// after its own --init script (with :scale), and its statements are
// operations named by the file.
func TestUserScriptOnServers(t *testing.T) {
	initFile := write(t, "init.sql", `CREATE TABLE t_ok (v int, c int);
CREATE TABLE t_bad (v int);
CREATE TABLE t_scale (s int);
INSERT INTO t_scale (s) VALUES (:scale);
`)
	file := write(t, "check.sql", `\set n random(1, 10)
SELECT :n * 2 AS doubled, 'x' AS tag \gset
\if :doubled = 2 * :n
INSERT INTO t_ok (v, c) VALUES (:doubled, :client_id);
\else
INSERT INTO t_bad (v) VALUES (:doubled);
\endif
`)
	for _, b := range servers {
		t.Run(b, func(t *testing.T) {
			d := start(t, b)
			p := configure(t, "file", file, "init", initFile, "scale", "3")
			if p.Steps[1].Test != "check" {
				t.Errorf("test name %q, want check", p.Steps[1].Test)
			}
			r := run(t, d, p, 2, 200)
			if n := d.n("SELECT s FROM t_scale"); n != 3 {
				t.Errorf(":scale in the init: %d", n)
			}
			if ok, bad := d.n("SELECT count(*) FROM t_ok"), d.n("SELECT count(*) FROM t_bad"); ok != 200 || bad != 0 {
				t.Errorf("%d rows where \\gset's value agreed, %d where not: want 200 and 0", ok, bad)
			}
			if n := d.n("SELECT count(DISTINCT c) FROM t_ok"); n != 2 {
				t.Errorf(":client_id took %d values with 2 threads", n)
			}
			if n := d.n("SELECT count(*) FROM t_ok WHERE v < 2 OR v > 20 OR v % 2 <> 0"); n != 0 {
				t.Errorf("%d values outside random(1, 10) * 2", n)
			}
			for _, k := range []string{"check_1", "check_2"} {
				if o, ok := r.Totals.Op(k); !ok || o.Count != 200 {
					t.Errorf("%s: %+v", k, r.Totals.Ops)
				}
			}
		})
	}
}

// Weights: a@3 and b@1 run in a proportion of 3 to 1 (per-script event
// kinds), within 4 standard deviations.
func TestWeights(t *testing.T) {
	a := write(t, "a.sql", "SELECT 1;\n")
	b := write(t, "b.sql", "SELECT 2;\n")
	for _, srv := range servers {
		t.Run(srv, func(t *testing.T) {
			d := start(t, srv)
			p := configure(t, "file", a+"@3,"+b)
			if p.Steps[0].Test != "a@3+b" {
				t.Errorf("test name %q", p.Steps[0].Test)
			}
			const n = 2000
			r := run(t, d, p, 2, n)
			oa, _ := r.Totals.Op("a")
			ob, _ := r.Totals.Op("b")
			if oa.Count+ob.Count != n {
				t.Fatalf("events per script: %+v", r.Totals.Ops)
			}
			sd := math.Sqrt(n * 0.75 * 0.25)
			if math.Abs(float64(oa.Count)-0.75*n) > 4*sd {
				t.Errorf("a ran %d of %d times, want about %d", oa.Count, n, int(0.75*n))
			}
		})
	}
}

// Two clients incrementing one row at REPEATABLE READ on PostgreSQL:
// serialization failures are retried up to --max-tries and counted; with
// one try they are counted as failed transactions; the row takes one
// increment per transaction that succeeded, whatever failed.
func TestRetries(t *testing.T) {
	d := start(t, "postgres-system")
	d.exec("CREATE TABLE hot (id int PRIMARY KEY, v int)")
	file := write(t, "hot.sql", `BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT v FROM hot WHERE id = 1;
\sleep 1 ms
UPDATE hot SET v = v + 1 WHERE id = 1;
END;
`)
	for _, c := range []struct {
		tries  string
		events int64
	}{{"1", 200}, {"20", 200}} {
		t.Run("max-tries="+c.tries, func(t *testing.T) {
			d.exec("DELETE FROM hot")
			d.exec("INSERT INTO hot VALUES (1, 0)")
			p := configure(t, "file", file, "max-tries", c.tries)
			r := run(t, d, p, 2, c.events)
			if v := d.n("SELECT v FROM hot WHERE id = 1"); v != r.Totals.Events {
				t.Errorf("v = %d after %d transactions", v, r.Totals.Events)
			}
			failed, _ := r.Totals.Op(FailedKind)
			t.Logf("%d transactions, %d failures, %d retries, %d failed transactions", r.Totals.Events, r.Totals.Errors, r.Totals.Retries, failed.Errors)
			if r.Totals.Retries == 0 || r.Totals.Errors != r.Totals.Retries {
				t.Errorf("errors %d, retries %d: want serialization failures, each retried by the engine", r.Totals.Errors, r.Totals.Retries)
			}
			switch c.tries {
			case "1":
				if failed.Errors != r.Totals.Errors {
					t.Errorf("with one try, every failure is a failed transaction: %d of %d", failed.Errors, r.Totals.Errors)
				}
			default:
				if failed.Errors >= r.Totals.Errors {
					t.Errorf("with 20 tries, %d failed transactions of %d failures: none retried", failed.Errors, r.Totals.Errors)
				}
			}
			pct, _ := result.Lookup(suite.FigureFailedPct)
			if v, ok := pct.Of(r); !ok || v != 100*float64(failed.Errors)/float64(r.Totals.Events+failed.Errors) {
				t.Errorf("%s %v %v", suite.FigureFailedPct, v, ok)
			}
			if o, ok := r.Totals.Op("hot_3"); !ok || o.Errors == 0 {
				t.Errorf("the UPDATE's failures are not counted on it: %+v", r.Totals.Ops)
			}
		})
	}
}

// Every problem of a configuration is one line, the scripts' with
// file:line, all at once.
func TestConfigureErrors(t *testing.T) {
	bad1 := write(t, "bad1.sql", "SELECT 1;\n\\shell echo hi\n")
	bad2 := write(t, "bad2.sql", "\\set x random(1,\n")
	v := suite.Defaults(scriptSuite{}.Params()).With("file", bad1+","+bad2+",nosuch.sql@x").With("builtin", "tpcc")
	_, err := scriptSuite{}.Configure(v)
	testenv.WantErr(t, err, "bad1.sql:2:", "bad2.sql:1:", "nosuch.sql@x", "--builtin tpcc")
	if _, err := (scriptSuite{}).Configure(suite.Defaults(scriptSuite{}.Params())); err == nil || !strings.Contains(err.Error(), "--builtin") {
		t.Errorf("no script: %v", err)
	}
}

// Two clients updating two rows in opposite orders on MariaDB deadlock
// (1213): the victim's transaction is rolled back and tried again, and
// every transaction that succeeded updated both rows once.
func TestDeadlocksMariaDB(t *testing.T) {
	d := start(t, "mariadb-system")
	d.exec("CREATE TABLE pair (id int PRIMARY KEY, v int)")
	d.exec("INSERT INTO pair VALUES (1, 0), (2, 0)")
	file := write(t, "pair.sql", `\set first 1 + :client_id % 2
\set second 2 - :client_id % 2
BEGIN;
UPDATE pair SET v = v + 1 WHERE id = :first;
\sleep 2 ms
UPDATE pair SET v = v + 1 WHERE id = :second;
COMMIT;
`)
	p := configure(t, "file", file, "max-tries", "50")
	r := run(t, d, p, 2, 100)
	if v1, v2 := d.n("SELECT v FROM pair WHERE id = 1"), d.n("SELECT v FROM pair WHERE id = 2"); v1 != r.Totals.Events || v2 != r.Totals.Events {
		t.Errorf("rows at %d and %d after %d transactions", v1, v2, r.Totals.Events)
	}
	failed, _ := r.Totals.Op(FailedKind)
	t.Logf("%d transactions, %d deadlocks, %d failed transactions", r.Totals.Events, r.Totals.Retries, failed.Errors)
	if r.Totals.Retries == 0 {
		t.Error("no deadlock retried")
	}
}

// The same seed issues the same statements, client by client, whatever
// the server (paired runs compare like with like); another seed others.
func TestSeeds(t *testing.T) {
	file := write(t, "draw.sql", `\set x random(1, 1000000000)
INSERT INTO seen (c, x) VALUES (:client_id, :x);
`)
	// draws runs the script for 100 events on two clients and returns
	// what each drew. How the 100 fall to the two is the scheduler's: a
	// run in which one client drew nothing (a loaded host can starve one)
	// says nothing of that client's stream, and is run again, until each
	// drew at least one.
	draws := func(d db, seed uint64) [2][]string {
		for try := 1; ; try++ {
			d.exec("DELETE FROM seen")
			runSeed(t, d, configure(t, "file", file), 2, 100, seed)
			var out [2][]string
			for c := range out {
				_, rows, err := client.Query(context.Background(), d.ep, false, "SELECT x FROM seen WHERE c = "+strconv.Itoa(c)+" ORDER BY id")
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					out[c] = append(out[c], r[0])
				}
			}
			if len(out[0]) > 0 && len(out[1]) > 0 {
				return out
			}
			if try == 20 {
				t.Fatalf("seed %d: in 20 runs of 100 events one client never drew (%d and %d the last time)", seed, len(out[0]), len(out[1]))
			}
		}
	}
	var got [][2][]string
	for _, b := range servers {
		d := start(t, b)
		if d.s.Protocol == client.Postgres {
			d.exec("CREATE TABLE seen (id serial PRIMARY KEY, c int, x bigint)")
		} else {
			d.exec("CREATE TABLE seen (id int AUTO_INCREMENT PRIMARY KEY, c int, x bigint)")
		}
		got = append(got, draws(d, 11))
		if b == servers[1] {
			got = append(got, draws(d, 12))
		}
	}
	// Each client's draws are compared over what both runs drew: the runs
	// share 100 events, and how they fall to the two clients is the
	// scheduler's (on a loaded host one client may get a single one).
	same := func(a, b [2][]string) bool {
		for c := range a {
			n := min(len(a[c]), len(b[c]))
			if n < 1 || !slices.Equal(a[c][:n], b[c][:n]) {
				return false
			}
		}
		return true
	}
	if !same(got[0], got[1]) {
		t.Errorf("seed 11 drew differently on %s and %s:\n%v\n%v", servers[0], servers[1], got[0], got[1])
	}
	if same(got[1], got[2]) {
		t.Errorf("seeds 11 and 12 drew alike: %v", got[1])
	}
	// The two clients' streams differ: compared over what both drew in
	// each run, however few (each drew at least one).
	alike := true
	for _, g := range got {
		n := min(len(g[0]), len(g[1]))
		alike = alike && slices.Equal(g[0][:n], g[1][:n])
	}
	if alike {
		t.Errorf("both clients drew alike: %v", got)
	}
}

// A script's \sleep in a loop worker (the loop transport) sleeps on the
// loop's ring: another worker on the same thread completes statements
// while the sleeper's event is in its \sleep 300 ms. A sleep that held the
// thread would end before the other worker ran at all. The loop's context
// is derived from a cancellable one (the engine's) or from one never
// cancelled (context.Background, which a connection's statements must
// bind to the loop all the same).
func TestSleepOnLoop(t *testing.T) {
	if !client.UringWorks() {
		testenv.Skip(t, "io_uring is not allowed here (see TestUringAvailable in internal/client)")
	}
	sleeper := write(t, "sleeper.sql", "\\sleep 300 ms\nSELECT 1;\n")
	one := write(t, "one.sql", "SELECT 1;\n")
	for _, b := range servers {
		for _, cancellable := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/cancellable=%v", b, cancellable), func(t *testing.T) {
				d := start(t, b)
				s := *d.s
				s.Dial = func(ctx context.Context) (client.Conn, error) {
					return client.Dial(ctx, d.ep, client.Options{Transport: client.Loop})
				}
				ctx := context.Background()
				if cancellable {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				var ws [2]engine.Worker
				for i, f := range []string{sleeper, one} {
					p := configure(t, "file", f)
					w, err := p.Steps[len(p.Steps)-1].Drive.Workload(&s, 1).NewWorker(ctx, i)
					if err != nil {
						t.Fatal(err)
					}
					defer w.Close()
					ws[i] = w
				}
				// Worker 0 starts first: it sleeps, and worker 1 runs until
				// the sleeper's event is over (or, if its own statements
				// held the thread, until a bound far beyond 300 ms of
				// SELECT 1).
				const bound = 100_000
				var sleeping, slept bool
				var during, total int
				var errs [2]error
				err := client.Loops{Threads: 1}.Run(ctx, 2, func(ctx context.Context, i int) {
					if i == 0 {
						sleeping = true
						_, errs[0] = ws[0].Event(ctx)
						sleeping, slept = false, true
						return
					}
					for !slept && total < bound {
						if _, err := ws[1].Event(ctx); err != nil {
							errs[1] = err
							return
						}
						total++
						if sleeping {
							during++
						}
					}
				})
				if err := errors.Join(err, errs[0], errs[1]); err != nil {
					t.Fatal(err)
				}
				t.Logf("%d statements of the other worker during the sleep", during)
				if !slept || total == bound {
					t.Errorf("the other worker ran %d statements without the sleeper's event ending: its statements held the thread", total)
				}
				if during == 0 {
					t.Errorf("no statement of the other worker while the sleeper slept: the \\sleep held the thread")
				}
			})
		}
	}
}
