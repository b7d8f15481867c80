package engine

import (
	"strings"

	"github.com/qpslab/qpslab/internal/result"
)

// The figures the engine's runs have (result.Register): the headline and
// its rates, the response times, the stalls of the per-second series, the
// fairness between the connections (Fairness), and per operation kind its
// rate and response times (OpMetric).
func init() {
	result.Register(
		result.Metric{Name: "qps", Max: result.MaxRate, HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.1f", Sweep: 2,
			Of:   func(r result.Run) (float64, bool) { return r.Totals.Reported, r.Totals.Reported > 0 },
			Help: "the step's reported figure, in its unit: statements/s (sysbench), Krows/s (scan), rows/s (a load)"},
		result.Metric{Name: "tps", Max: result.MaxRate, Unit: "events/s", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.1f", Sweep: 1,
			Of: perSec(func(t result.Totals) float64 { return t.TPS }), Help: "events (transactions) per second"},
		result.Metric{Name: "rows/s", Max: 10 * result.MaxRate, Unit: "rows/s", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.0f",
			Of: perSec(func(t result.Totals) float64 { return t.RowsPerSec }), Help: "rows read or changed per second"},
		result.Metric{Name: "p50", Max: result.DayMs, Unit: "ms", Per: "event", Class: result.ClassLatency, Sweep: 5, Of: latency(func(l result.Latency) float64 { return l.P50 }), Help: "median response time"},
		result.Metric{Name: "p95", Max: result.DayMs, Unit: "ms", Per: "event", Class: result.ClassLatency, Sweep: 3, Of: latency(func(l result.Latency) float64 { return l.P95 }), Help: "95th percentile response time"},
		result.Metric{Name: "p99", Max: result.DayMs, Unit: "ms", Per: "event", Class: result.ClassLatency, Sweep: 4, Of: latency(func(l result.Latency) float64 { return l.P99 }), Help: "99th percentile response time"},
		result.Metric{Name: "max", Max: result.DayMs, Unit: "ms", Per: "event", Class: result.ClassLatency, Of: latency(func(l result.Latency) float64 { return l.Max }), Help: "largest response time"},
		result.Metric{Name: FigureStalls, Max: 1e8, Unit: "s", Per: "run", Class: result.ClassFigure, Verb: "%.0f",
			Help: "seconds whose rate fell below 10 % of the run's median second"},
		result.Metric{Name: FigureStallMax, Max: 1e8, Unit: "s", Per: "run", Class: result.ClassFigure, Verb: "%.0f",
			Help: "the longest run of consecutive stalled seconds"},
		result.Metric{Name: "jain", Max: 1, HigherIsBetter: true, Per: "run", Class: result.ClassFigure, Verb: "%.3f", Sweep: 6,
			Help: "Jain's fairness index of the connections' rates: 1 when all are served alike, 1/n when one gets everything"},
		result.Metric{Name: "conn/s.min", Max: result.MaxRate, Unit: "events/s", HigherIsBetter: true, Per: "connection", Class: result.ClassFigure, Verb: "%.1f",
			Help: "the slowest connection's events per second over the window"},
		result.Metric{Name: "conn/s.p5", Max: result.MaxRate, Unit: "events/s", HigherIsBetter: true, Per: "connection", Class: result.ClassFigure, Verb: "%.1f",
			Help: "the 5th percentile of the connections' events per second"},
		result.Metric{Name: "conn/s.median", Max: result.MaxRate, Unit: "events/s", HigherIsBetter: true, Per: "connection", Class: result.ClassFigure, Verb: "%.1f",
			Help: "the median connection's events per second"},
		result.Metric{Name: "conn/s.max", Max: result.MaxRate, Unit: "events/s", HigherIsBetter: true, Per: "connection", Class: result.ClassFigure, Verb: "%.1f",
			Help: "the fastest connection's events per second"},
		result.Metric{Name: "starved", Max: 1e6, Unit: "connections", Per: "run", Class: result.ClassFigure, Verb: "%.0f",
			Help: "connections that completed nothing in the whole window"},
		result.Metric{Name: FigureInFlight, Max: 1e9, Unit: "events", Per: "run", Class: result.ClassFigure, Verb: "%.0f",
			Help: "events in flight when a slice's window ended, counted when they completed (a slice keeps its tail)"},
		result.Metric{Name: "starved_1s", Max: 1e6, Unit: "connections", Per: "s", Class: result.ClassFigure, Verb: "%.0f",
			Help: "the most connections that completed nothing in one second"},
	)
	result.RegisterForm(result.Form{Names: []string{"KIND/s", "KIND.p50", "KIND.p90", "KIND.p95", "KIND.p99", "KIND.p99.9", "KIND.max"}, Metric: OpMetric})
}

// The stall figures of a run (SetStalls); the events in flight at the
// end of a window with no warm-up, counted (keepInFlight).
const (
	FigureInFlight = "inflight"
	FigureStalls   = "stalls"
	FigureStallMax = "stall_max"
)

// SetStalls records a run's stalled seconds (result.Stalls) as its figures:
// how many, and the longest run of them.
func SetStalls(t *result.Totals, stalled, longest float64) {
	if t.Figures == nil {
		t.Figures = map[string]float64{}
	}
	t.Figures[FigureStalls], t.Figures[FigureStallMax] = stalled, longest
}

func perSec(f func(result.Totals) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if r.Totals.Seconds <= 0 {
			return 0, false
		}
		return f(r.Totals), true
	}
}

func latency(f func(result.Latency) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if r.Totals.Response.Count == 0 {
			return 0, false
		}
		return f(r.Totals.Response) / 1000, true
	}
}

// OpMetric is a metric of one operation kind: "insert/s" (its rate),
// "insert.p99" (its response time).
func OpMetric(name string) (result.Metric, bool) {
	if kind, ok := strings.CutSuffix(name, "/s"); ok && validKind(kind) {
		plural := kind + "s"
		if strings.HasSuffix(kind, "y") {
			plural = strings.TrimSuffix(kind, "y") + "ies" // queries
		}
		return result.Metric{Name: name, Max: result.MaxRate, Unit: plural + "/s", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.1f",
			Help: kind + " operations per second",
			Of: func(r result.Run) (float64, bool) {
				o, ok := r.Totals.Op(kind)
				return o.Rate, ok && r.Totals.Seconds > 0
			}}, true
	}
	i := strings.LastIndexByte(name, '.')
	if strings.HasSuffix(name, ".p99.9") {
		i = len(name) - len(".p99.9")
	}
	if i <= 0 || !validKind(name[:i]) {
		return result.Metric{}, false
	}
	kind, q := name[:i], name[i+1:]
	var f func(result.Latency) float64
	switch q {
	case "p50":
		f = func(l result.Latency) float64 { return l.P50 }
	case "p90":
		f = func(l result.Latency) float64 { return l.P90 }
	case "p95":
		f = func(l result.Latency) float64 { return l.P95 }
	case "p99":
		f = func(l result.Latency) float64 { return l.P99 }
	case "p99.9":
		f = func(l result.Latency) float64 { return l.P999 }
	case "max":
		f = func(l result.Latency) float64 { return l.Max }
	default:
		return result.Metric{}, false
	}
	return result.Metric{Name: name, Max: result.DayMs, Unit: "ms", Per: kind, Class: result.ClassLatency, Help: q + " response time of " + kind + " operations",
		Of: func(r result.Run) (float64, bool) {
			o, ok := r.Totals.Op(kind)
			if !ok || o.Response.Count == 0 {
				return 0, false
			}
			return f(o.Response) / 1000, true
		}}, true
}

func validKind(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
