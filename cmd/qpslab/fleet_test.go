package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

// agentProc is a qpslab agent the test started, with a home of its own.
type agentProc struct {
	name string
	home home.Home
	cmd  *exec.Cmd
	log  string
	done chan error
}

// envOf is the environment of a qpslab process working in h, and in h alone
// (the test's own QPSLAB_HOME is the PostgreSQL sandbox's).
func envOf(h home.Home) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "QPSLAB_HOME=") && !strings.HasPrefix(e, "QPSLAB_STORE=") {
			env = append(env, e)
		}
	}
	return append(env, "QPSLAB_HOME="+h.Root, "QPSLAB_CACHE="+h.Cache)
}

// startAgent starts an agent; it is killed at the end of test top (if it
// still runs), and its log shown if top failed.
func startAgent(t, top *testing.T, h home.Home, dsn, name, labels string, extra ...string) *agentProc {
	t.Helper()
	return startAgentIn(t, top, "", nil, h, dsn, name, labels, extra...)
}

// startAgentIn is startAgent in network namespace ns ("": this one), with
// env added to its environment.
func startAgentIn(t, top *testing.T, ns string, env []string, h home.Home, dsn, name, labels string, extra ...string) *agentProc {
	t.Helper()
	a := &agentProc{name: name, home: h, log: filepath.Join(h.Root, "agent-"+name+".log"), done: make(chan error, 1)}
	f, err := os.OpenFile(a.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"agent", "--store", dsn, "--name", name, "--labels", labels, "--heartbeat", "1s", "--rescue-after", "5s"}, extra...)
	a.cmd = exec.Command(bin, args...)
	a.cmd.Env = append(envOf(h), env...)
	a.cmd.Stdout, a.cmd.Stderr = f, f
	if ns != "" {
		a.cmd = testenv.In(ns, a.cmd)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.done <- a.cmd.Wait(); f.Close() }()
	top.Cleanup(func() {
		if a.cmd.ProcessState == nil {
			a.cmd.Process.Kill()
			<-a.done
		}
		if top.Failed() {
			b, _ := os.ReadFile(a.log)
			top.Logf("agent %s's log:\n%s", name, b)
		}
	})
	return a
}

// stop signals the agent and waits for it to end.
func (a *agentProc) stop(t *testing.T, sig syscall.Signal, within time.Duration) error {
	t.Helper()
	a.cmd.Process.Signal(sig)
	select {
	case err := <-a.done:
		return err
	case <-time.After(within):
		t.Fatalf("agent %s did not end within %s of %v", a.name, within, sig)
		return nil
	}
}

// status is qpslab fleet status --format json.
type status struct {
	Hosts []fleet.Host `json:"hosts"`
	Jobs  []struct {
		fleet.JobInfo
		Runs      map[int]map[string]int `json:"runs"`
		LastError string                 `json:"last_error"`
	} `json:"jobs"`
}

func fleetStatus(t *testing.T, h home.Home, dsn string) status {
	t.Helper()
	r := qpslabIn(t, h, "fleet", "status", "--store", dsn, "--format", "json")
	if r.code != 0 {
		t.Fatalf("fleet status: exit %d: %s", r.code, r.stderr)
	}
	var s status
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("fleet status: %v\n%s", err, r.stdout)
	}
	return s
}

func (s status) host(name string) fleet.Host {
	for _, h := range s.Hosts {
		if h.Name == name {
			return h
		}
	}
	return fleet.Host{}
}

func (s status) job(id int64) (j struct {
	fleet.JobInfo
	Runs      map[int]map[string]int `json:"runs"`
	LastError string                 `json:"last_error"`
}) {
	for _, x := range s.Jobs {
		if x.ID == id {
			return x
		}
	}
	return j
}

// fleetDB starts the fleet's store: a PostgreSQL sandbox with a database
// fleet, stopped at the end of the test.
func fleetDB(t *testing.T) client.Endpoint {
	t.Helper()
	ep, _ := testenv.FleetDatabase(t)
	return ep
}

// qpslabIn runs qpslab in h alone.
func qpslabIn(t *testing.T, h home.Home, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = envOf(h)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := outcome{out.String(), errb.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// submit queues a plan and returns the jobs' ids, one per host it names.
func submit(t *testing.T, h home.Home, dsn string, args ...string) []int64 {
	t.Helper()
	r := qpslabIn(t, h, append([]string{"fleet", "submit", "--store", dsn}, args...)...)
	if r.code != 0 {
		t.Fatalf("fleet submit %v: exit %d: %s", args, r.code, r.stderr)
	}
	var ids []int64
	for _, l := range strings.Split(r.stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "job "); ok {
			id, err := strconv.ParseInt(rest[:strings.Index(rest, ":")], 10, 64)
			if err != nil {
				t.Fatalf("fleet submit said %q", l)
			}
			ids = append(ids, id)
		}
	}
	return ids
}

// runsOfJob are the stored runs of a fleet job, of any status.
func runsOfJob(t *testing.T, st *store.Store, job int64) map[int]map[string]int {
	t.Helper()
	c, err := st.JobRuns(context.Background(), []string{strconv.FormatInt(job, 10)})
	if err != nil {
		t.Fatal(err)
	}
	return c[strconv.FormatInt(job, 10)]
}

// fleetQuick is a short sysbench plan of two builds, one of which (the
// registry build) the agents' homes lack: each job fetches it first.
var fleetQuick = []string{"sysbench", "--build", "mariadb-10.2.11,mariadb-system", "--tests", "point-query_range=100,update-index_range=100",
	"--tables", "1", "--rows", "2000", "--read-secs", "0.5", "--write-secs", "0.5", "--warmup", "0", "--postwrite-scale", "0", "--seed", "42", "--repeat", "1"}

// Two agents with homes of their own on this machine, against a
// PostgreSQL the test starts: jobs are checked before they are queued,
// spread over the hosts their labels name, worked one at a time per agent;
// an agent killed -9 mid-job loses its attempt, River's rescuer retries it
// and no run counts twice; a job cancelled from the CLI stops, a failed one
// keeps its server's log tail and runs again with retry; SIGTERM finishes
// or aborts the job in progress as configured; and compare puts the two
// hosts side by side.
func TestFleet(t *testing.T) {
	ep := fleetDB(t)
	dsn := fmt.Sprintf("postgres://%s@127.0.0.1:%d/fleet?sslmode=disable", ep.User, ep.Port)
	ctl, ha, hb := newHome(t), newHome(t), newHome(t)
	// alpha has a config whose server refuses to start.
	broken := filepath.Join(t.TempDir(), "broken.cnf")
	if err := os.WriteFile(broken, []byte("[mysqld]\nno_such_variable_qpslab = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := qpslabIn(t, ha, "configs", "add", "broken", broken); r.code != 0 {
		t.Fatalf("configs add: %s", r.stderr)
	}
	top := t
	alpha := startAgent(t, top, ha, dsn, "alpha", "small,amd")
	beta := startAgent(t, top, hb, dsn, "beta", "big,amd")
	testenv.WaitFor(t, time.Minute, "both agents registered", func() bool {
		s := fleetStatus(t, ctl, dsn)
		return s.host("alpha").State == "idle" && s.host("beta").State == "idle"
	})
	st, err := store.Open(context.Background(), dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	t.Run("checked before queued", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want []string
		}{
			{[]string{"sysbench", "--build", "mariadb-system", "--hosts", "tiny"}, []string{"--hosts tiny", "alpha, beta", "amd, big, small"}},
			{[]string{"sysbench", "--build", "nosuch", "--hosts", "amd"}, []string{"has no build nosuch", "registry build"}},
			{[]string{"sysbench", "--build", "mariadb-system", "--config", "broken", "--hosts", "amd"}, []string{"host beta has no mysql config broken"}},
			{[]string{"sysbench", "--build", "mariadb-system", "--sandbox", "x", "--hosts", "amd"}, []string{"--sandbox"}},
			{[]string{"sysbench", "--build", "mariadb-system", "--threads", "0", "--hosts", "amd"}, []string{"--threads"}},
			{[]string{"--plan", broken}, []string{"--plan"}},
		} {
			r := qpslabIn(t, ctl, append([]string{"fleet", "submit", "--store", dsn}, c.args...)...)
			if r.code != 1 {
				t.Errorf("fleet submit %v: exit %d, want 1", c.args, r.code)
			}
			msg := strings.TrimSpace(r.stderr)
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("fleet submit %v: not one line: %q", c.args, msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("fleet submit %v: %q does not say %q", c.args, msg, w)
				}
			}
		}
		if r := qpslabIn(t, ctl, "fleet", "hosts", "--store", filepath.Join(t.TempDir(), "q.db")); r.code != 1 || !strings.Contains(r.stderr, "PostgreSQL") {
			t.Errorf("the fleet on a SQLite store: exit %d %s", r.code, r.stderr)
		}
		if s := fleetStatus(t, ctl, dsn); len(s.Jobs) != 0 {
			t.Errorf("%d jobs queued by refused submits", len(s.Jobs))
		}
	})

	var small, both []int64
	t.Run("labels, spread, one job at a time", func(t *testing.T) {
		// The same plan as a plan file.
		pf := filepath.Join(t.TempDir(), "plan.yaml")
		if err := os.WriteFile(pf, []byte(`suite: sysbench
hosts: [small]
params:
  build: [mariadb-10.2.11, mariadb-system]
  tests: point-query_range=100,update-index_range=100
  tables: 1
  rows: 2000
  read-secs: 0.5
  write-secs: 0.5
  warmup: 0
  postwrite-scale: 0
  seed: 42
  repeat: 1
`), 0o644); err != nil {
			t.Fatal(err)
		}
		small = submit(t, ctl, dsn, "--plan", pf)
		both = submit(t, ctl, dsn, append(fleetQuick, "--hosts", "amd")...)
		if len(small) != 1 || len(both) != 2 {
			t.Fatalf("jobs %v and %v: want one for small, one per host for amd", small, both)
		}
		testenv.WaitFor(t, 6*time.Minute, "the three jobs completed", func() bool {
			s := fleetStatus(t, ctl, dsn)
			for _, id := range append(small, both...) {
				if j := s.job(id); j.State != "completed" {
					if j.State == "discarded" || j.State == "cancelled" {
						t.Fatalf("job %d %s: %s", id, j.State, j.LastError)
					}
					return false
				}
			}
			return true
		})
		s := fleetStatus(t, ctl, dsn)
		hosts := map[string][]int64{}
		for _, id := range append(small, both...) {
			j := s.job(id)
			hosts[j.Job.Host] = append(hosts[j.Job.Host], id)
			if j.Attempt != 1 || j.Runs[1][result.OK] != 6 {
				t.Errorf("job %d on %s: attempt %d, runs %v; want 6 ok in one attempt", id, j.Job.Host, j.Attempt, j.Runs)
			}
		}
		if s.job(small[0]).Job.Host != "alpha" || len(hosts["alpha"]) != 2 || len(hosts["beta"]) != 1 {
			t.Errorf("jobs by host: %v; want small's on alpha, amd's on both", hosts)
		}
		// alpha had two jobs queued at once and ran them one after the other.
		a1, a2 := s.job(hosts["alpha"][0]), s.job(hosts["alpha"][1])
		if a1.Finalized == nil || a2.Attempted == nil || a2.Attempted.Before(*a1.Finalized) {
			t.Errorf("alpha's jobs overlap: %d ended %v, %d started %v", a1.ID, a1.Finalized, a2.ID, a2.Attempted)
		}
		for _, a := range []*agentProc{alpha, beta} {
			if b, _ := os.ReadFile(a.log); !strings.Contains(string(b), "fetching build mariadb-10.2.11") {
				t.Errorf("agent %s did not fetch the build it lacked", a.name)
			}
		}
		runs, err := st.Runs(context.Background(), store.Filter{Build: "mariadb-system", Config: "default", Host: "beta"})
		if err != nil || len(runs) != 3 {
			t.Fatalf("beta's runs of mariadb-system: %d (%v)", len(runs), err)
		}
		var fp agentFP
		if err := json.Unmarshal(runs[0].Host, &fp); err != nil || fp.Agent != "beta" {
			t.Errorf("beta's runs carry fingerprint %s", runs[0].Host)
		}
	})

	t.Run("compare across hosts", func(t *testing.T) {
		r := qpslabIn(t, ctl, "compare", "--store", dsn, "mariadb-system.default@alpha", "mariadb-system.default@beta")
		if r.code != 0 {
			t.Fatalf("compare: exit %d: %s", r.code, r.stderr)
		}
		s := fleetStatus(t, ctl, dsn)
		for _, want := range []string{"update-index_range=100", "base: mariadb-system.default@alpha", "col-1: mariadb-system.default@beta",
			"host " + s.host("alpha").HostID, "host " + s.host("beta").HostID, "fleet agent beta"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("compare across hosts does not say %q:\n%s", want, r.stdout)
			}
		}
		if s.host("alpha").HostID == s.host("beta").HostID {
			t.Errorf("two agents on one machine are one host %s", s.host("alpha").HostID)
		}
		r = qpslabIn(t, ctl, "compare", "--store", dsn, "--by-host", "mariadb-10.2.11.default", "mariadb-system.default")
		if r.code != 0 || !strings.Contains(r.stdout, "col-3: mariadb-system.default@beta") {
			t.Errorf("compare --by-host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r = qpslabIn(t, ctl, "metrics", "--store", dsn, "--by-host", "mariadb-system.default")
		if r.code != 0 || !strings.Contains(r.stdout, "mariadb-system.default@beta") {
			t.Errorf("metrics --by-host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		html := filepath.Join(t.TempDir(), "r.html")
		if r := qpslabIn(t, ctl, "report", "--store", dsn, "--by-host", "mariadb-system.default", "--html", html); r.code != 0 {
			t.Errorf("report --by-host: exit %d %s", r.code, r.stderr)
		} else if b, _ := os.ReadFile(html); !strings.Contains(string(b), "mariadb-system.default@beta") || !strings.Contains(string(b), "<th>agent</th><td>alpha</td><td>beta</td>") {
			t.Errorf("the report does not show both hosts' results and fingerprints side by side")
		}
		// History keeps a series per host.
		dir := filepath.Join(t.TempDir(), "otava")
		if r := qpslabIn(t, ctl, "export", "--store", dsn, "otava-csv", dir, "--test", "update-index_range=100"); r.code != 0 {
			t.Fatalf("export: exit %d %s", r.code, r.stderr)
		}
		for _, h := range []string{"alpha", "beta"} {
			if _, err := os.Stat(filepath.Join(dir, "sysbench.update-index_range=100.thr1.default."+s.host(h).HostID+".csv")); err != nil {
				t.Errorf("no history series of %s: %v", h, err)
			}
		}
	})

	t.Run("killed -9 mid-job", func(t *testing.T) {
		ids := submit(t, ctl, dsn, "sysbench", "--build", "mariadb-10.2.11,mariadb-system", "--tests", "point-query*,update-index*",
			"--tables", "1", "--rows", "2000", "--read-secs", "2", "--write-secs", "2", "--warmup", "0", "--postwrite-scale", "0",
			"--repeat", "1", "--hosts", "beta", "--timeout", "75s")
		id := ids[0]
		testenv.WaitFor(t, 3*time.Minute, "beta's job stored a run and runs another", func() bool {
			c := runsOfJob(t, st, id)
			return c[1][result.OK] >= 1 && c[1]["running"] == 1
		})
		syscall.Kill(beta.cmd.Process.Pid, syscall.SIGKILL)
		<-beta.done
		testenv.WaitFor(t, 30*time.Second, "beta shown lost", func() bool { return fleetStatus(t, ctl, dsn).host("beta").State == fleet.Lost })
		if s := fleetStatus(t, ctl, dsn); s.job(id).State != "running" {
			t.Errorf("the lost agent's job is %s before its timeout", s.job(id).State)
		}
		beta = startAgent(t, top, hb, dsn, "beta", "big,amd") // the machine is back
		testenv.WaitFor(t, 5*time.Minute, "the job retried and completed", func() bool {
			j := fleetStatus(t, ctl, dsn).job(id)
			if j.State == "discarded" {
				t.Fatalf("job %d discarded: %s", id, j.LastError)
			}
			return j.State == "completed"
		})
		j := fleetStatus(t, ctl, dsn).job(id)
		if j.Attempt != 2 || len(j.Errors) != 1 || j.Errors[0].Error != fleet.Rescued || !strings.Contains(j.LastError, "lost") {
			t.Errorf("job %d: attempt %d, errors %+v", id, j.Attempt, j.Errors)
		}
		c := runsOfJob(t, st, id)
		items := c[2][result.OK]
		if items == 0 || len(c[2]) != 1 || c[1][result.OK] != 0 || c[1]["running"] != 0 || c[1][result.Aborted] < 2 {
			t.Errorf("runs of job %d by attempt: %v; want the first attempt's all aborted, the second's all ok", id, c)
		}
		// Never counted twice: what compare reads of beta is one attempt's.
		ok, err := st.Runs(context.Background(), store.Filter{Build: "mariadb-system", Config: "default", Host: "beta", Test: "update-index_range=100"})
		if err != nil || len(ok) != 2 { // one from the amd job, one from this job's second attempt
			t.Errorf("beta's ok update-index runs of mariadb-system: %d (%v), want 2", len(ok), err)
		}
		lost, err := st.Runs(context.Background(), store.Filter{Host: "beta", Status: []string{result.Aborted}})
		if err != nil {
			t.Fatal(err)
		}
		said := false
		for _, r := range lost {
			said = said || strings.Contains(r.Error, "ended without finishing it") || strings.Contains(r.Error, "lost mid-run")
		}
		if !said {
			t.Errorf("no aborted run says its agent was lost: %d aborted", len(lost))
		}
	})

	t.Run("cancel, failure, retry", func(t *testing.T) {
		long := submit(t, ctl, dsn, "sysbench", "--build", "mariadb-system", "--tests", "point-query_range=100", "--tables", "1", "--rows", "2000",
			"--read-secs", "120", "--warmup", "0", "--hosts", "alpha")[0]
		// The load is a run of its own: wait until it is done and the
		// measured test is the one running, or the cancel may catch the load.
		testenv.WaitFor(t, 2*time.Minute, "alpha runs the long test", func() bool {
			c := runsOfJob(t, st, long)[1]
			return c["running"] == 1 && c[result.OK] == 1
		})
		if r := qpslabIn(t, ctl, "fleet", "cancel", "--store", dsn, strconv.FormatInt(long, 10)); r.code != 0 || !strings.Contains(r.stdout, "cancelling") {
			t.Fatalf("fleet cancel: exit %d %s%s", r.code, r.stdout, r.stderr)
		}
		testenv.WaitFor(t, time.Minute, "the job cancelled", func() bool { return fleetStatus(t, ctl, dsn).job(long).State == "cancelled" })
		if c := runsOfJob(t, st, long); c[1][result.Aborted] != 1 || c[1]["running"] != 0 {
			t.Errorf("runs of the cancelled job: %v", c)
		}
		testenv.WaitFor(t, 30*time.Second, "alpha idle, its server stopped", func() bool {
			return fleetStatus(t, ctl, dsn).host("alpha").State == "idle" && len(testenv.Processes(filepath.Join(ha.Root, "sandboxes"))) == 0
		})
		if r := qpslabIn(t, ctl, "fleet", "cancel", "--store", dsn, strconv.FormatInt(long, 10)); r.code != 1 || !strings.Contains(r.stderr, "cancelled already") {
			t.Errorf("cancelling it again: exit %d %s", r.code, r.stderr)
		}
		// A job that fails keeps the server log's tail; retry runs it again.
		bad := submit(t, ctl, dsn, "sysbench", "--build", "mariadb-system", "--config", "broken", "--tests", "point-query_range=100",
			"--hosts", "alpha", "--attempts", "1")[0]
		testenv.WaitFor(t, 2*time.Minute, "the broken job discarded", func() bool { return fleetStatus(t, ctl, dsn).job(bad).State == "discarded" })
		j := fleetStatus(t, ctl, dsn).job(bad)
		if !strings.Contains(j.LastError, "no_such_variable_qpslab") || !strings.Contains(j.LastError, "full log:") {
			t.Errorf("the failed job's error lacks the server log's tail: %q", j.LastError)
		}
		if r := qpslabIn(t, ctl, "fleet", "retry", "--store", dsn, strconv.FormatInt(bad, 10)); r.code != 0 {
			t.Fatalf("fleet retry: exit %d %s", r.code, r.stderr)
		}
		testenv.WaitFor(t, 2*time.Minute, "the retried job failed again", func() bool {
			j := fleetStatus(t, ctl, dsn).job(bad)
			return j.State == "discarded" && j.Attempt == 2
		})
		if r := qpslabIn(t, ctl, "fleet", "retry", "--store", dsn, strconv.FormatInt(small[0], 10)); r.code != 1 || !strings.Contains(r.stderr, "completed") {
			t.Errorf("retrying a completed job: exit %d %s", r.code, r.stderr)
		}
		r := qpslabIn(t, ctl, "fleet", "status", "--store", dsn)
		if r.code != 0 || !strings.Contains(r.stdout, "cancelled") || !strings.Contains(r.stdout, "discarded") {
			t.Errorf("fleet status:\n%s%s", r.stdout, r.stderr)
		}
	})

	t.Run("SIGTERM", func(t *testing.T) {
		// finish (the default): the job in progress ends, then the agent.
		id := submit(t, ctl, dsn, append(fleetQuick, "--hosts", "alpha")...)[0]
		testenv.WaitFor(t, 2*time.Minute, "alpha works", func() bool { return fleetStatus(t, ctl, dsn).host("alpha").State == "working" })
		if err := alpha.stop(t, syscall.SIGTERM, 3*time.Minute); err != nil {
			t.Errorf("alpha after SIGTERM: %v", err)
		}
		s := fleetStatus(t, ctl, dsn)
		if s.job(id).State != "completed" || s.host("alpha").State != "stopped" {
			t.Errorf("after SIGTERM: job %s, alpha %s", s.job(id).State, s.host("alpha").State)
		}
		// abort: the job in progress is cancelled, its run aborted, and
		// River puts it back in the queue as it was, for the agent's
		// return.
		if err := beta.stop(t, syscall.SIGTERM, time.Minute); err != nil { // idle: it ends at once; it starts again with abort
			t.Errorf("idle beta after SIGTERM: %v", err)
		}
		beta = startAgent(t, top, hb, dsn, "beta", "big,amd", "--on-term", "abort")
		id = submit(t, ctl, dsn, "sysbench", "--build", "mariadb-system", "--tests", "point-query_range=100", "--tables", "1", "--rows", "2000",
			"--read-secs", "120", "--warmup", "0", "--hosts", "beta")[0]
		testenv.WaitFor(t, 2*time.Minute, "beta runs the long test", func() bool {
			c := runsOfJob(t, st, id)
			return c[1][result.OK] == 1 && c[1]["running"] == 1 // the load, and the test
		})
		if err := beta.stop(t, syscall.SIGTERM, time.Minute); err != nil {
			t.Errorf("beta after SIGTERM: %v", err)
		}
		s = fleetStatus(t, ctl, dsn)
		if j := s.job(id); j.State != "available" || j.Attempt != 0 || len(j.Errors) != 0 {
			t.Errorf("the aborted job: %s, attempt %d, errors %v; want it back in the queue as it was", j.State, j.Attempt, j.Errors)
		}
		if c := runsOfJob(t, st, id); c[1][result.Aborted] != 1 || c[1]["running"] != 0 || s.host("beta").State != "stopped" {
			t.Errorf("runs %v, beta %s", c, s.host("beta").State)
		}
		if left := testenv.Processes(filepath.Join(hb.Root, "sandboxes")); len(left) > 0 {
			t.Errorf("beta's servers left: %q", left)
		}
		qpslabIn(t, ctl, "fleet", "cancel", "--store", dsn, strconv.FormatInt(id, 10))
	})
}

// agentFP is the part of a fingerprint the test reads.
type agentFP struct {
	Agent string `json:"agent"`
}
