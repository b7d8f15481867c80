package main_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A spread run: sysbench on a MariaDB that qpslab did not start (its own
// command line, in the server's namespace), its load from two agents in
// two other namespaces at once (fleet submit --target --load-hosts 2), and
// a third agent on the server's "host" (the target's --agent) measuring
// the server. The two load parts' runs merge into one run per test whose
// events are the sum of the agents', with each agent's part kept and the
// server's CPU per operation from the third; an agent killed mid-run fails
// the spread whole, naming it, and nothing of that spread is merged.
func TestFleetSpread(t *testing.T) {
	hosts := testenv.Network(t, 2)
	// The store: PostgreSQL over its unix socket, which every namespace
	// reaches (a path, not an address).
	ep := fleetDB(t)
	dsn := fmt.Sprintf("postgres://%s@/fleet?host=%s&port=%d&sslmode=disable", ep.User, filepath.Dir(ep.Socket), ep.Port)
	ctl, ha, hb, hs := newHome(t), newHome(t), newHome(t), newHome(t)
	startMariaDB(t, ctl, hosts)
	if r := qpslabIn(t, ctl, "targets", "add", "my", "--flavor", "mariadb", "--host", hosts.ServerAddr, "--user", "bench",
		"--password-env", "QPSLAB_TEST_TARGET_PW", "--agent", "dbhost"); r.code != 0 {
		t.Fatalf("targets add: %s", r.stderr)
	}
	pw := []string{"QPSLAB_TEST_TARGET_PW=" + plantedPassword}
	top := t
	startAgentIn(t, top, hosts.Clients[0], pw, ha, dsn, "load0", "load")
	b := startAgentIn(t, top, hosts.Clients[1], pw, hb, dsn, "load1", "load")
	startAgentIn(t, top, hosts.Server, pw, hs, dsn, "dbhost", "server")
	testenv.WaitFor(t, time.Minute, "the agents registered", func() bool {
		s := fleetStatus(t, ctl, dsn)
		return s.host("load0").State == "idle" && s.host("load1").State == "idle" && s.host("dbhost").State == "idle"
	})
	st, err := store.Open(context.Background(), dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fdb, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer fdb.Close()
	spreadOf := func(job int64) (id, state, why string) {
		t.Helper()
		if err := fdb.QueryRow(`SELECT s.id, s.state, s.error FROM spreads s JOIN river_job j ON j.args->'spread'->>'id' = s.id WHERE j.id = $1`, job).Scan(&id, &state, &why); err != nil {
			t.Fatalf("the spread of job %d: %v", job, err)
		}
		return id, state, why
	}
	finished := func(ids []int64) func() bool {
		return func() bool {
			s := fleetStatus(t, ctl, dsn)
			for _, id := range ids {
				switch s.job(id).State {
				case "completed", "discarded", "cancelled":
				default:
					return false
				}
			}
			return true
		}
	}

	t.Run("refused before anything is queued", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--load-hosts", "1", "--target", "my"}, "--load-hosts 1: give 2 or more"},
			{[]string{"--load-hosts", "-3", "--target", "my"}, "--load-hosts -3"},
			{[]string{"--load-hosts", "3", "--target", "my"}, "names 2 host(s) that are up"},
			{[]string{"--load-hosts", "2"}, "name it with --target"},
			{[]string{"--load-hosts", "2", "--target", "my", "--build", "mariadb-system"}, "--build"},
			{[]string{"--load-hosts", "2", "--target", "my", "--attempts", "3"}, "tried once"},
			{[]string{"--load-hosts", "2", "--target", "my", "--threads", "4,1"}, "cannot be spread over 2 hosts"},
			{[]string{"--load-hosts", "2", "--target", "my", "--start-within", "100h"}, "--start-within 100h0m0s"},
			{[]string{"--load-hosts", "2", "--target", "my", "--until-decided"}, "--until-decided"},
			{[]string{"--target", "my", "--start-within", "1m"}, "give --load-hosts too"},
		} {
			args := append([]string{"fleet", "submit", "--store", dsn, "sysbench", "--hosts", "load", "--tests", "point-query_range=100", "--threads", "4"}, c.args...)
			r := qpslabIn(t, ctl, args...)
			if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("%v: exit %d, want one line with %q: %s", c.args, r.code, c.want, r.stderr)
			}
		}
		if s := fleetStatus(t, ctl, dsn); len(s.Jobs) != 0 {
			t.Errorf("%d jobs queued by refused submits", len(s.Jobs))
		}
	})

	plan := []string{"sysbench", "--target", "my", "--load-hosts", "2", "--hosts", "load", "--tests", "point-query_range=100,read-only_range=10",
		"--rows", "2000", "--threads", "4", "--read-secs", "2", "--warmup", "0", "--repeat", "1", "--start-within", "2m"}
	ids := submit(t, ctl, dsn, plan...)
	if len(ids) != 3 {
		t.Fatalf("%d jobs for 2 load hosts and the server's", len(ids))
	}
	testenv.WaitFor(t, 5*time.Minute, "the spread's jobs finished", finished(ids))
	s := fleetStatus(t, ctl, dsn)
	for _, id := range ids {
		if j := s.job(id); j.State != "completed" {
			t.Fatalf("job %d on %s: %s: %s", id, j.Job.Host, j.State, j.LastError)
		}
	}
	spread, state, why := spreadOf(ids[0])
	if state != "done" {
		t.Fatalf("spread %s: %s: %s", spread, state, why)
	}
	runs, err := st.Runs(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	merged := map[string]result.Run{}
	for _, r := range runs {
		if r.Plan == spread && r.Role == result.RoleTest {
			if _, dup := merged[r.Test]; dup {
				t.Errorf("%s merged twice", r.Test)
			}
			merged[r.Test] = r
		}
	}
	for _, test := range []string{"point-query_range=100", "read-only_range=10"} {
		r, ok := merged[test]
		if !ok {
			t.Errorf("no merged run of %s (%d runs in the store)", test, len(runs))
			continue
		}
		var sum int64
		var hostsSeen []string
		for _, p := range r.Parts {
			sum += p.Events
			hostsSeen = append(hostsSeen, p.Host)
			if p.Threads != 2 || p.Events <= 0 || p.NoClientCPU || p.ClientCPUUsOp <= 0 {
				t.Errorf("%s: part %+v", test, p)
			}
		}
		if len(r.Parts) != 2 || r.Totals.Events != sum || r.Threads != 4 || r.Params["load_hosts"] != "2" || r.Status != result.OK {
			t.Errorf("%s: %d events from parts %v adding up to %d, %d threads, load_hosts %q, %s", test, r.Totals.Events, hostsSeen, sum, r.Threads, r.Params["load_hosts"], r.Status)
		}
		if strings.Join(hostsSeen, ",") != "load0,load1" || !strings.HasPrefix(r.Build, "my-") || r.Config != "target" {
			t.Errorf("%s: parts from %v, label %s", test, hostsSeen, r.Label())
		}
		if r.HW == nil || r.HW.Remote || r.Totals.Service.P99 <= 0 {
			t.Errorf("%s: hw %+v p99 %v", test, r.HW, r.Totals.Service.P99)
		}
		// The server's host, measured by its agent: its CPU per op.
		for _, f := range []string{"cpu/o", "server_cpu_us/o", "client_cpu_us/o"} {
			m, _ := result.Lookup(f)
			if v, ok := m.Of(r); !ok || v <= 0 {
				t.Errorf("%s: %s %v %v", test, f, v, ok)
			}
		}
	}
	loads := 0
	for _, r := range runs {
		if r.Role == result.RoleLoad && strings.HasPrefix(r.Build, "my-") {
			loads++
		}
	}
	if loads != 1 {
		t.Errorf("%d loads of the spread's tables, want part 0's alone", loads)
	}

	t.Run("a load host lost mid-run", func(t *testing.T) {
		long := append([]string(nil), plan...)
		for i, a := range long {
			if a == "--read-secs" {
				long[i+1] = "600"
			}
		}
		long = append(long, "--no-load")
		ids := submit(t, ctl, dsn, long...)
		spread, _, _ := spreadOf(ids[0])
		// Every part is measuring once all three (the two load parts and
		// the server's host) marked the first test ready to start (not
		// only to open its connections).
		testenv.WaitFor(t, 3*time.Minute, "every part started the first test", func() bool {
			var n int
			fdb.QueryRow(`SELECT count(*) FROM spread_marks WHERE spread = $1 AND item NOT LIKE '%/open'`, spread).Scan(&n)
			return n == 3
		})
		b.stop(t, syscall.SIGKILL, time.Minute)
		// Its 600 s test ends as soon as the other host is known lost.
		testenv.WaitFor(t, 5*time.Minute, "the other part ended", finished(ids[:1]))
		_, state, why := spreadOf(ids[0])
		if state != "failed" || !strings.Contains(why, "load1") {
			t.Errorf("the spread whose host died: %s: %s", state, why)
		}
		if j := fleetStatus(t, ctl, dsn).job(ids[0]); j.State != "cancelled" || !strings.Contains(j.LastError, "host load1 (part 1) was lost") {
			t.Errorf("part 0's job: %s: %s", j.State, j.LastError)
		}
		rs, err := st.Runs(context.Background(), store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Plan == spread {
				t.Errorf("a run of the failed spread was stored: %s %s", r.Test, r.Status)
			}
		}
	})
}
