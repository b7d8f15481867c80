package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

func TestNames(t *testing.T) {
	for in, want := range map[string]string{"vm": "vm", "Bench-7.lab.example.com": "bench-7-lab-example-com", "..": "host",
		"a__b": "a-b", strings.Repeat("x", 50): strings.Repeat("x", 40)} {
		if got := DefaultName(in); got != want || ValidName(got) != nil {
			t.Errorf("DefaultName(%q) = %q (%v), want %q", in, got, ValidName(got), want)
		}
	}
	for _, bad := range []string{"", "Big", "a.b", "-a", "a-", "a--b", strings.Repeat("x", 41)} {
		testenv.WantErr(t, ValidName(bad), "not valid")
	}
}

// open is a fleet in a new database of a PostgreSQL sandbox, migrated by
// the store.
func open(t *testing.T) (*Fleet, string) {
	t.Helper()
	srv, _ := testenv.StartServer(t, "postgres-system")
	ep := srv.Endpoint()
	db, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE DATABASE fleet`); err != nil {
		t.Fatal(err)
	}
	dsn := fmt.Sprintf("postgres://%s@127.0.0.1:%d/fleet?sslmode=disable", ep.User, ep.Port)
	st, err := store.Open(context.Background(), dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	f, err := Open(context.Background(), dsn, "the test's store")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f, dsn
}

// An agent in this process whose Work blocks until released or cancelled.
type fake struct {
	a       *Agent
	cancel  context.CancelFunc
	abort   chan struct{}
	done    chan error
	running atomic.Int32
	most    atomic.Int32
	release chan struct{}
	mu      sync.Mutex
	seen    []int64
}

func startFake(t *testing.T, f *Fleet, name string, labels ...string) *fake {
	t.Helper()
	x := &fake{abort: make(chan struct{}), done: make(chan error, 1), release: make(chan struct{}, 100)}
	x.a = &Agent{Fleet: f, Host: Host{Name: name, Labels: labels, HostID: "id-" + name, Fingerprint: []byte(`{}`), Hostname: "here", Interval: time.Second},
		RescueAfter: 5 * time.Second,
		Work: func(ctx context.Context, at Attempt) error {
			if at.Job.Suite == "unknown" {
				return Permanent(fmt.Errorf("unknown suite %q", at.Job.Suite))
			}
			n := x.running.Add(1)
			defer x.running.Add(-1)
			for m := x.most.Load(); n > m && !x.most.CompareAndSwap(m, n); m = x.most.Load() {
			}
			x.mu.Lock()
			x.seen = append(x.seen, at.ID)
			x.mu.Unlock()
			select {
			case <-x.release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
	go func() { x.done <- x.a.Run(ctx, x.abort) }()
	t.Cleanup(func() { x.stop(t) })
	return x
}

func (x *fake) stop(t *testing.T) {
	x.cancel()
	select {
	case <-x.abort:
	default:
		close(x.abort)
	}
	select {
	case <-x.done:
	case <-time.After(time.Minute):
		t.Errorf("agent %s did not stop", x.a.Host.Name)
	}
	x.done <- nil // for a second stop
}

func hostState(t *testing.T, f *Fleet, name string) string {
	t.Helper()
	hs, err := f.Hosts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.Name == name {
			return h.State
		}
	}
	return ""
}

func job(t *testing.T, f *Fleet, id int64) JobInfo {
	t.Helper()
	j, err := f.Job(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// Hosts register under names no live agent holds, are resolved by name
// and label, work their own queue one job at a time; jobs are cancelled and
// retried as River does; a host whose heartbeats stop is lost, one that
// stopped says so.
func TestAgents(t *testing.T) {
	f, _ := open(t)
	ctx := context.Background()
	if _, err := f.Resolve(ctx, []string{"x"}); !errors.Is(err, ErrNoHosts) {
		t.Errorf("resolve with no agents: %v", err)
	}
	a := startFake(t, f, "alpha", "small")
	b := startFake(t, f, "beta", "big")
	testenv.WaitFor(t, 30*time.Second, "both registered", func() bool { return hostState(t, f, "alpha") == "idle" && hostState(t, f, "beta") == "idle" })
	// A second agent of a live name is refused.
	dup := &Agent{Fleet: f, Host: Host{Name: "alpha", Fingerprint: []byte(`{}`), Hostname: "there", Interval: time.Second}, Work: a.a.Work}
	testenv.WantErr(t, dup.Run(ctx, nil), "an agent named alpha is running on here")

	hs, err := f.Resolve(ctx, []string{"big", "alpha", "beta"})
	if err != nil || len(hs) != 2 || hs[0].Name != "alpha" || hs[1].Name != "beta" {
		t.Errorf("resolve big,alpha,beta: %v %v", names(hs), err)
	}
	_, err = f.Resolve(ctx, []string{"medium"})
	testenv.WantErr(t, err, "--hosts medium", "alpha, beta", "big, small")

	// Three jobs for alpha, one for beta: alpha works one at a time.
	var ids []int64
	for i := 0; i < 3; i++ {
		got, err := f.Submit(ctx, []Job{{Suite: "s", Host: "alpha", Timeout: 60}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	bid, err := f.Submit(ctx, []Job{{Suite: "s", Host: "beta", Timeout: 60}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "alpha and beta working", func() bool { return a.running.Load() == 1 && b.running.Load() == 1 })
	if hostState(t, f, "alpha") != "working" {
		t.Errorf("alpha is %s while it works", hostState(t, f, "alpha"))
	}
	for i := 0; i < 3; i++ {
		a.release <- struct{}{}
	}
	testenv.WaitFor(t, 30*time.Second, "alpha's jobs done", func() bool {
		for _, id := range ids {
			if job(t, f, id).State != "completed" {
				return false
			}
		}
		return true
	})
	if a.most.Load() != 1 || len(a.seen) != 3 {
		t.Errorf("alpha worked %d jobs at once, %v in all", a.most.Load(), a.seen)
	}
	b.mu.Lock()
	if len(b.seen) != 1 || b.seen[0] != bid[0] {
		t.Errorf("beta worked %v, want only its own job %d", b.seen, bid[0])
	}
	b.mu.Unlock()

	// Cancel the running job: cancelled, not retried; then retry it.
	if _, err := f.Cancel(ctx, bid[0]); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "beta's job cancelled", func() bool { return job(t, f, bid[0]).State == "cancelled" })
	_, err = f.Cancel(ctx, bid[0])
	testenv.WantErr(t, err, "cancelled already")
	_, err = f.Retry(ctx, ids[0])
	testenv.WantErr(t, err, "completed", "submit the plan again")
	if _, err := f.Retry(ctx, bid[0]); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "beta works its job again", func() bool { return job(t, f, bid[0]).State == "running" && b.running.Load() == 1 })
	_, err = f.Retry(ctx, bid[0])
	testenv.WantErr(t, err, "is running", "fleet cancel")
	b.release <- struct{}{}
	testenv.WaitFor(t, 30*time.Second, "beta's job completed", func() bool { return job(t, f, bid[0]).State == "completed" })
	if j := job(t, f, bid[0]); j.Attempt != 2 || j.Job.Host != "beta" {
		t.Errorf("beta's job: attempt %d, host %s", j.Attempt, j.Job.Host)
	}
	_, err = f.Job(ctx, 999999)
	testenv.WantErr(t, err, "no job 999999")
	// A job its host cannot run as it is is not retried.
	pid, err := f.Submit(ctx, []Job{{Suite: "unknown", Host: "beta", Timeout: 60}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the job beta cannot run cancelled", func() bool { return job(t, f, pid[0]).State == "cancelled" })
	if j := job(t, f, pid[0]); j.Attempt != 1 || !strings.Contains(j.LastError(), `not retried (this host cannot run it as it is): unknown suite "unknown"`) {
		t.Errorf("the job beta cannot run: attempt %d, %q", j.Attempt, j.LastError())
	}

	// A stopped agent says so; one whose heartbeats stop is lost.
	b.stop(t)
	if s := hostState(t, f, "beta"); s != "stopped" {
		t.Errorf("beta after it stopped: %s", s)
	}
	if err := f.register(ctx, Host{Name: "gamma", Fingerprint: []byte(`{}`), Interval: time.Second}, "gone"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "gamma lost", func() bool { return hostState(t, f, "gamma") == Lost })
	// A lost agent's name can be taken, and the lost one learns it.
	if err := f.register(ctx, Host{Name: "gamma", Fingerprint: []byte(`{}`), Interval: time.Second}, "new"); err != nil {
		t.Errorf("take a lost agent's name: %v", err)
	}
	if err := f.beat(ctx, "gamma", "gone", "idle", 0); !errors.Is(err, errTaken) {
		t.Errorf("the lost agent's heartbeat: %v", err)
	}
}
