package main_test

import (
	"strings"
	"testing"
)

// qpslab bisect's flags reach the bisection: bad input fails in one line
// naming the flag or argument; status on a store without bisections says
// how to start one; an id that is none says where they are listed.
func TestBisectCommand(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bisect", "a", "b", "--src", dir, "--suite", "db_bench", "--test", "readrandom.cached"}, "is not a git tree"},
		{[]string{"bisect", "a", "b", "--suite", "db_bench", "--test", "readrandom.cached"}, "--src: name the source tree"},
		{[]string{"bisect", "a", "b", "--src", dir, "--threshold", "five", "--suite", "db_bench", "--test", "readrandom.cached"}, "--threshold five: give the smallest regression"},
		{[]string{"bisect", "a", "b", "--src", dir, "--set", "seconds", "--suite", "db_bench", "--test", "readrandom.cached"}, "--set seconds: give a suite flag as NAME=VALUE"},
		{[]string{"bisect", "a"}, "accepts 2 arg(s)"},
		{[]string{"bisect", "status", "x"}, `"x" is not a bisection's id`},
		{[]string{"bisect", "status", "3"}, "bisection 3: no such bisection"},
		{[]string{"bisect", "skip", "3"}, "bisection 3: no such bisection"},
		{[]string{"bisect", "resume", "3", "--rounds", "20"}, "bisection 3: no such bisection"},
	} {
		r := qpslab(t, h, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if r := qpslab(t, h, "bisect", "status"); r.code != 0 || !strings.Contains(r.stdout, "no bisections (qpslab bisect GOOD BAD") {
		t.Errorf("status: %+v", r)
	}
	if r := qpslab(t, h, "bisect", "status", "--format", "json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("status json: %+v", r)
	}
}
