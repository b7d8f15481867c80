package client

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// Options shape a benchmark connection.
type Options struct {
	TCP       bool      // loopback TCP instead of the unix socket
	NoPrepare bool      // text queries (client-side interpolation) instead of server-side prepared statements
	Transport Transport // Blocking or Netpoll (resolve Auto first)
	// Driver sends every statement through the drivers' generic paths
	// (go-sql-driver's driver.Conn, pgx.Conn), as qpslab did before its lean
	// path: for the tests and benchmarks that compare the two. By default
	// the statements a suite repeats (prepared statements, text statements
	// without arguments such as BEGIN and COMMIT, and with NoPrepare the
	// statements' text with the arguments written in) take the lean path,
	// which allocates nothing per statement once warm; so does other text
	// without arguments (DDL), which needs nothing more. The drivers keep
	// logging in, text statements with arguments, Scalar's reads of a value,
	// COPY and LOAD DATA (Copy), and any argument the lean path cannot
	// write as text itself.
	Driver bool
}

// Conn is one dedicated connection, used by one worker: no pool, no locks on
// the hot path.
type Conn interface {
	// Prepare returns a statement for query: server-side prepared unless the
	// connection was opened with NoPrepare. Placeholders are the protocol's own
	// (? for MySQL, $1… for PostgreSQL).
	Prepare(ctx context.Context, query string) (Stmt, error)
	// Exec runs a text statement (never prepared) and returns rows affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a text statement and returns how many rows it returned.
	Query(ctx context.Context, query string, args ...any) (int64, error)
	// Begin and Commit run BEGIN and COMMIT as statements, as sysbench does.
	Begin(ctx context.Context) error
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	Close() error
}

// Stmt is a statement ready to run many times on its connection.
type Stmt interface {
	Exec(ctx context.Context, args ...any) (int64, error)  // rows affected
	Query(ctx context.Context, args ...any) (int64, error) // rows returned (read and discarded)
	// ExecArgs and QueryArgs are Exec and Query with typed arguments. With a
	// []Arg the caller reuses from one statement to the next, the lean path
	// runs a statement without allocating; Exec's and Query's []any cost an
	// allocation per integer beyond 255 before the call is even made.
	ExecArgs(ctx context.Context, args []Arg) (int64, error)
	QueryArgs(ctx context.Context, args []Arg) (int64, error)
	// QueryEach runs the statement with args and calls each for every row
	// it returns, in order; it returns how many rows it returned (all are
	// read even if each has seen enough). r is valid only until each
	// returns, and each must not run statements on this connection (the
	// reply is still being read). On the lean path nothing is allocated
	// once warm, provided each is made once and reused: a closure written
	// in the call allocates (an interface method's argument escapes)
	// when it captures variables. Rows before an error mid-statement are
	// handed to each, and the error returned with their count. A nil each
	// reads and discards the rows, as QueryArgs does.
	QueryEach(ctx context.Context, args []Arg, each func(r *Values)) (int64, error)
}

// Dial opens one dedicated connection to e. A refusal that comes from a
// limit says which (ConnectLimit).
func Dial(ctx context.Context, e Endpoint, o Options) (Conn, error) {
	var c Conn
	var err error
	switch e.Protocol {
	case MySQL:
		c, err = dialMySQL(ctx, e, o)
	case Postgres:
		c, err = dialPostgres(ctx, e, o)
	default:
		return nil, fmt.Errorf("unknown protocol %q", e.Protocol)
	}
	if err != nil {
		if why := ConnectLimit(err); why != "" {
			return nil, fmt.Errorf("%w (%s)", err, why)
		}
	}
	return c, err
}

// ConnectLimit names the limit a failed connect ran into, with its fix: the
// server's max_connections, its listen backlog, this process's open files,
// or the host's ephemeral ports; "" for any other failure.
func ConnectLimit(err error) string {
	var me *mysql.MySQLError
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &me) && me.Number == 1040,
		errors.As(err, &pe) && pe.Code == "53300",
		strings.Contains(err.Error(), "too many clients already"), strings.Contains(err.Error(), "Too many connections"):
		return "the server's max_connections: raise it in the config, e.g. qpslab configs show one-thread-per-connection"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "open files: raise this process's limit with ulimit -n"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "ephemeral ports: widen net.ipv4.ip_local_port_range, or connect over the unix socket"
	case errors.Is(err, syscall.EAGAIN): // a unix socket whose listen queue is full
		return "the server's listen backlog is full: raise back_log in the config and net.core.somaxconn"
	}
	return ""
}

// canceller ends a connection's statement when the caller's context ends,
// without the drivers' per-statement machinery: go-sql-driver hands every
// cancellable context to a watcher goroutine (two goroutine wake-ups per
// statement, about two futex calls), and pgx registers and unregisters a
// callback per statement. A worker passes the same context to every event, so
// one registration per context does: when it ends, the connection is closed,
// which wakes a blocked read, and the statement fails. Drivers are given a
// context that is never cancelled.
type canceller struct {
	nc     net.Conn
	ctx    context.Context
	stop   func() bool
	gen    int64        // numbers the contexts watched, one after another
	dialed bool         // nc is set (by the connection's own dial)
	busy   atomic.Int64 // gen of the context whose statement is in flight; 0 when idle
}

// endHandled, when a test sets it, is called once the watcher of a
// context that ended has done its part (closed the connection under the
// statement in flight, or left an idle one alone); nil in production.
var endHandled atomic.Pointer[func(context.Context)]

// arm watches ctx and returns the context to hand the driver; done must
// follow when the statement is over. A context that ends while none of its
// statements is in flight closes nothing (a rollback's short timeout ends
// that way, just before the next statement starts under another context).
func (c *canceller) arm(ctx context.Context) (context.Context, error) {
	bindLoop(c.nc, ctx)
	if ctx.Done() == nil {
		return ctx, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ctx != c.ctx {
		if c.stop != nil {
			c.stop()
		}
		c.gen++
		g, nc := c.gen, c.nc
		c.ctx = ctx
		c.stop = context.AfterFunc(ctx, func() {
			// Claim the statement in flight, if it is one of this context's.
			if nc != nil && c.busy.CompareAndSwap(g, -g) {
				nc.Close()
			}
			if f := endHandled.Load(); f != nil {
				(*f)(ctx)
			}
		})
	}
	c.busy.Store(c.gen)
	if err := ctx.Err(); err != nil { // ended between the checks
		c.busy.CompareAndSwap(c.gen, 0)
		return nil, err
	}
	return context.Background(), nil
}

func (c *canceller) done() {
	c.busy.Store(0)
	bindLoop(c.nc, context.Background()) // the statement is over: its loop worker no more
}

func (c *canceller) release() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
}

// dialer dials over the chosen transport and keeps the connection, so that
// arm can close it.
func (c *canceller) dialer(t Transport) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var nc net.Conn
		var err error
		switch t {
		case Blocking:
			nc, err = dialBlocking(ctx, network, addr)
		case Uring, Loop:
			nc, err = dialUring(ctx, network, addr, t == Uring)
		default:
			var d net.Dialer
			nc, err = d.DialContext(ctx, network, addr)
		}
		// The first dial is the connection's own; later ones are pgx's
		// cancel requests, which must not replace it.
		if err == nil && !c.dialed {
			c.nc, c.dialed = nc, true
		}
		return nc, err
	}
}

// ---- statements: one type, a kind per path -------------------------------------

// stmt is every statement Prepare returns. Exec, Query, ExecArgs and
// QueryArgs are one path: arm the cancellation, then the statement's kind
// runs it with the arguments in the form the caller gave them.
type stmt struct {
	cancel *canceller
	buf    *[]Arg // the lean path's buffer for Exec's and Query's arguments; nil on the drivers'
	k      kind
}

// kind runs a statement on one path, under the context the canceller armed
// (the one to hand a driver). query says which count the caller wants: rows
// returned (Query) or affected (Exec).
type kind interface {
	run(ctx context.Context, p params, query bool) (int64, error)
	// each runs a query and hands its rows to each (QueryEach).
	each(ctx context.Context, p params, each func(*Values)) (int64, error)
}

func (s *stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	return s.do(ctx, params{vals: args, buf: s.buf}, false)
}
func (s *stmt) Query(ctx context.Context, args ...any) (int64, error) {
	return s.do(ctx, params{vals: args, buf: s.buf}, true)
}
func (s *stmt) ExecArgs(ctx context.Context, args []Arg) (int64, error) {
	return s.do(ctx, params{args: args}, false)
}
func (s *stmt) QueryArgs(ctx context.Context, args []Arg) (int64, error) {
	return s.do(ctx, params{args: args}, true)
}

func (s *stmt) QueryEach(ctx context.Context, args []Arg, each func(r *Values)) (int64, error) {
	if each == nil {
		return s.QueryArgs(ctx, args)
	}
	ctx, err := s.cancel.arm(ctx)
	if err != nil {
		return 0, err
	}
	n, err := s.k.each(ctx, params{args: args}, each)
	s.cancel.done()
	return n, err
}

func (s *stmt) do(ctx context.Context, p params, query bool) (int64, error) {
	ctx, err := s.cancel.arm(ctx)
	if err != nil {
		return 0, err
	}
	n, err := s.k.run(ctx, p, query)
	s.cancel.done()
	return n, err
}

// texter is a connection's text statement, armed (myConn.text, pgConn.text).
type texter interface {
	armed() *canceller // the connection's cancellation
	text(ctx context.Context, q string, p params, query bool) (int64, error)
	textEach(ctx context.Context, q string, p params, each func(*Values)) (int64, error)
}

// runText is a connection's Exec and Query: arm the cancellation, run q.
func runText(ctx context.Context, t texter, q string, p params, query bool) (int64, error) {
	c := t.armed()
	ctx, err := c.arm(ctx)
	if err != nil {
		return 0, err
	}
	n, err := t.text(ctx, q, p, query)
	c.done()
	return n, err
}

// driverText runs its query as text each time (--no-prepare), through the
// driver.
type driverText struct {
	c texter
	q string
}

func (k driverText) run(ctx context.Context, p params, query bool) (int64, error) {
	return k.c.text(ctx, k.q, p, query)
}

func (k driverText) each(ctx context.Context, p params, each func(*Values)) (int64, error) {
	return k.c.textEach(ctx, k.q, p, each)
}

// textWire is the lean path's side of a text statement on one protocol.
type textWire interface {
	textRequest() []byte
	keepText(b []byte)
	sendText(b []byte) (affected, rows int64, err error)
	sendTextEach(b []byte, each func(*Values)) (rows int64, err error)
}

// leanText is a text statement of the lean path (--no-prepare): its text
// with the arguments written in, sent as one text request (COM_QUERY, a
// simple-protocol Query). An argument it cannot write (see
// template.appendText) sends the statement through the driver.
type leanText struct {
	w textWire
	c texter
	p Protocol
	t template
}

func (k *leanText) run(ctx context.Context, p params, query bool) (int64, error) {
	b, ok, err := k.request(p)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return k.c.text(ctx, k.t.q, p, query)
	}
	affected, rows, err := k.w.sendText(b)
	return pick(query, affected, rows, err)
}

func (k *leanText) each(ctx context.Context, p params, each func(*Values)) (int64, error) {
	b, ok, err := k.request(p)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return k.c.textEach(ctx, k.t.q, p, each)
	}
	return k.w.sendTextEach(b, each)
}

// request writes the statement's text with p's arguments in; ok is false
// where an argument cannot be written as text here (the driver sends it).
func (k *leanText) request(p params) (b []byte, ok bool, err error) {
	args, err := p.typed()
	if err != nil {
		return nil, false, err
	}
	if len(args) != k.t.n {
		return nil, false, fmt.Errorf("the statement takes %d arguments, got %d", k.t.n, len(args))
	}
	b, ok = k.t.appendText(k.p, k.w.textRequest(), args)
	k.w.keepText(b)
	return b, ok, nil
}

// params are a statement's arguments as its caller gave them: typed
// (ExecArgs, QueryArgs) or as values (Exec, Query). Each path takes the
// form it needs: the lean path []Arg (converting values into buf, which
// it reuses), the drivers []any.
type params struct {
	args []Arg
	vals []any
	buf  *[]Arg
}

func (p params) empty() bool { return len(p.args) == 0 && len(p.vals) == 0 }

func (p params) len() int { return max(len(p.args), len(p.vals)) }

// value is argument i as the drivers take it.
func (p params) value(i int) any {
	if p.vals != nil {
		return p.vals[i]
	}
	return p.args[i].Value()
}

func (p params) typed() ([]Arg, error) {
	if p.vals == nil {
		return p.args, nil
	}
	a, err := argsOf(*p.buf, p.vals)
	*p.buf = a
	return a, err
}

// values are the arguments as the drivers take them (typed ones
// allocate here; the lean path never calls it).
func (p params) values() []any {
	if p.vals != nil || len(p.args) == 0 {
		return p.vals
	}
	return anyArgs(p.args)
}

// pick returns the count the caller wants: rows returned for a query, else
// rows affected.
func pick(query bool, affected, rows int64, err error) (int64, error) {
	if query {
		return rows, err
	}
	return affected, err
}

// ---- errors ---------------------------------------------------------------------

// Retryable reports errors that sysbench restarts an event on by default:
// deadlocks and lock-wait timeouts (MySQL 1213, 1205, 1020, its
// --mysql-ignore-errors default; PostgreSQL 40P01, 40001, 55P03), and on
// PostgreSQL a unique violation (23505), which its pgsql driver also retries:
// write-only and read-write hit it when two clients delete and re-insert the
// same id.
func Retryable(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213 || me.Number == 1205 || me.Number == 1020
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40P01" || pe.Code == "40001" || pe.Code == "55P03" || pe.Code == "23505"
	}
	return false
}

// Serialization reports the errors pgbench retries (the script suite's
// --max-tries, TPC-C's): serialization
// failures and deadlocks (PostgreSQL 40001, 40P01), and their MySQL-family
// counterparts (1213 deadlock, 1205 lock wait timeout, 1020 a record
// changed since a REPEATABLE READ transaction read it, MariaDB's snapshot
// isolation).
func Serialization(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213 || me.Number == 1205 || me.Number == 1020
	}
	return false
}

// ConnectionLost reports errors after which the connection cannot be used.
func ConnectionLost(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" // admin/crash shutdown
	}
	return pgconn.SafeToRetry(err) || isPgClosed(err)
}

func isPgClosed(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}

// Scalar runs a text query on c and returns its first row's first column
// as an integer (a count, a min or max id). A NULL or no row is an error.
func Scalar(ctx context.Context, c Conn, q string) (int64, error) {
	var v any
	switch c := c.(type) {
	case *myConn:
		ctx, err := c.cancel.arm(ctx)
		if err != nil {
			return 0, err
		}
		defer c.cancel.done()
		rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, q, nil)
		if err != nil {
			return 0, err
		}
		dest := make([]driver.Value, len(rows.Columns()))
		err = rows.Next(dest)
		rows.Close()
		if err == io.EOF {
			return 0, fmt.Errorf("no row")
		}
		if err != nil {
			return 0, err
		}
		if len(dest) > 0 {
			v = dest[0]
		}
	case *pgConn:
		ctx, err := c.cancel.arm(ctx)
		if err != nil {
			return 0, err
		}
		defer c.cancel.done()
		if err := c.c.QueryRow(ctx, q).Scan(&v); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("unknown connection type %T", c)
	}
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case uint64:
		if x > 1<<63-1 {
			return 0, fmt.Errorf("%d is out of range", x)
		}
		return int64(x), nil
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	case string:
		return strconv.ParseInt(x, 10, 64)
	case nil:
		return 0, fmt.Errorf("NULL")
	}
	return 0, fmt.Errorf("not an integer: %T", v)
}
