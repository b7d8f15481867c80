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

// ---- MySQL: the driver's connection used directly, below database/sql ------

func dialMySQL(ctx context.Context, e Endpoint, o Options) (Conn, error) {
	m := &myConn{noPrepare: o.NoPrepare}
	c := mysql.NewConfig()
	c.User, c.DBName = e.User, e.Database
	// Over TCP without TLS, the driver encrypts a caching_sha2_password
	// with the public key it asks the server for.
	c.Passwd = e.Password
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

type myConn struct {
	c         driver.Conn
	noPrepare bool
	cancel    canceller
	nv        []driver.NamedValue // argument buffer, reused
	dest      []driver.Value      // row buffer, reused
	vals      Values              // QueryEach's row on the driver's path, reused
	w         *myWire             // the lean path; nil with Options.Driver
}

// named converts arguments the way database/sql would (int to int64, …),
// through the driver's own checker.
func (m *myConn) named(p params) ([]driver.NamedValue, error) {
	// One goroutine uses a connection, and the driver is done with the
	// arguments when the call returns: reuse one slice.
	n := p.len()
	if cap(m.nv) < n {
		m.nv = make([]driver.NamedValue, n)
	}
	nv := m.nv[:n]
	chk, _ := m.c.(driver.NamedValueChecker)
	for i := range nv {
		a := p.value(i)
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

func (m *myConn) Prepare(ctx context.Context, q string) (Stmt, error) {
	ctx, err := m.cancel.arm(ctx)
	if err != nil {
		return nil, err
	}
	defer m.cancel.done()
	switch {
	case m.noPrepare && m.w != nil:
		return &stmt{cancel: &m.cancel, buf: &m.w.args, k: &leanText{m.w, m, MySQL, parseTemplate(MySQL, q)}}, nil
	case m.noPrepare:
		return &stmt{cancel: &m.cancel, k: driverText{m, q}}, nil
	case m.w != nil:
		k := &myLean{w: m.w}
		if k.id, k.nparams, err = m.w.prepare(q, &k.cols); err != nil {
			return nil, err
		}
		k.rows = myRows{binary: true, cols: &k.cols, v: &m.w.vals}
		return &stmt{cancel: &m.cancel, buf: &m.w.args, k: k}, nil
	}
	s, err := m.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return &stmt{cancel: &m.cancel, k: myPrepared{m, s}}, nil
}

func (m *myConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return runText(ctx, &m.cancel, m, q, params{vals: args}, false)
}

func (m *myConn) Query(ctx context.Context, q string, args ...any) (int64, error) {
	return runText(ctx, &m.cancel, m, q, params{vals: args}, true)
}

// text runs q as a text statement: on the lean path when it has no
// arguments, else through the driver, which writes them in (with
// NoPrepare) or prepares q for them.
func (m *myConn) text(ctx context.Context, q string, p params, query bool) (int64, error) {
	if m.w != nil && p.empty() {
		affected, rows, err := m.w.queryString(q)
		return pick(query, affected, rows, err)
	}
	nv, err := m.named(p)
	if err != nil {
		return 0, err
	}
	var res driver.Result
	var rows driver.Rows
	if query {
		rows, err = m.c.(driver.QueryerContext).QueryContext(ctx, q, nv)
	} else {
		res, err = m.c.(driver.ExecerContext).ExecContext(ctx, q, nv)
	}
	if err == driver.ErrSkip { // arguments without client-side interpolation
		s, perr := m.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if perr != nil {
			return 0, perr
		}
		defer s.Close()
		return myPrepared{m, s}.run(ctx, p, query)
	}
	if err != nil {
		return 0, err
	}
	if query {
		return m.drain(rows)
	}
	return res.RowsAffected()
}

// textEach runs q as a text statement through the driver and hands its
// rows to each (the lean path's text statements are leanText's).
func (m *myConn) textEach(ctx context.Context, q string, p params, each func(*Values)) (int64, error) {
	nv, err := m.named(p)
	if err != nil {
		return 0, err
	}
	rows, err := m.c.(driver.QueryerContext).QueryContext(ctx, q, nv)
	if err == driver.ErrSkip { // arguments without client-side interpolation
		s, perr := m.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if perr != nil {
			return 0, perr
		}
		defer s.Close()
		return myPrepared{m, s}.each(ctx, p, each)
	}
	if err != nil {
		return 0, err
	}
	return m.eachRow(rows, each)
}

func (m *myConn) Begin(ctx context.Context) error    { _, err := m.Exec(ctx, "BEGIN"); return err }
func (m *myConn) Commit(ctx context.Context) error   { _, err := m.Exec(ctx, "COMMIT"); return err }
func (m *myConn) Rollback(ctx context.Context) error { _, err := m.Exec(ctx, "ROLLBACK"); return err }
func (m *myConn) Close() error                       { m.cancel.release(); return m.c.Close() }

// drain reads and discards every row, as a benchmark client must (the rows
// cross the wire either way), and counts them.
func (m *myConn) drain(rows driver.Rows) (int64, error) { return m.eachRow(rows, nil) }

// eachRow reads every row, as drain does, and hands each to each as text
// (nil: to none).
func (m *myConn) eachRow(rows driver.Rows, each func(*Values)) (int64, error) {
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
			clear(dest)
			clear(m.vals.cols[:cap(m.vals.cols)])
			return n, err
		}
		n++
		if each != nil {
			m.vals.driverRow(dest)
			each(&m.vals)
		}
	}
	clear(dest) // drop references to row data
	clear(m.vals.cols[:cap(m.vals.cols)])
	return n, rows.Close()
}

// myPrepared is a server-side prepared statement run by the driver
// (Options.Driver).
type myPrepared struct {
	c *myConn
	s driver.Stmt
}

func (k myPrepared) run(ctx context.Context, p params, query bool) (int64, error) {
	nv, err := k.c.named(p)
	if err != nil {
		return 0, err
	}
	if query {
		rows, err := k.s.(driver.StmtQueryContext).QueryContext(ctx, nv)
		if err != nil {
			return 0, err
		}
		return k.c.drain(rows)
	}
	r, err := k.s.(driver.StmtExecContext).ExecContext(ctx, nv)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (k myPrepared) each(ctx context.Context, p params, each func(*Values)) (int64, error) {
	nv, err := k.c.named(p)
	if err != nil {
		return 0, err
	}
	rows, err := k.s.(driver.StmtQueryContext).QueryContext(ctx, nv)
	if err != nil {
		return 0, err
	}
	return k.c.eachRow(rows, each)
}

// myLean is a server-side prepared statement run by the lean path.
type myLean struct {
	w       *myWire
	id      uint32
	nparams int
	types   []byte  // the parameter types the server has (see myWire.execute)
	cols    []myCol // the result's columns, from the prepare or the last execution that sent them
	rows    myRows  // where the rows go: kept columns only, or each row too (QueryEach)
}

func (k *myLean) run(_ context.Context, p params, query bool) (int64, error) {
	args, err := p.typed()
	if err != nil {
		return 0, err
	}
	affected, rows, err := k.w.execute(k.id, k.nparams, &k.types, args, &k.rows)
	return pick(query, affected, rows, err)
}

func (k *myLean) each(_ context.Context, p params, each func(*Values)) (int64, error) {
	args, err := p.typed()
	if err != nil {
		return 0, err
	}
	k.rows.each = each
	defer func() { k.rows.each = nil }() // even when each panics: no stale callback for QueryArgs
	_, rows, err := k.w.execute(k.id, k.nparams, &k.types, args, &k.rows)
	return rows, err
}

// textRequest begins a text statement (COM_QUERY), to which the caller
// appends the text.
func (m *myWire) textRequest() []byte { return m.start(0x03) }

// keepText keeps b, a request textRequest began, as the request buffer.
func (m *myWire) keepText(b []byte) { m.wbuf = b }

// sendText sends the text statement b, which textRequest began.
func (m *myWire) sendText(b []byte) (affected, rows int64, err error) {
	if err := m.send(b); err != nil {
		return 0, 0, err
	}
	return m.reply()
}

// sendTextEach sends the text statement b and hands its rows to each.
func (m *myWire) sendTextEach(b []byte, each func(*Values)) (int64, error) {
	if err := m.send(b); err != nil {
		return 0, err
	}
	m.trows = myRows{cols: &m.tcols, v: &m.vals, each: each}
	_, rows, err := m.result(&m.trows)
	m.trows.each = nil
	return rows, err
}

// ---- PostgreSQL: pgx's own connection -----------------------------------------

func dialPostgres(ctx context.Context, e Endpoint, o Options) (Conn, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cfg.User, cfg.Database, cfg.Port = e.User, e.Database, uint16(e.Port)
	if e.Password != "" {
		cfg.Password = e.Password
	}
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
	vals      Values  // QueryEach's row on pgx's path: its raw values, referenced
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
		return &stmt{cancel: &p.cancel, buf: &p.w.args, k: &leanText{p.w, p, Postgres, parseTemplate(Postgres, q)}}, nil
	case p.noPrepare:
		return &stmt{cancel: &p.cancel, k: driverText{p, q}}, nil
	}
	p.n++
	name := "qpslab_" + strconv.Itoa(p.n)
	if p.w != nil {
		sd, err := p.c.PgConn().Prepare(ctx, name, q, nil)
		if err != nil {
			return nil, err
		}
		return &stmt{cancel: &p.cancel, buf: &p.w.args, k: &pgLean{p.w, name, len(sd.ParamOIDs)}}, nil
	}
	sd, err := p.c.Prepare(ctx, name, q)
	if err != nil {
		return nil, err
	}
	return &stmt{cancel: &p.cancel, k: pgPrepared{p, sd.Name}}, nil
}

func (p *pgConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return runText(ctx, &p.cancel, p, q, params{vals: args}, false)
}

func (p *pgConn) Query(ctx context.Context, q string, args ...any) (int64, error) {
	return runText(ctx, &p.cancel, p, q, params{vals: args}, true)
}

// text runs q as a text statement: on the lean path when it has no
// arguments, else through pgx, which takes a statement's text where it
// takes a prepared statement's name.
func (p *pgConn) text(ctx context.Context, q string, a params, query bool) (int64, error) {
	if p.w != nil && a.empty() {
		affected, rows, err := p.w.queryString(q)
		return pick(query, affected, rows, err)
	}
	return pgPrepared{p, q}.run(ctx, a, query)
}

// textEach runs q as a text statement through pgx and hands its rows to
// each (the lean path's text statements are leanText's).
func (p *pgConn) textEach(ctx context.Context, q string, a params, each func(*Values)) (int64, error) {
	return pgPrepared{p, q}.each(ctx, a, each)
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

// pgPrepared runs a statement through pgx: a prepared statement by its
// name (Options.Driver), binding arguments in the formats the server
// described at Prepare, or a text statement with arguments.
type pgPrepared struct {
	p   *pgConn
	sql string // the prepared statement's name, or the statement's text
}

func (k pgPrepared) run(ctx context.Context, a params, query bool) (int64, error) {
	if query {
		rows, err := k.p.c.Query(ctx, k.sql, a.values()...)
		if err != nil {
			return 0, err
		}
		return drainPg(rows)
	}
	tag, err := k.p.c.Exec(ctx, k.sql, a.values()...)
	return tag.RowsAffected(), err
}

// textResults asks pgx for every column in the text format, the server's
// own text (a prepared statement's are otherwise binary where pgx knows
// the type).
var textResults = pgx.QueryResultFormats{pgx.TextFormatCode}

func (k pgPrepared) each(ctx context.Context, a params, each func(*Values)) (int64, error) {
	args := append([]any{textResults}, a.values()...)
	rows, err := k.p.c.Query(ctx, k.sql, args...)
	if err != nil {
		return 0, err
	}
	var n int64
	for rows.Next() {
		n++
		k.p.vals.cols = rows.RawValues()
		each(&k.p.vals)
	}
	k.p.vals.cols = nil
	rows.Close()
	return n, rows.Err()
}

// pgLean is a server-side prepared statement run by the lean path.
type pgLean struct {
	w       *pgWire
	name    string
	nparams int
}

func (k *pgLean) run(_ context.Context, p params, query bool) (int64, error) {
	args, err := p.typed()
	if err != nil {
		return 0, err
	}
	affected, rows, err := k.w.execute(k.name, k.nparams, args, nil)
	return pick(query, affected, rows, err)
}

func (k *pgLean) each(_ context.Context, p params, each func(*Values)) (int64, error) {
	args, err := p.typed()
	if err != nil {
		return 0, err
	}
	_, rows, err := k.w.execute(k.name, k.nparams, args, each)
	return rows, err
}

// textRequest begins a text statement: its text, which query wraps in a
// Query message.
func (p *pgWire) textRequest() []byte { return p.buf[:0] }

// keepText keeps b, a request textRequest began, as the text buffer.
func (p *pgWire) keepText(b []byte) { p.buf = b }

// sendText sends the text statement b, which textRequest began.
func (p *pgWire) sendText(b []byte) (affected, rows int64, err error) { return p.query(b, nil) }

// sendTextEach sends the text statement b and hands its rows to each.
func (p *pgWire) sendTextEach(b []byte, each func(*Values)) (int64, error) {
	_, rows, err := p.query(b, each)
	return rows, err
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
	text(ctx context.Context, q string, p params, query bool) (int64, error)
	textEach(ctx context.Context, q string, p params, each func(*Values)) (int64, error)
}

// runText is a connection's Exec and Query: arm the cancellation, run q.
func runText(ctx context.Context, c *canceller, t texter, q string, p params, query bool) (int64, error) {
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
