package workload

import (
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// Each suite lists the figures it registered and no other suite's; every
// registered figure of a suite belongs to a registered suite.
func TestSuitesListTheirFigures(t *testing.T) {
	own := map[string]string{"sysbench": "cpu/o", "ibench": "ips", "db_bench": "w_amp", "script": "client_cpu_us/stmt", "tpcc": "NOPM", "ycsb": "read/s"}
	names := map[string]bool{}
	for _, s := range suite.All() {
		names[s.Name()] = true
		has := map[string]bool{}
		for _, f := range suite.FiguresOf(s) {
			has[f.Name] = true
		}
		if w := own[s.Name()]; !has[w] {
			t.Errorf("%s lists no %s", s.Name(), w)
		}
		for _, m := range result.All() {
			if m.Suite != "" && m.Suite != s.Name() && has[m.Name] {
				t.Errorf("%s lists %s, %s's", s.Name(), m.Name, m.Suite)
			}
		}
	}
	for _, m := range result.All() {
		if m.Suite != "" && !names[m.Suite] {
			t.Errorf("%s is registered for suite %q, which is not one", m.Name, m.Suite)
		}
	}
}
