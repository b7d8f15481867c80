package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// --workload iobound on real servers: after the load each server restarts
// with its cache a sixteenth of what its tables take on disk (at least
// config.MinCache) and direct IO, and every run after it records the cache
// and the tables' size and is judged. MariaDB (O_DIRECT) and PostgreSQL 16
// (debug_io_direct=data) read storage on most point lookups: IO-bound.
// PostgreSQL 15 has no direct IO, so its small shared_buffers misses into
// the OS page cache, which holds the 80 MB of tables: the run is marked
// (a failed io-bound verdict) and the plan warns.
func TestIOBoundSizesTheCache(t *testing.T) {
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		build string
		bound bool
		said  []string // in the log
		why   string   // in a failed verdict
	}{
		{"mariadb-system", true, []string{"innodb_buffer_pool_size=8M", "the cache is 8 MB"}, ""},
		{"postgres-16.15.0", true, []string{"shared_buffers = 8MB, debug_io_direct = data", "the cache is 8 MB"}, ""},
		{"postgres-system", false, []string{"shared_buffers = 8MB"}, "the OS page cache served them"},
	} {
		t.Run(tc.build, func(t *testing.T) {
			h, _ := serverHome(t)
			testenv.Build(t, h, tc.build)
			v := suite.Defaults(Common, s.Params()).With("build", tc.build).With("rows", "300000").
				With("tests", "point-query_range=100").With("read-secs", "2").With("warmup", "1").With("repeat", "1").
				With("workload", "iobound")
			p, err := New(context.Background(), h, s, v)
			if err != nil {
				t.Fatal(err)
			}
			l := &log{}
			var lines, warned []string
			p.Watch.Log = func(line string) { lines = append(lines, line) }
			p.Watch.Warn = func(line string) { warned = append(warned, line) }
			p.Record = func(start result.Run) (Recorder, error) { return rec{l: l, r: start}, nil }
			if err := p.Run(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			said := strings.Join(lines, "\n")
			for _, w := range tc.said {
				if !strings.Contains(said, w) {
					t.Errorf("the log does not say %q:\n%s", w, said)
				}
			}
			var test *result.Run
			for i, r := range l.done {
				if r.Params["workload"] != "iobound" || r.Params["cache"] != "0.0625" {
					t.Errorf("%s records workload=%q cache=%q", r.Test, r.Params["workload"], r.Params["cache"])
				}
				if r.Test == "point-query_range=100" {
					test = &l.done[i]
				}
			}
			if test == nil || test.Status != result.OK {
				t.Fatalf("no run of the test: %+v", l.done)
			}
			if c, tb := test.Totals.Figures[counters.FigureCacheMB], test.Totals.Figures[counters.FigureTablesMB]; c != 8 || tb < 50 || tb > 200 {
				t.Errorf("cache_mb %v, tables_mb %v: want 8 and the 300,000 rows' 50-200 MB", c, tb)
			}
			// The page cache's side needs the OS to keep the 80 MB of
			// tables just written: a machine short of memory (other
			// servers, other tests) evicts them, and the device serves the
			// reads, which the verdict then rightly calls IO-bound.
			if !tc.bound && len(test.Verdicts) == 1 && test.Verdicts[0].Name == counters.VerdictIOBound && test.Verdicts[0].OK {
				testenv.Skip(t, "the OS page cache did not keep the tables on this machine ("+test.Verdicts[0].Detail+"): the page-cache side of the verdict cannot be shown under this memory pressure")
			}
			if len(test.Verdicts) != 1 || test.Verdicts[0].Name != counters.VerdictIOBound || test.Verdicts[0].OK != tc.bound ||
				!strings.Contains(test.Verdicts[0].Detail, tc.why) {
				t.Fatalf("verdicts %+v, want io-bound ok=%v (%q)", test.Verdicts, tc.bound, tc.why)
			}
			if warn := strings.Join(warned, "\n"); strings.Contains(warn, "asked to be IO-bound") == tc.bound {
				t.Errorf("warnings: %q", warned)
			}
			m, _ := result.Lookup(counters.FigureHitPct)
			if hit, ok := m.Of(*test); !ok || hit <= 0 || hit >= 99 {
				t.Errorf("hit%% %v %v: a sixteenth of the tables misses", hit, ok)
			}
		})
	}
}

// The Insert Benchmark's second pass loads twice the first pass's rows on
// a server that keeps its cache (both passes' tables want the smallest
// cache): each pass's runs record the tables that pass loaded, not the
// first pass's.
func TestIOBoundTablesEveryPass(t *testing.T) {
	ib, err := suite.Get("ibench")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := serverHome(t)
	v := suite.Defaults(Common, ib.Params()).With("build", "mariadb-system").With("clients", "1,2").With("mr1", "0.02").
		With("mr2", "0.002").With("rates", "100").With("query-secs", "1").With("wait-scale", "0").With("workload", "iobound").
		With("steps", "l.i0,l.x,l.i1")
	p, err := New(context.Background(), h, ib, v)
	if err != nil {
		t.Fatal(err)
	}
	l := &log{}
	var lines []string
	p.Watch.Log = func(line string) { lines = append(lines, line) }
	p.Record = func(start result.Run) (Recorder, error) { return rec{l: l, r: start}, nil }
	if err := p.Run(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	tables := map[int]float64{}
	for _, r := range l.done {
		if r.Test == "l.i1" {
			tables[r.Threads] = r.Totals.Figures[counters.FigureTablesMB]
		}
	}
	if tables[1] <= 0 || tables[2] < 1.5*tables[1] {
		t.Errorf("tables_mb of l.i1 by clients %v: want the second pass's (twice the rows) at least 1.5 times the first's\n%s", tables, strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines, "\n"), "keeps its cache") {
		t.Errorf("the second pass did not keep the cache, so this test does not test the kept server:\n%s", strings.Join(lines, "\n"))
	}
}

// What an iobound plan cannot run with, refused before anything starts,
// in one line naming the fix; hostile --cache values among them.
func TestIOBoundRefuses(t *testing.T) {
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	ib, err := suite.Get("ibench")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    suite.Suite
		with map[string]string
		want string
	}{
		{s, map[string]string{"workload": "iobound", "sandbox": "sb", "build": ""}, "leave --sandbox out"},
		{s, map[string]string{"workload": "iobound", "engine": "rocksdb"}, "--engine innodb"},
		{s, map[string]string{"workload": "iobound,cached"}, "one workload a run"},
		{s, map[string]string{"workload": "nvme"}, "--workload nvme: use cached or iobound"},
		{s, map[string]string{"cache": "0.1"}, "add --workload iobound"},
		{s, map[string]string{"workload": "iobound", "cache": "1"}, "--cache 1: give a fraction above 0 and below 1"},
		{s, map[string]string{"workload": "iobound", "cache": "0"}, "--cache 0"},
		{s, map[string]string{"workload": "iobound", "cache": "NaN"}, "--cache NaN"},
		{s, map[string]string{"workload": "iobound", "cache": "1e309"}, "--cache 1e309"},
		{s, map[string]string{"workload": "iobound", "cache": "-0.5"}, "--cache -0.5"},
		{s, map[string]string{"workload": "iobound", "cache": "0.1\x1b[2J"}, `--cache "0.1\x1b[2J"`},
		{ib, map[string]string{"workload": "iobound", "steps": "qr100"}, "add the load's steps"},
	} {
		v := suite.Defaults(Common, c.s.Params()).With("build", "b")
		for k, x := range c.with {
			v = v.With(k, x)
		}
		_, err := Parse(c.s, v)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line naming %q", c.with, err, c.want)
		}
	}
	// The Insert Benchmark sizes after l.x (the tables and their indexes),
	// or after l.i0 when l.x is not run.
	for steps, want := range map[string]string{"": "l.x", "l.i0,l.i1": "l.i0"} {
		v := suite.Defaults(Common, ib.Params()).With("build", "b").With("workload", "iobound").With("steps", steps)
		p, err := Parse(ib, v)
		if err != nil {
			t.Fatal(err)
		}
		var sizes []string
		for _, st := range p.Steps.Steps {
			if st.Sizes {
				sizes = append(sizes, st.Test)
			}
		}
		if strings.Join(sizes, ",") != want || p.Steps.Cache != suite.DefaultCache {
			t.Errorf("--steps %q: sized after %v, cache %v; want after %s", steps, sizes, p.Steps.Cache, want)
		}
	}
	// With two client counts each pass sizes after its own l.x, and its
	// l.i0 and l.x (which the second pass runs on the first pass's cache)
	// are the load, not judged.
	p, err := Parse(ib, suite.Defaults(Common, ib.Params()).With("build", "b").With("workload", "iobound").With("clients", "1,4").With("rates", "100"))
	if err != nil {
		t.Fatal(err)
	}
	var judged, sized []string
	for k, st := range p.Steps.Steps {
		if st.Sizes {
			sized = append(sized, st.Test)
		}
		if !p.loads(k) {
			judged = append(judged, st.Test)
		}
	}
	if strings.Join(sized, ",") != "l.x,l.x" || strings.Join(judged, ",") != "l.i1,l.i2,qr100,qp100,l.i1,l.i2,qr100,qp100" {
		t.Errorf("two passes: sized after %v, judged %v", sized, judged)
	}
}
