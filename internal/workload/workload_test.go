package workload

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/workload/ycsb"
)

// Each suite lists its headline and the figures it registered, and no
// other suite's; each figure it lists is one its runs can have (a
// registered metric, a figure per operation kind, or the headline, qps);
// every registered figure of a suite belongs to a registered suite. What
// a suite lists is its own declaration (Figures, and result.Register with
// its name): nothing here names a suite, so a new one is checked the day
// it registers.
func TestSuitesListTheirFigures(t *testing.T) {
	names := map[string]bool{}
	for _, s := range suite.All() {
		names[s.Name()] = true
		has := map[string]bool{}
		for _, f := range suite.FiguresOf(s) {
			if has[f.Name] && f.Name != "qps" {
				t.Errorf("%s lists %s twice", s.Name(), f.Name)
			}
			has[f.Name] = true
			// A figure per kind may be named by its placeholder in
			// capitals (KIND/s, SCRIPT_N/s): the kinds come with the runs.
			_, ok := result.Lookup(f.Name)
			if _, kind := result.Lookup(strings.ToLower(f.Name)); !ok && !kind && f.Name != "qps" {
				t.Errorf("%s lists %s, which no run has: register it (result.Register) or name a registered figure", s.Name(), f.Name)
			}
		}
		if !has["qps"] {
			t.Errorf("%s lists no headline (qps) for its tests", s.Name())
		}
		for _, m := range result.All() {
			if m.Suite == s.Name() && !has[m.Name] {
				t.Errorf("%s does not list %s, which it registered", s.Name(), m.Name)
			}
			if m.Suite != "" && m.Suite != s.Name() && has[m.Name] {
				t.Errorf("%s lists %s, %s's", s.Name(), m.Name, m.Suite)
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("no suite registered: this package's imports should register every one")
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
