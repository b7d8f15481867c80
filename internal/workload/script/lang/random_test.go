package lang

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// draw evaluates expr n times for one client with a fixed seed and counts
// each value.
func draw(t *testing.T, expr string, n int) map[int64]int {
	t.Helper()
	e, err := parseExpr(expr)
	if err != nil {
		t.Fatal(err)
	}
	st := NewState(20260101, 0, nil)
	count := map[int64]int{}
	for range n {
		v, err := st.eval(e)
		if err != nil {
			t.Fatal(err)
		}
		count[v.(int64)]++
	}
	return count
}

// checkFreq compares each value's count with the probability the manual
// gives it: within 5 standard deviations, and nothing outside [lb, ub].
func checkFreq(t *testing.T, name string, count map[int64]int, n int, lb, ub int64, p func(i int64) float64) {
	t.Helper()
	total := 0.0
	for i := lb; i <= ub; i++ {
		pi := p(i)
		total += pi
		want := float64(n) * pi
		sd := math.Sqrt(want * (1 - pi))
		if got := float64(count[i]); math.Abs(got-want) > 5*sd+2 {
			t.Errorf("%s: %d drawn %v times, want %.0f ± %.0f", name, i, got, want, 5*sd)
		}
	}
	if math.Abs(total-1) > 1e-9 {
		t.Fatalf("%s: the probabilities add up to %v", name, total)
	}
	for v := range count {
		if v < lb || v > ub {
			t.Errorf("%s: %d is outside [%d, %d]", name, v, lb, ub)
		}
	}
}

const draws = 200000

func TestRandomUniform(t *testing.T) {
	c := draw(t, "random(-3, 6)", draws)
	checkFreq(t, "random(-3, 6)", c, draws, -3, 6, func(int64) float64 { return 0.1 })
	c = draw(t, "random(7, 7)", 10)
	if c[7] != 10 {
		t.Errorf("random(7, 7): %v", c)
	}
	// The widest range allowed stays in it.
	c = draw(t, "random(-9223372036854775806, 0)", 1000)
	neg := 0
	for v, k := range c {
		if v <= -4611686018427387904 {
			neg += k
		}
	}
	if neg < 400 || neg > 600 {
		t.Errorf("random over 2^63 values: %d of 1000 in the lower half", neg)
	}
}

// random_exponential: the manual's f(x) = exp(−p(x−min)/(max−min+1)) /
// (1−exp(−p)), i drawn with probability f(i) − f(i+1).
func TestRandomExponential(t *testing.T) {
	for _, c := range []struct {
		lb, ub int64
		p      float64
	}{{1, 10, 5}, {0, 49, 0.5}, {100, 119, 20}} {
		expr := fmt.Sprintf("random_exponential(%d, %d, %g)", c.lb, c.ub, c.p)
		f := func(x int64) float64 {
			return math.Exp(-c.p*float64(x-c.lb)/float64(c.ub-c.lb+1)) / (1 - math.Exp(-c.p))
		}
		checkFreq(t, expr, draw(t, expr, draws), draws, c.lb, c.ub, func(i int64) float64 { return f(i) - f(i+1) })
	}
}

// random_gaussian: the manual's (Φ(2p(i−min−μ+0.5)/(max−min+1)) −
// Φ(2p(i−min−μ−0.5)/(max−min+1))) / (2Φ(p) − 1), μ = (max−min)/2.
func TestRandomGaussian(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, c := range []struct {
		lb, ub int64
		p      float64
	}{{1, 10, 2}, {1, 21, 2.5}, {-10, 9, 5}} {
		expr := fmt.Sprintf("random_gaussian(%d, %d, %g)", c.lb, c.ub, c.p)
		n := float64(c.ub - c.lb + 1)
		mu := float64(c.ub-c.lb) / 2
		prob := func(i int64) float64 {
			x := float64(i - c.lb)
			return (phi(2*c.p*(x-mu+0.5)/n) - phi(2*c.p*(x-mu-0.5)/n)) / (2*phi(c.p) - 1)
		}
		checkFreq(t, expr, draw(t, expr, draws), draws, c.lb, c.ub, prob)
	}
	// The manual: with parameter 4, about 67% of values come from the
	// middle quarter (1.0/parameter) of the range, 95% from the middle half.
	cnt := draw(t, "random_gaussian(0, 9999, 4)", draws)
	mid, half := 0, 0
	for v, k := range cnt {
		if v >= 3750 && v < 6250 {
			mid += k
		}
		if v >= 2500 && v < 7500 {
			half += k
		}
	}
	if f := float64(mid) / draws; math.Abs(f-0.683) > 0.01 {
		t.Errorf("gaussian(4): %.3f in the middle quarter, want about 0.68", f)
	}
	if f := float64(half) / draws; math.Abs(f-0.954) > 0.01 {
		t.Errorf("gaussian(4): %.3f in the middle half, want about 0.95", f)
	}
}

// random_zipfian: i drawn with probability ∝ 1/(i−min+1)^s: the
// frequencies as the formula, the ranks in order.
func TestRandomZipfian(t *testing.T) {
	for _, c := range []struct {
		lb, ub int64
		s      float64
	}{{1, 10, 1.5}, {5, 104, 1.001}, {0, 30, 3}, {1, 4, 1000}} {
		expr := fmt.Sprintf("random_zipfian(%d, %d, %g)", c.lb, c.ub, c.s)
		h := 0.0
		for k := 1; k <= int(c.ub-c.lb+1); k++ {
			h += math.Pow(float64(k), -c.s)
		}
		cnt := draw(t, expr, draws)
		checkFreq(t, expr, cnt, draws, c.lb, c.ub, func(i int64) float64 { return math.Pow(float64(i-c.lb+1), -c.s) / h })
		for i := c.lb; i < c.lb+3 && i < c.ub; i++ {
			if cnt[i] < cnt[i+1] {
				t.Errorf("%s: %d drawn less often (%d) than %d (%d)", expr, i, cnt[i], i+1, cnt[i+1])
			}
		}
	}
	// A large range: the head's share as the formula says.
	const n = 1000000
	h := 0.0
	for k := 1; k <= n; k++ {
		h += math.Pow(float64(k), -1.2)
	}
	cnt := draw(t, "random_zipfian(1, 1000000, 1.2)", draws)
	want := float64(draws) / h
	if got := float64(cnt[1]); math.Abs(got-want) > 5*math.Sqrt(want) {
		t.Errorf("zipfian over 1e6: 1 drawn %v times, want %.0f", got, want)
	}
}

// FuzzParse: any text either parses or is refused with one line naming
// the file and a line of it; a parsed script's statements have as many
// placeholders as variables, and running it panics nowhere.
func FuzzParse(f *testing.F) {
	for _, s := range []string{tpcb, "SELECT :a::int, ':b', $$:c$$ -- :d\n;", "\\if :x > 1\nSELECT 1 \\gset p_\n\\elif true\n\\sleep :x ms\n\\else\n\\set y hash(:x)\n\\endif\n",
		"\\set x CASE WHEN :a IS NULL THEN 1 ELSE random_zipfian(1, 10, 1.5) END\n", "SELECT E'\\'' || /* /* */ */ `:q`;\n\\setrandom x 1 2\n", "\\set a 1 + \\\n 2\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		sc, err := Parse("f.sql", src)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "f.sql:") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q", msg)
			}
			pe, ok := err.(*ParseError)
			if !ok || pe.Line < 1 || pe.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("error %q: line out of the file", msg)
			}
			return
		}
		for i, st := range sc.Statements {
			if st.Index != i || st.Line < 1 || strings.TrimSpace(st.Text) == "" {
				t.Fatalf("statement %d: %+v", i, st)
			}
			sql, vars := st.SQL(func(int) string { return "\x00" })
			if strings.Count(sql, "\x00")-strings.Count(st.Text, "\x00") != len(vars) {
				t.Fatalf("%q: %d placeholders for %d variables", sql, strings.Count(sql, "\x00"), len(vars))
			}
		}
		st := NewState(1, 0, map[string]Value{"x": int64(2), "a": nil})
		rec := newRecorder()
		for i := range sc.Statements {
			rec.rows[i] = [2][]any{{"c"}, {int64(i)}}
		}
		_ = sc.Run(context.Background(), st, rec)
	})
}

// FuzzExpr: any expression either fails to parse or evaluates to a value
// or an error, panicking nowhere.
func FuzzExpr(f *testing.F) {
	for _, s := range []string{"1 + 2 * 3", "random_gaussian(1, :x, 2.5)", "CASE WHEN :x > 1 THEN pi() ELSE -9223372036854775808 END", "hash_fnv1a(:x) # ~3 << 70", "NOT (1 IS NULL) AND 2.5e3 <= :x", "permute(:x, 7, 11) % 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		n, err := parseExpr(expr)
		if err != nil {
			return
		}
		st := NewState(1, 0, map[string]Value{"x": int64(5)})
		v, err := st.eval(n)
		if err == nil {
			switch v.(type) {
			case nil, int64, float64, bool:
			default:
				t.Fatalf("%q = %v (%T)", expr, v, v)
			}
		}
	})
}

func TestRandomOneValueRanges(t *testing.T) {
	for _, e := range []string{"random(5, 5)", "random_zipfian(5, 5, 2)", "random_gaussian(5, 5, 3)", "random_exponential(5, 5, 1)"} {
		if c := draw(t, e, 100); c[5] != 100 {
			t.Errorf("%s: %v", e, c)
		}
	}
}
