package client_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpslab/qpslab/internal/client"
)

// placeholders returns the protocol's i-th placeholder (1-based).
func placeholder(p client.Protocol, i int) string {
	if p == client.Postgres {
		return "$" + strconv.Itoa(i)
	}
	return "?"
}

// marks returns n placeholders joined by ", ".
func marks(p client.Protocol, n int) string {
	var s []string
	for i := 1; i <= n; i++ {
		s = append(s, placeholder(p, i))
	}
	return strings.Join(s, ", ")
}

// script runs the same statements on c and returns what each answered (rows
// returned or affected, or the error's class), then the table's rows as
// text. The lean path and the drivers' must give the same.
func script(t *testing.T, ep client.Endpoint, c client.Conn) []string {
	t.Helper()
	ctx := context.Background()
	p := ep.Protocol
	var out []string
	note := func(what string, n int64, err error) {
		switch {
		case err == nil:
			out = append(out, fmt.Sprintf("%s: %d", what, n))
		case client.Retryable(err):
			out = append(out, what+": retryable error")
		default:
			var me *mysql.MySQLError
			var pe *pgconn.PgError
			switch {
			case errors.As(err, &me):
				out = append(out, fmt.Sprintf("%s: error %d", what, me.Number))
			case errors.As(err, &pe):
				out = append(out, fmt.Sprintf("%s: error %s", what, pe.Code))
			default:
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	for _, q := range []string{"DROP TABLE IF EXISTS lm", "CREATE TABLE lm (id INT PRIMARY KEY, i BIGINT, f DOUBLE PRECISION, s VARCHAR(200), n INT)"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	ins, err := c.Prepare(ctx, "INSERT INTO lm (id, i, f, s, n) VALUES ("+marks(p, 5)+")")
	if err != nil {
		t.Fatal(err)
	}
	args := make([]client.Arg, 5)
	buf := []byte("bytes-0")
	for i := int64(1); i <= 30; i++ {
		s := client.Str("it's row " + strconv.FormatInt(i, 10) + " -- not a comment ? $1")
		switch i % 6 {
		case 1:
			s = client.Str(`a backslash \ and a quote '`) // the driver writes this one in text mode
		case 2:
			buf[len(buf)-1] = byte('0' + i%10)
			s = client.Bytes(buf)
		case 3:
			s = client.Str("")
		}
		n := client.Int(i * 7)
		if i%4 == 0 {
			n = client.Null()
		}
		args[0], args[1], args[2], args[3], args[4] = client.Int(i), client.Int(-i*1_000_000_007), client.Float(float64(i)/3), s, n
		n2, err := ins.ExecArgs(ctx, args)
		note("insert "+strconv.FormatInt(i, 10), n2, err)
	}
	// The same through Exec's []any, the types a caller may pass.
	// A []byte is a string's bytes to the lean path; pgx's text mode would
	// write it as a bytea literal ('\x…'), so PostgreSQL gets a string.
	var s4 any = []byte("from bytes")
	if p == client.Postgres {
		s4 = "from bytes"
	}
	n, err := ins.Exec(ctx, int32(31), uint16(7), float32(0.5), s4, nil)
	note("insert any", n, err)
	n, err = ins.Exec(ctx, 32, int8(-3), 1e300, "x", int64(1)<<20)
	note("insert any 2", n, err)
	// A duplicate key is an error of the server's own kind, and the
	// connection goes on.
	args[0] = client.Int(5)
	n, err = ins.ExecArgs(ctx, args)
	note("duplicate", n, err)
	if _, err := ins.ExecArgs(ctx, args[:2]); err == nil || !strings.Contains(err.Error(), "argument") {
		t.Errorf("two arguments for five: %v", err)
	}

	sel, err := c.Prepare(ctx, "SELECT id, s, n FROM lm WHERE id BETWEEN "+placeholder(p, 1)+" AND "+placeholder(p, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{1, 10}, {3, 3}, {40, 50}, {-5, 100}} {
		n, err := sel.QueryArgs(ctx, []client.Arg{client.Int(r[0]), client.Int(r[1])})
		note(fmt.Sprintf("select %d..%d", r[0], r[1]), n, err)
	}
	nulls, err := c.Prepare(ctx, "SELECT count(*) FROM lm WHERE n IS NULL AND id > "+placeholder(p, 1))
	if err != nil {
		t.Fatal(err)
	}
	n, err = nulls.Query(ctx, 0)
	note("count nulls", n, err)
	upd, err := c.Prepare(ctx, "UPDATE lm SET i = i + 1, s = "+placeholder(p, 1)+" WHERE id <= "+placeholder(p, 2))
	if err != nil {
		t.Fatal(err)
	}
	n, err = upd.ExecArgs(ctx, []client.Arg{client.Str("updated"), client.Int(12)})
	note("update", n, err)
	// A transaction rolled back leaves nothing.
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	del, err := c.Prepare(ctx, "DELETE FROM lm WHERE id > "+placeholder(p, 1))
	if err != nil {
		t.Fatal(err)
	}
	n, err = del.ExecArgs(ctx, []client.Arg{client.Int(20)})
	note("delete in a transaction", n, err)
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	n, err = c.Query(ctx, "SELECT * FROM lm")
	note("text select", n, err)
	n, err = c.Exec(ctx, "UPDATE lm SET f = f * 2 WHERE id > 25")
	note("text update", n, err)
	n, err = c.Query(ctx, "SELECT nosuchcolumn FROM lm")
	note("text error", n, err)
	n, err = c.Query(ctx, "SELECT count(*) FROM lm")
	note("after the error", n, err)

	_, rows, err := client.Query(ctx, ep, false, "SELECT id, i, f, s, n FROM lm ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		out = append(out, strings.Join(r, "|"))
	}
	return out
}

// The lean path answers as the drivers do and leaves the same rows, with
// prepared statements and with text, on each protocol, and on older
// servers whose replies are laid out differently (MariaDB 10.2: EOF
// packets, no cached column metadata).
func TestLeanMatchesDriver(t *testing.T) {
	for _, build := range []string{"mariadb-system", "mariadb-10.2.11", "postgres-system", "postgres-12.17.0"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			ctx := context.Background()
			for _, noPrep := range []bool{false, true} {
				var want []string
				for _, path := range []struct {
					drv bool
					tr  client.Transport
				}{{true, client.Blocking}, {false, client.Blocking}, {false, client.Uring}, {true, client.Uring}} {
					if path.tr == client.Uring && !client.UringWorks() {
						continue // TestUringAvailable names why
					}
					c, err := client.Dial(ctx, ep, client.Options{Transport: path.tr, NoPrepare: noPrep, Driver: path.drv})
					if err != nil {
						t.Fatal(err)
					}
					got := script(t, ep, c)
					c.Close()
					if want == nil {
						want = got
						continue
					}
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("text %v, %s, driver %v:\n%s\nthe driver's on blocking\n%s", noPrep, path.tr, path.drv, strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
					if len(got) < 40 {
						t.Errorf("text %v, %s: only %d answers", noPrep, path.tr, len(got))
					}
				}
			}
		})
	}
}

// A reply or a request of 16 MB or more crosses the wire in pieces, which
// the lean path joins and splits.
func TestLeanBigPackets(t *testing.T) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		for _, tr := range rawTransports() {
			t.Run(build+"/"+string(tr), func(t *testing.T) { bigPackets(t, context.Background(), build, tr) })
		}
		if client.UringWorks() {
			t.Run(build+"/loop", func(t *testing.T) {
				onLoop(t, func(ctx context.Context) { bigPackets(t, ctx, build, client.Loop) })
			})
		}
	}
}

// onLoop runs f as the one worker of a loop, with the worker's context.
func onLoop(t testing.TB, f func(ctx context.Context)) {
	t.Helper()
	if err := (client.Loops{Threads: 1}).Run(context.Background(), 1, func(ctx context.Context, _ int) { f(ctx) }); err != nil {
		t.Fatal(err)
	}
}

func bigPackets(t *testing.T, ctx context.Context, build string, tr client.Transport) {
	{
		{
			ep := startServer(t, build)
			p := ep.Protocol
			if p == client.MySQL {
				c, err := client.Dial(ctx, ep, client.Options{Transport: client.Netpoll, Driver: true})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Exec(ctx, "SET GLOBAL max_allowed_packet = 64 << 20"); err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
			c, err := client.Dial(ctx, ep, client.Options{Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			text := "LONGTEXT"
			if p == client.Postgres {
				text = "TEXT"
			}
			if _, err := c.Exec(ctx, "CREATE TABLE big (id INT PRIMARY KEY, v "+text+")"); err != nil {
				t.Fatal(err)
			}
			ins, err := c.Prepare(ctx, "INSERT INTO big VALUES ("+marks(p, 2)+")")
			if err != nil {
				t.Fatal(err)
			}
			v := []byte(strings.Repeat("0123456789abcdef", 20<<20/16)) // 20 MB
			v[len(v)-1] = 'Z'
			if n, err := ins.ExecArgs(ctx, []client.Arg{client.Int(1), client.Bytes(v)}); err != nil || n != 1 {
				t.Fatalf("insert 20 MB: %d, %v", n, err)
			}
			if n, err := ins.ExecArgs(ctx, []client.Arg{client.Int(2), client.Str("small")}); err != nil || n != 1 {
				t.Fatalf("insert after: %d, %v", n, err)
			}
			sel, err := c.Prepare(ctx, "SELECT v FROM big WHERE id <= "+placeholder(p, 1))
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if n, err := sel.QueryArgs(ctx, []client.Arg{client.Int(2)}); err != nil || n != 2 {
					t.Fatalf("select the 20 MB row and another: %d rows, %v", n, err)
				}
			}
			length := "LENGTH(v)"
			if n, err := client.Scalar(ctx, c, "SELECT "+length+" FROM big WHERE id = 1"); err != nil || n != int64(len(v)) {
				t.Errorf("stored %d bytes (%v), want %d", n, err, len(v))
			}
			if n, err := client.Scalar(ctx, c, "SELECT count(*) FROM big WHERE v LIKE '%Z'"); err != nil || n != 1 {
				t.Errorf("the value's last byte was not kept: %d, %v", n, err)
			}
		}
	}
}

// rawTransports are the transports with raw calls of their own: the
// blocking one, and io_uring where this kernel allows it.
func rawTransports() []client.Transport {
	if client.UringWorks() {
		return []client.Transport{client.Blocking, client.Uring}
	}
	return []client.Transport{client.Blocking}
}

// Once warm, the lean path allocates nothing per statement: point and
// range selects, updates, BEGIN and COMMIT, prepared or as text, on both
// protocols, through the transports a run uses.
func TestLeanAllocatesNothing(t *testing.T) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			p := ep.Protocol
			ctx, cancel := context.WithCancel(context.Background()) // a worker's: cancellable
			defer cancel()
			setup, err := client.Dial(ctx, ep, client.Options{Transport: client.Netpoll})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := setup.Exec(ctx, "CREATE TABLE za (id INT PRIMARY KEY, k INT, c CHAR(120))"); err != nil {
				t.Fatal(err)
			}
			ins, _ := setup.Prepare(ctx, "INSERT INTO za VALUES ("+marks(p, 3)+")")
			for i := int64(1); i <= 200; i++ {
				if _, err := ins.ExecArgs(ctx, []client.Arg{client.Int(i), client.Int(i), client.Str("ccc")}); err != nil {
					t.Fatal(err)
				}
			}
			setup.Close()
			for _, tr := range append(rawTransports(), client.Netpoll) {
				for _, noPrep := range []bool{false, true} {
					c, err := client.Dial(ctx, ep, client.Options{Transport: tr, NoPrepare: noPrep})
					if err != nil {
						t.Fatal(err)
					}
					point, err1 := c.Prepare(ctx, "SELECT c FROM za WHERE id="+placeholder(p, 1))
					rng, err2 := c.Prepare(ctx, "SELECT c FROM za WHERE id BETWEEN "+placeholder(p, 1)+" AND "+placeholder(p, 2))
					upd, err3 := c.Prepare(ctx, "UPDATE za SET k=k+1 WHERE id="+placeholder(p, 1))
					if err := errors.Join(err1, err2, err3); err != nil {
						t.Fatal(err)
					}
					args := make([]client.Arg, 2)
					id := int64(0)
					next := func() int64 { id = id%150 + 1; return id }
					for name, f := range map[string]func() (int64, error){
						"point-query": func() (int64, error) { args[0] = client.Int(next()); return point.QueryArgs(ctx, args[:1]) },
						"range": func() (int64, error) {
							s := next()
							args[0], args[1] = client.Int(s), client.Int(s+10)
							return rng.QueryArgs(ctx, args)
						},
						"update":       func() (int64, error) { args[0] = client.Int(next()); return upd.ExecArgs(ctx, args[:1]) },
						"begin-commit": func() (int64, error) { c.Begin(ctx); return 1, c.Commit(ctx) },
					} {
						var failed error
						allocs := testing.AllocsPerRun(300, func() {
							if n, err := f(); err != nil || n < 1 {
								failed = fmt.Errorf("%d rows, %v", n, err)
							}
						})
						if failed != nil {
							t.Fatalf("%s %s text=%v: %v", tr, name, noPrep, failed)
						}
						if allocs != 0 {
							t.Errorf("%s %s text=%v: %.2f allocations per statement, want 0", tr, name, noPrep, allocs)
						}
					}
					c.Close()
				}
			}
			// The load's statement: a 500-row INSERT of 2,000 arguments
			// (about 100 KB), its buffers kept from one to the next.
			c, err := client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Exec(ctx, "CREATE TABLE zl (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))"); err != nil {
				t.Fatal(err)
			}
			var q strings.Builder
			q.WriteString("INSERT INTO zl VALUES ")
			for r := range 500 {
				if r > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(" + strings.Join([]string{placeholder(p, 4*r+1), placeholder(p, 4*r+2), placeholder(p, 4*r+3), placeholder(p, 4*r+4)}, ", ") + ")")
			}
			bulk, err := c.Prepare(ctx, q.String())
			if err != nil {
				t.Fatal(err)
			}
			cv, pad := []byte(strings.Repeat("c", 119)), []byte(strings.Repeat("p", 59))
			args := make([]client.Arg, 2000)
			id := int64(0)
			var failed error
			allocs := testing.AllocsPerRun(20, func() {
				for r := range 500 {
					id++
					args[4*r], args[4*r+1], args[4*r+2], args[4*r+3] = client.Int(id), client.Int(id), client.Bytes(cv), client.Bytes(pad)
				}
				if n, err := bulk.ExecArgs(ctx, args); err != nil || n != 500 {
					failed = fmt.Errorf("%d rows, %v", n, err)
				}
			})
			if failed != nil {
				t.Fatal(failed)
			}
			if allocs != 0 {
				t.Errorf("a 500-row INSERT: %.2f allocations, want 0", allocs)
			}
		})
	}
}

func BenchmarkStatement(b *testing.B) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		b.Run(build, func(b *testing.B) {
			ep := startServer(b, build)
			p := ep.Protocol
			ctx := context.Background()
			setup, err := client.Dial(ctx, ep, client.Options{Transport: client.Netpoll})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := setup.Exec(ctx, "CREATE TABLE bz (id INT PRIMARY KEY, k INT, c CHAR(120))"); err != nil {
				b.Fatal(err)
			}
			ins, _ := setup.Prepare(ctx, "INSERT INTO bz VALUES ("+marks(p, 3)+")")
			c120 := strings.Repeat("0123456789-", 11)[:119]
			for i := int64(1); i <= 1000; i++ {
				if _, err := ins.ExecArgs(ctx, []client.Arg{client.Int(i), client.Int(i), client.Str(c120)}); err != nil {
					b.Fatal(err)
				}
			}
			setup.Close()
			for _, path := range []string{"lean", "driver"} {
				c, err := client.Dial(ctx, ep, client.Options{Transport: client.Blocking, Driver: path == "driver"})
				if err != nil {
					b.Fatal(err)
				}
				point, _ := c.Prepare(ctx, "SELECT c FROM bz WHERE id="+placeholder(p, 1))
				rng, _ := c.Prepare(ctx, "SELECT c FROM bz WHERE id BETWEEN "+placeholder(p, 1)+" AND "+placeholder(p, 2))
				args := make([]client.Arg, 2)
				b.Run(path+"/point-query", func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						args[0] = client.Int(int64(i%1000 + 1))
						if _, err := point.QueryArgs(ctx, args[:1]); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run(path+"/range=100", func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						s := int64(i%900 + 1)
						args[0], args[1] = client.Int(s), client.Int(s+99)
						if _, err := rng.QueryArgs(ctx, args); err != nil {
							b.Fatal(err)
						}
					}
				})
				c.Close()
			}
		})
	}
}

// Copy loads rows in the text format both servers share, NULLs and escaped
// tabs, newlines and backslashes included; a MySQL server whose
// local_infile is off is refused in one line that says what to do.
func TestCopy(t *testing.T) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		for _, tr := range rawTransports() {
			t.Run(build+"/"+string(tr), func(t *testing.T) { copyRows(t, context.Background(), build, tr) })
		}
		if client.UringWorks() {
			// pgx's COPY writes from one goroutine while another reads.
			t.Run(build+"/loop", func(t *testing.T) {
				onLoop(t, func(ctx context.Context) { copyRows(t, ctx, build, client.Loop) })
			})
		}
	}
}

func copyRows(t *testing.T, ctx context.Context, build string, tr client.Transport) {
	{
		{
			ep := startServer(t, build)
			c, err := client.Dial(ctx, ep, client.Options{Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Exec(ctx, "CREATE TABLE cp (id INT PRIMARY KEY, v VARCHAR(50), n INT)"); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i := 1; i <= 5000; i++ {
				n := strconv.Itoa(i)
				if i%10 == 0 {
					n = `\N`
				}
				fmt.Fprintf(&b, "%d\tv%d\\ttab\\nline\\\\slash\t%s\n", i, i, n)
			}
			n, err := client.Copy(ctx, c, "cp", []string{"id", "v", "n"}, strings.NewReader(b.String()))
			if err != nil || n != 5000 {
				t.Fatalf("copy 5000 rows: %d, %v", n, err)
			}
			if got, err := client.Scalar(ctx, c, "SELECT count(*) FROM cp WHERE n IS NULL"); err != nil || got != 500 {
				t.Errorf("%d NULLs (%v), want 500", got, err)
			}
			_, rows, err := client.Query(ctx, ep, false, "SELECT v FROM cp WHERE id = 7")
			if err != nil || len(rows) != 1 || rows[0][0] != "v7\ttab\nline\\slash" {
				t.Errorf("row 7: %q, %v", rows, err)
			}
			// The connection goes on with the lean path after a copy.
			if n, err := c.Query(ctx, "SELECT id FROM cp WHERE id <= 10"); err != nil || n != 10 {
				t.Errorf("after the copy: %d rows, %v", n, err)
			}
			if _, err := client.Copy(ctx, c, "c`p\"", []string{"id"}, strings.NewReader("")); err == nil {
				t.Errorf("a quote in a table name was taken")
			}
			if ep.Protocol != client.MySQL {
				return
			}
			if _, err := c.Exec(ctx, "SET GLOBAL local_infile = 0"); err != nil {
				t.Fatal(err)
			}
			_, err = client.Copy(ctx, c, "cp", []string{"id", "v", "n"}, strings.NewReader("9999\tx\t1\n"))
			if err == nil || !strings.Contains(err.Error(), "local_infile") || strings.Contains(err.Error(), "\n") {
				t.Errorf("LOAD DATA LOCAL with local_infile off: %v", err)
			}
			c.Exec(ctx, "SET GLOBAL local_infile = 1")
		}
	}
}

// A connection costs little memory: the drivers' own (go-sql-driver's 4 KB
// buffer and watcher goroutine, pgproto3's 8 KB read buffer) and the lean
// path's buffers, sized to a point select's reply.
func TestConnectionMemory(t *testing.T) {
	const conns = 400
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			p := ep.Protocol
			ctx := context.Background()
			setup, err := client.Dial(ctx, ep, client.Options{Transport: client.Netpoll})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := setup.Exec(ctx, "CREATE TABLE mem (id INT PRIMARY KEY, c CHAR(120))"); err != nil {
				t.Fatal(err)
			}
			if _, err := setup.Exec(ctx, "INSERT INTO mem VALUES (1, 'c')"); err != nil {
				t.Fatal(err)
			}
			setup.Close()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var cs []client.Conn
			args := []client.Arg{client.Int(1)}
			for range conns {
				c, err := client.Dial(ctx, ep, client.Options{Transport: client.Netpoll})
				if err != nil {
					t.Fatal(err)
				}
				cs = append(cs, c)
				s, err := c.Prepare(ctx, "SELECT c FROM mem WHERE id = "+placeholder(p, 1))
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if n, err := s.QueryArgs(ctx, args); err != nil || n != 1 {
						t.Fatalf("%d rows, %v", n, err)
					}
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			grew := int64(after.HeapInuse+after.StackInuse) - int64(before.HeapInuse+before.StackInuse)
			t.Logf("%d connections: heap and stacks grew %d KB, %.1f KB a connection", conns, grew>>10, float64(grew)/1024/conns)
			if grew > conns*32<<10 {
				t.Errorf("%.1f KB a connection, want at most 32", float64(grew)/1024/conns)
			}
			for _, c := range cs {
				c.Close()
			}
		})
	}
}
