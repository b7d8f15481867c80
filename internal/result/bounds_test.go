package result

import (
	"math"
	"strings"
	"testing"
)

// A run of plausible figures passes; one implausible figure is refused
// with the run's index and test, the field and the bound in one line.
func TestCheckFigures(t *testing.T) {
	ok := Run{Test: "point-query", Totals: Totals{Seconds: 60, Reported: 12345.6, QPS: 12345.6, TPS: 617.3,
		Response: Latency{Count: 10, P50: 800, P99: 2500, Max: 90000}, Figures: map[string]float64{"sla%": 99.5}},
		Rounds: []Round{{Value: 12000}, {Value: 12600}}}
	if err := CheckFigures(0, ok); err != nil {
		t.Fatalf("a plausible run: %v", err)
	}
	for _, c := range []struct {
		change func(*Run)
		want   string
	}{
		{func(r *Run) { r.Totals.Reported = 1.7e308 }, "runs[3] (point-query): totals.reported = 1.7e+308 is above the plausible 1e+09 for qps"},
		{func(r *Run) { r.Totals.QPS = -5 }, "totals.qps = -5 is negative"},
		{func(r *Run) { r.Totals.TPS = math.NaN() }, "totals.tps = NaN is not a number"},
		{func(r *Run) { r.Totals.RowsPerSec = math.Inf(1) }, "totals.rows_per_sec = +Inf is infinite"},
		{func(r *Run) { r.Totals.Response.P99 = 1e12 }, "totals.response.p99_us = 1e+12 is above the plausible 8.64e+10 for a response time (µs)"},
		{func(r *Run) { r.Rounds[1].Value = 2e9 }, "rounds[1].value = 2e+09 is above"},
		{func(r *Run) { r.Totals.Figures["unregistered"] = 1e16 }, "totals.figures.unregistered = 1e+16 is above the plausible 1e+15"},
		{func(r *Run) { r.Totals.Ops = []OpTotals{{Rate: 1e10}} }, "totals.ops[0].rate = 1e+10 is above"},
		{func(r *Run) { r.HW = &HW{Server: &ServerCounters{Values: []CounterValue{{Name: "x", Value: 1e300}}}} }, "hw.server: x = 1e+300 is above the plausible 1e+15"},
		{func(r *Run) { r.Rounds[0].Figures = map[string]float64{"sla%": 101} }, "rounds[0].figures.sla% = 101 is above"},
	} {
		r := ok
		r.Totals.Figures = map[string]float64{"sla%": 99.5}
		r.Rounds = append([]Round{}, ok.Rounds...)
		c.change(&r)
		err := CheckFigures(3, r)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want one line with %q", err, c.want)
		}
	}
	// A metric's own bounds: a fairness index is 0 to 1.
	jain := Metric{Name: "jain", Class: ClassFigure, Max: 1}
	if err := jain.Check(1.5); err == nil || err.Error() != "is above the plausible 1 for jain" {
		t.Errorf("fairness 1.5: %v", err)
	}
	if err := jain.Check(0.5); err != nil {
		t.Errorf("fairness 0.5: %v", err)
	}
	if lo, hi := (Metric{Class: ClassLatency}).Bounds(); lo != 0 || hi != DayMs {
		t.Errorf("a latency's default bounds: %g, %g", lo, hi)
	}
}
