package script

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/workload/script/lang"
)

// Workload runs a script set against a server; it is an engine.Workload.
// Each event is one pass of one script (lang.Pick by weight), as a pgbench
// transaction.
type Workload struct {
	Dialect  client.Dialect // the server's SQL (suite.Server.Dialect)
	Dial     func(ctx context.Context) (client.Conn, error)
	Set      *Set
	Scale    int64
	MaxTries int    // tries of a transaction that fails with a serialization failure or a deadlock (1: no retry)
	Seed     uint64 // the run's: the same on every label
}

var (
	_ engine.Workload   = (*Workload)(nil)
	_ engine.Classifier = (*Workload)(nil)
	_ lang.Executor     = (*worker)(nil)
)

// FailedKind is the operation kind whose errors are the transactions that
// failed --max-tries times (pgbench's "failed transactions").
const FailedKind = suite.FailedKind

// NewWorker dials a connection and gives it a client state: :client_id is
// the worker id, :scale the run's scale.
func (wl *Workload) NewWorker(ctx context.Context, id int) (engine.Worker, error) {
	conn, err := wl.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("script worker %d: connect: %w", id, err)
	}
	w := &worker{wl: wl, conn: conn, state: lang.NewState(wl.Seed, id, map[string]lang.Value{"scale": wl.Scale}), retry: -1}
	w.stmts = make([][]*stmt, len(wl.Set.Scripts))
	for i, sc := range wl.Set.Scripts {
		w.stmts[i] = make([]*stmt, len(sc.Statements))
	}
	return w, nil
}

// Classify: serialization failures and deadlocks are retryable (the
// worker decides whether the next event tries the transaction again or
// counts it failed), a dead connection ends the run, anything else is
// fatal.
func (wl *Workload) Classify(err error) engine.ErrorClass {
	if client.Serialization(err) {
		return engine.Retryable
	}
	return suite.ClassifySQL(err)
}

// stmt is one statement of a script on a worker's connection.
type stmt struct {
	sql   string
	vars  int
	query bool        // returns rows: run as a query (its rows counted)
	prep  client.Stmt // nil when the server cannot prepare it (run as text)
	kind  string      // its operation kind (Set.StatementKind)
}

type worker struct {
	wl    *Workload
	conn  client.Conn
	state *lang.State
	stmts [][]*stmt // [script][statement], prepared on first use
	cur   int       // the script running
	retry int       // the script to try again (-1: pick one)
	mark  lang.Mark // the state its first try started from (with --max-tries above 1)
	tries int       // tries of it so far
	args  []client.Arg
	parts []engine.Part
	sleep client.Sleeper
	o     engine.Outcome
	text  bool // run every statement as text (the init script)
}

func (w *worker) Close() error { return w.conn.Close() }

// Event runs one script pass. On an error it rolls back; a serialization
// failure or deadlock makes the next event try the same script again,
// until MaxTries tries, after which the transaction counts as failed
// (FailedKind's errors) and the next event picks a script anew.
func (w *worker) Event(ctx context.Context) (engine.Outcome, error) {
	set := w.wl.Set
	if w.retry >= 0 {
		// The same script from the same random state and variables as its
		// first try (pgbench's retries).
		w.cur = w.retry
		w.state.Rewind(w.mark)
	} else {
		w.cur = 0
		if len(set.Scripts) > 1 {
			w.cur = lang.Pick(set.Scripts, set.Weights, w.state)
		}
		w.tries = 0
		if w.wl.MaxTries > 1 {
			w.mark = w.state.Mark()
		}
	}
	w.parts = w.parts[:0]
	w.o = engine.Outcome{Kind: set.Kinds[w.cur]}
	err := set.Scripts[w.cur].Run(ctx, w.state, w)
	w.retry = -1
	if err == nil {
		w.o.Parts = w.parts
		return w.o, nil
	}
	if !client.ConnectionLost(err) {
		// The event's context may be the one that ended it: roll back anyway.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if _, rerr := w.conn.Exec(rctx, "ROLLBACK"); rerr != nil && client.ConnectionLost(rerr) {
			err = fmt.Errorf("%w (then ROLLBACK: %v)", err, rerr)
		}
		cancel()
	}
	if client.Serialization(err) {
		if w.tries++; w.tries < w.wl.MaxTries {
			w.retry = w.cur
		} else {
			w.parts = append(w.parts, engine.Part{Kind: FailedKind, Failed: true})
		}
	}
	w.o.Parts = w.parts
	return w.o, err
}

// Exec runs one statement of the running script: server-side prepared on
// first use (the lean client's path, as sysbench's statements), or as
// text where the server cannot prepare it; with \gset through the driver,
// which returns the row.
func (w *worker) Exec(ctx context.Context, st lang.Statement, args []lang.Value) ([]string, []lang.Value, error) {
	s, err := w.stmt(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	a, err := w.bind(args)
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	var n int64
	var cols []string
	var row []lang.Value
	switch {
	case st.Gset:
		var first []any
		cols, first, n, err = client.Row(ctx, w.conn, s.sql, a)
		if err == nil && n != 1 {
			err = fmt.Errorf("\\gset: the query returned %d rows, want exactly one", n)
		}
		for _, v := range first {
			row = append(row, v)
		}
	case s.prep != nil && s.query:
		n, err = s.prep.QueryArgs(ctx, a)
	case s.prep != nil:
		n, err = s.prep.ExecArgs(ctx, a)
	case s.query:
		n, err = w.conn.Query(ctx, s.sql, values(a)...)
	default:
		n, err = w.conn.Exec(ctx, s.sql, values(a)...)
	}
	w.o.Statements++
	w.o.Rows += n
	w.parts = append(w.parts, engine.Part{Kind: s.kind, Time: time.Since(start), Failed: err != nil})
	return cols, row, err
}

// Sleep waits d, or until ctx ends.
func (w *worker) Sleep(ctx context.Context, d time.Duration) error { return w.sleep.Sleep(ctx, d) }

// stmt is statement st of the running script, prepared on first use.
func (w *worker) stmt(ctx context.Context, st lang.Statement) (*stmt, error) {
	if s := w.stmts[w.cur][st.Index]; s != nil {
		return s, nil
	}
	q, vars := st.SQL(w.wl.Dialect.Placeholder)
	s := &stmt{sql: q, vars: len(vars), query: returnsRows(q), kind: w.wl.Set.StatementKind(w.cur, st.Index)}
	if !st.Gset && !w.text {
		p, err := w.conn.Prepare(ctx, q)
		switch {
		case err == nil:
			s.prep = p
		case unpreparable(err):
			// run as text (BEGIN on some MySQL-family servers)
		default:
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	w.stmts[w.cur][st.Index] = s
	return s, nil
}

// unpreparable reports a MySQL-family server's refusal to prepare a
// statement (1295, ER_UNSUPPORTED_PS): it runs as text.
func unpreparable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1295
}

// returnsRows says whether q is a statement that returns rows.
func returnsRows(q string) bool {
	f := strings.Fields(strings.TrimLeft(q, "( \t\n"))
	if len(f) == 0 {
		return false
	}
	switch strings.ToLower(f[0]) {
	case "select", "with", "show", "values", "table", "explain", "describe", "desc":
		return true
	}
	return false
}

// bind converts a statement's values to the client's arguments, reusing
// the worker's slice.
func (w *worker) bind(vals []lang.Value) ([]client.Arg, error) {
	a := w.args[:0]
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			a = append(a, client.Null())
		case int64:
			a = append(a, client.Int(x))
		case float64:
			a = append(a, client.Float(x))
		case bool:
			a = append(a, w.wl.Dialect.Bool(x))
		case string:
			a = append(a, client.Str(x))
		default:
			return nil, fmt.Errorf("a value of type %T cannot be bound", v)
		}
	}
	w.args = a
	return a, nil
}

func values(a []client.Arg) []any {
	out := make([]any, len(a))
	for i, x := range a {
		out[i] = x.Value()
	}
	return out
}
