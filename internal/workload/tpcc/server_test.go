package tpcc

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

type db struct {
	t   *testing.T
	srv *sandbox.Server
	ep  client.Endpoint
	s   *suite.Server
}

func start(t *testing.T, build string) db {
	srv, _ := testenv.StartServer(t, build)
	ep := srv.Endpoint()
	return db{t: t, srv: srv, ep: ep, s: &suite.Server{Protocol: ep.Protocol, Dialect: ep.Dialect(), Flavor: string(srv.Flavor), Log: func(string) {}, Warn: func(string) {},
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

// check runs Check on a connection of its own.
func (d db) check() error {
	c, err := d.s.Dial(context.Background())
	if err != nil {
		d.t.Fatal(err)
	}
	defer c.Close()
	return Check(context.Background(), d.s.Dialect, c)
}

func configure(t *testing.T, args ...string) *suite.Plan {
	t.Helper()
	v := suite.Defaults(tpccSuite{}.Params())
	for i := 0; i+1 < len(args); i += 2 {
		v = v.With(args[i], args[i+1])
	}
	p, err := tpccSuite{}.Configure(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// drive runs the test step of p on d for events events over threads
// terminals, as the plan would (Before, the engine with retries, the
// headline, Finish), and returns the run.
func drive(t *testing.T, d db, p *suite.Plan, threads int, events int64) result.Run {
	t.Helper()
	ctx := context.Background()
	st := p.Steps[len(p.Steps)-1]
	if err := st.Before(ctx, d.s); err != nil {
		t.Fatalf("before %s: %v", st.Test, err)
	}
	res, err := engine.Run(ctx, st.Drive.Workload(d.s, 7), engine.Options{Threads: threads, Warmup: -1, Events: events, RetryErrors: st.Drive.Retry})
	if err != nil {
		t.Fatalf("%s: %v", st.Test, err)
	}
	r := *res
	r.Suite, r.Test, r.Role, r.Params = Name, st.Test, st.Role, p.Params
	st.Headline.Of(&r.Totals)
	if err := st.Finish(ctx, d.s, &r); err != nil {
		t.Fatalf("after %s: %v", st.Test, err)
	}
	return r
}

// TPC-C at 1 warehouse on MariaDB and PostgreSQL: the load's
// cardinalities, every transaction type run by 4 terminals, the New-Order
// rollbacks, the figures and verdicts, the consistency conditions passing
// after the run and failing, each of 1 to 4, on a database corrupted on
// purpose; a table set of another scale and an unfinished load refused.
func TestTPCCOnServers(t *testing.T) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			d := start(t, build)
			ctx := context.Background()
			p := configure(t, "warehouses", "1")
			load := p.Steps[0]
			if load.Test != LoadTest || !load.Once || !load.Reloads {
				t.Fatalf("the first step %+v", load)
			}
			tot, err := load.Task.Run(ctx, d.s, 2, 7, suite.TaskIO{Progress: func(int64, int64) {}, Sample: func(result.Sample) {}})
			if err != nil {
				t.Fatal(err)
			}
			for q, want := range map[string]int64{
				"SELECT COUNT(*) FROM warehouse": 1, "SELECT COUNT(*) FROM district": 10, "SELECT COUNT(*) FROM customer": 30000,
				"SELECT COUNT(*) FROM history": 30000, "SELECT COUNT(*) FROM orders": 30000, "SELECT COUNT(*) FROM new_order": 9000,
				"SELECT COUNT(*) FROM item": 100000, "SELECT COUNT(*) FROM stock": 100000,
				"SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'": -1, "SELECT COUNT(DISTINCT c_last) FROM customer": 1000,
				"SELECT COUNT(*) FROM order_line WHERE ol_o_id >= 2101 AND ol_delivery_d IS NOT NULL": 0,
			} {
				if got := d.n(q); got != want && !(want == -1 && got > 2400 && got < 3600) {
					t.Errorf("%s: %d, want %d", q, got, want)
				}
			}
			if lines := d.n("SELECT COUNT(*) FROM order_line"); tot.Rows != 100000+1+10+3*30000+9000+100000+lines || lines < 250000 || lines > 350000 {
				t.Errorf("the load says %d rows, with %d order lines", tot.Rows, lines)
			}
			if err := d.check(); err != nil {
				t.Fatalf("after the load: %v", err)
			}
			// The load keeps its constants C, which the run's must differ from.
			if got, want := d.n("SELECT c_last FROM tpcc_loaded"), loadConsts(7).last; got != want {
				t.Errorf("tpcc_loaded's C_LAST constant %d, the load's %d", got, want)
			}

			r := drive(t, d, p, 4, 600)
			for _, k := range Kinds {
				if o, ok := r.Totals.Op(k); !ok || o.Count == 0 {
					t.Errorf("%s did not run: %+v", k, r.Totals.Ops)
				}
			}
			if o, _ := r.Totals.Op(Kinds[txNewOrder]); float64(o.Count) < 0.3*600 || float64(o.Count) > 0.6*600 {
				t.Errorf("New-Order ran %d of 600", o.Count)
			}
			if len(r.Verdicts) != nTx {
				t.Errorf("verdicts %+v", r.Verdicts)
			}
			for _, f := range []string{FigureNOPM, FigureTPM, "new-order.p90", "stock-level/s"} {
				m, _ := result.Lookup(f)
				if v, ok := m.Of(r); !ok || v <= 0 {
					t.Errorf("%s: %v %v", f, v, ok)
				}
			}
			// Deliveries faster than New-Orders: every district runs out of
			// new orders, and Delivery skips it (clause 2.7.4.2), on InnoDB's
			// REPEATABLE READ as on PostgreSQL's READ COMMITTED.
			r = drive(t, d, configure(t, "warehouses", "1", "mix", "new-order=50,delivery=50"), 8, 2500)
			if sk, _ := r.Totals.Op(DeliverySkippedKind); sk.Count == 0 {
				t.Errorf("no district ran out of new orders: %+v", r.Totals.Ops)
			}
			if n := d.n("SELECT COUNT(*) FROM new_order"); n > 1300 {
				t.Errorf("%d new orders left after 1,250 Deliveries", n)
			}
			// One terminal, New-Orders only: its inputs are the seed's, so
			// its rollbacks are too (1 % of New-Orders, clause 2.4.1.4).
			r = drive(t, d, configure(t, "warehouses", "1", "mix", "new-order=100"), 1, 800)
			no, _ := r.Totals.Op(Kinds[txNewOrder])
			rb, _ := r.Totals.Op(RollbackKind)
			if no.Count != 800 || rb.Count == 0 || rb.Count > 24 {
				t.Errorf("%d New-Orders, %d rolled back", no.Count, rb.Count)
			}

			// Each condition fails on a database corrupted for it: a new
			// order in the middle of district 4's taken out, and so on.
			mid := strconv.FormatInt(d.n("SELECT MIN(no_o_id) + 1 FROM new_order WHERE no_w_id = 1 AND no_d_id = 4"), 10)
			for _, c := range []struct {
				n           string
				break_, fix string
			}{
				{"3.3.2.1", "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1", "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1"},
				{"3.3.2.2", "UPDATE district SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 1 AND d_id = 3",
					"UPDATE district SET d_next_o_id = d_next_o_id - 5 WHERE d_w_id = 1 AND d_id = 3"},
				{"3.3.2.3", "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = " + mid,
					"INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (" + mid + ", 4, 1)"},
				{"3.3.2.4", "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id = 1 AND ol_number = 1", ""},
			} {
				d.exec(c.break_)
				err := d.check()
				if err == nil || !strings.Contains(err.Error(), "consistency condition "+c.n+" fails") {
					t.Errorf("%s: %v", c.break_, err)
				}
				if c.fix != "" {
					d.exec(c.fix)
					if err := d.check(); err != nil {
						t.Fatalf("%s: %v", c.fix, err)
					}
				}
			}
			// A run on the corrupted database is refused before it runs,
			// and a run that corrupts it fails after (Finish).
			st := p.Steps[1]
			if err := st.Before(ctx, d.s); err == nil || !strings.Contains(err.Error(), "3.3.2.4") {
				t.Errorf("before a run on a corrupt database: %v", err)
			}
			if err := st.Finish(ctx, d.s, &result.Run{}); err == nil || !strings.Contains(err.Error(), "3.3.2.4") {
				t.Errorf("after a run on a corrupt database: %v", err)
			}

			// Tables of another scale.
			conn, err := d.s.Dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := checkLoaded(ctx, conn, d.s.Dialect, 2); err == nil || !strings.Contains(err.Error(), "hold 1 warehouse(s), not 2: give --warehouses 1") {
				t.Errorf("2 warehouses on a load of 1: %v", err)
			}

			// A load stopped half way (here: its client gone after 100,000
			// rows) leaves tables that are never taken for a loaded database.
			lctx, cancel := context.WithCancel(ctx)
			_, err = load.Task.Run(lctx, d.s, 1, 7, suite.TaskIO{Progress: func(done, _ int64) {
				if done > 100000 {
					cancel()
				}
			}, Sample: func(result.Sample) {}})
			cancel()
			if err == nil {
				t.Fatal("a cancelled load returned no error")
			}
			if _, err := checkLoaded(ctx, conn, d.s.Dialect, 1); err == nil || !strings.Contains(err.Error(), "not a finished load") {
				t.Errorf("after a load stopped half way: %v", err)
			}
		})
	}
}

// A server killed in the middle of the load: the load fails with one line
// naming it.
func TestTPCCServerKilledMidLoad(t *testing.T) {
	d := start(t, "mariadb-system")
	load := configure(t, "warehouses", "2").Steps[0]
	killed := false
	_, err := load.Task.Run(context.Background(), d.s, 1, 7, suite.TaskIO{Progress: func(done, _ int64) {
		if done > 150000 && !killed {
			killed = true
			syscall.Kill(d.srv.State.PID, syscall.SIGKILL) // the crash at a chosen moment
		}
	}, Sample: func(result.Sample) {}})
	if !killed || err == nil || !strings.HasPrefix(err.Error(), "load") || strings.Contains(err.Error(), "\n") || !client.ConnectionLost(errors.Unwrap(err)) && !strings.Contains(err.Error(), "connection") {
		t.Errorf("killed %v: %v", killed, err)
	}
}

// Bad input: one line each, before anything runs.
func TestTPCCBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"warehouses", "0"}, "--warehouses"},
		{[]string{"warehouses", "1e9"}, "--warehouses"},
		{[]string{"mix", "new-order=45,payment=43,order-status=4,delivery=4"}, "--mix adds to 96%, not 100%"},
		{[]string{"mix", "new-order=45,payment=55,payment=0"}, "gives payment twice"},
		{[]string{"mix", "neworder=100"}, "NAME one of new-order, payment"},
		{[]string{"mix", "new-order=-5,payment=105"}, "from 0 to 100"},
		{[]string{"no-load", "true"}, "--no-load runs on the tables of a server already up"},
		{[]string{"max-tries", "0"}, "--max-tries"},
	} {
		v := suite.Defaults(tpccSuite{}.Params())
		for i := 0; i+1 < len(c.args); i += 2 {
			v = v.With(c.args[i], c.args[i+1])
		}
		_, err := tpccSuite{}.Configure(v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if err := checkSpace(t.TempDir(), 100000); err == nil || !strings.Contains(err.Error(), "--warehouses 100000 needs about") || !strings.Contains(err.Error(), "lower --warehouses") {
		t.Errorf("100,000 warehouses: %v", err)
	}
	if err := checkSpace(t.TempDir(), 1); err != nil {
		t.Errorf("1 warehouse: %v", err)
	}
}
