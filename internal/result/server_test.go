package result

import (
	"strings"
	"testing"
)

// A run with stack captures is no repeat of one without.
func TestConditionsNameCaptures(t *testing.T) {
	a := Run{Params: map[string]string{"rows": "10000", "pmp": "1"}}
	b := Run{Params: map[string]string{"rows": "10000"}}
	if a.Conditions() == b.Conditions() || !strings.Contains(ConditionsDiff(a.Conditions(), b.Conditions()), "pmp=1 against pmp=-") {
		t.Errorf("%q and %q", a.Conditions(), b.Conditions())
	}
}

// COUNTER/o divides the window's change by its seconds and o/s; LEVEL.avg
// is the level's mean; a run without the counter lacks it; bad names are
// refused with the forms named.
func TestCounterMetrics(t *testing.T) {
	r := Run{HW: &HW{Samples: 3, OpsPerSec: 500, Seconds: 10, Server: &ServerCounters{Seconds: 10, Values: []CounterValue{
		{Name: "wal_bytes", Value: 5e6}, {Name: "active_backends", Value: 1.5, Level: true}}}}}
	for name, want := range map[string]float64{"wal_bytes/o": 1000, "active_backends.avg": 1.5} {
		m, err := MetricNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := m.Of(r); !ok || v != want {
			t.Errorf("%s = %v %v, want %v", name, v, ok, want)
		}
	}
	for _, name := range []string{"blks_hit/o", "wal_bytes.avg", "active_backends/o"} {
		m, err := MetricNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := m.Of(r); ok {
			t.Errorf("%s = %v: the run does not have it", name, v)
		}
	}
	if _, err := MetricNamed("WAL-bytes/o"); err == nil || !strings.Contains(err.Error(), "COUNTER/o") {
		t.Errorf("a bad name: %v", err)
	}
	bad := r
	bad.HW = &HW{Samples: 3, OpsPerSec: 1, Server: &ServerCounters{Seconds: 1, Values: []CounterValue{{Name: "x", Value: -1}}}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "server counter x") {
		t.Errorf("a negative counter: %v", err)
	}
}
