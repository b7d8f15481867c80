package sysbench

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/qpslab/qpslab/internal/client"
)

// call is one thing a worker asked of its connection.
type call struct {
	op   string // prepare, stmt-query, stmt-exec, query, exec, begin, commit, rollback
	q    string
	args []any
	rows int64
}

// recConn records every call. With inner set it passes them on to a real
// connection; without, it answers every statement with rows rows.
type recConn struct {
	inner  client.Conn
	rows   int64
	failAt int // fail the failAt-th statement run (not prepare), 1-based; 0: never

	mu    sync.Mutex
	calls []call
	n     int
}

var errFake = errors.New("fake statement failure")

func (c *recConn) record(op, q string, args []any, run func() (int64, error)) (int64, error) {
	c.mu.Lock()
	c.n++
	fail := op != "prepare" && op != "rollback" && c.failAt > 0 && c.n == c.failAt
	c.mu.Unlock()
	var n int64
	var err error
	switch {
	case fail:
		err = errFake
	case c.inner != nil:
		n, err = run()
	case op != "prepare" && op != "begin" && op != "commit" && op != "rollback":
		n = c.rows
	}
	c.mu.Lock()
	c.calls = append(c.calls, call{op, q, slices.Clone(args), n})
	c.mu.Unlock()
	return n, err
}

// take returns the calls so far and forgets them.
func (c *recConn) take() []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls, c.n = nil, 0
	return out
}

func (c *recConn) Prepare(ctx context.Context, q string) (client.Stmt, error) {
	s := &recStmt{c: c, q: q}
	_, err := c.record("prepare", q, nil, func() (int64, error) {
		var err error
		s.inner, err = c.inner.Prepare(ctx, q)
		return 0, err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (c *recConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return c.record("exec", q, args, func() (int64, error) { return c.inner.Exec(ctx, q, args...) })
}

func (c *recConn) Query(ctx context.Context, q string, args ...any) (int64, error) {
	return c.record("query", q, args, func() (int64, error) { return c.inner.Query(ctx, q, args...) })
}

func (c *recConn) Begin(ctx context.Context) error {
	_, err := c.record("begin", "BEGIN", nil, func() (int64, error) { return 0, c.inner.Begin(ctx) })
	return err
}

func (c *recConn) Commit(ctx context.Context) error {
	_, err := c.record("commit", "COMMIT", nil, func() (int64, error) { return 0, c.inner.Commit(ctx) })
	return err
}

func (c *recConn) Rollback(ctx context.Context) error {
	_, err := c.record("rollback", "ROLLBACK", nil, func() (int64, error) { return 0, c.inner.Rollback(ctx) })
	return err
}

func (c *recConn) Close() error {
	if c.inner != nil {
		return c.inner.Close()
	}
	return nil
}

type recStmt struct {
	c     *recConn
	q     string
	inner client.Stmt
}

func (s *recStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	return s.c.record("stmt-exec", s.q, args, func() (int64, error) { return s.inner.Exec(ctx, args...) })
}

func (s *recStmt) Query(ctx context.Context, args ...any) (int64, error) {
	return s.c.record("stmt-query", s.q, args, func() (int64, error) { return s.inner.Query(ctx, args...) })
}

func (s *recStmt) ExecArgs(ctx context.Context, args []client.Arg) (int64, error) {
	return s.c.record("stmt-exec", s.q, values(args), func() (int64, error) { return s.inner.ExecArgs(ctx, args) })
}

func (s *recStmt) QueryArgs(ctx context.Context, args []client.Arg) (int64, error) {
	return s.c.record("stmt-query", s.q, values(args), func() (int64, error) { return s.inner.QueryArgs(ctx, args) })
}

// QueryEach passes the rows on from a real connection; without one it
// answers with a count and no rows to hand each (sysbench reads none).
func (s *recStmt) QueryEach(ctx context.Context, args []client.Arg, each func(*client.Values)) (int64, error) {
	return s.c.record("stmt-query", s.q, values(args), func() (int64, error) { return s.inner.QueryEach(ctx, args, each) })
}

// values are args as the values a driver takes (a Bytes argument as a
// string).
func values(args []client.Arg) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value()
	}
	return out
}

// statements counts the calls that are statements sent to the server
// (sysbench's queries): everything but prepare.
func statements(calls []call) int {
	n := 0
	for _, c := range calls {
		if c.op != "prepare" {
			n++
		}
	}
	return n
}

// ints returns the int64 arguments of a call.
func ints(c call) []int64 {
	var out []int64
	for _, a := range c.args {
		if v, ok := a.(int64); ok {
			out = append(out, v)
		}
	}
	return out
}

func distinct(v []int64) int {
	m := map[int64]bool{}
	for _, x := range v {
		m[x] = true
	}
	return len(m)
}

// allTests is every distinct test of both orders, in 2024 order then HEAD's
// additions, with delete and insert last.
func allTests() []Test {
	var out, last []Test
	seen := map[string]bool{}
	for _, t := range append(Order2024(), OrderHEAD()...) {
		if seen[t.Label()] {
			continue
		}
		seen[t.Label()] = true
		if t.Name == "delete" || t.Name == "insert" {
			last = append(last, t)
			continue
		}
		out = append(out, t)
	}
	return append(out, last...)
}
