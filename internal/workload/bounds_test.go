package workload

import (
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// Every figure a package registers carries its own plausible range
// (result.Metric.Max), as do the figures of each form: none falls back
// to the default, and the headline's is the 1e9 a second.
func TestEveryFigureHasBounds(t *testing.T) {
	for _, m := range result.All() {
		if m.Max <= m.Min {
			t.Errorf("%s is registered without its bounds (Min %g, Max %g)", m.Name, m.Min, m.Max)
		}
	}
	for _, name := range []string{"insert/s", "insert.p99", "innodb_buffer_pool_reads" + result.CounterSuffix, "threads_running" + result.LevelSuffix} {
		m, ok := result.Lookup(name)
		if !ok || m.Max <= m.Min {
			t.Errorf("%s: registered %v, bounds %g to %g", name, ok, m.Min, m.Max)
		}
	}
	for name, want := range map[string]float64{"qps": 1e9, "tps": 1e9, "p99": result.DayMs, "jain": 1} {
		if m, _ := result.Lookup(name); m.Max != want {
			t.Errorf("%s: Max %g, want %g", name, m.Max, want)
		}
	}
}
