package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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
	_, dsn := testenv.FleetDatabase(t)
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
		t.Errorf("resolve big,alpha,beta: %v %v", Names(hs), err)
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

// agentEvents are what one agent of TestStopLoop tells: its log lines and
// the jobs its Work starts.
type agentEvents struct {
	registered chan struct{} // it heartbeats and works its queue
	finishing  chan struct{} // stopped with a job in progress, it waits for the job to end
	started    chan int64    // Work began a job
	release    chan struct{} // Work's job ends
	ended      chan struct{} // closed when Run has returned, err set
	err        error         // Run's
}

// loopAgent starts an agent named loop whose heartbeat is every 5 ms, and
// returns what it tells.
func loopAgent(f *Fleet, ctx context.Context, abort <-chan struct{}) *agentEvents {
	ev := &agentEvents{registered: make(chan struct{}), finishing: make(chan struct{}), started: make(chan int64, 1),
		release: make(chan struct{}, 1), ended: make(chan struct{})}
	var once1, once2 sync.Once
	a := &Agent{Fleet: f, Host: Host{Name: "loop", HostID: "id-loop", Fingerprint: []byte(`{}`), Hostname: "here", Interval: 5 * time.Millisecond},
		Work: func(ctx context.Context, at Attempt) error {
			ev.started <- at.ID
			select {
			case <-ev.release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		Log: func(line string) {
			switch {
			case strings.Contains(line, ": registered in "):
				once1.Do(func() { close(ev.registered) })
			case strings.Contains(line, ": stopping after job "):
				once2.Do(func() { close(ev.finishing) })
			}
		}}
	go func() { ev.err = a.Run(ctx, abort); close(ev.ended) }()
	return ev
}

// next waits for ch (an event of the agent); an agent that ends first, or
// an event that does not come within a minute, is an error.
func next[T any](ev *agentEvents, ch <-chan T, what string) (T, error) {
	var zero T
	select {
	case v := <-ch:
		return v, nil
	case <-ev.ended:
		return zero, fmt.Errorf("the agent ended before %s: %v", what, ev.err)
	case <-time.After(time.Minute):
		return zero, fmt.Errorf("%s: not within a minute", what)
	}
}

// An agent stopped as SIGTERM stops it, with a job in progress that it
// finishes (--on-term finish) or aborts (--on-term abort), or idle, is
// recorded stopped, every time, and can register again at once: the
// heartbeat in flight when it stops (every 5 ms here) never overwrites its
// last state.
func TestStopLoop(t *testing.T) {
	f, _ := open(t)
	ctx := context.Background()
	const n = 240
	began := time.Now()
	failed := 0
	for i := 0; i < n; i++ {
		mode := []string{"finish", "abort", "idle"}[i%3]
		if err := stopOnce(f, ctx, mode); err != nil {
			if failed++; failed <= 10 {
				t.Errorf("iteration %d (%s): %v", i, mode, err)
			}
			// Count each iteration's fault once: the next starts when the
			// name is free again (stopped, or lost).
			testenv.WaitFor(t, 30*time.Second, "the agent's name free", func() bool {
				s := hostState(t, f, "loop")
				return s == Stopped || s == Lost
			})
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d iterations failed", failed, n)
	}
	t.Logf("%d iterations in %s", n, time.Since(began).Round(time.Millisecond))
	// The last one too can register again at once.
	if err := f.register(ctx, Host{Name: "loop", Fingerprint: []byte(`{}`), Interval: time.Second}, "again"); err != nil {
		t.Errorf("register after the last stop: %v", err)
	}
}

// stopOnce starts the agent, stops it in the mode given, and says what went
// wrong.
func stopOnce(f *Fleet, ctx context.Context, mode string) error {
	runCtx, cancel := context.WithCancel(ctx)
	abort := make(chan struct{})
	ev := loopAgent(f, runCtx, abort)
	defer func() { // on an early return too, the agent ends before the next starts
		cancel()
		select {
		case <-abort:
		default:
			close(abort)
		}
		select {
		case <-ev.ended:
		case <-time.After(time.Minute): // reported already
		}
	}()
	if _, err := next(ev, ev.registered, "registered"); err != nil {
		return err
	}
	var id int64
	if mode != "idle" {
		ids, err := f.Submit(ctx, []Job{{Suite: "s", Host: "loop", Timeout: 60}}, 2)
		if err != nil {
			return err
		}
		if id, err = next(ev, ev.started, "the job started"); err != nil {
			return err
		}
		if id != ids[0] {
			return fmt.Errorf("the agent works job %d, not %d", id, ids[0])
		}
	}
	cancel() // SIGTERM
	switch mode {
	case "finish":
		if _, err := next(ev, ev.finishing, "the agent waits for its job"); err != nil {
			return err
		}
		ev.release <- struct{}{}
	case "abort":
		close(abort)
	}
	select {
	case <-ev.ended:
	case <-time.After(time.Minute):
		return errors.New("the agent did not end within a minute of its stop")
	}
	if ev.err != nil {
		return fmt.Errorf("the agent ended: %v", ev.err)
	}
	switch j, err := f.Job(ctx, id); {
	case mode == "idle":
	case err != nil:
		return err
	case mode == "finish" && j.State != "completed":
		return fmt.Errorf("the finished job is %s", j.State)
	case mode == "abort":
		if j.State != "available" {
			return fmt.Errorf("the aborted job is %s, not back in the queue", j.State)
		}
		if _, err := f.Cancel(ctx, id); err != nil { // or the next agent works it
			return err
		}
	}
	hs, err := f.Hosts(ctx)
	if err != nil {
		return err
	}
	if len(hs) != 1 {
		return fmt.Errorf("%d hosts, want 1", len(hs))
	}
	if h := hs[0]; h.State != Stopped {
		return fmt.Errorf("stopped, the host is %s (job %d, its last heartbeat %s ago)", h.State, h.Job, h.Since.Round(time.Millisecond))
	}
	return nil
}

// The store refuses the moves that the agent's states do not allow, in
// the heartbeat's UPDATE itself: nothing leaves stopped but a registration,
// nothing leaves stopping but stopped, and a heartbeat of an agent whose
// name another took is errTaken.
func TestMoves(t *testing.T) {
	f, _ := open(t)
	ctx := context.Background()
	h := Host{Name: "delta", Fingerprint: []byte(`{}`), Interval: time.Second}
	if err := f.register(ctx, h, "one"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		state string
		err   error
	}{
		{Working, nil}, {Idle, nil}, {Working, nil}, {Stopping, nil}, {Stopping, nil}, {Working, errMove}, {Idle, errMove},
		{Stopped, nil}, {Stopped, errMove}, {Stopping, errMove}, {Idle, errMove}, {Working, errMove},
	} {
		err := f.beat(ctx, "delta", "one", m.state, 0)
		if !errors.Is(err, m.err) || (m.err == nil) != (err == nil) {
			t.Errorf("heartbeat %s after %s: %v, want %v", m.state, hostState(t, f, "delta"), err, m.err)
		}
	}
	if s := hostState(t, f, "delta"); s != Stopped {
		t.Errorf("delta is %s, want stopped", s)
	}
	if err := f.register(ctx, h, "two"); err != nil {
		t.Fatalf("register a stopped agent's name: %v", err)
	}
	if s := hostState(t, f, "delta"); s != Idle {
		t.Errorf("delta registered is %s, want idle", s)
	}
	if err := f.beat(ctx, "delta", "one", Stopped, 0); !errors.Is(err, errTaken) {
		t.Errorf("the old agent's heartbeat: %v, want errTaken", err)
	}
	for from, want := range map[string]string{Idle: Stopping, Working: Stopping, Stopping: Stopping, Stopped: Stopped} {
		if got := move(from, Stopping); got != want {
			t.Errorf("move(%s, stopping) = %s, want %s", from, got, want)
		}
	}
	for from, want := range map[string]string{Idle: Working, Working: Working, Stopping: Stopping, Stopped: Stopped} {
		if got := move(from, Working); got != want {
			t.Errorf("move(%s, working) = %s, want %s", from, got, want)
		}
	}
}

// Two agents registering one new name at once: the second waits for the
// first's registration to commit and is refused, instead of passing the
// check on a name with no row yet and taking over the row the first wrote.
func TestRegisterSameNewName(t *testing.T) {
	f, _ := open(t)
	ctx := context.Background()
	h := Host{Name: "twin", Fingerprint: []byte(`{}`), Hostname: "here", Interval: time.Minute}
	checked, release := make(chan struct{}), make(chan struct{})
	registerChecked = func(name, runner string) {
		if runner == "first" {
			close(checked)
			<-release
		}
	}
	t.Cleanup(func() { registerChecked = nil })
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the fleet's Close, should the test fail while the first waits
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- f.register(ctx, h, "first") }()
	<-checked
	go func() { second <- f.register(ctx, h, "second") }()
	// The second registration has either ended (it did not wait for the
	// first: the race) or waits in the store on a lock the first's
	// transaction holds.
	var early error
	ended := false
	testenv.WaitFor(t, 30*time.Second, "the second registration to end or wait on a lock", func() bool {
		select {
		case early = <-second:
			ended = true
			return true
		default:
		}
		var n int
		err := f.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`).Scan(&n)
		return err == nil && n > 0
	})
	free()
	if ended && early == nil {
		<-first
		t.Fatal("the second registration of a new name did not wait for the first's and was not refused")
	}
	if err := <-first; err != nil {
		t.Fatalf("the first registration: %v", err)
	}
	if !ended {
		early = <-second
	}
	testenv.WantErr(t, early, "an agent named twin is running")
	var runner string
	if err := f.pool.QueryRow(ctx, `SELECT runner FROM fleet_hosts WHERE name = 'twin'`).Scan(&runner); err != nil || runner != "first" {
		t.Errorf("twin's row belongs to %q (%v), want the first agent's", runner, err)
	}
}

// TestAgentProcess is not a test of its own: TestKilled runs it, in a
// process of its own, as an agent it can kill with SIGKILL. It does nothing
// (and passes) without QPSLAB_FLEET_AGENT.
func TestAgentProcess(t *testing.T) {
	dsn := os.Getenv("QPSLAB_FLEET_AGENT")
	if dsn == "" {
		return
	}
	f, err := Open(context.Background(), dsn, "the test's store")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// SIGTERM stops it as it stops qpslab agent.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	a := &Agent{Fleet: f, Host: Host{Name: os.Getenv("QPSLAB_FLEET_AGENT_NAME"), Fingerprint: []byte(`{}`), Hostname: "here", Interval: 100 * time.Millisecond},
		Work: func(ctx context.Context, _ Attempt) error { <-ctx.Done(); return ctx.Err() },
		Log:  func(line string) { fmt.Println(line) }}
	if err := a.Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// An agent killed with SIGKILL (in a process of its own: TestAgentProcess)
// writes nothing more and is shown lost once LostAfter has passed; one
// stopped with SIGTERM is stopped and stays so past LostAfter.
func TestKilled(t *testing.T) {
	f, dsn := open(t)
	type proc struct {
		cmd  *exec.Cmd
		out  strings.Builder
		err  error
		done chan struct{} // closed when it has ended, err set
	}
	procs := map[string]*proc{}
	for _, name := range []string{"killed", "termed"} {
		p := &proc{done: make(chan struct{})}
		p.cmd = exec.Command(os.Args[0], "-test.run=^TestAgentProcess$", "-test.count=1", "-test.v")
		p.cmd.Env = append(os.Environ(), "QPSLAB_FLEET_AGENT="+dsn, "QPSLAB_FLEET_AGENT_NAME="+name)
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[name] = p
		go func() { p.err = p.cmd.Wait(); close(p.done) }()
		t.Cleanup(func() {
			p.cmd.Process.Kill()
			<-p.done
			if t.Failed() {
				t.Logf("agent %s:\n%s", name, p.out.String())
			}
		})
	}
	testenv.WaitFor(t, time.Minute, "both agents registered", func() bool {
		return hostState(t, f, "killed") == Idle && hostState(t, f, "termed") == Idle
	})
	procs["killed"].cmd.Process.Signal(syscall.SIGKILL)
	procs["termed"].cmd.Process.Signal(syscall.SIGTERM)
	for name, want := range map[string]string{"killed": "signal: killed", "termed": "<nil>"} {
		select {
		case <-procs[name].done:
			if got := fmt.Sprint(procs[name].err); got != want {
				t.Errorf("agent %s ended: %s, want %s", name, got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("agent %s did not end within a minute", name)
		}
	}
	if s := hostState(t, f, "termed"); s != Stopped {
		t.Errorf("the agent stopped with SIGTERM is %s", s)
	}
	testenv.WaitFor(t, 30*time.Second, "the killed agent lost", func() bool { return hostState(t, f, "killed") == Lost })
	// Past LostAfter by the store's clock, the stopped agent is stopped.
	var termed Host
	testenv.WaitFor(t, 30*time.Second, "LostAfter passed since the stopped agent's last heartbeat", func() bool {
		hs, err := f.Hosts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if h.Name == "termed" {
				termed = h
			}
		}
		return termed.Since > LostAfter(termed.Interval)
	})
	if termed.State != Stopped {
		t.Errorf("the agent stopped with SIGTERM is %s %s after its last heartbeat", termed.State, termed.Since)
	}
}
