package result

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

// Plausibility bounds: each registered figure has a range outside which
// no measurement can fall (Metric.Min and Metric.Max, set by the figure's
// owner when it registers it; a class default otherwise), and what comes
// in from outside (qpslab import, serve's POST /api/v1/results) is
// refused when a figure of a run falls outside its range, is not a
// number or is infinite (CheckFigures). What qpslab measures itself is
// stored as measured. The statistics that combine figures (arith.go) stay
// finite for any value, so a store written before the bounds, which may
// hold 1.7e308, is still drawn.

// Bound defaults for a figure registered without its own.
const (
	// DefaultMax bounds a figure registered without a Max: above a
	// million billion nothing qpslab follows is plausible.
	DefaultMax = 1e15
	// DayMs is a day in milliseconds: the longest plausible response
	// time of a latency in ms (the engine's p50 … max).
	DayMs = 86400e3
	// DayUs is a day in microseconds (db_bench's latencies, the runs'
	// raw latencies in µs).
	DayUs = 86400e6
	// MaxRate is the largest plausible rate of operations a second
	// (queries, transactions, events, rows of a load) on one server.
	MaxRate = 1e9
)

// Bounds is the plausible range of m's values: [Min, Max], with the
// class's default Max where m has none (a day for a latency class
// figure, DefaultMax otherwise).
func (m Metric) Bounds() (lo, hi float64) {
	hi = m.Max
	if hi == 0 {
		hi = DefaultMax
		if m.Class == ClassLatency {
			hi = DayMs
		}
	}
	return m.Min, hi
}

// Check says why v is not a plausible value of m (nil when it is).
func (m Metric) Check(v float64) error { return boundOf(m).check(v) }

// bound is a plausible range [lo, hi] of what it names, in its unit: a
// metric's, or a field's of the result type itself (a rate, a latency in
// µs) that no metric is.
type bound struct {
	name, unit string
	lo, hi     float64
}

func boundOf(m Metric) bound {
	lo, hi := m.Bounds()
	return bound{m.Name, m.Unit, lo, hi}
}

func (b bound) check(v float64) error {
	unit := ""
	if b.unit != "" {
		unit = " (" + b.unit + ")"
	}
	switch {
	case math.IsNaN(v):
		return fmt.Errorf("is not a number")
	case math.IsInf(v, 0):
		return fmt.Errorf("is infinite")
	case v > b.hi:
		return fmt.Errorf("is above the plausible %g for %s%s", b.hi, b.name, unit)
	case v < b.lo && b.lo == 0:
		return fmt.Errorf("is negative: %s cannot be", b.name)
	case v < b.lo:
		return fmt.Errorf("is below the plausible %g for %s%s", b.lo, b.name, unit)
	}
	return nil
}

// figureCheck is one figure of a run to check: where it is in the run's
// JSON, its value, and its bounds.
type figureCheck struct {
	field string
	v     float64
	b     bound
}

// CheckFigures refuses a run a figure of which is implausible: outside
// its metric's bounds, not a number, infinite, or negative where it
// cannot be. The error names the run by its index and test and the
// figure by its field in the results JSON, with the bound:
//
//	runs[3] (point-query): totals.reported = 1.7e+308 is above the plausible 1e+09 for qps: …
func CheckFigures(i int, r Run) error {
	for _, c := range figuresOf(r) {
		if err := c.b.check(c.v); err != nil {
			shown := strconv.FormatFloat(c.v, 'g', -1, 64)
			return fmt.Errorf("runs[%d] (%s): %s = %s %v: no measurement is so; fix the figure (or its unit) in what is imported", i, r.Test, c.field, shown, err)
		}
	}
	return nil
}

// figuresOf lists what CheckFigures checks of r: the totals' rates and
// response times, each operation kind's, the suite's figures, the rounds'
// headline values, and every registered figure the run has (the hardware
// cost per op, the server's counters).
func figuresOf(r Run) []figureCheck {
	metric := func(name string) bound { // a registered figure's, else the default
		if m, ok := Lookup(name); ok {
			return boundOf(m)
		}
		return bound{name, "", 0, DefaultMax}
	}
	rate := bound{"a rate", "/s", 0, MaxRate}
	lat := bound{"a response time", "µs", 0, DayUs} // the run keeps them in µs
	var out []figureCheck
	add := func(field string, v float64, b bound) {
		out = append(out, figureCheck{field, v, b})
	}
	latency := func(at string, l Latency) {
		for _, f := range []struct {
			n string
			v float64
		}{{"min_us", l.Min}, {"mean_us", l.Mean}, {"p50_us", l.P50}, {"p90_us", l.P90}, {"p95_us", l.P95}, {"p99_us", l.P99}, {"p999_us", l.P999}, {"max_us", l.Max}} {
			add(at+"."+f.n, f.v, lat)
		}
	}
	t := r.Totals
	add("totals.seconds", t.Seconds, bound{"a run's seconds", "s", 0, 1e8})
	add("totals.reported", t.Reported, metric("qps"))
	add("totals.qps", t.QPS, rate)
	add("totals.tps", t.TPS, rate)
	add("totals.rows_per_sec", t.RowsPerSec, bound{"a row rate", "rows/s", 0, 10 * MaxRate})
	add("rate", r.Rate, rate)
	latency("totals.response", t.Response)
	latency("totals.service", t.Service)
	for k, o := range t.Ops {
		at := fmt.Sprintf("totals.ops[%d]", k)
		add(at+".rate", o.Rate, rate)
		latency(at+".response", o.Response)
	}
	for _, name := range slices.Sorted(maps.Keys(t.Figures)) {
		add("totals.figures."+name, t.Figures[name], metric(name))
	}
	for k, rd := range r.Rounds {
		add(fmt.Sprintf("rounds[%d].value", k), rd.Value, metric("qps"))
		for _, name := range slices.Sorted(maps.Keys(rd.Figures)) {
			add(fmt.Sprintf("rounds[%d].figures.%s", k, name), rd.Figures[name], metric(name))
		}
	}
	for _, m := range All() {
		if m.Class == ClassFigure || m.Class == ClassLatency {
			continue // the totals' own fields, above
		}
		if v, ok := m.Of(r); ok {
			add("hw: "+m.Name, v, boundOf(m))
		}
	}
	if r.HW != nil && r.HW.Server != nil {
		for _, c := range r.HW.Server.Values {
			add("hw.server: "+c.Name, c.Value, bound{"a server counter", "", 0, DefaultMax})
		}
	}
	return out
}
