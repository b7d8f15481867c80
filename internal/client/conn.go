package client

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
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
}

// Dial opens one dedicated connection to e.
func Dial(ctx context.Context, e Endpoint, o Options) (Conn, error) {
	switch e.Protocol {
	case MySQL:
		return dialMySQL(ctx, e, o)
	case Postgres:
		return dialPostgres(ctx, e, o)
	}
	return nil, fmt.Errorf("unknown protocol %q", e.Protocol)
}

// ---- MySQL: the driver's connection used directly, below database/sql ------

var registerOnce sync.Once

const blockingNetUnix, blockingNetTCP = "qpslab-blocking-unix", "qpslab-blocking-tcp"

func dialMySQL(ctx context.Context, e Endpoint, o Options) (Conn, error) {
	registerOnce.Do(func() {
		mysql.RegisterDialContext(blockingNetUnix, func(ctx context.Context, addr string) (net.Conn, error) {
			return dialBlocking(ctx, "unix", addr)
		})
		mysql.RegisterDialContext(blockingNetTCP, func(ctx context.Context, addr string) (net.Conn, error) {
			return dialBlocking(ctx, "tcp", addr)
		})
	})
	c := mysql.NewConfig()
	c.User, c.DBName = e.User, e.Database
	c.Timeout = 10 * time.Second
	c.InterpolateParams = o.NoPrepare
	if o.TCP || e.Socket == "" {
		c.Net, c.Addr = "tcp", net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
		if o.Transport == Blocking {
			c.Net = blockingNetTCP
		}
	} else {
		c.Net, c.Addr = "unix", e.Socket
		if o.Transport == Blocking {
			c.Net = blockingNetUnix
		}
	}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	dc, err := conn.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &myConn{c: dc, noPrepare: o.NoPrepare}, nil
}

type myConn struct {
	c         driver.Conn
	noPrepare bool
}

// named converts arguments the way database/sql would (int to int64, …),
// through the driver's own checker.
func (m *myConn) named(args []any) ([]driver.NamedValue, error) {
	nv := make([]driver.NamedValue, len(args))
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

func (m *myConn) Prepare(ctx context.Context, q string) (Stmt, error) {
	if m.noPrepare {
		return textStmt{m, q}, nil
	}
	s, err := m.c.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return myStmt{m, s}, nil
}

func (m *myConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	nv, err := m.named(args)
	if err != nil {
		return 0, err
	}
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
	nv, err := m.named(args)
	if err != nil {
		return 0, err
	}
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
	return drain(rows)
}

func (m *myConn) Begin(ctx context.Context) error    { _, err := m.Exec(ctx, "BEGIN"); return err }
func (m *myConn) Commit(ctx context.Context) error   { _, err := m.Exec(ctx, "COMMIT"); return err }
func (m *myConn) Rollback(ctx context.Context) error { _, err := m.Exec(ctx, "ROLLBACK"); return err }
func (m *myConn) Close() error                       { return m.c.Close() }

// drain reads and discards every row, as a benchmark client must (the rows
// cross the wire either way), and counts them.
func drain(rows driver.Rows) (int64, error) {
	dest := make([]driver.Value, len(rows.Columns()))
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
	return n, rows.Close()
}

type myStmt struct {
	c *myConn
	s driver.Stmt
}

func (s myStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	nv, err := s.c.named(args)
	if err != nil {
		return 0, err
	}
	r, err := s.s.(driver.StmtExecContext).ExecContext(ctx, nv)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (s myStmt) Query(ctx context.Context, args ...any) (int64, error) {
	nv, err := s.c.named(args)
	if err != nil {
		return 0, err
	}
	rows, err := s.s.(driver.StmtQueryContext).QueryContext(ctx, nv)
	if err != nil {
		return 0, err
	}
	return drain(rows)
}

// textStmt runs its query as text each time (--no-prepare).
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
	if o.Transport == Blocking {
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialBlocking(ctx, network, addr)
		}
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &pgConn{c: c, noPrepare: o.NoPrepare}, nil
}

type pgConn struct {
	c         *pgx.Conn
	noPrepare bool
	n         int
}

func (p *pgConn) Prepare(ctx context.Context, q string) (Stmt, error) {
	if p.noPrepare {
		return textStmt{p, q}, nil
	}
	p.n++
	name := "qpslab_" + strconv.Itoa(p.n)
	sd, err := p.c.Prepare(ctx, name, q)
	if err != nil {
		return nil, err
	}
	return &pgStmt{c: p.c, sd: sd}, nil
}

func (p *pgConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := p.c.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (p *pgConn) Query(ctx context.Context, q string, args ...any) (int64, error) {
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

func (p *pgConn) Begin(ctx context.Context) error    { _, err := p.c.Exec(ctx, "BEGIN"); return err }
func (p *pgConn) Commit(ctx context.Context) error   { _, err := p.c.Exec(ctx, "COMMIT"); return err }
func (p *pgConn) Rollback(ctx context.Context) error { _, err := p.c.Exec(ctx, "ROLLBACK"); return err }
func (p *pgConn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.c.Close(ctx)
}

// pgStmt runs a prepared statement through the extended protocol, binding
// arguments in the formats the server described at Prepare.
type pgStmt struct {
	c  *pgx.Conn
	sd *pgconn.StatementDescription
}

func (s *pgStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	tag, err := s.c.Exec(ctx, s.sd.Name, args...)
	return tag.RowsAffected(), err
}

func (s *pgStmt) Query(ctx context.Context, args ...any) (int64, error) {
	rows, err := s.c.Query(ctx, s.sd.Name, args...)
	if err != nil {
		return 0, err
	}
	return drainPg(rows)
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
