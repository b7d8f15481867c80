package counters

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// COUNTER/o divides the window's change by its seconds and o/s; LEVEL.avg
// is the level's mean; a run without the counter lacks it; bad names are
// refused with the forms named.
func TestCounterMetrics(t *testing.T) {
	r := result.Run{HW: &result.HW{Samples: 3, OpsPerSec: 500, Seconds: 10, Server: &result.ServerCounters{Seconds: 10, Values: []result.CounterValue{
		{Name: "wal_bytes", Value: 5e6}, {Name: "active_backends", Value: 1.5, Level: true}}}}}
	for name, want := range map[string]float64{"wal_bytes/o": 1000, "active_backends.avg": 1.5} {
		m, err := result.MetricNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := m.Of(r); !ok || v != want {
			t.Errorf("%s = %v %v, want %v", name, v, ok, want)
		}
	}
	for _, name := range []string{"blks_hit/o", "wal_bytes.avg", "active_backends/o"} {
		m, err := result.MetricNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := m.Of(r); ok {
			t.Errorf("%s = %v: the run does not have it", name, v)
		}
	}
	// A run without hardware figures (an import) or without the server's
	// counters has neither form, and asking does not fail.
	for _, bare := range []result.Run{{}, {HW: &result.HW{Samples: 3, OpsPerSec: 500, Seconds: 10}}} {
		for _, name := range []string{"wal_bytes/o", "active_backends.avg"} {
			m, _ := result.MetricNamed(name)
			if v, ok := m.Of(bare); ok {
				t.Errorf("%s = %v of a run without counters", name, v)
			}
		}
	}
	if _, err := result.MetricNamed("WAL-bytes/o"); err == nil || !strings.Contains(err.Error(), "COUNTER/o") {
		t.Errorf("a bad name: %v", err)
	}
}

// The state figure of runs is one they all recorded: PostgreSQL runs
// stored before blks_requested are set beside newer ones by blks_hit;
// runs that all have blks_requested use it; runs without counters do not
// count.
func TestStateFigureShared(t *testing.T) {
	run := func(names ...string) result.Run {
		sc := &result.ServerCounters{}
		for _, n := range names {
			sc.Values = append(sc.Values, result.CounterValue{Name: n, Value: 10})
		}
		return result.Run{HW: &result.HW{Server: sc}}
	}
	old, now := run("blks_hit", "blks_read"), run("blks_hit", "blks_read", "blks_requested")
	for _, c := range []struct {
		runs []result.Run
		want string
	}{
		{[]result.Run{old, now}, "blks_hit/o"},
		{[]result.Run{now, now, {}}, "blks_requested/o"},
		{[]result.Run{run("innodb_buffer_pool_read_requests")}, "innodb_buffer_pool_read_requests/o"},
	} {
		m, ok := StateFigure(c.runs...)
		if !ok || m.Name != c.want {
			t.Errorf("%d runs: %q %v, want %s", len(c.runs), m.Name, ok, c.want)
		}
	}
	if _, ok := StateFigure(result.Run{}, run("wal_bytes")); ok {
		t.Error("a state figure of runs without a state counter")
	}
}
