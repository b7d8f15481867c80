package analysis

import (
	"math"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/result"
)

// CounterChoice is which of the server's counters the per-op tables show:
// by default the flavor's curated set (what every run records); All, every
// one the runs recorded (qpslab run --counters all); Names, these beside
// the curated set.
type CounterChoice struct {
	All   bool
	Names []string
}

// ParseCounterChoice reads --counters: default (the curated set), all, or
// names to add.
func ParseCounterChoice(list []string) CounterChoice {
	var c CounterChoice
	for _, n := range list {
		switch n = strings.ToLower(strings.TrimSpace(n)); n {
		case "", "default":
		case "all":
			c.All = true
		default:
			c.Names = append(c.Names, n)
		}
	}
	return c
}

// CounterLine is one server figure of a test's table: the server tree's
// memory (pss_mb, rss_mb), a counter per op (NAME/o) or a level's mean
// (NAME.avg), the median over each row's runs.
type CounterLine struct {
	Metric string    `json:"metric"`
	Unit   string    `json:"unit,omitempty"`
	Values []float64 `json:"values"` // per row of the table; NaN where a label does not have it
}

// MetricsCounters is Metrics with the server counters of choice c.
func MetricsCounters(sets []Set, testPattern string, c CounterChoice) ([]MetricTable, error) {
	return metrics(sets, testPattern, c)
}

// serverLines are a table's server figures over rows (each row's runs):
// memory first, then the counters in the order the runs recorded them (the
// curated order), those zero or missing in every row left out (Hidden
// counts them).
func serverLines(rows [][]result.Run, c CounterChoice) (lines []CounterLine, hidden int) {
	line := func(m result.Metric, unit string) (CounterLine, bool) {
		l := CounterLine{Metric: m.Name, Unit: unit}
		nonzero := false
		for _, runs := range rows {
			v := medianOf(runs, m)
			l.Values = append(l.Values, v)
			nonzero = nonzero || (!math.IsNaN(v) && v != 0)
		}
		return l, nonzero
	}
	for _, m := range result.MetricsOf(result.ClassServer) {
		if l, ok := line(m, m.Unit); ok {
			lines = append(lines, l)
		}
	}
	var names []string
	units := map[string]string{}
	for _, runs := range rows {
		for _, r := range runs {
			if !r.HW.Measured() || r.HW.Server == nil {
				continue
			}
			for _, v := range r.HW.Server.Values {
				if v.Extra && !c.All && !slices.Contains(c.Names, v.Name) {
					continue
				}
				name := result.MetricOfCounter(v)
				if _, ok := units[name]; !ok {
					names = append(names, name)
					units[name] = v.Unit
				}
			}
		}
	}
	for _, name := range names {
		m, ok := result.Lookup(name)
		if !ok || m.Class != result.ClassServer {
			continue
		}
		if l, ok := line(m, units[name]); ok {
			lines = append(lines, l)
		} else {
			hidden++
		}
	}
	return lines, hidden
}
