package plan_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/suite"
	_ "github.com/qpslab/qpslab/internal/workload"
)

// A suite's plan takes the common parameters it does not decline: its
// command offers only those, and a job that names a declined one is
// refused with the suite's why, before anything runs.
func TestDeclinedCommonParams(t *testing.T) {
	for _, c := range []struct {
		suite    string
		declined []string
		takes    []string
	}{
		{"sysbench", nil, []string{"rate", "threads", "warmup", "tcp"}},
		{"ibench", []string{"rate", "threads", "warmup"}, []string{"build", "tcp", "clients", "rates"}},
		{"db_bench", []string{"rate", "tcp", "sandbox", "warmup"}, []string{"build", "threads", "workload"}},
	} {
		s, err := suite.Get(c.suite)
		if err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet(c.suite, pflag.ContinueOnError)
		given := plan.Flags(fs, s)
		for _, n := range c.declined {
			if fs.Lookup(n) != nil {
				t.Errorf("%s offers --%s, which it declines", c.suite, n)
			}
			_, err := plan.ValuesOf(s, map[string]string{n: "1"})
			if err == nil || !strings.Contains(err.Error(), "does not take: "+plan.Declined(s, n)) {
				t.Errorf("%s: a job naming --%s: %v", c.suite, n, err)
			}
		}
		for _, n := range c.takes {
			if fs.Lookup(n) == nil {
				t.Errorf("%s does not offer --%s", c.suite, n)
			}
		}
		if err := fs.Parse([]string{"--build", "b1,b2"}); err != nil {
			t.Fatal(err)
		}
		if g := given(); len(g) != 1 || g["build"] != "b1,b2" {
			t.Errorf("%s: given %v, want build only", c.suite, g)
		}
		// The declined keep their defaults, which the plan reads.
		v, err := plan.ValuesOf(s, given())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := plan.Parse(s, v); err != nil && strings.Contains(err.Error(), "--rate") {
			t.Errorf("%s: %v", c.suite, err)
		}
	}
}
