package client

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

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
	return runText(ctx, p, q, params{vals: args}, false)
}

func (p *pgConn) Query(ctx context.Context, q string, args ...any) (int64, error) {
	return runText(ctx, p, q, params{vals: args}, true)
}

func (p *pgConn) armed() *canceller { return &p.cancel }

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
