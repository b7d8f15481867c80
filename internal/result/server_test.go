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

// A negative counter is refused, named.
func TestCheckRefusesABadCounter(t *testing.T) {
	bad := Run{HW: &HW{Samples: 3, OpsPerSec: 1, Server: &ServerCounters{Seconds: 1, Values: []CounterValue{{Name: "x", Value: -1}}}}}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "server counter x") {
		t.Errorf("a negative counter: %v", err)
	}
}
