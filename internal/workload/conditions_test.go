package workload

import (
	"slices"
	"sort"
	"testing"

	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// conditionsBefore are the params that made runs repeats of each other
// when internal/result held them as one list for every suite (before the
// suites declared their own): what every stored run is keyed by.
var conditionsBefore = []string{"rows", "rows2", "tables", "fieldcount", "fieldlength", "distribution", "warehouses", "wait", "prepared", "tcp", "transport", "pacing", "delete_per_insert", "engine", "server_cpus", "client_cpus", "pmp", "perf", "load_method", "workload", "cache", "load_hosts"}

// Every suite's runs keep the conditions they had when result held one
// list: each param of that list a suite records (its plan's and its
// steps', at its defaults, with each of its switches on, and iobound) is
// among its runs' conditions (result.ConditionParams); and a run of a
// suite qpslab does not know is keyed by that whole list, as before. A
// condition a suite adds later splits its stored series: that is a
// change to make knowingly, not by a declaration's slip.
func TestConditionsAsBefore(t *testing.T) {
	suites := suite.All()
	if len(suites) == 0 {
		t.Fatal("no suite registered: this package's imports should register every one")
	}
	for _, s := range suites {
		conds := result.ConditionParams(s.Name())
		configured := 0
		for _, v := range variants(s) {
			p, err := s.Configure(v)
			if err != nil {
				t.Logf("%s: %v", s.Name(), err) // a value this variant lacks (a script): the others cover the rest
				continue
			}
			configured++
			recorded := []map[string]string{p.Params}
			for _, st := range p.Steps {
				recorded = append(recorded, st.Params)
			}
			for _, params := range recorded {
				for k := range params {
					if slices.Contains(conditionsBefore, k) && !slices.Contains(conds, k) {
						t.Errorf("%s records %s, a condition of its stored runs, and does not declare it (Conditions): its runs would no longer be told apart by it", s.Name(), k)
					}
				}
			}
		}
		if configured == 0 {
			// Its defaults name no workload (the script suite's script):
			// its own tests configure it.
			t.Logf("%s configures with none of these variants: not checked here", s.Name())
		}
	}
	all := slices.Clone(conditionsBefore)
	sort.Strings(all)
	if got := result.ConditionParams("a suite no qpslab registered"); !slices.Equal(got, all) {
		t.Errorf("an unknown suite's runs are keyed by %v, want every condition as before: %v", got, all)
	}
}

// variants are values of s's parameters to configure it with: its
// defaults, each switch it has on in turn (on a running sandbox, which
// some switches need: --no-load), and an iobound workload.
func variants(s suite.Suite) []suite.Values {
	def := suite.Defaults(plan.Common, s.Params())
	out := []suite.Values{def}
	for _, p := range s.Params() {
		switch {
		case p.Kind == suite.Bool:
			out = append(out, def.With("sandbox", "up").With(p.Name, "true"))
		case p.Name == "workload":
			out = append(out, def.With(p.Name, suite.IOBound))
		}
	}
	return out
}
