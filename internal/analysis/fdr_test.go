package analysis

import (
	"math"
	"testing"
)

// TestBHAdjust: Benjamini and Hochberg's (1995) own example, 15 p-values
// of which the procedure at 0.05 keeps the four smallest (the paper's
// answer; Bonferroni keeps three), and a small case worked by hand.
func TestBHAdjust(t *testing.T) {
	p := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000}
	q := BHAdjust(p)
	kept := 0
	for i, v := range q {
		if v <= 0.05 {
			kept++
			if i >= 4 {
				t.Errorf("p=%g kept (q=%g)", p[i], v)
			}
		}
	}
	if kept != 4 {
		t.Errorf("kept %d of 15, want 4: %v", kept, q)
	}
	// Sorted 0.005, 0.01, 0.03, 0.04, 0.5: m·p/rank 0.025, 0.025, 0.05,
	// 0.05, 0.5, already monotone; NaN stays out of m.
	got := BHAdjust([]float64{0.01, 0.04, math.NaN(), 0.03, 0.005, 0.5})
	want := []float64{0.025, 0.05, math.NaN(), 0.05, 0.025, 0.5}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || !math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("q[%d] = %g, want %g (all: %v)", i, got[i], want[i], got)
		}
	}
	// Monotone step-down from the largest: 0.04 at rank 2 of 2 is 0.04,
	// 0.03 at rank 1 is min(0.06, 0.04).
	if got := BHAdjust([]float64{0.03, 0.04}); math.Abs(got[0]-0.04) > 1e-12 || math.Abs(got[1]-0.04) > 1e-12 {
		t.Errorf("step-up monotonicity: %v", got)
	}
}

// TestCorrectFDR: over one label's tests, the changes whose adjusted
// p-values exceed the level are marked and counted, the load is no test,
// and the rest of the verdict stays as judged.
func TestCorrectFDR(t *testing.T) {
	c := &Comparison{Others: []string{"b"}, Tally: make([]Tally, 1)}
	ps := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000}
	for i, p := range ps {
		kind := KindSame
		if p < 0.05 {
			kind = KindWorse
		}
		c.Rows = append(c.Rows, Row{Test: "t", Threads: i + 1, Group: "g", Others: []Cell{{Verdict: Verdict{P: p, Level: 0.05, Kind: kind, Significant: p < 0.05}}}})
	}
	// The load's p of 0.9 would change m: it is left out.
	c.Rows = append(c.Rows, Row{Test: "load", Group: "load", Others: []Cell{{Verdict: Verdict{P: 0.9, Level: 0.05, Kind: KindSame}}}})
	correctFDR(c)
	if n := c.Tally[0].NotAfterFDR; n != 5 {
		t.Errorf("%d changes not after correction, want 5 (9 called, 4 kept)", n)
	}
	for i, r := range c.Rows[:len(ps)] {
		v := r.Others[0].Verdict
		if v.NotAfterFDR != (i >= 4 && i < 9) || v.Kind != map[bool]string{true: KindWorse, false: KindSame}[ps[i] < 0.05] {
			t.Errorf("p=%g: not after FDR %v, kind %s, q %g", ps[i], v.NotAfterFDR, v.Kind, v.Q)
		}
		if v.NotAfterFDR && v.Decided() {
			t.Errorf("p=%g: a change the correction does not keep is decided: --until-decided would stop it", ps[i])
		}
	}
	if v := c.Rows[len(ps)].Others[0].Verdict; v.Q != 0 {
		t.Errorf("the load was corrected: %+v", v)
	}
}

// TestCorrectFDRFamilies: the cost verdicts (server CPU per operation)
// are corrected over the label's tests as a family of their own, and the
// metrics table's per-op verdicts one family per label and metric: a
// family of tiny p-values beside the example's does not thin it, and the
// example's own five uncorrected calls are marked in each.
func TestCorrectFDRFamilies(t *testing.T) {
	ps := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000}
	verdict := func(p float64) Verdict {
		kind := KindSame
		if p < 0.05 {
			kind = KindWorse
		}
		return Verdict{P: p, Level: 0.05, Kind: kind, Significant: p < 0.05}
	}
	c := &Comparison{Others: []string{"b"}, Tally: make([]Tally, 1)}
	for i, p := range ps {
		cost := verdict(p)
		c.Rows = append(c.Rows, Row{Test: "t", Threads: i + 1, Group: "g", Others: []Cell{{Verdict: verdict(1e-6), Cost: &cost}}})
	}
	correctFDR(c)
	if got := c.Tally[0]; got.NotAfterFDR != 0 || got.CostNotAfterFDR != 5 {
		t.Errorf("rates not after correction %d (want 0), costs %d (want 5)", got.NotAfterFDR, got.CostNotAfterFDR)
	}
	for i, r := range c.Rows {
		if r.Others[0].Cost.NotAfterFDR != (i >= 4 && i < 9) {
			t.Errorf("cost p=%g: not after FDR %v (q %g)", ps[i], r.Others[0].Cost.NotAfterFDR, r.Others[0].Cost.Q)
		}
	}

	// Metrics: three labels; label 1's first metric holds the example,
	// its second tiny p-values; label 2's first metric tiny p-values.
	var tables []MetricTable
	for _, p := range ps {
		tables = append(tables, MetricTable{Rows: []MetricRow{
			{Label: "a"},
			{Label: "b", Verdicts: []Verdict{verdict(p), verdict(1e-6)}, HonestVerdicts: []Verdict{verdict(p)}},
			{Label: "c", Verdicts: []Verdict{verdict(1e-6), verdict(p)}},
		}})
	}
	correctMetricsFDR(tables, 3)
	count := func(label, hw, metric int) (n int) {
		for _, tb := range tables {
			vs := tb.Rows[label].Verdicts
			if hw == 1 {
				vs = tb.Rows[label].HonestVerdicts
			}
			if vs[metric].NotAfterFDR {
				n++
			}
		}
		return n
	}
	for _, c := range []struct{ label, hw, metric, want int }{{1, 0, 0, 5}, {1, 0, 1, 0}, {1, 1, 0, 5}, {2, 0, 0, 0}, {2, 0, 1, 5}} {
		if got := count(c.label, c.hw, c.metric); got != c.want {
			t.Errorf("label %d, %s metric %d: %d not after correction, want %d", c.label, map[int]string{0: "hw", 1: "honest"}[c.hw], c.metric, got, c.want)
		}
	}
}
