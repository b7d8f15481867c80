package ycsb

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// servers are the flavors the suite runs on here.
var servers = []string{"mariadb-system", "postgres-system"}

type db struct {
	t  *testing.T
	ep client.Endpoint
	s  *suite.Server
}

func start(t *testing.T, build string) db {
	srv, _ := testenv.StartServer(t, build)
	ep := srv.Endpoint()
	return db{t: t, ep: ep, s: &suite.Server{Protocol: ep.Protocol, Dialect: ep.Dialect(), Flavor: string(srv.Flavor), Log: func(string) {}, Warn: func(string) {},
		Dial: func(ctx context.Context) (client.Conn, error) {
			return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
		}}}
}

func (d db) n(q string) int64 {
	d.t.Helper()
	return testenv.Int(d.t, d.ep, q)
}

// configure configures the suite with args as the command would give them.
func configure(args ...string) (*suite.Plan, error) {
	v := suite.Defaults(ycsbSuite{}.Params())
	for i := 0; i+1 < len(args); i += 2 {
		v = v.With(args[i], args[i+1])
	}
	return ycsbSuite{}.Configure(v)
}

// drive runs step st on d for events events on threads workers, as the
// plan would (the engine's retries on), and returns its run.
func drive(t *testing.T, d db, st suite.Step, threads int, events int64) (result.Run, error) {
	t.Helper()
	res, err := engine.Run(context.Background(), st.Drive.Workload(d.s, 7), engine.Options{Threads: threads, Warmup: -1, Events: events, RetryErrors: st.Drive.Retry})
	if err != nil {
		return result.Run{}, err
	}
	r := *res
	r.Suite, r.Test, r.Role = Name, st.Test, st.Role
	st.Headline.Of(&r.Totals)
	return r, nil
}

// The load and every core workload on MariaDB and PostgreSQL: the
// usertable holds --records rows with YCSB's first key, each workload runs
// every operation its mix has (a read-modify-write also counted as its read
// and its update), inserts add rows with new keys, across workloads and
// runs, and a --no-load run on a usertable of another size is refused.
func TestWorkloadsOnServers(t *testing.T) {
	for _, b := range servers {
		t.Run(b, func(t *testing.T) {
			d := start(t, b)
			const records = 1000
			p, err := configure("records", "1000", "fieldcount", "10", "fieldlength", "100")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, st := range p.Steps {
				names = append(names, st.Test)
			}
			if want := []string{"load", "workloada", "workloadb", "workloadc", "workloadd", "workloade", "workloadf"}; !slices.Equal(names, want) {
				t.Fatalf("steps %v, want %v", names, want)
			}
			ctx := context.Background()
			load := p.Steps[0]
			if err := load.Before(ctx, d.s); err != nil {
				t.Fatal(err)
			}
			var progress int64
			tot, err := load.Task.Run(ctx, d.s, 1, 7, suite.TaskIO{Progress: func(done, _ int64) { progress = done }, Sample: func(result.Sample) {}})
			if err != nil {
				t.Fatal(err)
			}
			if err := load.After(ctx, d.s); err != nil {
				t.Fatal(err)
			}
			if n := d.n("SELECT count(*) FROM usertable"); n != records || tot.Rows != records || progress != records {
				t.Fatalf("loaded %d rows (totals %d, progress %d), want %d", n, tot.Rows, progress, records)
			}
			if n := d.n("SELECT count(*) FROM usertable WHERE YCSB_KEY = 'user6284781860667377211' AND length(FIELD9) = 100"); n != 1 {
				t.Errorf("YCSB's first key user6284781860667377211 with a 100-character FIELD9: %d rows", n)
			}
			rows := int64(records)
			for _, st := range p.Steps[1:] {
				r, err := drive(t, d, st, 2, 400)
				if err != nil {
					t.Fatalf("%s: %v", st.Test, err)
				}
				w := Workloads[slices.IndexFunc(Workloads, func(w Workload) bool { return w.Name == st.Test })]
				kinds := w.Kinds()
				if w.RMW > 0 {
					kinds = append(kinds, OpUpdate)
				}
				for _, k := range kinds {
					if o, ok := r.Totals.Op(k); !ok || o.Count == 0 || o.Errors > 0 {
						t.Errorf("%s: operation %s: %+v (ran %v)", st.Test, k, o.OpSample, ok)
					}
				}
				for _, o := range r.Totals.Ops {
					if !slices.Contains(kinds, o.Kind) {
						t.Errorf("%s ran %s, which its mix has not", st.Test, o.Kind)
					}
				}
				if r.Totals.Events != 400 || r.Totals.Reported <= 0 || r.Totals.ReportedUnit != "operations/s" {
					t.Errorf("%s: %d events, headline %.0f %s", st.Test, r.Totals.Events, r.Totals.Reported, r.Totals.ReportedUnit)
				}
				if o, ok := r.Totals.Op(OpInsert); ok {
					rows += o.Count
				}
				if n := d.n("SELECT count(*) FROM usertable"); n != rows {
					t.Errorf("after %s: %d rows, want %d", st.Test, n, rows)
				}
				if o, ok := r.Totals.Op(OpScan); ok && r.Totals.Rows < o.Count {
					t.Errorf("%s: %d scans read %d rows", st.Test, o.Count, r.Totals.Rows)
				}
			}
			// workloadd again, on more threads: its inserts go on after the
			// keys the first runs added.
			if _, err := drive(t, d, p.Steps[4], 4, 400); err != nil {
				t.Fatalf("workloadd again: %v", err)
			}
			if n := d.n("SELECT count(*) FROM usertable"); n <= rows {
				t.Errorf("workloadd again inserted nothing: %d rows", n)
			}

			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"records", "2000"}, "loaded with --records 1000 --fieldcount 10 --fieldlength 100"},
				{[]string{"fieldcount", "5"}, "this run wants --records 1000 --fieldcount 5"},
				{[]string{"fieldlength", "50"}, "--fieldlength 50: give those of its load"},
			} {
				args := append([]string{"records", "1000", "no-load", "true", "sandbox", "mine", "tests", "workloadc"}, tc.args...)
				p, err := configure(args...)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Steps) != 1 {
					t.Fatalf("--no-load: steps %d", len(p.Steps))
				}
				if _, err := drive(t, d, p.Steps[0], 1, 10); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("--no-load with %v: %v, want one line with %q", tc.args, err, tc.want)
				}
			}
			p, err = configure("records", "1000", "no-load", "true", "sandbox", "mine", "tests", "workloadc", "distribution", "uniform")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := drive(t, d, p.Steps[0], 1, 10); err != nil {
				t.Errorf("--no-load with the load's sizes: %v", err)
			}
		})
	}
}

// Bad values are refused before anything runs, each in one line naming
// the flag and what to give.
func TestConfigureRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"records", "0"}, "--records 0: give a whole number from 1 to 2147483647"},
		{[]string{"records", "100000000000"}, "--records 100000000000: give a whole number from 1"},
		{[]string{"tests", "workloadz"}, "--tests workloadz matches no workload: give workloada … workloadf"},
		{[]string{"distribution", "hotspot"}, "--distribution hotspot: use zipfian, uniform, latest"},
		{[]string{"fieldcount", "0"}, "--fieldcount 0: give a whole number from 1 to 100"},
		{[]string{"fieldlength", "100001"}, "--fieldlength 100001: give a whole number from 1 to 10000"},
		{[]string{"no-load", "true"}, "--no-load keeps the usertable of a server already up: use it with --sandbox or --target"},
	} {
		_, err := configure(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", tc.args, err, tc.want)
		}
	}
	p, err := configure("tests", "workload[ac]", "distribution", "latest")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 3 || p.Steps[1].Test != "workloada" || p.Steps[2].Test != "workloadc" || p.Steps[2].Params["distribution"] != DistLatest || p.Steps[2].Params["prepared"] != "true" || p.Steps[2].Writes || !p.Steps[1].Writes {
		t.Errorf("steps %+v", p.Steps)
	}
}
