package ibench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// runSteps runs a plan's steps as the plan would (Before, the drive or
// the task, Finish, After), at the plan's thread count, and returns each
// step's run. check is called after each step with its name.
func runSteps(t *testing.T, p *suite.Plan, s *suite.Server, check func(step string, r result.Run)) {
	t.Helper()
	ctx := context.Background()
	for _, st := range p.Steps {
		threads := st.Threads[0]
		if st.Before != nil {
			if err := st.Before(ctx, s); err != nil {
				t.Fatalf("%s before: %v", st.Test, err)
			}
		}
		var r result.Run
		if st.Drive != nil {
			res, err := engine.Run(ctx, st.Drive.Workload(s, 1), engine.Options{
				Threads: st.Drive.Workers(threads), Warmup: -1, UntilScheduled: st.Drive.UntilScheduled,
			})
			if err != nil {
				t.Fatalf("%s: %v", st.Test, err)
			}
			r = *res
		} else {
			t0 := time.Now()
			tot, err := st.Task.Run(ctx, s, threads, 1, suite.TaskIO{Progress: func(int64, int64) {}, Sample: func(result.Sample) {}})
			if err != nil {
				t.Fatalf("%s: %v", st.Test, err)
			}
			tot.Seconds = time.Since(t0).Seconds()
			tot.RowsPerSec = float64(tot.Rows) / tot.Seconds
			r.Totals = tot
		}
		r.Test, r.Threads = st.Test, threads
		r.Params = map[string]string{}
		for k, v := range st.Params {
			r.Params[k] = v
		}
		st.Headline.Of(&r.Totals)
		if st.Finish != nil {
			if err := st.Finish(ctx, s, &r); err != nil {
				t.Fatalf("%s finish: %v", st.Test, err)
			}
		}
		if st.After != nil {
			if err := st.After(ctx, s); err != nil {
				t.Fatalf("%s after: %v", st.Test, err)
			}
		}
		check(st.Test, r)
	}
}

type db struct {
	t  *testing.T
	ep client.Endpoint
	pg bool
}

func (d db) n(q string) int64 {
	d.t.Helper()
	return testenv.Int(d.t, d.ep, q)
}

func (d db) indexes(table string) int64 {
	if d.pg {
		return d.n("SELECT count(*) FROM pg_indexes WHERE tablename = '" + table + "' AND indexname <> '" + table + "_pkey'")
	}
	return d.n("SELECT count(DISTINCT index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = '" + table + "' AND index_name <> 'PRIMARY'")
}

// Every step at a tiny size on real servers (MariaDB with InnoDB and with
// MyRocks tables, PostgreSQL): the rows each step adds (or, with deletes,
// the constant table size), the indexes l.x builds, queries beside the
// paced inserts, the SLA verdict and the figures every run ends with.
func TestStepsOnServers(t *testing.T) {
	for _, c := range []struct{ name, build, config, engine string }{
		{"mariadb-system", "mariadb-system", "default", "innodb"},
		{"mariadb-system-myrocks", "mariadb-system", "myrocks", "rocksdb"},
		{"postgres-system", "postgres-system", "default", ""},
		{"mysql", testenv.MySQL, "default", "innodb"}, // Debian's newest MySQL
	} {
		for _, deletes := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deletes=%v", c.name, deletes), func(t *testing.T) {
				srv, _ := testenv.StartServerWith(t, c.build, c.config)
				ep := srv.Endpoint()
				d := db{t: t, ep: ep, pg: ep.Protocol == client.Postgres}
				s := &suite.Server{Protocol: ep.Protocol, Dialect: ep.Dialect(), Flavor: string(srv.Flavor), Version: srv.Version, Datadir: srv.Datadir,
					Log: func(string) {}, StorageEngine: c.engine,
					Dial: func(ctx context.Context) (client.Conn, error) {
						return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
					}}
				o := Options{Clients: 2, MR1: 0.002, MR2: 0.001, QuerySecs: 2 * time.Second, Rates: []int{100}, QueryThreads: 1,
					RowsPerQuery: 10, Deletes: deletes, Pacing: Smooth, WaitScale: 0}
				p, err := o.Plan()
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, st := range p.Steps {
					names = append(names, st.Test)
				}
				if got := strings.Join(names, " "); got != "l.i0 l.x l.i1 l.i2 qr100 qp100" {
					t.Fatalf("steps %q", got)
				}
				// Rows per table after each step, without deletes.
				want := map[string]int64{"l.i0": 2000, "l.x": 2100, "l.i1": 2100 + 800, "l.i2": 2100 + 1000, "qr100": 3100 + 200, "qp100": 3300 + 200}
				runSteps(t, p, s, func(step string, r result.Run) {
					for _, tb := range []string{"pi1", "pi2"} {
						n := d.n("SELECT count(*) FROM " + tb)
						w := want[step]
						if deletes && step != "l.i0" && step != "l.x" {
							w = 2100 // a delete per insert: the size l.x left
						}
						if n != w {
							t.Errorf("%s: %s has %d rows, want %d", step, tb, n, w)
						}
						ix := d.indexes(tb)
						if wantIx := map[bool]int64{true: 0, false: 3}[step == "l.i0"]; ix != wantIx {
							t.Errorf("%s: %s has %d secondary indexes, want %d", step, tb, ix, wantIx)
						}
						if !d.pg && d.n("SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '"+tb+"' AND LOWER(engine) = '"+c.engine+"'") != 1 {
							t.Errorf("%s: %s is not a table of engine %s", step, tb, c.engine)
						}
					}
					if r.Totals.Reported <= 0 {
						t.Errorf("%s: reported %v", step, r.Totals.Reported)
					}
					// MyRocks counts flushed rows only: tiny tables stay in its
					// memtable until the wait after l.i2 flushes it.
					if r.Totals.Figures["db_mb"] <= 0 && (c.engine != "rocksdb" || strings.HasPrefix(step, "q")) {
						t.Errorf("%s: no database size: %v", step, r.Totals.Figures)
					}
					// The live rows (max - min transactionid + 1) after each
					// step from l.x on, and with deletes the verdict that they
					// stayed what l.x left.
					if step != "l.i0" {
						live := r.Totals.Figures["live_rows"]
						lo, hi := float64(2*want[step]), float64(2*want[step])
						if deletes {
							lo, hi = 2*2100, 2*2100
						}
						if d.pg {
							hi += 2 * 6000 // the sequence's CACHE 1000 skips ids per inserting session
						}
						if live < lo || live > hi {
							t.Errorf("%s: live_rows %v, want %v to %v", step, live, lo, hi)
						}
						var verdict *result.Verdict
						for i := range r.Verdicts {
							if r.Verdicts[i].Name == VerdictLiveRows {
								verdict = &r.Verdicts[i]
							}
						}
						switch {
						case deletes && step != "l.x" && (verdict == nil || !verdict.OK):
							t.Errorf("%s: live rows verdict %+v, want ok", step, verdict)
						case (!deletes || step == "l.x") && verdict != nil:
							t.Errorf("%s: a live rows verdict without deletes: %+v", step, verdict)
						}
					}
					switch {
					case strings.HasPrefix(step, "q"):
						if q, ok := r.Totals.Op(KindQuery); !ok || q.Count == 0 {
							t.Errorf("%s: no queries beside the inserts: %+v", step, r.Totals.Ops)
						}
						if r.Totals.Rows != 400 {
							t.Errorf("%s: %d rows inserted, want 2 clients × 2 s × 100", step, r.Totals.Rows)
						}
						if len(r.Verdicts) < 1 || r.Verdicts[0].Name != "insert SLA" {
							t.Errorf("%s: verdicts %+v", step, r.Verdicts)
						}
						if _, ok := r.Totals.Figures["sla%"]; !ok {
							t.Errorf("%s: no sla%% figure", step)
						}
						if d, ok := r.Totals.Op(KindDelete); deletes && (!ok || d.Count != 8) {
							t.Errorf("%s: deletes %+v, want 8 statements (one per insert)", step, d)
						}
					case step != "l.x":
						ins, _ := r.Totals.Op(KindInsert)
						if ins.Count == 0 || r.Totals.Figures["ips"] <= 0 {
							t.Errorf("%s: inserts %+v, figures %v", step, ins, r.Totals.Figures)
						}
					}
				})
			})
		}
	}
}

// A table of the same name that qpslab did not create is refused, and
// left as it was.
func TestRefusesOthersTables(t *testing.T) {
	srv, _ := testenv.StartServer(t, "mariadb-system")
	ep := srv.Endpoint()
	d := db{t: t, ep: ep}
	if _, _, err := client.Query(context.Background(), ep, false, "CREATE TABLE pi1 (x INT)"); err != nil {
		t.Fatal(err)
	}
	s := &suite.Server{Protocol: ep.Protocol, Dialect: ep.Dialect(), Log: func(string) {}, Dial: func(ctx context.Context) (client.Conn, error) {
		return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
	}}
	o := Options{Clients: 1, MR1: 0.001, MR2: 0.001, QuerySecs: time.Second, Rates: []int{100}, RowsPerQuery: 10, Pacing: Smooth}
	err := o.create(context.Background(), s)
	testenv.WantErr(t, err, "pi1", "qpslab did not create it")
	if n := d.n("SELECT count(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'pi1'"); n != 1 {
		t.Errorf("pi1 was changed: %d columns", n)
	}
}

// A paced step's workers on one loop thread (the loop transport: the
// engine's Mux, one OS thread for them all): the inserter and its deleter
// sleep on the loop's ring between their paced statements, so the query
// thread goes on meanwhile, and every insert (and delete) still happens.
// An inserter that slept holding the thread would let the querier run
// only between its statements, a query or two per insert: a second of
// schedule leaves it thousands.
func TestPacedStepOnOneLoopThread(t *testing.T) {
	if !client.UringWorks() {
		testenv.Skip(t, "io_uring is not allowed here (see TestUringAvailable in internal/client)")
	}
	for _, name := range []string{"mariadb-system", "postgres-system"} {
		t.Run(name, func(t *testing.T) {
			srv, _ := testenv.StartServer(t, name)
			ep := srv.Endpoint()
			ctx := context.Background()
			d := db{t: t, ep: ep, pg: ep.Protocol == client.Postgres}
			s := &suite.Server{Protocol: ep.Protocol, Dialect: ep.Dialect(), Log: func(string) {}, Dial: func(ctx context.Context) (client.Conn, error) {
				return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
			}}
			o := Options{Clients: 1, MR1: 0.001, MR2: 0.001, QuerySecs: time.Second, Rates: []int{50}, RowsPerQuery: 10, Pacing: Smooth}
			if err := o.create(ctx, s); err != nil {
				t.Fatal(err)
			}
			for _, q := range createIndexes(ep.Dialect(), "pi1", "") {
				if _, _, err := client.Query(ctx, ep, false, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for _, deletes := range []bool{false, true} {
				before := d.n("SELECT count(*) FROM pi1")
				// 50 rows at 50 rows/s, 10 a statement: 5 statements 200 ms
				// apart.
				wl := &workload{d: ep.Dialect(), tables: o.Tables(), seed: 5,
					ph: phase{rows: 50, perCommit: 10, rate: 50, deletes: deletes, queries: 1, perQuery: 10, pacing: Smooth}}
				wl.dial = func(ctx context.Context) (client.Conn, error) {
					return client.Dial(ctx, ep, client.Options{Transport: client.Loop})
				}
				r, err := engine.Run(ctx, wl, engine.Options{Threads: wl.ph.workers(), Warmup: -1, UntilScheduled: true, Mux: client.Loops{Threads: 1}})
				if err != nil {
					t.Fatalf("deletes %v: %v", deletes, err)
				}
				if ins, ok := r.Totals.Op(KindInsert); !ok || ins.Count != 5 || r.Totals.Rows != 50 {
					t.Errorf("deletes %v: inserts %+v, %d rows: want 5 statements of 50 rows", deletes, ins, r.Totals.Rows)
				}
				want := before + 50
				if deletes {
					want = before
					if del, ok := r.Totals.Op(KindDelete); !ok || del.Count != 5 {
						t.Errorf("deletes %v: deletes %+v, want 5 statements (one per insert)", deletes, del)
					}
				}
				if n := d.n("SELECT count(*) FROM pi1"); n != want {
					t.Errorf("deletes %v: pi1 has %d rows, want %d", deletes, n, want)
				}
				q, ok := r.Totals.Op(KindQuery)
				t.Logf("deletes %v: %d queries beside the inserts", deletes, q.Count)
				// An inserter that held the thread through its waits would
				// let about one query through per insert (6 at most); a
				// thread that goes on runs thousands here.
				if !ok || q.Count < 25 || r.Totals.Errors != 0 {
					t.Errorf("deletes %v: queries %+v, %d errors: want at least 25 queries beside 5 paced inserts", deletes, q, r.Totals.Errors)
				}
			}
		})
	}
}
