package lang

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// recorder is an Executor that records what a run sends; rows answers
// \gset by statement index.
type recorder struct {
	sent   []string
	slept  []time.Duration
	rows   map[int][2][]any
	failAt int // statement index that fails with errFail (-1: none)
}

var errFail = errors.New("40001: could not serialize access")

func (r *recorder) Exec(_ context.Context, st Statement, args []Value) ([]string, []Value, error) {
	sql, vars := st.SQL(func(n int) string { return fmt.Sprintf("$%d", n) })
	var parts []string
	for i, a := range args {
		parts = append(parts, vars[i]+"="+Format(a))
	}
	r.sent = append(r.sent, sql+" "+strings.Join(parts, ","))
	if st.Index == r.failAt {
		return nil, nil, errFail
	}
	if st.Gset {
		row := r.rows[st.Index]
		cols := make([]string, len(row[0]))
		for i, c := range row[0] {
			cols[i] = c.(string)
		}
		return cols, row[1], nil
	}
	return nil, nil, nil
}

func (r *recorder) Sleep(_ context.Context, d time.Duration) error {
	r.slept = append(r.slept, d)
	return nil
}

func newRecorder() *recorder { return &recorder{rows: map[int][2][]any{}, failAt: -1} }

// pgbench's tpcb-like script (its manual, "What Is the Transaction
// Actually Performed in pgbench?").
const tpcb = `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`

func TestParseTPCB(t *testing.T) {
	sc, err := Parse("builtin:tpcb-like", tpcb)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Statements) != 7 {
		t.Fatalf("%d statements, want 7", len(sc.Statements))
	}
	st := sc.Statements[5]
	if st.Index != 5 || st.Line != 10 || !strings.HasPrefix(st.Text, "INSERT INTO pgbench_history") || !strings.HasSuffix(st.Text, ";") {
		t.Errorf("statement 5: %+v", st)
	}
	pg, vars := st.SQL(func(n int) string { return fmt.Sprintf("$%d", n) })
	if want := "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)"; pg != want {
		t.Errorf("SQL = %q, want %q", pg, want)
	}
	if !slices.Equal(vars, []string{"tid", "bid", "aid", "delta"}) {
		t.Errorf("vars = %v", vars)
	}
	my, _ := sc.Statements[1].SQL(func(int) string { return "?" })
	if my != "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?" {
		t.Errorf("MySQL form: %q", my)
	}
}

// What is and is not a variable in SQL, and where commands end.
func TestParseSQLText(t *testing.T) {
	ph := func(n int) string { return fmt.Sprintf("$%d", n) }
	for _, c := range []struct {
		src, want string
		vars      []string
	}{
		{"SELECT :a::int, ':a', \":a\", E'\\':a', $$ :a; $$, $q$:a$q$ -- :a;\n, :'a', :\"a\", x[1:2], $1 /* :a; /* nested */ ; */ + :b_2;", "SELECT $1::int, ':a', \":a\", E'\\':a', $$ :a; $$, $q$:a$q$ -- :a;\n, :'a', :\"a\", x[1:2], $1 /* :a; /* nested */ ; */ + $2", []string{"a", "b_2"}},
		{"SELECT :a, :a", "SELECT $1, $2", []string{"a", "a"}},
		{"SELECT 'it''s :x', `:y`, :z", "SELECT 'it''s :x', `:y`, $1", []string{"z"}},
		{"SELECT 1", "SELECT 1", nil}, // the last command needs no ';'
		{"  -- a comment\n\nSELECT\n  :a\n  ;  ", "SELECT\n  $1", []string{"a"}},
	} {
		sc, err := Parse("t.sql", c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		got, vars := sc.Statements[0].SQL(ph)
		if got != c.want || !slices.Equal(vars, c.vars) {
			t.Errorf("%q:\n got %q %v\nwant %q %v", c.src, got, vars, c.want, c.vars)
		}
	}
	sc, err := Parse("t.sql", "SELECT 1;\n\nSELECT\n 2\n;SELECT 3; SELECT 4 \\gset p_\n;\n\\set x 1")
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, s := range sc.Statements {
		lines = append(lines, s.Line)
	}
	if !slices.Equal(lines, []int{1, 3, 5, 5}) || !sc.Statements[3].Gset || sc.Statements[3].Prefix != "p_" || sc.Statements[2].Gset {
		t.Errorf("statements: %+v", sc.Statements)
	}
}

// Parse's refusals: one line, the file, the line and why.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"SELECT 1;\n\\setrandom x 1 10\n", `a.sql:2: \setrandom is not supported (removed in pgbench 10): use \set x random(lo, hi)`},
		{"\n\n\\shell ls\n", `a.sql:3: \shell is not supported`},
		{"\\setshell x echo 1\n", `a.sql:1: \setshell is not supported`},
		{"SELECT 1 \\aset\n", `a.sql:1: \aset is not supported`},
		{"SELECT 1 \\cset\n", `a.sql:1: \cset is not supported`},
		{"\\startpipeline\nSELECT 1;\n\\endpipeline\n", `a.sql:1: \startpipeline is not supported`},
		{"SELECT 1;\n\\endpipeline\n", `a.sql:2: \endpipeline is not supported`},
		{"\\syncpipeline\n", `a.sql:1: \syncpipeline is not supported`},
		{"SELECT 1;\n\\frobnicate 3\n", `a.sql:2: unknown meta-command \frobnicate`},
		{"SELECT 1 \\; SELECT 2;\n", `a.sql:1: \; (several SQL commands sent as one) is not supported`},
		{"\\set x 1 +\n", `a.sql:1: \set x: column 4: unexpected end of expression`},
		{"SELECT 1;\n\\set x foo(2)\n", `a.sql:2: \set x: column 1: unknown function "foo"`},
		{"\\set 1x 5\n", `a.sql:1: \set: invalid variable name "1x"`},
		{"\\set x\n", `a.sql:1: \set needs a variable name and an expression`},
		{"\\sleep 1 fortnights\n", `a.sql:1: \sleep: unknown time unit "fortnights": use us, ms or s`},
		{"\\sleep 1 ms 4\n", `a.sql:1: \sleep takes a duration and an optional unit`},
		{"\\sleep 1.5 ms\n", `a.sql:1: \sleep: "1.5" is not an integer or a :variable`},
		{"\\gset\n", `a.sql:1: \gset must follow an SQL command`},
		{"SELECT 1 \\gset\n\\gset\n", `a.sql:2: \gset must follow an SQL command`},
		{"SELECT 1;\n\\set x 1\n\\gset\n", `a.sql:3: \gset must follow an SQL command`},
		{"SELECT 1 \\gset a b\n", `a.sql:1: \gset takes at most one argument`},
		{"SELECT 1;\n\\endif\n", `a.sql:2: \endif without a matching \if`},
		{"\\else\n", `a.sql:1: \else without a matching \if`},
		{"\\elif true\n", `a.sql:1: \elif without a matching \if`},
		{"SELECT 1;\n\\if true\n\\if false\nSELECT 2;\n\\endif\n", `a.sql:2: \if without a matching \endif`},
		{"\\if true\n\\else\n\\else\n\\endif\n", `a.sql:3: \else after \else (the \if is at line 1)`},
		{"\\if true\n\\else\n\\elif false\n\\endif\n", `a.sql:3: \elif after \else (the \if is at line 1)`},
		{"\\if true\n\\else 1\n\\endif\n", `a.sql:2: \else takes no argument`},
		{"\\if\n\\endif\n", `a.sql:1: \if needs an expression`},
		{"\\if 1 <\n\\endif\n", `a.sql:1: \if: column 4: unexpected end of expression`},
		{"SELECT 'abc\n\n", `a.sql:1: unterminated quoted string`},
		{"SELECT 1;\nSELECT $x$ abc;\n", `a.sql:2: unterminated dollar-quoted string $x$`},
		{"SELECT /* 1;\n", `a.sql:1: unterminated /* comment`},
		{"\n-- nothing\n", `a.sql:1: the script is empty`},
		{"\\\n", `a.sql:1: a lone backslash`},
	} {
		_, err := Parse("a.sql", c.src)
		if err == nil {
			t.Errorf("%q parsed, want %q", c.src, c.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %q\nwant %q…", c.src, err, c.want)
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: %T is not a *ParseError", c.src, err)
		}
	}
}

func TestRun(t *testing.T) {
	src := `\set a 5
\set b :a * 2 \
   + 1
SELECT :a AS x, :b AS y \gset p_
\if :p_x > 4
  \set branch 'x'
\endif
`
	if _, err := Parse("r.sql", src); err == nil {
		t.Fatal("a quoted string in an expression parsed")
	}
	src = `\set a 5
\set b :a * 2 \
   + 1
SELECT :a AS x, :b AS y \gset p_
\if :p_x > 4
  \if :p_y = 0
    \set branch 1
  \elif :p_y = 11
    \set branch 2
  \else
    \set branch 3
  \endif
\elif true
  \set branch 4
\else
  \set branch 5
\endif
\sleep 10 ms
\sleep :a us
\sleep 2
\sleep -3 s
SELECT :branch, :client_id, :scale;
`
	sc, err := Parse("r.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	rec.rows[0] = [2][]any{{"x", "y"}, {int64(5), "11"}}
	st := NewState(7, 3, map[string]Value{"scale": int64(10)})
	if err := sc.Run(context.Background(), st, rec); err != nil {
		t.Fatal(err)
	}
	want := []string{"SELECT $1 AS x, $2 AS y a=5,b=11", "SELECT $1, $2, $3 branch=2,client_id=3,scale=10"}
	if !slices.Equal(rec.sent, want) {
		t.Errorf("sent %q, want %q", rec.sent, want)
	}
	if !slices.Equal(rec.slept, []time.Duration{10 * time.Millisecond, 5 * time.Microsecond, 2 * time.Second}) {
		t.Errorf("slept %v", rec.slept)
	}
	if v, _ := st.Get("p_y"); v != "11" {
		t.Errorf("p_y = %v", v)
	}
	if v, _ := st.Get("random_seed"); v != int64(7) {
		t.Errorf("random_seed = %v", v)
	}
	if _, ok := st.Get("default_seed"); !ok {
		t.Error("no default_seed")
	}
}

// Run's errors name the file and the line; an Executor's error stays
// reachable.
func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ src, want string }{
		{"SELECT 1;\n\nSELECT :aid;\n", "a.sql:3: undefined variable aid"},
		{"\\set x 1\n\\set y :x + :nope\n", "a.sql:2: undefined variable nope"},
		{"\\set x 1 / 0\n", "a.sql:1: division by zero"},
		{"\\set x random(5, 1)\n", "a.sql:1: random: empty range given to random"},
		{"\\sleep :t ms\n", "a.sql:1: undefined variable t"},
		{"\\if true\n\\elif :u\n\\endif\n", ""},
		{"\\if false\n\\elif :u\n\\endif\n", "a.sql:2: undefined variable u"},
		{"SELECT 1 \\gset\n", "a.sql:1: \\gset: invalid variable name \"?column?\": name the column (AS name)"},
	} {
		sc, err := Parse("a.sql", c.src)
		if err != nil {
			t.Fatal(err)
		}
		rec := newRecorder()
		rec.rows[0] = [2][]any{{"?column?"}, {int64(1)}}
		err = sc.Run(ctx, NewState(1, 0, nil), rec)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.src, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
	sc, err := Parse("b.sql", "BEGIN;\nUPDATE t SET x = 1;\nEND;\n")
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	rec.failAt = 1
	err = sc.Run(ctx, NewState(1, 0, nil), rec)
	var re *RunError
	if !errors.Is(err, errFail) || !errors.As(err, &re) || re.Line != 2 || err.Error() != "b.sql:2: "+errFail.Error() {
		t.Errorf("error %v (%T), want b.sql:2 wrapping the executor's", err, err)
	}
}

// The same seed issues the same statements; another client, or another
// seed, others.
func TestSeedsRepeat(t *testing.T) {
	sc, err := Parse("builtin:tpcb-like", tpcb)
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64, client int) []string {
		rec := newRecorder()
		st := NewState(seed, client, map[string]Value{"scale": int64(1)})
		for range 20 {
			if err := sc.Run(context.Background(), st, rec); err != nil {
				t.Fatal(err)
			}
		}
		return rec.sent
	}
	a, b := run(42, 0), run(42, 0)
	if !slices.Equal(a, b) {
		t.Error("the same seed and client issued different statements")
	}
	if slices.Equal(a, run(42, 1)) {
		t.Error("two clients issued the same statements")
	}
	if slices.Equal(a, run(43, 0)) {
		t.Error("two seeds issued the same statements")
	}
	d0, _ := NewState(42, 0, nil).Get("default_seed")
	d1, _ := NewState(42, 5, nil).Get("default_seed")
	if d0 != d1 {
		t.Error("default_seed differs between clients of a run")
	}
}

// Pick honours the weights within a tolerance.
func TestPickWeights(t *testing.T) {
	scripts := make([]*Script, 4)
	weights := []int{5, 1, 0, 4}
	st := NewState(99, 0, nil)
	const n = 100000
	count := make([]int, len(scripts))
	for range n {
		count[Pick(scripts, weights, st)]++
	}
	if count[2] != 0 {
		t.Errorf("a weight of 0 was picked %d times", count[2])
	}
	for i, w := range weights {
		want := float64(n) * float64(w) / 10
		sd := math.Sqrt(want * (1 - float64(w)/10))
		if math.Abs(float64(count[i])-want) > 5*sd+1 {
			t.Errorf("script %d (weight %d): %d picks, want %.0f ± %.0f", i, w, count[i], want, 5*sd)
		}
	}
	if Pick(scripts[:1], []int{1}, st) != 0 {
		t.Error("one script not picked")
	}
}

// permute is a bijection of [0, size) for sizes around powers of two and
// seeds, and depends on the seed.
func TestPermuteIsAPermutation(t *testing.T) {
	for _, size := range []int64{1, 2, 3, 7, 8, 9, 100, 1000, 1023, 1024, 1025, 4097} {
		for _, seed := range []uint64{0, 1, 5432, math.MaxUint64} {
			seen := make([]bool, size)
			moved := 0
			for i := range size {
				v := permute(i, size, seed)
				if v < 0 || v >= size || seen[v] {
					t.Fatalf("permute(%d, %d, %d) = %d: not a permutation", i, size, seed, v)
				}
				seen[v] = true
				if v != i {
					moved++
				}
			}
			if size >= 100 && moved < int(size)/2 {
				t.Errorf("size %d seed %d: only %d of %d moved", size, seed, moved, size)
			}
		}
	}
	// i is taken modulo size, negative ones too.
	if permute(13, 10, 7) != permute(3, 10, 7) || permute(-7, 10, 7) != permute(3, 10, 7) {
		t.Error("permute does not reduce i modulo size")
	}
	if permute(5, 1000, 1) == permute(5, 1000, 2) && permute(6, 1000, 1) == permute(6, 1000, 2) {
		t.Error("the seed changes nothing")
	}
	big := int64(math.MaxInt64)
	if v := permute(big-1, big, 3); v < 0 || v >= big {
		t.Errorf("permute near MaxInt64 = %d", v)
	}
}

// A NULL column makes a NULL variable, which an expression reads as NULL
// and a statement sends as NULL.
func TestGsetNull(t *testing.T) {
	sc, err := Parse("n.sql", "SELECT NULL AS n \\gset\n\\set isnull :n IS NULL\nSELECT :n, :isnull;\n")
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	rec.rows[0] = [2][]any{{"n"}, {nil}}
	if err := sc.Run(context.Background(), NewState(1, 0, nil), rec); err != nil {
		t.Fatal(err)
	}
	if want := "SELECT $1, $2 n=NULL,isnull=true"; rec.sent[1] != want {
		t.Errorf("sent %q, want %q", rec.sent[1], want)
	}
}

// A retry rewinds to the transaction's first try: the same random values
// and variables (a \gset of the failed try is forgotten), so it issues the
// same statements; without the rewind it would draw new ones.
func TestRewindRepeatsATry(t *testing.T) {
	sc, err := Parse("builtin:tpcb-like", tpcb)
	if err != nil {
		t.Fatal(err)
	}
	st := NewState(42, 0, map[string]Value{"scale": int64(1)})
	m := st.Mark()
	first := newRecorder()
	first.failAt = 2 // the SELECT fails: a serialization failure
	if err := sc.Run(context.Background(), st, first); !errors.Is(err, errFail) {
		t.Fatalf("the first try: %v", err)
	}
	st.Set("left", int64(1)) // anything the failed try set is forgotten
	st.Rewind(m)
	again := newRecorder()
	if err := sc.Run(context.Background(), st, again); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first.sent, again.sent[:len(first.sent)]) {
		t.Errorf("the retry issued %q, the first try %q", again.sent[:len(first.sent)], first.sent)
	}
	if _, ok := st.Get("left"); ok {
		t.Error("Rewind kept a variable set after Mark")
	}
	next := newRecorder()
	if err := sc.Run(context.Background(), st, next); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(next.sent, again.sent) {
		t.Error("the transaction after the retry repeated it: the generator went back too far")
	}
}
