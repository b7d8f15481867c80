package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// testSuite is a suite made for these tests: its steps are real work on
// the real server the plan starts (SELECT 1, a table it creates), and it
// fails, or blocks for a cancel, where a test asks it to.
type testSuite struct{ steps []suite.Step }

func (s testSuite) Name() string          { return "plan-test" }
func (testSuite) Summary() string         { return "the plan's own test suite" }
func (testSuite) Params() []suite.Param   { return nil }
func (testSuite) Tests() []suite.Test     { return nil }
func (testSuite) Layouts() []suite.Layout { return nil }
func (testSuite) Figures() []suite.Figure { return nil }
func (testSuite) Conditions() []string    { return nil }
func (s testSuite) Configure(suite.Values) (*suite.Plan, error) {
	return &suite.Plan{Steps: s.steps, Params: map[string]string{"suite_param": "x"}}, nil
}

// selectOne is a workload of SELECT 1 on the server.
type selectOne struct{ s *suite.Server }

func (w selectOne) NewWorker(ctx context.Context, _ int) (engine.Worker, error) {
	c, err := w.s.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return selectWorker{c}, nil
}

type selectWorker struct{ c client.Conn }

func (w selectWorker) Event(ctx context.Context) (engine.Outcome, error) {
	n, err := w.c.Query(ctx, "SELECT 1")
	return engine.Outcome{Statements: 1, Rows: n}, err
}
func (w selectWorker) Close() error { return w.c.Close() }

func driven(test string, threads ...int) suite.Step {
	return suite.Step{Test: test, Order: len(test), Threads: threads, Seconds: 300 * time.Millisecond,
		Groups: []result.Placement{{Layout: "l", Group: "g", Pos: 0}},
		Drive:  &suite.Drive{Workload: func(s *suite.Server, _ uint64) engine.Workload { return selectOne{s} }}}
}

func task(test string, run func(ctx context.Context, s *suite.Server) (result.Totals, error)) suite.Step {
	return suite.Step{Test: test, Role: result.RoleLoad, Threads: []int{1},
		Headline: suite.Headline{Unit: "rows/s", Op: "row", Series: result.SeriesRows, Value: func(t result.Totals) float64 { return t.RowsPerSec }},
		Task: &suite.Task{Run: func(ctx context.Context, s *suite.Server, _ int, _ uint64, _ suite.TaskIO) (result.Totals, error) {
			return run(ctx, s)
		}}}
}

// log records what the plan tells its recorder and watcher.
type log struct {
	mu     sync.Mutex
	events []string
	done   []result.Run
}

func (l *log) add(s string) { l.mu.Lock(); l.events = append(l.events, s); l.mu.Unlock() }

type rec struct {
	l *log
	r result.Run
}

func (r rec) Sample(result.Sample) {}
func (r rec) Done(x result.Run) error {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	r.l.done = append(r.l.done, x)
	r.l.events = append(r.l.events, fmt.Sprintf("done %s %d %s", x.Test, x.Threads, x.Status))
	return nil
}

func newPlan(t *testing.T, h home.Home, s testSuite, l *log, builds ...build.Build) *Runner {
	t.Helper()
	sp, err := s.Configure(suite.Values{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Store{Dir: h.Configs()}.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	p := &Runner{Suite: s, Steps: sp, Builds: builds, Configs: []config.Config{cfg}, Spec: Spec{Threads: []int{1}, Warmup: 0}, Design: Design{Repeat: 1}}
	p.Record = func(start result.Run) (Recorder, error) {
		l.add(fmt.Sprintf("start %s %d on %s", start.Test, start.Threads, start.Build))
		return rec{l: l, r: start}, nil
	}
	return p
}

// serverHome is a test home with MariaDB 10.11's build, checked at the end
// for any process left behind.
func serverHome(t *testing.T) (home.Home, build.Build) {
	t.Helper()
	h := testenv.Home(t)
	t.Setenv("QPSLAB_HOME", h.Root)
	t.Cleanup(func() {
		sandbox.StopAll()
		if left := testenv.Processes(h.Root); len(left) > 0 {
			t.Errorf("processes left behind: %q", left)
		}
	})
	return h, testenv.Build(t, h, "mariadb-system")
}

// Pass-level interleaving: builds and configs take turns within each
// repeat (A B A B), each running its whole pass; every step runs at each
// of its thread counts, and a step's own thread counts win.
func TestItemsInterleavePass(t *testing.T) {
	p := &Runner{
		Suite:   testSuite{},
		Steps:   &suite.Plan{Steps: []suite.Step{task("load", nil), driven("q"), driven("scan", 8)}},
		Builds:  []build.Build{{Name: "A"}, {Name: "B"}},
		Configs: []config.Config{{Name: "x"}, {Name: "y"}}, Spec: Spec{Threads: []int{1, 4}, Warmup: time.Second, Interleave: InterleavePass}, Design: Design{Repeat: 2},
	}
	var got []string
	for _, it := range p.Items() {
		got = append(got, fmt.Sprintf("%d%s%s:%s/%d", it.Repeat, it.Build.Name, it.Config.Name, it.Test, it.Threads))
	}
	var want []string
	for _, rep := range []string{"1", "2"} {
		for _, bc := range []string{"Ax", "Ay", "Bx", "By"} {
			want = append(want, rep+bc+":load/1", rep+bc+":q/1", rep+bc+":q/4", rep+bc+":scan/8")
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
	if it := p.Items()[1]; it.Seconds != 1300*time.Millisecond {
		t.Errorf("a driven run is planned for %s, want its warmup and measured time", it.Seconds)
	}
	if it := p.Items()[0]; it.Seconds != 0 {
		t.Errorf("a task is planned for %s, want 0 (it runs to its end)", it.Seconds)
	}
	if p.pairingOf(p.Steps.Steps[1]) != result.PairedPasses {
		t.Errorf("pass-level runs are paired as %q", p.pairingOf(p.Steps.Steps[1]))
	}
}

// Test-level interleaving: every label's server is up for the whole plan,
// and each step at each thread count runs on all of them before the next;
// a step that runs once (the load) does so in the first repeat only.
func TestItemsInterleaveTest(t *testing.T) {
	load := task("load", nil)
	load.Once = true
	q := driven("q")
	q.Slice = true
	p := &Runner{
		Suite:   testSuite{},
		Steps:   &suite.Plan{Steps: []suite.Step{load, q, driven("scan", 8)}},
		Builds:  []build.Build{{Name: "A"}, {Name: "B"}},
		Configs: []config.Config{{Name: "x"}, {Name: "y"}}, Spec: Spec{Threads: []int{1, 4}, Warmup: time.Second}, Design: Design{Repeat: 2},
	}
	var got []string
	for _, it := range p.Items() {
		got = append(got, fmt.Sprintf("%d%s%s:%s/%d", it.Repeat, it.Build.Name, it.Config.Name, it.Test, it.Threads))
	}
	var want []string
	for _, rep := range []string{"1", "2"} {
		for _, st := range []string{"load/1", "q/1", "q/4", "scan/8"} {
			if rep == "2" && st == "load/1" {
				continue
			}
			for _, bc := range []string{"Ax", "Ay", "Bx", "By"} {
				want = append(want, rep+bc+":"+st)
			}
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
	if it := p.Items()[4]; it.Seconds != 1300*time.Millisecond {
		t.Errorf("a driven run is planned for %s, want its warmup and measured time", it.Seconds)
	}
	if a, b := p.pairingOf(p.Steps.Steps[1]), p.pairingOf(p.Steps.Steps[2]); a != result.PairedSlices || b != result.PairedTests {
		t.Errorf("a sliced step is paired as %q, a whole one as %q", a, b)
	}
}

// The rounds' order: pairs of rounds, the second the first reversed, each
// pair rotated on (A B, B A, B A, A B for two labels): every label is
// first and last equally often over a whole number of rotations.
func TestCounterbalancedOrder(t *testing.T) {
	var two []string
	for g := 0; g < 8; g++ {
		two = append(two, fmt.Sprint(order(2, g)))
	}
	if got := strings.Join(two, " "); got != "[0 1] [1 0] [1 0] [0 1] [0 1] [1 0] [1 0] [0 1]" {
		t.Errorf("two labels: %s", got)
	}
	for _, n := range []int{2, 3, 4, 7} {
		first, last := make([]int, n), make([]int, n)
		pos := make([][]int, n)
		for i := range pos {
			pos[i] = make([]int, n)
		}
		for g := 0; g < 2*n; g++ {
			o := order(n, g)
			seen := map[int]bool{}
			for p, l := range o {
				seen[l] = true
				pos[l][p]++
			}
			if len(seen) != n {
				t.Fatalf("%d labels, round %d: %v is no permutation", n, g, o)
			}
			first[o[0]]++
			last[o[n-1]]++
		}
		for l := 0; l < n; l++ {
			if first[l] != 2 || last[l] != 2 {
				t.Errorf("%d labels: label %d first %d times and last %d times in %d rounds, want 2 and 2", n, l, first[l], last[l], 2*n)
			}
			for p := 0; p < n; p++ {
				if pos[l][p] != 2 {
					t.Errorf("%d labels: label %d at position %d %d times in %d rounds, want 2", n, l, p, pos[l][p], 2*n)
				}
			}
		}
	}
}

// On a real server: each run is recorded as it starts and when it ends,
// with its place in the suite and the plan's and step's params; Before
// runs once before a step's first thread count and After once after its
// last; a failing task is recorded as failed with why, ends the plan, and
// the server is stopped.
func TestRunRecordsAndFailure(t *testing.T) {
	h, b := serverHome(t)
	l := &log{}
	q := driven("q", 1, 2)
	q.Before = func(ctx context.Context, s *suite.Server) error { l.add("before q"); return nil }
	q.After = func(ctx context.Context, s *suite.Server) error { l.add("after q"); return nil }
	s := testSuite{steps: []suite.Step{
		task("load", func(ctx context.Context, s *suite.Server) (result.Totals, error) {
			c, err := s.Dial(ctx)
			if err != nil {
				return result.Totals{}, err
			}
			defer c.Close()
			_, err = c.Query(ctx, "SELECT 1")
			return result.Totals{Rows: 100}, err
		}),
		q,
		task("boom", func(context.Context, *suite.Server) (result.Totals, error) {
			return result.Totals{}, errors.New("the disk is on fire")
		}),
		driven("never"),
	}}
	p := newPlan(t, h, s, l, b)
	err := p.Run(context.Background(), h)
	if err == nil || !strings.Contains(err.Error(), "boom on mariadb-system.default: the disk is on fire") {
		t.Fatalf("error %v", err)
	}
	want := "start load 1 on mariadb-system|done load 1 ok|before q|start q 1 on mariadb-system|done q 1 ok|start q 2 on mariadb-system|done q 2 ok|after q|start boom 1 on mariadb-system|done boom 1 failed"
	if got := strings.Join(l.events, "|"); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if len(l.done) != 4 {
		t.Fatalf("%d runs done", len(l.done))
	}
	load, q1, boom := l.done[0], l.done[1], l.done[3]
	if load.Role != result.RoleLoad || load.Totals.Rows != 100 || load.Totals.Reported <= 0 || load.Totals.ReportedUnit != "rows/s" || load.Suite != "plan-test" {
		t.Errorf("load: %+v", load.Totals)
	}
	if q1.Totals.Events == 0 || q1.Totals.Reported != q1.Totals.QPS || q1.Totals.ReportedUnit != "qps" || q1.Params["suite_param"] != "x" ||
		q1.Params["transport"] == "" || len(q1.Groups) != 1 || q1.Version != b.Version || q1.HW == nil {
		t.Errorf("q: %+v params %v groups %v", q1.Totals, q1.Params, q1.Groups)
	}
	if boom.Status != result.Failed || boom.Error != "the disk is on fire" {
		t.Errorf("boom: %s %q", boom.Status, boom.Error)
	}
	if sts, _ := sandbox.List(h); len(sts) != 1 || sts[0].Running() {
		t.Errorf("sandboxes after the failure: %+v", sts)
	}
}

// SIGINT (a cancelled context) in the middle of a driven run: the run is
// recorded as aborted with what it measured, Run returns the context's
// error, and no server is left.
func TestRunInterrupted(t *testing.T) {
	h, b := serverHome(t)
	l := &log{}
	long := driven("long", 1)
	long.Seconds = time.Minute
	s := testSuite{steps: []suite.Step{long, driven("never")}}
	p := newPlan(t, h, s, l, b)
	ctx, cancel := context.WithCancel(context.Background())
	p.Watch.Start = func(int, int, Item) { time.AfterFunc(1500*time.Millisecond, cancel) }
	err := p.Run(ctx, h)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the cancel", err)
	}
	if len(l.done) != 1 {
		t.Fatalf("%d runs done: %v", len(l.done), l.events)
	}
	r := l.done[0]
	if r.Status != result.Aborted || r.Error != "interrupted" || r.Totals.Events == 0 || len(r.Samples) == 0 {
		t.Errorf("interrupted run: status %s %q, %d events, %d samples", r.Status, r.Error, r.Totals.Events, len(r.Samples))
	}
}

// A plan names what stops it before anything starts.
func TestCheck(t *testing.T) {
	h := testenv.Home(t)
	pg := build.Build{Name: "pg", Flavor: build.Postgres}
	my := build.Build{Name: "my", Flavor: build.MariaDB}
	cfg := config.Config{Name: "default", Family: config.MySQL, Content: []byte("[mysqld]\n")}
	steps := &suite.Plan{Steps: []suite.Step{driven("q")}, RunsOn: suite.AnyDialect}
	// A suite that needs what only PostgreSQL's dialect has.
	autovacuum := func(d client.Dialect) bool { return d.Autovacuum != "" }
	for _, c := range []struct {
		p    Runner
		want string
	}{
		{Runner{Suite: testSuite{}, Steps: steps, Configs: []config.Config{cfg}}, "name a build"},
		{Runner{Suite: testSuite{}, Steps: steps, Builds: []build.Build{my}}, "name a config"},
		{Runner{Suite: testSuite{}, Steps: steps, Builds: []build.Build{pg}, Configs: []config.Config{cfg}}, "config default is a mysql config and build pg is postgres"},
		{Runner{Suite: testSuite{}, Steps: &suite.Plan{Steps: steps.Steps, RunsOn: autovacuum}, Builds: []build.Build{my}, Configs: []config.Config{cfg}}, "does not run on mariadb"},
		{Runner{Suite: testSuite{}, Steps: &suite.Plan{}, Builds: []build.Build{my}, Configs: []config.Config{cfg}}, "has no steps"},
		{Runner{Suite: testSuite{}, Steps: steps, Builds: []build.Build{my}, Configs: []config.Config{cfg}, Spec: Spec{Sandbox: "nope"}}, "no sandbox named"},
	} {
		testenv.WantErr(t, c.p.Check(h), c.want)
	}
}

// The server killed in the middle of a run: the run is recorded as failed
// because the server died, with how it ended, and the plan stops there.
func TestServerDiesMidRun(t *testing.T) {
	for _, tr := range []client.Transport{client.Blocking, client.Uring, client.Loop} {
		t.Run(string(tr), func(t *testing.T) {
			if tr != client.Blocking && !client.UringWorks() {
				testenv.Skip(t, "io_uring is not allowed here (see TestUringAvailable in internal/client)")
			}
			h, b := serverHome(t)
			l := &log{}
			long := driven("long", 2)
			long.Seconds = time.Minute
			p := newPlan(t, h, testSuite{steps: []suite.Step{long, driven("never")}}, l, b)
			p.Client.Transport = tr
			p.Watch.Start = func(int, int, Item) {
				time.AfterFunc(time.Second, func() {
					sts, err := sandbox.List(h)
					if err != nil || len(sts) != 1 || sts[0].PID == 0 {
						t.Errorf("no server to kill: %v %+v", err, sts)
						return
					}
					syscall.Kill(sts[0].PID, syscall.SIGKILL)
				})
			}
			t0 := time.Now()
			err := p.Run(context.Background(), h)
			var dead *ServerDied
			if !errors.As(err, &dead) || !strings.Contains(err.Error(), "killed by signal 9") {
				t.Fatalf("error %v, want the server's death", err)
			}
			if time.Since(t0) > 30*time.Second {
				t.Errorf("the run went on for %s after its server died", time.Since(t0))
			}
			if len(l.done) != 1 || l.done[0].Status != result.Failed || !strings.Contains(l.done[0].Error, "died: killed by signal 9") {
				t.Fatalf("recorded: %v", l.events)
			}
			if got := l.done[0].Params["transport"]; got != string(tr) {
				t.Errorf("the run's transport %q, want %q", got, tr)
			}
		})
	}
}

// --transport loop: a driven step at 4 threads runs its workers on loops
// and records its statements, as the other transports do.
func TestLoopTransportRun(t *testing.T) {
	if !client.UringWorks() {
		testenv.Skip(t, "io_uring is not allowed here (see TestUringAvailable in internal/client)")
	}
	h, b := serverHome(t)
	l := &log{}
	p := newPlan(t, h, testSuite{steps: []suite.Step{driven("q", 4)}}, l, b)
	p.Client.Transport = client.Loop
	if err := p.Run(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(l.events, "|"), "start q 4 on mariadb-system|done q 4 ok"; got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	q := l.done[0]
	if q.Threads != 4 || q.Params["transport"] != "loop" || q.Totals.Events == 0 || q.Totals.Statements != q.Totals.Events ||
		q.Totals.Errors != 0 || q.Totals.Reported != q.Totals.QPS || len(q.Samples) == 0 {
		t.Errorf("q: threads %d, params %v, totals %+v, %d samples", q.Threads, q.Params, q.Totals, len(q.Samples))
	}
}

// A server of one of two labels killed in the middle of a test, its
// slices alternating with the other label's: the run of the label whose
// server died is the one recorded failed, naming its build, its config
// and its server's last log lines, and the other label's run is kept as
// aborted, saying another label's server failed. Before, whichever run
// was being measured took the failure (the healthy one, when the other
// server died idle) and the message named the build only. Both moments:
// the dying server idle (the other label measured), and measured.
func TestServerDiesMidRunTwoLabels(t *testing.T) {
	for _, when := range []string{"idle", "measured"} {
		t.Run(when, func(t *testing.T) {
			h, b := serverHome(t)
			cs := config.Store{Dir: h.Configs()}
			def, err := cs.Get("default", config.MySQL)
			if err != nil {
				t.Fatal(err)
			}
			twin, err := cs.AddContent("twin", def.Own, config.MySQL, false)
			if err != nil {
				t.Fatal(err)
			}
			if twin, err = cs.Get("twin", config.MySQL); err != nil {
				t.Fatal(err)
			}
			l := &log{}
			long := driven("long", 1)
			long.Seconds, long.Slice = time.Minute, true
			p := newPlan(t, h, testSuite{steps: []suite.Step{long, driven("never")}}, l, b)
			p.Configs = []config.Config{def, twin}
			// The twin's server dies when the default label's first slice
			// starts (idle), or its own (measured).
			on := map[string]string{"idle": "default", "measured": "twin"}[when]
			var once sync.Once
			p.Watch.Start = func(_ int, _ int, it Item) {
				if it.Config.Name != on {
					return
				}
				once.Do(func() {
					time.AfterFunc(300*time.Millisecond, func() {
						sts, err := sandbox.List(h)
						for _, st := range sts {
							if strings.HasSuffix(st.Name, ".twin") && st.PID > 0 {
								syscall.Kill(st.PID, syscall.SIGKILL)
								return
							}
						}
						t.Errorf("no twin server to kill: %v %+v", err, sts)
					})
				})
			}
			err = p.Run(context.Background(), h)
			var dead *ServerDied
			if !errors.As(err, &dead) || dead.Label != "mariadb-system.twin" || dead.Config != twin.ID() {
				t.Fatalf("error %v, want the twin's server's death", err)
			}
			if p.Layout().Mode != InterleaveTest {
				t.Fatalf("the plan ran %s, not test-level", p.Layout().Mode)
			}
			byConfig := map[string]result.Run{}
			for _, r := range l.done {
				byConfig[result.ConfigName(r.Config)] = r
			}
			if len(l.done) != 2 || len(byConfig) != 2 {
				t.Fatalf("recorded: %v", l.events)
			}
			f, k := byConfig["twin"], byConfig["default"]
			t.Logf("twin: %s: %s", f.Status, f.Error)
			t.Logf("default: %s: %s", k.Status, k.Error)
			for _, want := range []string{"mariadb-system.twin", "build mariadb-system", "config " + twin.ID(), "killed by signal 9", "log", "server.log"} {
				if f.Status != result.Failed || !strings.Contains(f.Error, want) {
					t.Errorf("the twin's run: %s %q, want failed with %q", f.Status, f.Error, want)
				}
			}
			if k.Status != result.Aborted || !strings.HasPrefix(k.Error, "another label's server failed: the server of mariadb-system.twin") {
				t.Errorf("the default label's run: %s %q, want aborted: another label's server failed", k.Status, k.Error)
			}
		})
	}
}
