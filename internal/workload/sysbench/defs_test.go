package sysbench

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/testenv"
)

func labels(ts []Test) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Label())
	}
	return out
}

// The 42 of §1.4 (2023–2024), in run order, as the archived qps tables name them.
var want42 = strings.Fields(`
point-query.pre_range=100
random-points.pre_range=10 random-points.pre_range=100 random-points.pre_range=1000
read-only.pre_range=10 read-only.pre_range=100 read-only.pre_range=10000
points-covered-pk.pre_range=100 points-notcovered-pk.pre_range=100
points-covered-si.pre_range=100 points-notcovered-si.pre_range=100
range-covered-pk.pre_range=100 range-notcovered-pk.pre_range=100
range-covered-si.pre_range=100 range-notcovered-si.pre_range=100
update-inlist_range=100 update-index_range=100 update-nonindex_range=100 update-one_range=100
update-zipf_range=100 write-only_range=10000 read-write_range=10 read-write_range=100
read-only_range=10 read-only_range=100 read-only_range=10000
point-query_range=100
random-points_range=10 random-points_range=100 random-points_range=1000
hot-points_range=100
points-covered-pk_range=100 points-notcovered-pk_range=100
points-covered-si_range=100 points-notcovered-si_range=100
range-covered-pk_range=100 range-notcovered-pk_range=100
range-covered-si_range=100 range-notcovered-si_range=100
scan_range=100
delete_range=100 insert_range=100`)

// HEAD's order (§1.4, 2025 onward).
var wantHEAD = strings.Fields(`
point-query.warm_range=100 scan.warmpre_range=100
point-query.pre_range=100 range-notcovered-si.pre_range=100
update-inlist_range=100 update-index_range=100 update-nonindex_range=100 update-one_range=100
update-zipf_range=100 write-only_range=10000 read-write_range=10 read-write_range=100
scan.warm_range=100 scan_range=100
read-only_range=10 read-only_range=100 read-only_range=10000
read-only-simple_range=1000 read-only-sum_range=1000 read-only-order_range=1000
read-only-distinct_range=1000 read-only-count_range=1000
point-query_range=100
random-points_range=10 random-points_range=100 random-points_range=1000
hot-points_range=100
points-covered-pk_range=100 points-notcovered-pk_range=100
range-covered-pk_range=100 range-notcovered-pk_range=100
points-covered-si.warm_range=100 points-covered-si_range=100 points-notcovered-si_range=100
range-covered-si_range=100 range-notcovered-si_range=100
delete_range=100 insert_range=100`)

func TestOrders(t *testing.T) {
	o := Order2024()
	if got := o[0]; got.Label() != "point-query.warm_range=100" || !got.Load || !got.Postwrite || !got.PerTable || !got.Warm() {
		t.Errorf("Order2024 starts with %+v, want the point-query.warm load step", got)
	}
	if got := labels(Report2024()); !slices.Equal(got, want42) {
		t.Errorf("Report2024:\n got %q\nwant %q", got, want42)
	}
	if got := labels(o[1:]); !slices.Equal(got, want42) {
		t.Errorf("Order2024 after the load step differs from the 42")
	}
	var pre, writes, post int
	for _, x := range Report2024() {
		switch {
		case x.Variant == "pre":
			pre++
		case x.Group5 == Writes:
			writes++
		default:
			post++
		}
	}
	if pre != 15 || writes != 10 || post != 17 {
		t.Errorf("42 = %d pre + %d writes + %d post, want 15 + 10 + 17", pre, writes, post)
	}
	if got := labels(OrderHEAD()); !slices.Equal(got, wantHEAD) {
		t.Errorf("OrderHEAD:\n got %q\nwant %q", got, wantHEAD)
	}
	if n := len(ReportHEAD()); n != 32 {
		t.Errorf("ReportHEAD has %d tests, want 32", n)
	}
	for _, x := range ReportHEAD() {
		if x.Variant != "" {
			t.Errorf("ReportHEAD holds %s", x.Label())
		}
	}
	var pw []string
	for _, x := range Order2024() {
		if x.Postwrite {
			pw = append(pw, x.Label())
		}
	}
	if want := []string{"point-query.warm_range=100", "read-write_range=100"}; !slices.Equal(pw, want) {
		t.Errorf("postwrite after %q, want %q", pw, want)
	}
}

func TestGroups(t *testing.T) {
	count := func(ts []Test, f func(Test) string, layout []string) []int {
		n := make([]int, len(layout))
		for _, x := range ts {
			i := slices.Index(layout, f(x))
			if i < 0 {
				t.Errorf("%s: group %q not in %q", x.Label(), f(x), layout)
				continue
			}
			n[i]++
		}
		return n
	}
	if got := count(Report2024(), func(x Test) string { return x.Group5 }, Layout5); !slices.Equal(got, []int{9, 8, 9, 6, 10}) {
		t.Errorf("5-group sizes over the 42: %v, want [9 8 9 6 10]", got)
	}
	if got := count(ReportHEAD(), func(x Test) string { return x.Group4 }, Layout4); !slices.Equal(got, []int{9, 5, 8, 10}) {
		t.Errorf("4-group sizes over the 32: %v, want [9 5 8 10]", got)
	}
	for _, x := range append(Order2024(), OrderHEAD()...) {
		if x.Warm() && (x.Group4 != "" || x.Group5 != "") {
			t.Errorf("warm run %s is in a group", x.Label())
		}
	}
}

func find(t *testing.T, label string) Test {
	t.Helper()
	for _, x := range append(Order2024(), OrderHEAD()...) {
		if x.Label() == label {
			return x
		}
	}
	t.Fatalf("no test %s", label)
	return Test{}
}

func TestDefinitions(t *testing.T) {
	for _, c := range []struct {
		label              string
		stmts              int
		time               Secs
		prepared, retry    bool
		bind, krows, table bool
		g5, g4             string
	}{
		{"point-query_range=100", 1, ReadSecs, true, false, false, false, false, Point1, Point},
		{"random-points.pre_range=1000", 1, ReadSecs, true, false, false, false, false, Point2, Point},
		{"read-only_range=10000", 16, ReadSecs, true, false, false, false, false, Range2, RangeAgg},
		{"read-only.pre_range=10", 16, ReadSecs, true, false, false, false, false, Range2, RangeAgg},
		{"read-only-simple_range=1000", 13, ReadSecs, true, false, false, false, false, Range2, RangeAgg},
		{"read-only-distinct_range=1000", 13, ReadSecs, true, false, false, false, false, Range2, RangeAgg},
		{"read-only-count_range=1000", 1, ReadSecs, true, false, false, false, false, Range2, RangeAgg},
		{"range-covered-si_range=100", 1, ReadSecs, true, false, false, false, false, Range1, RangeNoAgg},
		{"scan_range=100", 1, InsertSecs, false, false, true, true, true, Range1, RangeNoAgg},
		{"scan.warm_range=100", 1, WarmSecs, false, false, true, true, true, "", ""},
		{"update-inlist_range=100", 1, WriteSecs, true, true, false, false, false, Writes, Writes},
		{"write-only_range=10000", 6, ReadSecs, true, true, false, false, false, Writes, Writes},
		{"read-write_range=10", 20, WriteSecs, true, true, false, false, false, Writes, Writes},
		{"delete_range=100", 1, WriteSecs, true, true, false, false, false, Writes, Writes},
		{"insert_range=100", 1, InsertSecs, false, true, false, false, false, Writes, Writes},
		{"points-covered-si.warm_range=100", 1, ReadSecs, true, false, false, false, false, "", ""},
	} {
		x := find(t, c.label)
		got := []any{x.Statements, x.Time, x.Prepared, x.Retry, x.BindTable, x.Krows, x.PerTable, x.Group5, x.Group4}
		want := []any{c.stmts, c.time, c.prepared, c.retry, c.bind, c.krows, c.table, c.g5, c.g4}
		if !slices.Equal(got, want) {
			t.Errorf("%s: statements, time, prepared, retry, bind, krows, per-table, groups = %v, want %v", c.label, got, want)
		}
	}
	if d := (WriteSecs).Of(600*time.Second, 900*time.Second, 930*time.Second); d != 900*time.Second {
		t.Errorf("WriteSecs.Of = %v", d)
	}
	if d := (WarmSecs).Of(1, 2, 3); d != 60*time.Second {
		t.Errorf("WarmSecs.Of = %v", d)
	}
}

func TestSelect(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		want     []string
		err      string
	}{
		{[]string{"read-only*"}, []string{"read-only_range=10", "read-only_range=100", "read-only_range=10000",
			"read-only-simple_range=1000", "read-only-sum_range=1000", "read-only-order_range=1000",
			"read-only-distinct_range=1000", "read-only-count_range=1000"}, ""},
		{[]string{"point-query"}, []string{"point-query.warm_range=100", "point-query.pre_range=100", "point-query_range=100"}, ""},
		{[]string{"point-query.pre"}, []string{"point-query.pre_range=100"}, ""},
		{[]string{"random-points_range=1000", "scan"}, []string{"scan.warmpre_range=100", "scan.warm_range=100", "scan_range=100", "random-points_range=1000"}, ""},
		{[]string{"*_range=10"}, []string{"read-write_range=10", "read-only_range=10", "random-points_range=10"}, ""},
		{[]string{"nope*"}, nil, `no test matches "nope*"`},
		{[]string{"[x"}, nil, "syntax error"},
	} {
		got, err := Select(OrderHEAD(), c.patterns...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Select(%q) error %v, want %q", c.patterns, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(labels(got), c.want) {
			t.Errorf("Select(%q) = %q, %v; want %q", c.patterns, labels(got), err, c.want)
		}
	}
}

func randC(r *rand.Rand) string {
	var b [cLen]byte
	digits(r, b[:])
	return string(b[:])
}

func randPad(r *rand.Rand) string {
	var b [padLen]byte
	digits(r, b[:])
	return string(b[:])
}

// digitsOneByOne is digits as first written, a digit at a time: the rows
// a seed loads must not change with the faster one.
func digitsOneByOne(r *rand.Rand, b []byte) {
	var u uint64
	left := 0
	for i := range b {
		if i%12 == 11 {
			b[i] = '-'
			continue
		}
		if left == 0 {
			u, left = r.Uint64N(1e18), 18
		}
		b[i] = byte('0' + u%10)
		u /= 10
		left--
	}
}

func TestDigitsAsBefore(t *testing.T) {
	a, b := newRand(3, 4), newRand(3, 4)
	for n := range 2000 {
		size := []int{cLen, padLen, 11, 23, 1}[n%5]
		got, want := make([]byte, size), make([]byte, size)
		digits(a, got)
		digitsOneByOne(b, want)
		if string(got) != string(want) {
			t.Fatalf("draw %d of %d bytes: %q, before %q", n, size, got, want)
		}
	}
}

func BenchmarkDigits(b *testing.B) {
	r := newRand(1, 2)
	var c [cLen]byte
	for b.Loop() {
		digits(r, c[:])
	}
}

func TestDigits(t *testing.T) {
	r := newRand(1, 2)
	for range 100 {
		for _, s := range []string{randC(r), randPad(r)} {
			groups := strings.Split(s, "-")
			if len(s) != 12*len(groups)-1 || (len(groups) != 10 && len(groups) != 5) {
				t.Fatalf("%q: %d chars in %d groups", s, len(s), len(groups))
			}
			for _, g := range groups {
				if len(g) != 11 || strings.Trim(g, "0123456789") != "" {
					t.Fatalf("%q: group %q", s, g)
				}
			}
		}
	}
	// Every digit about equally often in every position.
	var n [10]int
	for range 20000 {
		n[randC(r)[5]-'0']++
	}
	for d, c := range n {
		if c < 1800 || c > 2200 {
			t.Errorf("digit %d came %d times in 20000, want about 2000", d, c)
		}
	}
}

// zipfPMF is P(k) = k^-e / sum_{i<=n} i^-e.
func zipfPMF(n int, e float64) []float64 {
	p := make([]float64, n+1)
	var sum float64
	for k := 1; k <= n; k++ {
		p[k] = math.Pow(float64(k), -e)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return p
}

func TestZipf(t *testing.T) {
	const n, draws = 1000, 400_000
	for _, e := range []float64{0.8, 1, 1.5} {
		z := newZipf(n, e)
		r := newRand(42, 7)
		count := make([]int, n+1)
		for range draws {
			k := z.next(r)
			if k < 1 || k > n {
				t.Fatalf("e=%v: drew %d outside [1, %d]", e, k, n)
			}
			count[k]++
		}
		for k := 2; k <= n; k++ {
			if count[k] > count[1] {
				t.Errorf("e=%v: id %d drawn %d times, more than id 1 (%d)", e, k, count[k], count[1])
				break
			}
		}
		p := zipfPMF(n, e)
		for _, k := range []int{1, 2, 3, 10, 100} {
			exp := p[k] * draws
			if d := math.Abs(float64(count[k]) - exp); d > 5*math.Sqrt(exp) {
				t.Errorf("e=%v: id %d drawn %d times, want %.0f ± %.0f", e, k, count[k], exp, 5*math.Sqrt(exp))
			}
		}
		// Skew: the hottest 10% of ids take about the share the pmf gives them
		// (52% for e=0.8), far above a uniform 10%.
		var top, want float64
		for k := 1; k <= n/10; k++ {
			top += float64(count[k])
			want += p[k]
		}
		if math.Abs(top/draws-want) > 0.01 || top/draws < 0.4 {
			t.Errorf("e=%v: the top 10%% of ids got %.3f of draws, want %.3f", e, top/draws, want)
		}
	}
}

func TestQueriesPerProtocol(t *testing.T) {
	for _, c := range []struct {
		label string
		proto string
		want  []string
	}{
		{"point-query_range=100", "mysql", []string{"SELECT c FROM sbtest2 WHERE id=?"}},
		{"point-query_range=100", "postgres", []string{"SELECT c FROM sbtest2 WHERE id=$1"}},
		{"read-only-sum_range=1000", "postgres", []string{"SELECT c FROM sbtest2 WHERE id=$1", "SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN $1 AND $2"}},
		{"range-notcovered-si_range=100", "mysql", []string{"SELECT k, c FROM sbtest2 WHERE k BETWEEN ? AND ?"}},
		{"read-only-count_range=1000", "mysql", []string{"SELECT count(c) FROM sbtest2 WHERE id BETWEEN ? AND ?"}},
		{"scan_range=100", "mysql", []string{"SELECT * FROM sbtest2 WHERE LENGTH(c) < 0"}},
		{"update-nonindex_range=100", "postgres", []string{"UPDATE sbtest2 SET c=$1 WHERE id=$2"}},
		{"write-only_range=10000", "postgres", []string{
			"UPDATE sbtest2 SET k=k+1 WHERE id=$1", "UPDATE sbtest2 SET c=$1 WHERE id=$2",
			"DELETE FROM sbtest2 WHERE id=$1", "INSERT INTO sbtest2 (id, k, c, pad) VALUES ($1, $2, $3, $4)"}},
		{"insert_range=100", "mysql", []string{}},
	} {
		got := find(t, c.label).Queries(testenv.DialectOf(client.Protocol(c.proto)), 2)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s on %s: %q, want %q", c.label, c.proto, got, c.want)
		}
	}
	in := find(t, "update-inlist_range=100").Queries(client.PostgresDialect, 1)[0]
	if want := "UPDATE sbtest1 SET c=$1 WHERE id IN ($2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"; in != want {
		t.Errorf("update-inlist: %q, want %q", in, want)
	}
	if q := find(t, "random-points_range=1000").Queries(client.MySQLDialect, 1)[0]; strings.Count(q, "?") != 1000 {
		t.Errorf("random-points 1000 has %d placeholders", strings.Count(q, "?"))
	}
	for _, n := range []string{"points-covered-pk", "points-notcovered-si", "hot-points"} {
		if q := find(t, n+"_range=100").Queries(client.PostgresDialect, 1)[0]; !strings.Contains(q, "$100)") || strings.Contains(q, "$101") {
			t.Errorf("%s: %q, want 100 placeholders", n, q)
		}
	}
	if got, want := insertText(client.PostgresDialect, 3, 7, "c", "p"), "INSERT INTO sbtest3 (k, c, pad) VALUES (7, 'c', 'p')"; got != want {
		t.Errorf("insert on PostgreSQL: %q, want %q", got, want)
	}
	if got, want := insertText(client.MySQLDialect, 3, 7, "c", "p"), "INSERT INTO sbtest3 (id, k, c, pad) VALUES (0, 7, 'c', 'p')"; got != want {
		t.Errorf("insert on MySQL: %q, want %q", got, want)
	}
}
