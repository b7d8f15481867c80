package sysbench

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/testenv"
)

// fakeWorker is a worker of test t over a recording fake connection.
func fakeWorker(t *testing.T, test Test, p client.Protocol, seed uint64, id, tables int, rows int64) (*worker, *recConn) {
	t.Helper()
	c := &recConn{rows: 1}
	wl := &Workload{Target: Target{Dialect: testenv.DialectOf(p), Tables: tables, Rows: rows,
		Dial: func(context.Context) (client.Conn, error) { return c, nil }}, Test: test, Seed: seed}
	w, err := wl.NewWorker(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w.(*worker), c
}

// Every test, on both protocols: the worker prepares Queries for every table
// (none for scan and insert), and each event issues Statements statements.
func TestFakeEventShape(t *testing.T) {
	ctx := context.Background()
	for _, p := range []client.Protocol{client.MySQL, client.Postgres} {
		for _, test := range allTests() {
			w, c := fakeWorker(t, test, p, 1, 0, 3, 1000)
			prep := 0
			for _, cl := range c.take() {
				if cl.op == "prepare" {
					prep++
				}
			}
			want := 0
			if test.Prepared {
				want = 3 * len(test.Queries(testenv.DialectOf(p), 1))
			}
			if prep != want {
				t.Errorf("%s %s: %d statements prepared, want %d", p, test.Label(), prep, want)
			}
			for range 20 {
				o, err := w.Event(ctx)
				calls := c.take()
				if err != nil || o.Statements != test.Statements || statements(calls) != test.Statements {
					t.Errorf("%s %s: event issued %d statements (outcome %d, %v), want %d", p, test.Label(), statements(calls), o.Statements, err, test.Statements)
					break
				}
				for _, cl := range calls {
					if p == client.Postgres && strings.Contains(cl.q, "?") || p == client.MySQL && strings.Contains(cl.q, "$1") {
						t.Errorf("%s %s: placeholders of the other protocol in %q", p, test.Label(), cl.q)
					}
					v := ints(cl)
					if strings.Contains(cl.q, "BETWEEN") {
						v = v[:1] // the end may run past the last id, as in sysbench
					}
					for _, v := range v {
						if v < 1 || v > 1000 {
							t.Errorf("%s %s: id or k %d outside [1, 1000] in %q", p, test.Label(), v, cl.q)
						}
					}
				}
			}
		}
	}
}

// The arguments each kind of event binds (§1.3).
func TestFakeEventArgs(t *testing.T) {
	ctx := context.Background()
	const rows = 1000
	run := func(label string, id int) []call {
		w, c := fakeWorker(t, find(t, label), client.MySQL, 9, id, 2, rows)
		c.take()
		if _, err := w.Event(ctx); err != nil {
			t.Fatal(err)
		}
		cs := c.take()
		if len(cs) == 0 {
			t.Fatalf("%s: an event sent no statement", label)
		}
		return cs
	}
	runs := func(label string, id int, f func([]call) string) {
		t.Helper()
		w, c := fakeWorker(t, find(t, label), client.MySQL, 9, id, 2, rows)
		c.take()
		for range 50 {
			if _, err := w.Event(ctx); err != nil {
				t.Fatal(err)
			}
			cs := c.take()
			if len(cs) == 0 {
				t.Fatalf("%s: an event sent no statement", label)
			}
			if msg := f(cs); msg != "" {
				t.Errorf("%s: %s", label, msg)
				return
			}
		}
	}
	runs("hot-points_range=100", 0, func(cs []call) string {
		v := ints(cs[0])
		for i, x := range v {
			if x != rows/2+1+int64(i) {
				return fmt.Sprintf("ids %v, want 501..600", v)
			}
		}
		if len(v) != 100 {
			return fmt.Sprintf("%d ids", len(v))
		}
		return ""
	})
	for _, r := range []int{10, 100, 1000} {
		runs(fmt.Sprintf("random-points_range=%d", r), 0, func(cs []call) string {
			if n := len(ints(cs[0])); n != r {
				return fmt.Sprintf("%d ids, want %d", n, r)
			}
			return ""
		})
	}
	runs("update-one_range=100", 0, func(cs []call) string {
		if v := ints(cs[0]); len(v) != 1 || v[0] != 1 || len(cs[0].args[0].(string)) != cLen {
			return fmt.Sprintf("args %v, want a new c and id 1", cs[0].args)
		}
		return ""
	})
	runs("update-inlist_range=100", 0, func(cs []call) string {
		if v := ints(cs[0]); len(v) != 10 {
			return fmt.Sprintf("%d ids, want 10", len(v))
		}
		return ""
	})
	runs("range-covered-pk_range=100", 0, func(cs []call) string {
		if v := ints(cs[0]); len(v) != 2 || v[1] != v[0]+100 {
			return fmt.Sprintf("BETWEEN %v, want 101 ids", v)
		}
		return ""
	})
	runs("read-only-count_range=1000", 0, func(cs []call) string {
		if v := ints(cs[0]); len(v) != 2 || v[1] != v[0]+999 {
			return fmt.Sprintf("BETWEEN %v, want 1000 ids", v)
		}
		return ""
	})
	runs("read-only_range=10000", 0, func(cs []call) string {
		if len(cs) < 15 || cs[0].op != "begin" || cs[len(cs)-1].op != "commit" {
			return fmt.Sprintf("%d statements, not BEGIN … COMMIT around 14 reads", len(cs))
		}
		for _, c := range cs[11:15] {
			if v := ints(c); len(v) != 2 || v[1] != v[0]+9999 {
				return fmt.Sprintf("%s BETWEEN %v, want start+R-1", c.q, v)
			}
		}
		for _, c := range cs[1:11] {
			if !strings.HasPrefix(c.q, "SELECT c FROM sbtest") || !strings.HasSuffix(c.q, "WHERE id=?") {
				return "want 10 point selects after BEGIN, got " + c.q
			}
		}
		return ""
	})
	runs("write-only_range=10000", 0, func(cs []call) string {
		if len(cs) < 5 || len(cs[3].args) == 0 || len(cs[4].args) < 2 {
			return fmt.Sprintf("%d statements %v: want a DELETE and an INSERT fourth and fifth", len(cs), cs)
		}
		del, ins := cs[3], cs[4]
		if !strings.HasPrefix(del.q, "DELETE") || !strings.HasPrefix(ins.q, "INSERT") || del.args[0] != ins.args[0] ||
			strings.TrimPrefix(del.q, "DELETE FROM ")[:7] != strings.TrimPrefix(ins.q, "INSERT INTO ")[:7] {
			return fmt.Sprintf("delete %v then insert %v: want the same id in the same table", del, ins.args[:2])
		}
		return ""
	})
	// scan: text, on table id % tables + 1
	for id, want := range []string{"sbtest1", "sbtest2", "sbtest1"} {
		cs := run("scan_range=100", id)
		if cs[0].op != "query" || !strings.Contains(cs[0].q, want+" ") {
			t.Errorf("scan worker %d: %s %q, want a text query on %s", id, cs[0].op, cs[0].q, want)
		}
	}
	cs := run("insert_range=100", 0)
	if cs[0].op != "exec" || !strings.Contains(cs[0].q, "VALUES (0, ") {
		t.Errorf("insert: %s %q, want a text INSERT with id 0", cs[0].op, cs[0].q)
	}
}

// update-zipf on a worker: id 1 the hottest.
func TestFakeZipfIDs(t *testing.T) {
	w, c := fakeWorker(t, find(t, "update-zipf_range=100"), client.MySQL, 3, 0, 1, 1000)
	c.take()
	count := map[int64]int{}
	for range 5000 {
		if _, err := w.Event(context.Background()); err != nil {
			t.Fatal(err)
		}
		cs := c.take()
		if len(cs) == 0 || len(ints(cs[0])) == 0 {
			t.Fatalf("an update-zipf event sent %v: want an UPDATE by id", cs)
		}
		count[ints(cs[0])[0]]++
	}
	for id, n := range count {
		if n > count[1] {
			t.Fatalf("id %d drawn %d times, id 1 %d", id, n, count[1])
		}
	}
	if count[1] < 5000/20 {
		t.Errorf("id 1 drawn %d times in 5000, want about %d", count[1], 5000*65/1000)
	}
}

// The same seed and worker id give the same ids; another id or seed does not.
func TestFakeSeedRepeats(t *testing.T) {
	ctx := context.Background()
	seq := func(label string, seed uint64, id int) [][]any {
		w, c := fakeWorker(t, find(t, label), client.Postgres, seed, id, 4, 100000)
		c.take()
		var out [][]any
		for range 30 {
			w.Event(ctx)
			for _, cl := range c.take() {
				out = append(out, append([]any{cl.q}, cl.args...))
			}
		}
		return out
	}
	for _, label := range []string{"point-query_range=100", "read-write_range=10", "update-zipf_range=100", "insert_range=100"} {
		a, b := seq(label, 7, 2), seq(label, 7, 2)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: seed 7 worker 2 gave two different sequences", label)
		}
		if reflect.DeepEqual(a, seq(label, 7, 3)) || reflect.DeepEqual(a, seq(label, 8, 2)) {
			t.Errorf("%s: another worker or seed repeats the sequence", label)
		}
	}
}

// A failure inside BEGIN…COMMIT rolls back and returns the cause; one in
// COMMIT too. Autocommit statements do not roll back.
func TestFakeRollback(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		label    string
		failAt   int
		rollback bool
	}{
		{"read-only_range=100", 1, true},    // BEGIN
		{"read-only_range=100", 5, true},    // a point select
		{"read-only_range=100", 16, true},   // COMMIT
		{"write-only_range=10000", 5, true}, // the insert
		{"read-write_range=10", 18, true},
		{"update-index_range=100", 1, false},
		{"point-query_range=100", 1, false},
	} {
		w, rc := fakeWorker(t, find(t, c.label), client.MySQL, 1, 0, 1, 100)
		rc.take()
		rc.failAt = c.failAt
		_, err := w.Event(ctx)
		calls := rc.take()
		if !errors.Is(err, errFake) {
			t.Errorf("%s failing at %d: error %v, want the statement's", c.label, c.failAt, err)
		}
		last := calls[len(calls)-1]
		if got := last.op == "rollback"; got != c.rollback {
			t.Errorf("%s failing at %d: last call %s, rollback wanted: %v", c.label, c.failAt, last.op, c.rollback)
		}
		if statements(calls) != c.failAt+map[bool]int{true: 1}[c.rollback] {
			t.Errorf("%s failing at %d: went on after the failure: %d calls", c.label, c.failAt, len(calls))
		}
		rc.failAt = 0
		if _, err := w.Event(ctx); err != nil {
			t.Errorf("%s: the next event failed too: %v", c.label, err)
		}
	}
}

func TestBadWorkload(t *testing.T) {
	dial := func(context.Context) (client.Conn, error) { return &recConn{}, nil }
	for _, wl := range []*Workload{
		{Target: Target{Dialect: client.MySQLDialect, Dial: dial, Tables: 0, Rows: 10}, Test: find(t, "point-query_range=100")},
		{Target: Target{Dialect: client.MySQLDialect, Dial: dial, Tables: 1, Rows: 0}, Test: find(t, "point-query_range=100")},
		{Target: Target{Dialect: testenv.DialectOf("oracle"), Dial: dial, Tables: 1, Rows: 10}, Test: find(t, "point-query_range=100")},
		{Target: Target{Dialect: client.MySQLDialect, Dial: dial, Tables: 1, Rows: 10}, Test: Test{Name: "nope"}},
	} {
		if _, err := wl.NewWorker(context.Background(), 0); err == nil {
			t.Errorf("%+v: no error", wl)
		}
	}
}
