package client

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
)

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
	return runText(ctx, m, q, params{vals: args}, false)
}

func (m *myConn) Query(ctx context.Context, q string, args ...any) (int64, error) {
	return runText(ctx, m, q, params{vals: args}, true)
}

func (m *myConn) armed() *canceller { return &m.cancel }

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
