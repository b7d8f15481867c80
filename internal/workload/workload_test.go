package workload

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/workload/ycsb"
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

// The ycsb suite and the db_bench suite agree on which of YCSB's workloads
// db_bench runs (--ycsb): each workload the ycsb suite says has a db_bench
// benchmark configures there, each other is refused in one line; and the
// command the ycsb suite names for a RocksDB build configures as given.
func TestYCSBOnDBBenchAgree(t *testing.T) {
	y, err := suite.Get(ycsb.Name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := suite.Get("db_bench")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ycsb.Workloads {
		_, err := d.Configure(suite.Defaults(d.Params()).With("ycsb", w.Name))
		if w.DBBench && err != nil || !w.DBBench && (err == nil || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%s (ycsb says db_bench runs it: %v): db_bench --ycsb %s: %v", w.Name, w.DBBench, w.Name, err)
		}
	}
	rx := build.Build{Name: "rx", Flavor: build.RocksDB}
	for _, tests := range []string{"", "workloada,workloadd", "workloadd"} {
		v := suite.Defaults(y.Params()).With("records", "5000").With("secs", "7").With("fieldlength", "20")
		if tests != "" {
			v = v.With("tests", tests)
		}
		p, err := y.Configure(v)
		if err != nil || p.Instead == nil {
			t.Fatalf("ycsb --tests %q: %v (or no Instead)", tests, err)
		}
		if s := p.Instead(build.Build{Name: "m", Flavor: build.MariaDB}); s != "" {
			t.Errorf("a MariaDB build is pointed elsewhere: %s", s)
		}
		say := p.Instead(rx)
		if (tests == "" || strings.Contains(tests, "workloadd")) != strings.Contains(say, "workloadd has no db_bench benchmark") {
			t.Errorf("--tests %q: %s", tests, say)
		}
		_, cmd, ok := strings.Cut(say, "qpslab run db_bench ")
		if tests == "workloadd" {
			if ok {
				t.Errorf("workloadd alone is pointed at db_bench: %s", say)
			}
			continue
		}
		cmd, _, _ = strings.Cut(cmd, ";")
		args := strings.Fields(cmd)
		dv := suite.Defaults(d.Params())
		for i := 0; i+1 < len(args); i += 2 {
			if args[i] == "--build" {
				continue
			}
			dv = dv.With(strings.TrimPrefix(args[i], "--"), args[i+1])
		}
		dp, err := d.Configure(dv)
		if err != nil {
			t.Errorf("%s: %v", say, err)
			continue
		}
		want := map[string]string{"rows": "5000", "seconds": "7", "fieldcount": "10", "fieldlength": "20"}
		for k, x := range want {
			if dp.Params[k] != x {
				t.Errorf("%s: db_bench records %s=%s, want %s", cmd, k, dp.Params[k], x)
			}
		}
	}
}
