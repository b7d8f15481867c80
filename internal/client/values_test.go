package client_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpslab/qpslab/internal/client"
)

// valueTable is a table with a column of every type QueryEach writes as
// text, and rows of each type's extremes, NULLs, zeros and strings long
// enough for 2- and 3-byte lengths; want holds the text some of its
// values must read as (id, column, text), whichever path reads them.
type valueTable struct {
	create string
	rows   []string // INSERT statements
	want   [][3]string
}

var (
	long300 = strings.Repeat("0123456789", 30)         // a 2-byte length (0xfc)
	long70k = strings.Repeat("abcdefghij", 7000)       // a 3-byte length (0xfd)
	long251 = strings.Repeat("x", 250) + "y"           // the first 2-byte length
	quoted  = "it's é, a \"quote\" and a tab\tin text" // no backslash: written as is by both
)

func valueTableFor(p client.Protocol) valueTable {
	if p == client.Postgres {
		return valueTable{
			create: "CREATE TABLE ev (id INT PRIMARY KEY, sm SMALLINT, i INT, b BIGINT, r REAL, d DOUBLE PRECISION, amt NUMERIC(12,2), " +
				"vc VARCHAR(400), ch CHAR(10), tx TEXT, dt DATE, ts TIMESTAMP, ts6 TIMESTAMP(6), tm TIME, bo BOOLEAN)",
			rows: []string{
				"INSERT INTO ev (id) VALUES (1)",
				"INSERT INTO ev VALUES (2, -32768, -2147483648, -9223372036854775808, -1.5, -1e300, -9999999999.99, '" + long300 + "', '', '" + long70k + "', " +
					"'1000-01-01', '1000-01-01 00:00:00', '2020-02-29 23:59:59.000001', '00:00:00', false)",
				"INSERT INTO ev VALUES (3, 32767, 2147483647, 9223372036854775807, 3.25, 1e300, 9999999999.99, '" + long251 + "', 'x', '" + strings.ReplaceAll(quoted, "'", "''") + "', " +
					"'9999-12-31', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999', '23:59:59.5', true)",
				"INSERT INTO ev VALUES (4, 0, 0, 0, 0, 0.1, 0, '', '', '', '2024-06-01', '2024-06-01 00:00:00', '2024-06-01 12:30:00', '12:00:00', false)",
			},
			want: [][3]string{
				{"1", "b", "NULL"}, {"2", "b", "-9223372036854775808"}, {"2", "d", "-1e+300"}, {"2", "amt", "-9999999999.99"},
				{"2", "vc", long300}, {"2", "tx", long70k}, {"2", "ch", "          "}, {"3", "vc", long251}, {"3", "tx", quoted},
				{"3", "r", "3.25"}, {"3", "ts6", "9999-12-31 23:59:59.999999"}, {"4", "d", "0.1"}, {"4", "vc", ""}, {"4", "ts", "2024-06-01 00:00:00"},
			},
		}
	}
	return valueTable{
		create: "CREATE TABLE ev (id INT PRIMARY KEY, t TINYINT, tu TINYINT UNSIGNED, sm SMALLINT, y YEAR, m MEDIUMINT, i INT, iu INT UNSIGNED, " +
			"b BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, amt DECIMAL(12,2), vc VARCHAR(400), ch CHAR(10), tx MEDIUMTEXT, bl BLOB, e ENUM('a','bb'), " +
			"dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME, tm6 TIME(6), z INT(5) ZEROFILL)",
		rows: []string{
			"INSERT INTO ev (id) VALUES (1)",
			"INSERT INTO ev VALUES (2, -128, 0, -32768, 1901, -8388608, -2147483648, 0, -9223372036854775808, 0, -1.5, -1e300, -9999999999.99, " +
				"'" + long300 + "', '', '" + long70k + "', X'00FF0A', 'a', '1000-01-01', '1000-01-01 00:00:00', '2020-02-29 23:59:59.000001', " +
				"'2001-01-01 00:00:00.123', '-838:59:59', '-00:00:01.500000', 7)",
			"INSERT INTO ev VALUES (3, 127, 255, 32767, 2155, 8388607, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615, 3.25, 1e300, 9999999999.99, " +
				"'" + long251 + "', 'x', '" + strings.ReplaceAll(quoted, "'", "''") + "', '', 'bb', '9999-12-31', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999', " +
				"'2030-01-01 00:00:00.999', '838:59:59', '100:00:00.000001', 12345)",
			"INSERT INTO ev VALUES (4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5, 0.1, 0, '', '', '', NULL, 'a', '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', " +
				"'2024-06-01 00:00:00', '00:00:00', '00:00:00', 0)",
			"INSERT INTO ev VALUES (5, 1, 1, 1, 2024, 1, 1, 1, 1, 1, 1, 1, 0.01, 'x', 'x', 'x', 'x', 'a', '2024-06-01', '2024-06-01 00:00:00', '2024-06-01 12:30:00', " +
				"'2024-06-01 12:30:00', '12:30:00', '-12:30:00.25', 1)",
		},
		want: [][3]string{
			{"1", "b", "NULL"}, {"1", "tm6", "NULL"}, {"2", "t", "-128"}, {"2", "b", "-9223372036854775808"}, {"2", "d", "-1e+300"}, {"2", "f", "-1.5"},
			{"2", "amt", "-9999999999.99"}, {"2", "vc", long300}, {"2", "tx", long70k}, {"2", "bl", "\x00\xff\n"}, {"2", "ch", ""},
			{"2", "dtm6", "2020-02-29 23:59:59.000001"}, {"2", "ts", "2001-01-01 00:00:00.123"}, {"2", "tm", "-838:59:59"}, {"2", "tm6", "-00:00:01.500000"},
			{"2", "z", "7"}, {"3", "tu", "255"}, {"3", "y", "2155"}, {"3", "iu", "4294967295"}, {"3", "bu", "18446744073709551615"}, {"3", "d", "1e+300"},
			{"3", "vc", long251}, {"3", "tx", quoted}, {"3", "e", "bb"}, {"3", "tm", "838:59:59"}, {"3", "tm6", "100:00:00.000001"}, {"3", "z", "12345"},
			{"4", "dt", "0000-00-00"}, {"4", "dtm", "0000-00-00 00:00:00"}, {"4", "dtm6", "0000-00-00 00:00:00.000000"}, {"4", "tm", "00:00:00"},
			{"4", "tm6", "00:00:00.000000"}, {"4", "d", "0.1"}, {"4", "amt", "0.00"}, {"4", "ts", "2024-06-01 00:00:00.000"},
			{"5", "dtm", "2024-06-01 00:00:00"}, {"5", "dtm6", "2024-06-01 12:30:00.000000"}, {"5", "tm6", "-12:30:00.250000"}, {"5", "y", "2024"},
		},
	}
}

// valuePath is one way a connection runs statements.
type valuePath struct {
	name   string
	opts   client.Options
	onLoop bool
}

func valuePaths() []valuePath {
	var out []valuePath
	for _, noPrep := range []bool{false, true} {
		mode := "prepared"
		if noPrep {
			mode = "text"
		}
		out = append(out,
			valuePath{"driver/" + mode, client.Options{Transport: client.Blocking, NoPrepare: noPrep, Driver: true}, false},
			valuePath{"lean/blocking/" + mode, client.Options{Transport: client.Blocking, NoPrepare: noPrep}, false},
			valuePath{"lean/netpoll/" + mode, client.Options{Transport: client.Netpoll, NoPrepare: noPrep}, false},
			valuePath{"lean/tcp/" + mode, client.Options{Transport: client.Blocking, NoPrepare: noPrep, TCP: true}, false})
		if client.UringWorks() {
			out = append(out,
				valuePath{"lean/uring/" + mode, client.Options{Transport: client.Uring, NoPrepare: noPrep}, false},
				valuePath{"lean/loop/" + mode, client.Options{Transport: client.Loop, NoPrepare: noPrep}, true})
		}
	}
	return out
}

// errClass is an error as the server classed it, for comparing paths.
func errClass(err error) string {
	var me *mysql.MySQLError
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return "no error"
	case errors.As(err, &me):
		return fmt.Sprintf("error %d", me.Number)
	case errors.As(err, &pe):
		return "error " + pe.Code
	}
	return "other error: " + err.Error()
}

// readRows runs s with args through QueryEach and returns every row, its
// columns' text joined by "|" (NULL for NULL), checking what each call
// says of its row against the count QueryEach returns.
func readRows(ctx context.Context, s client.Stmt, args []client.Arg) ([]string, int64, error) {
	var rows []string
	var bad error
	n, err := s.QueryEach(ctx, args, func(r *client.Values) {
		cols := make([]string, r.Len())
		for i := range cols {
			b := r.Bytes(i)
			switch {
			case r.Null(i) != (b == nil):
				bad = fmt.Errorf("column %d: Null says %v, Bytes %q", i+1, r.Null(i), b)
			case b == nil:
				cols[i] = "NULL"
			default:
				cols[i] = string(b)
			}
		}
		rows = append(rows, strings.Join(cols, "|"))
	})
	if bad == nil && n != int64(len(rows)) {
		bad = fmt.Errorf("QueryEach said %d rows, handed %d", n, len(rows))
	}
	if bad != nil {
		return nil, n, bad
	}
	return rows, n, err
}

// valueScript runs QueryEach's statements on a connection of path p and
// returns what they gave, to compare paths by; it checks what needs no
// comparison itself.
func valueScript(t *testing.T, ctx context.Context, ep client.Endpoint, path valuePath, vt valueTable, cols []string) []string {
	t.Helper()
	p := ep.Protocol
	c, err := client.Dial(ctx, ep, path.opts)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer c.Close()
	var out []string
	sel, err := c.Prepare(ctx, "SELECT * FROM ev WHERE id BETWEEN "+placeholder(p, 1)+" AND "+placeholder(p, 2)+" ORDER BY id")
	if err != nil {
		t.Error(err)
		return nil
	}
	// Every row, twice (the second run reuses what the first kept: the
	// columns MariaDB has cached), then one, then none.
	for _, r := range [][2]int64{{0, 100}, {0, 100}, {3, 3}, {50, 60}} {
		calls := 0
		rows, n, err := readRows(ctx, sel, []client.Arg{client.Int(r[0]), client.Int(r[1])})
		if err != nil {
			t.Errorf("%s: rows %d..%d: %v", path.name, r[0], r[1], err)
			return nil
		}
		calls = len(rows)
		out = append(out, fmt.Sprintf("rows %d..%d: %d rows", r[0], r[1], n))
		out = append(out, rows...)
		if r[0] == 50 && (n != 0 || calls != 0) {
			t.Errorf("%s: no rows: %d, each called %d times", path.name, n, calls)
		}
	}
	// The rows come in order, their values where they belong.
	rows, _, _ := readRows(ctx, sel, []client.Arg{client.Int(0), client.Int(100)})
	if len(rows) != len(vt.rows) {
		t.Errorf("%s: %d rows, want %d", path.name, len(rows), len(vt.rows))
		return nil
	}
	for i, r := range rows {
		if id := strings.SplitN(r, "|", 2)[0]; id != strconv.Itoa(i+1) {
			t.Errorf("%s: row %d has id %s", path.name, i+1, id)
		}
	}
	for _, w := range vt.want {
		id, _ := strconv.Atoi(w[0])
		vals := strings.Split(rows[id-1], "|")
		for i, name := range cols {
			if name == w[1] && vals[i] != w[2] {
				t.Errorf("%s: row %s column %s reads %.80q, want %.80q", path.name, w[0], w[1], vals[i], w[2])
			}
		}
	}
	// Values' conversions, on row 3 (the maxima) and row 1 (NULLs).
	one, err := c.Prepare(ctx, "SELECT id, b, d, amt, vc FROM ev WHERE id = "+placeholder(p, 1))
	if err != nil {
		t.Error(err)
		return nil
	}
	var got []string
	conv := func(r *client.Values) {
		for i := range r.Len() {
			n, err1 := r.Int(i)
			f, err2 := r.Float(i)
			got = append(got, fmt.Sprintf("%d %v %v %v %q", n, err1, f, err2, r.String(i)))
		}
	}
	for _, id := range []int64{3, 1} {
		got = got[:0]
		if n, err := one.QueryEach(ctx, []client.Arg{client.Int(id)}, conv); err != nil || n != 1 {
			t.Errorf("%s: row %d: %d, %v", path.name, id, n, err)
			continue
		}
		out = append(out, got...)
	}
	// An argument the lean path's text statements leave to the driver (a
	// backslash, whose quoting depends on the server's settings).
	odd, err := c.Prepare(ctx, "SELECT id, vc FROM ev WHERE vc <> "+placeholder(p, 1)+" AND id = "+placeholder(p, 2))
	if err != nil {
		t.Error(err)
		return nil
	}
	rows, n, err := readRows(ctx, odd, []client.Arg{client.Str(`a\b`), client.Int(4)})
	if err != nil || n != 1 || rows[0] != "4|" {
		t.Errorf("%s: a backslash argument: %q, %v", path.name, rows, err)
	}
	// An error after some rows: a subquery that returns two rows for the
	// third. The rows before it are handed over, counted, and the
	// connection goes on.
	bad, err := c.Prepare(ctx, "SELECT id, (SELECT k FROM evd WHERE evd.k = ev.id) FROM ev WHERE id <= "+placeholder(p, 1)+" ORDER BY id")
	if err != nil {
		t.Error(err)
		return nil
	}
	rows, n, err = readRows(ctx, bad, []client.Arg{client.Int(100)})
	out = append(out, fmt.Sprintf("error mid-statement: %d rows, %s", n, errClass(err)))
	out = append(out, rows...)
	if err == nil || strings.HasPrefix(errClass(err), "other") {
		t.Errorf("%s: a subquery of two rows: %v", path.name, err)
	}
	rows, n, err = readRows(ctx, bad, []client.Arg{client.Int(2)})
	out = append(out, fmt.Sprintf("after the error: %d rows, %v", n, err))
	out = append(out, rows...)
	if err != nil || n != 2 {
		t.Errorf("%s: after the error: %d rows, %v", path.name, n, err)
	}
	return out
}

// QueryEach hands every row to its callback as text, the same on every
// path (the lean path's binary rows decoded by hand, its text rows, the
// drivers'; each transport), on servers whose replies are laid out
// differently (MariaDB 10.2: EOF packets, no cached column metadata).
func TestQueryEachMatchesDriver(t *testing.T) {
	for _, build := range []string{"mariadb-system", "mariadb-10.2.11", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			ctx := context.Background()
			vt := valueTableFor(ep.Protocol)
			setup, err := client.Dial(ctx, ep, client.Options{Transport: client.Netpoll, Driver: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range append([]string{vt.create, "CREATE TABLE evd (k INT)", "INSERT INTO evd VALUES (1), (2), (3), (3)"}, vt.rows...) {
				if _, err := setup.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q[:min(len(q), 80)], err)
				}
			}
			setup.Close()
			cols, _, err := client.Query(ctx, ep, false, "SELECT * FROM ev WHERE id = 0")
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, path := range valuePaths() {
				var got []string
				if path.onLoop {
					onLoop(t, func(ctx context.Context) { got = valueScript(t, ctx, ep, path, vt, cols) })
				} else {
					got = valueScript(t, ctx, ep, path, vt, cols)
				}
				if t.Failed() {
					return
				}
				if want == nil {
					want = got
					if len(want) < 20 {
						t.Fatalf("%s: only %d answers", path.name, len(want))
					}
					continue
				}
				if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
					t.Errorf("%s differs from %s:\n%s", path.name, valuePaths()[0].name, firstDiff(got, want))
				}
			}
		})
	}
}

// firstDiff names the first line where got and want differ.
func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got %.300q\nwant %.300q", i+1, g, w)
		}
	}
	return "(none)"
}

// Once warm, QueryEach on the lean path allocates nothing per statement,
// reading every column of a point select's row and of a range's ten, as
// values and as text, prepared or as text, through each transport.
func TestQueryEachAllocatesNothing(t *testing.T) {
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
			dt, dbl := "DATETIME(6)", "DOUBLE"
			if p == client.Postgres {
				dt, dbl = "TIMESTAMP(6)", "DOUBLE PRECISION"
			}
			if _, err := setup.Exec(ctx, "CREATE TABLE ze (id INT PRIMARY KEY, k BIGINT, c VARCHAR(300), price DECIMAL(12,2), f "+dbl+", at "+dt+", n INT)"); err != nil {
				t.Fatal(err)
			}
			ins, _ := setup.Prepare(ctx, "INSERT INTO ze VALUES ("+marks(p, 7)+")")
			for i := int64(1); i <= 200; i++ {
				args := []client.Arg{client.Int(i), client.Int(-i * 1000003), client.Str(strings.Repeat("c", 260)), client.Str(strconv.FormatInt(i, 10) + ".25"),
					client.Float(float64(i) / 8), client.Str("2024-06-01 12:30:00.125"), client.Null()}
				if _, err := ins.ExecArgs(ctx, args); err != nil {
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
					cols := "id, k, c, price, f, at, n FROM ze WHERE id"
					point, err1 := c.Prepare(ctx, "SELECT "+cols+"="+placeholder(p, 1))
					rng, err2 := c.Prepare(ctx, "SELECT "+cols+" BETWEEN "+placeholder(p, 1)+" AND "+placeholder(p, 2)+" ORDER BY id")
					if err := errors.Join(err1, err2); err != nil {
						t.Fatal(err)
					}
					var sum int64
					var fsum float64
					var text int
					var bad error
					// Made once, as a worker would: a closure built per call
					// would be the caller's allocation.
					each := func(r *client.Values) {
						id, err1 := r.Int(0)
						k, err2 := r.Int(1)
						price, err3 := r.Float(3)
						f, err4 := r.Float(4)
						if err := errors.Join(err1, err2, err3, err4); err != nil || !r.Null(6) || r.Len() != 7 {
							bad = fmt.Errorf("%v, NULL %v, %d columns", err, r.Null(6), r.Len())
						}
						sum += id + k
						fsum += price + f
						text += len(r.Bytes(2)) + len(r.Bytes(5))
					}
					args := make([]client.Arg, 2)
					id := int64(0)
					next := func() int64 { id = id%150 + 1; return id }
					for name, f := range map[string]func() (int64, error){
						"point-query": func() (int64, error) { args[0] = client.Int(next()); return point.QueryEach(ctx, args[:1], each) },
						"range": func() (int64, error) {
							s := next()
							args[0], args[1] = client.Int(s), client.Int(s+9)
							return rng.QueryEach(ctx, args, each)
						},
					} {
						var failed error
						sum, text = 0, 0
						allocs := testing.AllocsPerRun(300, func() {
							if n, err := f(); err != nil || n < 1 {
								failed = fmt.Errorf("%d rows, %v", n, err)
							}
						})
						if err := errors.Join(failed, bad); err != nil {
							t.Fatalf("%s %s text=%v: %v", tr, name, noPrep, err)
						}
						if sum == 0 || text < 301*260 {
							t.Fatalf("%s %s text=%v: the rows were not read (sum %d, %d bytes of text)", tr, name, noPrep, sum, text)
						}
						if allocs != 0 {
							t.Errorf("%s %s text=%v: %.2f allocations per statement, want 0", tr, name, noPrep, allocs)
						}
					}
					c.Close()
				}
			}
		})
	}
}

// A prepared statement's result columns change with its arguments' types
// (SELECT ?): MariaDB then sends them anew with the execution, once, and
// not again while they stay (its cached metadata). The lean path keeps
// what it was sent even when it discards the rows (QueryArgs), so that a
// later QueryEach reads them by the right types.
func TestQueryEachColumnsChange(t *testing.T) {
	for _, build := range []string{"mariadb-system", "mariadb-10.2.11"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			ctx := context.Background()
			for _, drv := range []bool{false, true} {
				c, err := client.Dial(ctx, ep, client.Options{Transport: client.Blocking, Driver: drv})
				if err != nil {
					t.Fatal(err)
				}
				s, err := c.Prepare(ctx, "SELECT ?, 7")
				if err != nil {
					t.Fatal(err)
				}
				for i, step := range []struct {
					arg  client.Arg
					each bool
					want string
				}{
					{client.Int(-5), true, "-5|7"},
					{client.Str("abc"), false, ""},
					{client.Str("abcdef"), true, "abcdef|7"},
					{client.Float(2.5), false, ""},
					{client.Float(2.5), true, "2.5|7"},
					{client.Null(), true, "NULL|7"},
					{client.Int(1 << 40), true, "1099511627776|7"},
				} {
					args := []client.Arg{step.arg}
					if !step.each {
						if n, err := s.QueryArgs(ctx, args); err != nil || n != 1 {
							t.Fatalf("driver %v, step %d: %d rows, %v", drv, i+1, n, err)
						}
						continue
					}
					rows, _, err := readRows(ctx, s, args)
					if err != nil || len(rows) != 1 || rows[0] != step.want {
						t.Errorf("driver %v, step %d: %q, %v; want %q", drv, i+1, rows, err, step.want)
					}
				}
				c.Close()
			}
		})
	}
}
