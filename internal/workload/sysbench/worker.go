package sysbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
)

// Workload runs one test against a target; it is an engine.Workload. The
// engine retries an event that fails with client.Retryable when Test.Retry
// is set (the worker has already rolled back).
type Workload struct {
	Target
	Test Test
	Seed uint64 // with the worker id, seeds each worker's random source
}

var _ engine.Workload = (*Workload)(nil)

// NewWorker dials a connection and prepares the test's statements for every
// table, as sysbench's thread_init does. Worker 0 first checks that
// sbtest1..Tables exist and are recorded in qpslab_tables: a test never runs
// on tables qpslab did not create.
func (wl *Workload) NewWorker(ctx context.Context, id int) (engine.Worker, error) {
	t := wl.Test
	if err := wl.check(); err != nil {
		return nil, err
	}
	if wl.Rows < 1 {
		return nil, fmt.Errorf("sysbench %s: the tables are empty", t.Label())
	}
	if _, ok := kinds[t.Name]; !ok {
		return nil, fmt.Errorf("sysbench: unknown test %q", t.Name)
	}
	conn, err := wl.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("sysbench %s worker %d: connect: %w", t.Label(), id, err)
	}
	if id == 0 {
		if err := wl.verify(ctx, conn); err != nil {
			conn.Close()
			return nil, fmt.Errorf("sysbench %s: %w", t.Label(), err)
		}
	}
	w := &worker{
		t: t, dialect: wl.Dialect, conn: conn, tables: wl.Tables, rows: wl.Rows,
		r:     newRand(wl.Seed, uint64(id)),
		table: id%wl.Tables + 1,
	}
	if t.Name == "update-zipf" {
		w.zipf = newZipf(wl.Rows, zipfExp)
	}
	if t.Prepared {
		w.stmts = make([][]client.Stmt, wl.Tables+1)
		for tb := 1; tb <= wl.Tables; tb++ {
			for _, q := range t.Queries(wl.Dialect, tb) {
				s, err := conn.Prepare(ctx, q)
				if err != nil {
					conn.Close()
					return nil, fmt.Errorf("sysbench %s worker %d: prepare %s: %w", t.Label(), id, short(q), err)
				}
				w.stmts[tb] = append(w.stmts[tb], s)
			}
		}
	}
	w.event = w.pick()
	if w.event == nil {
		conn.Close()
		return nil, fmt.Errorf("sysbench: no event for test %q", t.Name)
	}
	return w, nil
}

type worker struct {
	t       Test
	dialect client.Dialect
	conn    client.Conn
	tables  int
	rows    int64
	r       *rand.Rand
	zipf    *zipf
	table   int             // scan's table, bound to the worker id
	stmts   [][]client.Stmt // [table][statement of Test.Queries]
	args    []client.Arg    // reused argument list: typed, so that binding allocates nothing
	c, pad  [cLen]byte      // reused c and pad values (pad uses padLen bytes)
	text    []byte          // the insert test's reused statement
	o       engine.Outcome  // the event's outcome, filled in place
	event   func(ctx context.Context, o *engine.Outcome) error
}

func (w *worker) Close() error { return w.conn.Close() }

// Event runs one event. On an error inside BEGIN…COMMIT it rolls back
// before returning; the error keeps its cause for client.Retryable.
func (w *worker) Event(ctx context.Context) (engine.Outcome, error) {
	// The event fills the worker's own Outcome: a local one would escape
	// through the event function, a heap allocation per event.
	w.o = engine.Outcome{}
	err := w.event(ctx, &w.o)
	return w.o, err
}

// fail wraps err with the test and the statement (cut short: an IN list of
// 1000 placeholders is no help in an error line).
func (w *worker) fail(tb, i int, err error) error {
	return fmt.Errorf("sysbench %s: %s: %w", w.t.Label(), short(w.t.Queries(w.dialect, tb)[i]), err)
}

func short(q string) string {
	if len(q) > 80 {
		return q[:77] + "..."
	}
	return q
}

// pickTable is sysbench's get_table_num: uniform in 1..tables.
func (w *worker) pickTable() int { return 1 + w.r.IntN(w.tables) }

// id is get_id: uniform in [1, rows] (--rand-type=uniform).
func (w *worker) id() int64 { return 1 + w.r.Int64N(w.rows) }

func (w *worker) argv(n int) []client.Arg {
	if cap(w.args) < n {
		w.args = make([]client.Arg, n)
	}
	return w.args[:n]
}

// ids are arguments: the given ids.
func (w *worker) ids(v ...int64) []client.Arg {
	a := w.argv(len(v))
	for i, x := range v {
		a[i] = client.Int(x)
	}
	return a
}

// randC and randPad draw a new c or pad value into the worker's buffer, as
// an argument that holds no string of its own.
func (w *worker) randC() client.Arg {
	digits(w.r, w.c[:cLen])
	return client.Bytes(w.c[:cLen])
}

func (w *worker) randPad() client.Arg {
	digits(w.r, w.pad[:padLen])
	return client.Bytes(w.pad[:padLen])
}

// read runs a reading statement and adds its rows to o.
func (w *worker) read(ctx context.Context, o *engine.Outcome, tb, i int, args []client.Arg) error {
	o.Statements++
	n, err := w.stmts[tb][i].QueryArgs(ctx, args)
	o.Rows += n
	if err != nil {
		return w.fail(tb, i, err)
	}
	return nil
}

// write runs a writing statement and adds the rows it changed to o.
func (w *worker) write(ctx context.Context, o *engine.Outcome, tb, i int, args []client.Arg) error {
	o.Statements++
	n, err := w.stmts[tb][i].ExecArgs(ctx, args)
	o.Rows += n
	if err != nil {
		return w.fail(tb, i, err)
	}
	return nil
}

// trx runs body between BEGIN and COMMIT, counting both, and rolls back when
// anything fails, so that the connection is ready for the next event.
func (w *worker) trx(ctx context.Context, o *engine.Outcome, body func() error) error {
	o.Statements++
	err := w.conn.Begin(ctx)
	if err != nil {
		err = fmt.Errorf("sysbench %s: BEGIN: %w", w.t.Label(), err)
	} else if err = body(); err == nil {
		o.Statements++
		if err = w.conn.Commit(ctx); err == nil {
			return nil
		}
		err = fmt.Errorf("sysbench %s: COMMIT: %w", w.t.Label(), err)
	}
	// The event's context may be the one that ended it: roll back anyway.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if rerr := w.conn.Rollback(rctx); rerr != nil {
		return fmt.Errorf("%w (then ROLLBACK: %v)", err, rerr)
	}
	return err
}

// pointSelects is execute_point_selects: 10 point selects on one table.
func (w *worker) pointSelects(ctx context.Context, o *engine.Outcome) error {
	tb := w.pickTable()
	for range 10 {
		if err := w.read(ctx, o, tb, 0, w.ids(w.id())); err != nil {
			return err
		}
	}
	return nil
}

// ranges is execute_*_ranges for statements from..to-1 of Queries: each on
// its own random table, start uniform in [1, rows], end start+R-1.
func (w *worker) ranges(ctx context.Context, o *engine.Outcome, from, to int) error {
	for i := from; i < to; i++ {
		tb := w.pickTable()
		start := w.id()
		if err := w.read(ctx, o, tb, i, w.ids(start, start+int64(w.t.Range)-1)); err != nil {
			return err
		}
	}
	return nil
}

// writes is the write-only body (execute_index_updates,
// execute_non_index_updates, execute_delete_inserts) using statements
// from..from+3 of Queries.
func (w *worker) writes(ctx context.Context, o *engine.Outcome, from int) error {
	tb := w.pickTable()
	if err := w.write(ctx, o, tb, from, w.ids(w.id())); err != nil {
		return err
	}
	tb = w.pickTable()
	c := w.randC()
	a := w.argv(2)
	a[0], a[1] = c, client.Int(w.id())
	if err := w.write(ctx, o, tb, from+1, a); err != nil {
		return err
	}
	tb = w.pickTable()
	id, k := w.id(), w.id()
	if err := w.write(ctx, o, tb, from+2, w.ids(id)); err != nil {
		return err
	}
	c, pad := w.randC(), w.randPad()
	a = w.argv(4)
	a[0], a[1], a[2], a[3] = client.Int(id), client.Int(k), c, pad
	return w.write(ctx, o, tb, from+3, a)
}

// inList fills n arguments after skip leading ones with uniform ids (or k
// values, which have the same range).
func (w *worker) inList(skip, n int) []client.Arg {
	a := w.argv(skip + n)
	for i := skip; i < skip+n; i++ {
		a[i] = client.Int(w.id())
	}
	return a
}

// pick returns the event function of the test.
func (w *worker) pick() func(ctx context.Context, o *engine.Outcome) error {
	t := w.t
	switch t.Name {
	case "point-query": // oltp_point_select.lua --skip-trx
		return func(ctx context.Context, o *engine.Outcome) error {
			return w.read(ctx, o, w.pickTable(), 0, w.ids(w.id()))
		}
	case "random-points", "points-covered-pk", "points-notcovered-pk", "points-covered-si", "points-notcovered-si":
		n := 100
		if t.Name == "random-points" {
			n = t.Range
		}
		return func(ctx context.Context, o *engine.Outcome) error {
			tb := w.pickTable()
			return w.read(ctx, o, tb, 0, w.inList(0, n))
		}
	case "hot-points": // the same 100 rows every time: rows/2+1 … rows/2+100
		hot := make([]client.Arg, 100)
		for i := range hot {
			hot[i] = client.Int(w.rows/2 + int64(i) + 1)
		}
		return func(ctx context.Context, o *engine.Outcome) error {
			return w.read(ctx, o, w.pickTable(), 0, hot)
		}
	case "range-covered-pk", "range-notcovered-pk", "range-covered-si", "range-notcovered-si":
		// oltp_range_covered.lua: BETWEEN start AND start+random_points (101 values)
		return func(ctx context.Context, o *engine.Outcome) error {
			tb := w.pickTable()
			start := w.id()
			return w.read(ctx, o, tb, 0, w.ids(start, start+100))
		}
	case "read-only", "read-only-simple", "read-only-sum", "read-only-order", "read-only-distinct":
		n := len(templates(t.Name, t.Range))
		return func(ctx context.Context, o *engine.Outcome) error {
			return w.trx(ctx, o, func() error {
				if err := w.pointSelects(ctx, o); err != nil {
					return err
				}
				return w.ranges(ctx, o, 1, n)
			})
		}
	case "read-only-count": // --skip-trx: one bare count
		return func(ctx context.Context, o *engine.Outcome) error { return w.ranges(ctx, o, 0, 1) }
	case "scan": // text, on the worker's own table; returns no rows
		q := fmt.Sprintf(qScan, w.table)
		return func(ctx context.Context, o *engine.Outcome) error {
			o.Statements++
			n, err := w.conn.Query(ctx, q)
			o.Rows += n
			if err != nil {
				return fmt.Errorf("sysbench %s: %s: %w", t.Label(), q, err)
			}
			return nil
		}
	case "update-index":
		return func(ctx context.Context, o *engine.Outcome) error {
			return w.write(ctx, o, w.pickTable(), 0, w.ids(w.id()))
		}
	case "update-nonindex", "update-one", "update-zipf":
		// update-one: run.sh passes --table-size=1, so always id 1.
		return func(ctx context.Context, o *engine.Outcome) error {
			tb := w.pickTable()
			c := w.randC()
			id := int64(1)
			switch t.Name {
			case "update-nonindex":
				id = w.id()
			case "update-zipf":
				id = w.zipf.next(w.r)
			}
			a := w.argv(2)
			a[0], a[1] = c, client.Int(id)
			return w.write(ctx, o, tb, 0, a)
		}
	case "update-inlist":
		return func(ctx context.Context, o *engine.Outcome) error {
			tb := w.pickTable()
			a := w.inList(1, inlistUpdateIDs)
			a[0] = w.randC()
			return w.write(ctx, o, tb, 0, a)
		}
	case "write-only":
		return func(ctx context.Context, o *engine.Outcome) error {
			return w.trx(ctx, o, func() error { return w.writes(ctx, o, 0) })
		}
	case "read-write":
		return func(ctx context.Context, o *engine.Outcome) error {
			return w.trx(ctx, o, func() error {
				if err := w.pointSelects(ctx, o); err != nil {
					return err
				}
				if err := w.ranges(ctx, o, 1, 5); err != nil {
					return err
				}
				return w.writes(ctx, o, 5)
			})
		}
	case "delete":
		return func(ctx context.Context, o *engine.Outcome) error {
			return w.write(ctx, o, w.pickTable(), 0, w.ids(w.id()))
		}
	case "insert": // oltp_insert.lua: con:query, never prepared
		return func(ctx context.Context, o *engine.Outcome) error {
			tb := w.pickTable()
			k := w.id()
			digits(w.r, w.c[:cLen])
			digits(w.r, w.pad[:padLen])
			w.text = appendInsertText(w.text[:0], w.dialect, tb, k, w.c[:cLen], w.pad[:padLen])
			o.Statements++
			n, err := w.conn.Exec(ctx, string(w.text))
			o.Rows += n
			if err != nil {
				return fmt.Errorf("sysbench %s: insert into sbtest%d: %w", t.Label(), tb, err)
			}
			return nil
		}
	}
	return nil
}
