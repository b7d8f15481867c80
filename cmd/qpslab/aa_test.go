package main_test

import (
	"strings"
	"testing"
)

// qpslab run --aa measures one build and config against itself, keeps the
// host's noise floor per test, and compare then shows it beside each test;
// anything but one build and one config is refused in one line.
func TestRunAA(t *testing.T) {
	h := newHome(t)
	r := qpslab(t, h, "run", "sysbench", "--aa", "--build", "mariadb-system", "--config", "default,other", "--tests", "point-query.pre*")
	if r.code == 0 || !strings.Contains(r.stderr, "give exactly one --build and one --config") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
		t.Fatalf("--aa with two configs: %+v", r)
	}
	r = qpslab(t, h, "run", "sysbench", "--aa", "--build", "mariadb-system", "--config", "default",
		"--rows", "1000", "--read-secs", "1", "--warmup", "0", "--repeat", "2", "--tests", "point-query.pre*")
	if r.code != 0 {
		t.Fatalf("run --aa: %+v", r)
	}
	for _, want := range []string{"A/A: mariadb-system.default-aa2 against mariadb-system.default-aa1", "noise floor", "point-query.pre_range=100"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("run --aa's output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = qpslab(t, h, "compare", "mariadb-system.default-aa1", "mariadb-system.default-aa2")
	if r.code != 0 || !strings.Contains(r.stdout, "NOISE") {
		t.Errorf("compare of the A/A labels shows no NOISE column: %+v", r)
	}
}
