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
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
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

// ---- MySQL: the driver's connection used directly, below database/sql ------

func dialMySQL(ctx context.Context, e Endpoint, o Options) (Conn, error) {
	m := &myConn{noPrepare: o.NoPrepare}
	c := mysql.NewConfig()
	c.User, c.DBName = e.User, e.Database
	c.Timeout = 10 * time.Second
	c.InterpolateParams = o.NoPrepare
	c.Net, c.Addr = "unix", e.Socket
	if o.TCP || e.Socket == "" {
		c.Net, c.Addr = "tcp", net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	}
	dial := m.cancel.dialer(o.Transport)
	c.DialFunc = dial
	if !o.Driver {
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			m.w = newMyWire(nc)
			return &sniffConn{Conn: nc, w: m.w}, nil
		}
	}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	if m.c, err = conn.Connect(ctx); err != nil {
		return nil, err
	}
	if m.w != nil && m.w.caps == 0 { // no handshake response seen: leave it all to the driver
		m.w = nil
	}
	return m, nil
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

func (c *canceller) done() { c.busy.Store(0) }

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
		if t == Blocking {
			nc, err = dialBlocking(ctx, network, addr)
		} else {
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

type myConn struct {
	c         driver.Conn
	noPrepare bool
	cancel    canceller
	nv        []driver.NamedValue // argument buffer, reused
	dest      []driver.Value      // row buffer, reused
	w         *myWire             // the lean path; nil with Options.Driver
}

// named converts arguments the way database/sql would (int to int64, …),
// through the driver's own checker.
func (m *myConn) named(args []any) ([]driver.NamedValue, error) {
	// One goroutine uses a connection, and the driver is done with the
	// arguments when the call returns: reuse one slice.
	if cap(m.nv) < len(args) {
		m.nv = make([]driver.NamedValue, len(args))
	}
	nv := m.nv[:len(args)]
	chk, _ := m.c.(driver.NamedValueChecker)
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		if driver.IsValue(a) {
			continue
		}
		var err error
		if chk != nil {
			err = chk.CheckNamedValue(&nv[i])
		} else {
			nv[i].Value, err = driver.DefaultParameterConverter.ConvertValue(a)
		}
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
	}
	return nv, nil
}

// begin arms cancellation for one statement and converts its arguments; the
// caller defers m.cancel.done() when err is nil.
func (m *myConn) begin(ctx context.Context, args []any) (context.Context, []driver.NamedValue, error) {
	ctx, err := m.cancel.arm(ctx)
	if err != nil {
		return nil, nil, err
	}
	nv, err := m.named(args)
	if err != nil {
		m.cancel.done()
		return nil, nil, err
	}
	return ctx, nv, nil
}

func (m *myConn) Prepare(ctx context.Context, q string) (Stmt, error) {
	ctx, err := m.cancel.arm(ctx)
	if err != nil {
		return nil, err
	}
	defer m.cancel.done()
	switch {
	case m.noPrepare && m.w != nil:
		return &myText{m, parseTemplate(MySQL, q)}, nil
	case m.noPrepare:
		return textStmt{m, q}, nil
	case m.w != nil:
		id, n, err := m.w.prepare(q)
		if err != nil {
			return nil, err
		}
		return &myLean{c: m, id: id, nparams: n}, nil
	}
	s, err := m.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return myStmt{m, s}, nil
}

func (m *myConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	if m.w != nil && len(args) == 0 {
		if _, err := m.cancel.arm(ctx); err != nil {
			return 0, err
		}
		n, _, err := m.w.queryString(q)
		m.cancel.done()
		return n, err
	}
	ctx, nv, err := m.begin(ctx, args)
	if err != nil {
		return 0, err
	}
	defer m.cancel.done()
	r, err := m.c.(driver.ExecerContext).ExecContext(ctx, q, nv)
	if err == driver.ErrSkip { // arguments without client-side interpolation
		s, perr := m.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if perr != nil {
			return 0, perr
		}
		defer s.Close()
		r, err = s.(driver.StmtExecContext).ExecContext(ctx, nv)
	}
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (m *myConn) Query(ctx context.Context, q string, args ...any) (int64, error) {
	if m.w != nil && len(args) == 0 {
		if _, err := m.cancel.arm(ctx); err != nil {
			return 0, err
		}
		_, n, err := m.w.queryString(q)
		m.cancel.done()
		return n, err
	}
	ctx, nv, err := m.begin(ctx, args)
	if err != nil {
		return 0, err
	}
	defer m.cancel.done()
	rows, err := m.c.(driver.QueryerContext).QueryContext(ctx, q, nv)
	if err == driver.ErrSkip {
		s, perr := m.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if perr != nil {
			return 0, perr
		}
		defer s.Close()
		rows, err = s.(driver.StmtQueryContext).QueryContext(ctx, nv)
	}
	if err != nil {
		return 0, err
	}
	return m.drain(rows)
}

func (m *myConn) Begin(ctx context.Context) error    { _, err := m.Exec(ctx, "BEGIN"); return err }
func (m *myConn) Commit(ctx context.Context) error   { _, err := m.Exec(ctx, "COMMIT"); return err }
func (m *myConn) Rollback(ctx context.Context) error { _, err := m.Exec(ctx, "ROLLBACK"); return err }
func (m *myConn) Close() error                       { m.cancel.release(); return m.c.Close() }

// drain reads and discards every row, as a benchmark client must (the rows
// cross the wire either way), and counts them.
func (m *myConn) drain(rows driver.Rows) (int64, error) {
	if n := len(rows.Columns()); cap(m.dest) < n {
		m.dest = make([]driver.Value, n)
	}
	dest := m.dest[:len(rows.Columns())]
	var n int64
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			break
		}
		if err != nil {
			rows.Close()
			return n, err
		}
		n++
	}
	clear(dest) // drop references to row data
	return n, rows.Close()
}

type myStmt struct {
	c *myConn
	s driver.Stmt
}

func (s myStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	ctx, nv, err := s.c.begin(ctx, args)
	if err != nil {
		return 0, err
	}
	defer s.c.cancel.done()
	r, err := s.s.(driver.StmtExecContext).ExecContext(ctx, nv)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (s myStmt) Query(ctx context.Context, args ...any) (int64, error) {
	ctx, nv, err := s.c.begin(ctx, args)
	if err != nil {
		return 0, err
	}
	defer s.c.cancel.done()
	rows, err := s.s.(driver.StmtQueryContext).QueryContext(ctx, nv)
	if err != nil {
		return 0, err
	}
	return s.c.drain(rows)
}

func (s myStmt) ExecArgs(ctx context.Context, args []Arg) (int64, error) {
	return s.Exec(ctx, anyArgs(args)...)
}
func (s myStmt) QueryArgs(ctx context.Context, args []Arg) (int64, error) {
	return s.Query(ctx, anyArgs(args)...)
}

// myLean is a server-side prepared statement run by the lean path.
type myLean struct {
	c       *myConn
	id      uint32
	nparams int
	types   []byte // the parameter types the server has (see myWire.execute)
}

func (s *myLean) run(ctx context.Context, args []Arg) (affected, rows int64, err error) {
	if _, err := s.c.cancel.arm(ctx); err != nil {
		return 0, 0, err
	}
	affected, rows, err = s.c.w.execute(s.id, s.nparams, &s.types, args)
	s.c.cancel.done()
	return affected, rows, err
}

func (s *myLean) ExecArgs(ctx context.Context, args []Arg) (int64, error) {
	n, _, err := s.run(ctx, args)
	return n, err
}

func (s *myLean) QueryArgs(ctx context.Context, args []Arg) (int64, error) {
	_, n, err := s.run(ctx, args)
	return n, err
}

func (s *myLean) Exec(ctx context.Context, args ...any) (int64, error) {
	a, err := argsOf(s.c.w.args, args)
	s.c.w.args = a
	if err != nil {
		return 0, err
	}
	return s.ExecArgs(ctx, a)
}

func (s *myLean) Query(ctx context.Context, args ...any) (int64, error) {
	a, err := argsOf(s.c.w.args, args)
	s.c.w.args = a
	if err != nil {
		return 0, err
	}
	return s.QueryArgs(ctx, a)
}

// myText is a text statement of the lean path (--no-prepare): its text
// with the arguments written in, sent as COM_QUERY. An argument it cannot
// write (see template.appendText) sends the statement through the driver.
type myText struct {
	c *myConn
	t template
}

// build writes the statement with args into the request buffer; false
// when an argument is for the driver to write.
func (s *myText) build(args []Arg) ([]byte, bool, error) {
	if len(args) != s.t.n {
		return nil, false, fmt.Errorf("the statement takes %d arguments, got %d", s.t.n, len(args))
	}
	b, ok := s.t.appendText(MySQL, s.c.w.start(0x03), args)
	s.c.w.wbuf = b
	return b, ok, nil
}

func (s *myText) send(ctx context.Context, b []byte) (affected, rows int64, err error) {
	if _, err := s.c.cancel.arm(ctx); err != nil {
		return 0, 0, err
	}
	defer s.c.cancel.done()
	if err := s.c.w.send(b); err != nil {
		return 0, 0, err
	}
	return s.c.w.reply()
}

func (s *myText) ExecArgs(ctx context.Context, args []Arg) (int64, error) {
	b, ok, err := s.build(args)
	if err != nil {
		return 0, err
	}
	if !ok {
		return s.c.Exec(ctx, s.t.q, anyArgs(args)...)
	}
	n, _, err := s.send(ctx, b)
	return n, err
}

func (s *myText) QueryArgs(ctx context.Context, args []Arg) (int64, error) {
	b, ok, err := s.build(args)
	if err != nil {
		return 0, err
	}
	if !ok {
		return s.c.Query(ctx, s.t.q, anyArgs(args)...)
	}
	_, n, err := s.send(ctx, b)
	return n, err
}

func (s *myText) Exec(ctx context.Context, args ...any) (int64, error) {
	a, err := argsOf(s.c.w.args, args)
	s.c.w.args = a
	if err != nil {
		return 0, err
	}
	return s.ExecArgs(ctx, a)
}

func (s *myText) Query(ctx context.Context, args ...any) (int64, error) {
	a, err := argsOf(s.c.w.args, args)
	s.c.w.args = a
	if err != nil {
		return 0, err
	}
	return s.QueryArgs(ctx, a)
}

// textStmt runs its query as text each time (--no-prepare), through the
// driver.
type textStmt struct {
	c Conn
	q string
}

func (s textStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	return s.c.Exec(ctx, s.q, args...)
}
func (s textStmt) Query(ctx context.Context, args ...any) (int64, error) {
	return s.c.Query(ctx, s.q, args...)
}
func (s textStmt) ExecArgs(ctx context.Context, args []Arg) (int64, error) {
	return s.c.Exec(ctx, s.q, anyArgs(args)...)
}
func (s textStmt) QueryArgs(ctx context.Context, args []Arg) (int64, error) {
	return s.c.Query(ctx, s.q, anyArgs(args)...)
}

// ---- PostgreSQL: pgx's own connection -----------------------------------------

func dialPostgres(ctx context.Context, e Endpoint, o Options) (Conn, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cfg.User, cfg.Database, cfg.Port = e.User, e.Database, uint16(e.Port)
	cfg.Host = e.Host
	if !o.TCP && e.Socket != "" {
		cfg.Host = socketDir(e.Socket)
	}
	cfg.TLSConfig, cfg.Fallbacks = nil, nil
	cfg.ConnectTimeout = 10 * time.Second
	cfg.RuntimeParams["application_name"] = "qpslab"
	// Statements are prepared explicitly (Prepare); anything else is text.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	cfg.StatementCacheCapacity, cfg.DescriptionCacheCapacity = 0, 0
	p := &pgConn{noPrepare: o.NoPrepare}
	cfg.DialFunc = p.cancel.dialer(o.Transport)
	if p.c, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return nil, err
	}
	if !o.Driver {
		p.w = newPgWire(p.c.PgConn())
	}
	return p, nil
}

type pgConn struct {
	c         *pgx.Conn
	noPrepare bool
	n         int
	cancel    canceller
	w         *pgWire // the lean path; nil with Options.Driver
}

func (p *pgConn) Prepare(ctx context.Context, q string) (Stmt, error) {
	ctx, err := p.cancel.arm(ctx)
	if err != nil {
		return nil, err
	}
	defer p.cancel.done()
	switch {
	case p.noPrepare && p.w != nil && p.w.text:
		return &pgText{p, parseTemplate(Postgres, q)}, nil
	case p.noPrepare:
		return textStmt{p, q}, nil
	}
	p.n++
	name := "qpslab_" + strconv.Itoa(p.n)
	if p.w != nil {
		sd, err := p.c.PgConn().Prepare(ctx, name, q, nil)
		if err != nil {
			return nil, err
		}
		return &pgLean{p, name, len(sd.ParamOIDs)}, nil
	}
	sd, err := p.c.Prepare(ctx, name, q)
	if err != nil {
		return nil, err
	}
	return &pgStmt{p: p, sd: sd}, nil
}

func (p *pgConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	if p.w != nil && len(args) == 0 {
		if _, err := p.cancel.arm(ctx); err != nil {
			return 0, err
		}
		n, _, err := p.w.queryString(q)
		p.cancel.done()
		return n, err
	}
	ctx, err := p.cancel.arm(ctx)
	if err != nil {
		return 0, err
	}
	defer p.cancel.done()
	tag, err := p.c.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (p *pgConn) Query(ctx context.Context, q string, args ...any) (int64, error) {
	if p.w != nil && len(args) == 0 {
		if _, err := p.cancel.arm(ctx); err != nil {
			return 0, err
		}
		_, n, err := p.w.queryString(q)
		p.cancel.done()
		return n, err
	}
	ctx, err := p.cancel.arm(ctx)
	if err != nil {
		return 0, err
	}
	defer p.cancel.done()
	rows, err := p.c.Query(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return drainPg(rows)
}

func drainPg(rows pgx.Rows) (int64, error) {
	var n int64
	for rows.Next() {
		n++
	}
	rows.Close()
	return n, rows.Err()
}

func (p *pgConn) Begin(ctx context.Context) error    { _, err := p.Exec(ctx, "BEGIN"); return err }
func (p *pgConn) Commit(ctx context.Context) error   { _, err := p.Exec(ctx, "COMMIT"); return err }
func (p *pgConn) Rollback(ctx context.Context) error { _, err := p.Exec(ctx, "ROLLBACK"); return err }
func (p *pgConn) Close() error {
	p.cancel.release()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.c.Close(ctx)
}

// pgStmt runs a prepared statement through the extended protocol, binding
// arguments in the formats the server described at Prepare.
type pgStmt struct {
	p  *pgConn
	sd *pgconn.StatementDescription
}

func (s *pgStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	ctx, err := s.p.cancel.arm(ctx)
	if err != nil {
		return 0, err
	}
	defer s.p.cancel.done()
	tag, err := s.p.c.Exec(ctx, s.sd.Name, args...)
	return tag.RowsAffected(), err
}

func (s *pgStmt) Query(ctx context.Context, args ...any) (int64, error) {
	ctx, err := s.p.cancel.arm(ctx)
	if err != nil {
		return 0, err
	}
	defer s.p.cancel.done()
	rows, err := s.p.c.Query(ctx, s.sd.Name, args...)
	if err != nil {
		return 0, err
	}
	return drainPg(rows)
}

func (s *pgStmt) ExecArgs(ctx context.Context, args []Arg) (int64, error) {
	return s.Exec(ctx, anyArgs(args)...)
}
func (s *pgStmt) QueryArgs(ctx context.Context, args []Arg) (int64, error) {
	return s.Query(ctx, anyArgs(args)...)
}

// pgLean is a server-side prepared statement run by the lean path.
type pgLean struct {
	p       *pgConn
	name    string
	nparams int
}

func (s *pgLean) run(ctx context.Context, args []Arg) (affected, rows int64, err error) {
	if _, err := s.p.cancel.arm(ctx); err != nil {
		return 0, 0, err
	}
	affected, rows, err = s.p.w.execute(s.name, s.nparams, args)
	s.p.cancel.done()
	return affected, rows, err
}

func (s *pgLean) ExecArgs(ctx context.Context, args []Arg) (int64, error) {
	n, _, err := s.run(ctx, args)
	return n, err
}

func (s *pgLean) QueryArgs(ctx context.Context, args []Arg) (int64, error) {
	_, n, err := s.run(ctx, args)
	return n, err
}

func (s *pgLean) Exec(ctx context.Context, args ...any) (int64, error) {
	a, err := argsOf(s.p.w.args, args)
	s.p.w.args = a
	if err != nil {
		return 0, err
	}
	return s.ExecArgs(ctx, a)
}

func (s *pgLean) Query(ctx context.Context, args ...any) (int64, error) {
	a, err := argsOf(s.p.w.args, args)
	s.p.w.args = a
	if err != nil {
		return 0, err
	}
	return s.QueryArgs(ctx, a)
}

// pgText is a text statement of the lean path (--no-prepare): its text
// with the arguments written in, sent as a simple-protocol Query. An
// argument it cannot write (see template.appendText) sends the statement
// through pgx.
type pgText struct {
	p *pgConn
	t template
}

func (s *pgText) build(args []Arg) ([]byte, bool, error) {
	if len(args) != s.t.n {
		return nil, false, fmt.Errorf("the statement takes %d arguments, got %d", s.t.n, len(args))
	}
	b, ok := s.t.appendText(Postgres, s.p.w.buf[:0], args)
	s.p.w.buf = b
	return b, ok, nil
}

func (s *pgText) send(ctx context.Context, b []byte) (affected, rows int64, err error) {
	if _, err := s.p.cancel.arm(ctx); err != nil {
		return 0, 0, err
	}
	defer s.p.cancel.done()
	return s.p.w.query(b)
}

func (s *pgText) ExecArgs(ctx context.Context, args []Arg) (int64, error) {
	b, ok, err := s.build(args)
	if err != nil {
		return 0, err
	}
	if !ok {
		return s.p.Exec(ctx, s.t.q, anyArgs(args)...)
	}
	n, _, err := s.send(ctx, b)
	return n, err
}

func (s *pgText) QueryArgs(ctx context.Context, args []Arg) (int64, error) {
	b, ok, err := s.build(args)
	if err != nil {
		return 0, err
	}
	if !ok {
		return s.p.Query(ctx, s.t.q, anyArgs(args)...)
	}
	_, n, err := s.send(ctx, b)
	return n, err
}

func (s *pgText) Exec(ctx context.Context, args ...any) (int64, error) {
	a, err := argsOf(s.p.w.args, args)
	s.p.w.args = a
	if err != nil {
		return 0, err
	}
	return s.ExecArgs(ctx, a)
}

func (s *pgText) Query(ctx context.Context, args ...any) (int64, error) {
	a, err := argsOf(s.p.w.args, args)
	s.p.w.args = a
	if err != nil {
		return 0, err
	}
	return s.QueryArgs(ctx, a)
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
