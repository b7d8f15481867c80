package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DamagedError is the one error of a SQLite store whose file is damaged:
// found by a quick check (Check), or by a read or a write that met a
// malformed page (SQLITE_CORRUPT, SQLITE_NOTADB, from any query of any
// surface: openSQLite's connections say so in one place). It names the
// file and the way back; nothing is answered from such a store, so no
// answer is silently partial.
type DamagedError struct {
	Where string
	// Check is what the quick check found, nil when a read met the damage
	// (qpslab store check says more then).
	Check *Check
	// Results is the folder of the results files qpslab run wrote
	// (<home>/results), for the way back; "" names it so.
	Results string
	Err     error // the error that met the damage, if a read did
}

func (e *DamagedError) Unwrap() error { return e.Err }

func (e *DamagedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store %s is damaged", e.Where)
	switch {
	case e.Check != nil && e.Check.IndexOnly:
		fmt.Fprintf(&b, " (SQLite's quick check: %s): only its indexes (%s), which are rebuilt from the tables: nothing is lost; run qpslab store check --reindex",
			e.Check.Summary(), strings.Join(e.Check.Indexes, ", "))
		return b.String()
	case e.Check != nil:
		fmt.Fprintf(&b, " (SQLite's quick check: %s), not in its indexes only: ", e.Check.Summary())
	default:
		fmt.Fprintf(&b, " (%v): qpslab store check says where; where only indexes are, qpslab store check --reindex rebuilds them and nothing is lost; otherwise ", e.Err)
	}
	results := e.Results
	if results == "" {
		results = "<home>/results"
	}
	fmt.Fprintf(&b, "copy what still reads into a new store with qpslab store check --salvage %s.salvaged (or SQLite's recover: sqlite3 %s .recover), then use --store %s.salvaged; "+
		"or start a new store and qpslab import results %s/*.json, which brings back the runs qpslab ran but not imports, hidden runs, tokens, sessions or bisections",
		e.Where, e.Where, e.Where, results)
	return b.String()
}

// Damaged says whether err is a damaged store's (DamagedError).
func Damaged(err error) (*DamagedError, bool) {
	var d *DamagedError
	return d, errors.As(err, &d)
}

// openSQLite opens the SQLite file path through modernc's driver, its
// errors of a damaged file turned into *DamagedError (damage).
func openSQLite(dsn, path string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(&damageConnector{Connector: c, where: path}), nil
}

// damage turns an error of a damaged file into a *DamagedError; any other
// error (io.EOF, driver.ErrBadConn, a busy store) is returned as it is.
func damage(where string, err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	if code := se.Code() & 0xff; code != sqlite3.SQLITE_CORRUPT && code != sqlite3.SQLITE_NOTADB {
		return err
	}
	return &DamagedError{Where: where, Err: err}
}

// The wrappers below hand every call on to modernc's connection,
// statement, rows and transaction, and pass each error through damage:
// database/sql has no hook for a driver's errors, and no library in the
// module wraps one (sqlmw, sqlhooks are not), so the few lines are here.

type damageConnector struct {
	driver.Connector
	where string
}

func (c *damageConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, damage(c.where, err)
	}
	return &damageConn{inner: cn, where: c.where}, nil
}

// innerConn is what modernc's connection is.
type innerConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

var (
	_ innerConn               = (*damageConn)(nil)
	_ driver.Rows             = (*damageRows)(nil)
	_ driver.StmtExecContext  = (*damageStmt)(nil)
	_ driver.StmtQueryContext = (*damageStmt)(nil)
)

type damageConn struct {
	inner driver.Conn
	where string
}

func (c *damageConn) fail(err error) error { return damage(c.where, err) }

func (c *damageConn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

func (c *damageConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	st, err := c.inner.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, c.fail(err)
	}
	return &damageStmt{Stmt: st, c: c}, nil
}

func (c *damageConn) Close() error { return c.inner.Close() }

func (c *damageConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *damageConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	tx, err := c.inner.(driver.ConnBeginTx).BeginTx(ctx, o)
	if err != nil {
		return nil, c.fail(err)
	}
	return &damageTx{tx: tx, c: c}, nil
}

func (c *damageConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.inner.(driver.ExecerContext).ExecContext(ctx, q, args)
	return r, c.fail(err)
}

func (c *damageConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.inner.(driver.QueryerContext).QueryContext(ctx, q, args)
	if err != nil {
		return nil, c.fail(err)
	}
	return &damageRows{Rows: r, c: c}, nil
}

func (c *damageConn) Ping(ctx context.Context) error {
	return c.fail(c.inner.(driver.Pinger).Ping(ctx))
}

func (c *damageConn) ResetSession(ctx context.Context) error {
	return c.inner.(driver.SessionResetter).ResetSession(ctx)
}

func (c *damageConn) IsValid() bool { return c.inner.(driver.Validator).IsValid() }

type damageStmt struct {
	driver.Stmt
	c *damageConn
}

func (s *damageStmt) Exec(args []driver.Value) (driver.Result, error) {
	r, err := s.Stmt.Exec(args) //nolint:staticcheck // database/sql calls ExecContext; this completes driver.Stmt
	return r, s.c.fail(err)
}

func (s *damageStmt) Query(args []driver.Value) (driver.Rows, error) {
	r, err := s.Stmt.Query(args) //nolint:staticcheck // as Exec
	if err != nil {
		return nil, s.c.fail(err)
	}
	return &damageRows{Rows: r, c: s.c}, nil
}

func (s *damageStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	r, err := s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	return r, s.c.fail(err)
}

func (s *damageStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	r, err := s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, s.c.fail(err)
	}
	return &damageRows{Rows: r, c: s.c}, nil
}

type damageRows struct {
	driver.Rows
	c *damageConn
}

func (r *damageRows) Next(dest []driver.Value) error { return r.c.fail(r.Rows.Next(dest)) }

type damageTx struct {
	tx driver.Tx
	c  *damageConn
}

func (t *damageTx) Commit() error   { return t.c.fail(t.tx.Commit()) }
func (t *damageTx) Rollback() error { return t.c.fail(t.tx.Rollback()) }
