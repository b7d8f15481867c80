package plan

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// twin is a second config with the default's settings under a name of its
// own: a second label of the same server (an A/A pair).
func twin(t *testing.T, dir string) config.Config {
	t.Helper()
	c, err := config.Store{Dir: dir}.AddContent("twin", []byte("# qpslab: base=default\n"), config.MySQL, true)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drifting is a host that slows down as time passes: each event takes
// base·(1 + slope·s), s the seconds since the clock started, whichever
// server it is for. Only a fake shows a drift of known size; the servers
// the plan starts are real.
type drifting struct {
	mu    sync.Mutex
	start time.Time
	base  time.Duration
	slope float64
}

func (d *drifting) now() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.start.IsZero() {
		d.start = time.Now()
	}
	s := time.Since(d.start).Seconds()
	return time.Duration(float64(d.base) * (1 + d.slope*s))
}

func (d *drifting) NewWorker(context.Context, int) (engine.Worker, error) {
	return &driftWorker{d: d}, nil
}

// driftWorker's events end on the drifting host's schedule: each is due
// its duration after the one before it was due, not after a timer's late
// wake-up, so that a loaded machine's late timers do not add a drift of
// their own (they did: the test failed beside 2 CPU burners). A worker
// more than maxBehind late (new, or back from the gap between slices)
// starts its schedule again from now.
type driftWorker struct {
	d   *drifting
	due time.Time
}

const maxBehind = 50 * time.Millisecond

func (w *driftWorker) Event(ctx context.Context) (engine.Outcome, error) {
	if now := time.Now(); w.due.IsZero() || now.Sub(w.due) > maxBehind {
		w.due = now
	}
	w.due = w.due.Add(w.d.now())
	t := time.NewTimer(time.Until(w.due))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return engine.Outcome{}, ctx.Err()
	}
	return engine.Outcome{Statements: 1}, nil
}
func (*driftWorker) Close() error { return nil }

// On a host whose speed drifts, pass-level interleaving puts the drift on
// the label that runs later, and test-level interleaving cancels it: two
// labels of one server (an A/A pair), six tests, a host that gets 40 %
// slower over the plan.
func TestDriftingHost(t *testing.T) {
	h, b := serverHome(t)
	tw := twin(t, h.Configs())
	def, err := config.Store{Dir: h.Configs()}.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	geo := map[string]float64{}
	var rounds []float64 // test-level: each round's log ratio
	for _, mode := range []string{InterleavePass, InterleaveTest} {
		d := &drifting{base: 2 * time.Millisecond}
		var steps []suite.Step
		for i := 0; i < 6; i++ {
			steps = append(steps, suite.Step{Test: fmt.Sprintf("t%d", i), Order: i, Seconds: 600 * time.Millisecond, Slice: true,
				Drive: &suite.Drive{Workload: func(*suite.Server, uint64) engine.Workload { return d }}})
		}
		l := &log{}
		p := newPlan(t, h, testSuite{steps: steps}, l, b)
		p.Configs, p.Interleave, p.Design.Slices = []config.Config{def, tw}, mode, 6
		// The drift starts with the first measured event: about 40 %
		// slower over the 7 s the plan measures.
		d.slope = 0.4 / 7.2
		if err := p.Run(context.Background(), h); err != nil {
			t.Fatal(err)
		}
		byTest := map[string][2]result.Run{}
		for _, r := range l.done {
			pair := byTest[r.Test]
			if strings.HasPrefix(r.Config, "twin") {
				pair[1] = r
			} else {
				pair[0] = r
			}
			byTest[r.Test] = pair
		}
		var logs []float64
		for test, pair := range byTest {
			a, c := pair[0], pair[1]
			if a.Status != result.OK || c.Status != result.OK {
				t.Fatalf("%s %s: %s %s", mode, test, a.Status, c.Status)
			}
			want := result.PairedPasses
			if mode == InterleaveTest {
				want = result.PairedSlices
				if len(a.Rounds) != 6 || len(c.Rounds) != 6 {
					t.Errorf("%s: %d and %d rounds, want 6 each", test, len(a.Rounds), len(c.Rounds))
				}
			}
			if a.Pairing != want || a.Plan == "" || a.Plan != c.Plan {
				t.Errorf("%s %s: pairing %q, plans %q and %q", mode, test, a.Pairing, a.Plan, c.Plan)
			}
			// The geometric mean of the per-round ratios, as compare
			// takes it (a pass has one round per test).
			var s float64
			for i := range a.Rounds {
				s += math.Log(c.Rounds[i].Value / a.Rounds[i].Value)
				if mode == InterleaveTest {
					rounds = append(rounds, math.Log(c.Rounds[i].Value/a.Rounds[i].Value))
				}
			}
			logs = append(logs, s/float64(len(a.Rounds)))
		}
		var s float64
		for _, l := range logs {
			s += l
		}
		geo[mode] = math.Exp(s / float64(len(logs)))
	}
	t.Logf("A/A on a drifting host: twin / default %.3f pass-level, %.3f test-level", geo[InterleavePass], geo[InterleaveTest])
	if geo[InterleavePass] > 0.95 {
		t.Errorf("pass-level interleaving: %.3f, want the drift on the later label (below 0.95)", geo[InterleavePass])
	}
	// Within 5 %, or within the rounds' own noise: on a host loaded 30
	// to 100 deep (a fresh-clone check beside other jobs) timers late by
	// whole milliseconds put 3 to 10 % of noise on rounds of 100 ms, which
	// the rounds' spread measures (four standard errors of their mean
	// log ratio). A drift that did not cancel is a bias of the mean
	// against that spread; the pass-level drift, 0.66 to 0.83 here,
	// stays well apart.
	mean, sd := stat.MeanStdDev(rounds, nil)
	tol := math.Max(0.05, 4*sd/math.Sqrt(float64(len(rounds))))
	t.Logf("test-level rounds: mean log ratio %.3f, sd %.3f over %d rounds: tolerance %.3f", mean, sd, len(rounds), tol)
	if math.Abs(math.Log(geo[InterleaveTest])) > tol {
		t.Errorf("test-level interleaving: %.3f, want within %.1f %% of 1 (5 %%, or four standard errors of its %d rounds): the drift cancels in the counterbalanced rounds", geo[InterleaveTest], 100*tol, len(rounds))
	}
}

// checksum is a task that records the checksum of sbtest1 as the run's
// figure "checksum".
func checksum() suite.Step {
	return suite.Step{Test: "checksum", Role: result.RoleLoad, Order: 1000, Threads: []int{1},
		Task: &suite.Task{Run: func(ctx context.Context, s *suite.Server, _ int, _ uint64, _ suite.TaskIO) (result.Totals, error) {
			c, err := s.Dial(ctx)
			if err != nil {
				return result.Totals{}, err
			}
			defer c.Close()
			var sum float64
			for _, q := range []string{"SELECT COUNT(*) FROM sbtest1", "SELECT SUM(CRC32(CONCAT(id, ':', k, ':', c, ':', pad))) FROM sbtest1"} {
				v, err := client.Scalar(ctx, c, q)
				if err != nil {
					return result.Totals{}, err
				}
				sum = sum*1e12 + float64(v)
			}
			return result.Totals{Events: 1, Figures: map[string]float64{"checksum": sum}}, nil
		}}}
}

// Write tests run as slices bounded by events leave every label's tables
// alike: the sysbench writes, sliced and interleaved on two labels of one
// server at one thread, then each table's row count and checksum.
func TestSlicedWritesLeaveIdenticalTables(t *testing.T) {
	h, b := serverHome(t)
	tw := twin(t, h.Configs())
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	v := suite.Defaults(Common, s.Params()).With("rows", "2000").With("read-secs", "1").With("write-secs", "1").
		With("postwrite-scale", "0").With("tests", "update-index*,update-nonindex*,update-one*,delete*,insert*,write-only*")
	sp, err := s.Configure(v)
	if err != nil {
		t.Fatal(err)
	}
	sp.Steps = append(sp.Steps, checksum())
	l := &log{}
	p := newPlan(t, h, testSuite{steps: sp.Steps}, l, b)
	def := p.Configs[0]
	p.Configs, p.Design.Repeat, p.Warmup = []config.Config{def, tw}, 2, 100*time.Millisecond
	if err := p.Run(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	sums := map[string]float64{}
	writes := 0
	for _, r := range l.done {
		if r.Status != result.OK {
			t.Errorf("%s on %s: %s %s", r.Test, r.Config, r.Status, r.Error)
		}
		if r.Test == "checksum" {
			sums[r.Config+" repeat "+r.Params["repeat"]] = r.Totals.Figures["checksum"]
		}
		if r.Pairing == result.PairedSlices {
			writes++
			var ev int64
			for _, rd := range r.Rounds {
				ev += rd.Events
			}
			if ev != r.Totals.Events || len(r.Rounds) != 4 {
				t.Errorf("%s: %d rounds of %d events, the run %d", r.Test, len(r.Rounds), ev, r.Totals.Events)
			}
		}
	}
	if writes != 2*2*6 {
		t.Errorf("%d sliced write runs, want 24 (6 tests, 2 labels, 2 repeats)", writes)
	}
	if len(sums) != 4 {
		t.Fatalf("checksums: %v", sums)
	}
	for rep := 1; rep <= 2; rep++ {
		a, c := sums[def.ID()+fmt.Sprintf(" repeat %d", rep)], sums[tw.ID()+fmt.Sprintf(" repeat %d", rep)]
		if a == 0 || a != c {
			t.Errorf("repeat %d: the tables differ after the sliced writes: %v and %v", rep, a, c)
		}
	}
	// The same event counts on both labels, slice by slice.
	byTest := map[string][]result.Run{}
	for _, r := range l.done {
		if r.Pairing == result.PairedSlices {
			byTest[r.Test+r.Params["repeat"]] = append(byTest[r.Test+r.Params["repeat"]], r)
		}
	}
	for k, rs := range byTest {
		for i := range rs[0].Rounds {
			if rs[0].Rounds[i].Events != rs[1].Rounds[i].Events {
				t.Errorf("%s round %d: %d and %d events", k, i+1, rs[0].Rounds[i].Events, rs[1].Rounds[i].Events)
			}
		}
	}
}

// The memory check: every label's buffer pool beside the others' where it
// fits; the base with each other label in turn where only two fit; pass
// by pass where not even two do, said in one line each time.
func TestLayoutByMemory(t *testing.T) {
	proc := func(availKB int64) host.Roots {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte(fmt.Sprintf("MemTotal: %d kB\nMemFree: %d kB\nMemAvailable: %d kB\n", 2*availKB, availKB, availKB)), 0o644); err != nil {
			t.Fatal(err)
		}
		return host.Roots{Proc: dir, Sys: dir}
	}
	pool := func(name, size string) config.Config {
		return config.Config{Name: name, Family: config.MySQL, Content: []byte("[mysqld]\ninnodb_buffer_pool_size=" + size + "\n")}
	}
	mk := func(configs ...config.Config) *Runner {
		return &Runner{Suite: testSuite{}, Steps: &suite.Plan{Steps: []suite.Step{driven("q")}}, Builds: []build.Build{{Name: "A"}, {Name: "B"}, {Name: "C"}}, Configs: configs}
	}
	gib := int64(1 << 20) // KB
	for _, c := range []struct {
		name   string
		avail  int64
		mode   string
		groups int
		why    string
	}{
		{"all fit", 24 * gib, InterleaveTest, 1, "the 3 labels' servers up together"},
		{"two fit", 6 * gib, InterleaveTest, 2, "each label runs beside the base in turn"},
		{"none fit", 2 * gib, InterleavePass, 0, "pass-level interleaving: two servers need"},
	} {
		p := mk(pool("x", "2G"))
		if err := p.Decide(proc(c.avail)); err != nil {
			t.Fatal(err)
		}
		l := p.Layout()
		if l.Mode != c.mode || len(l.Groups) != c.groups || !strings.Contains(l.Why, c.why) || strings.Contains(l.Why, "\n") {
			t.Errorf("%s: %s, %d groups: %q", c.name, l.Mode, len(l.Groups), l.Why)
		}
		if c.groups == 2 && (l.Groups[0][0] != 0 || l.Groups[1][0] != 0 || l.Groups[1][1] != 2) {
			t.Errorf("%s: groups %v, want the base with each other label", c.name, l.Groups)
		}
		items := p.Items()
		if c.groups == 2 && (len(items) != 4 || items[2].Group != 1 || items[2].Build.Name != "A") {
			t.Errorf("%s: items %v", c.name, items)
		}
	}
	// A sweep whose base (A, the plan's first label) is its middle build:
	// the pairs are the sweep's neighbours, B with A and A with C.
	p := mk(pool("x", "2G"))
	p.Sweep = []int{1, 0, 2}
	if err := p.Decide(proc(6 * gib)); err != nil || !slices.EqualFunc(p.Layout().Groups, [][]int{{1, 0}, {0, 2}}, slices.Equal) || !strings.Contains(p.Layout().Why, "in neighbour pairs") {
		t.Errorf("sweep B, A, C: %v %+v", err, p.Layout())
	}
	p.Sweep = []int{0, 0, 2}
	testenv.WantErr(t, p.Decide(proc(6*gib)), "the sweep's order [0 0 2]", "each of the plan's 3 labels once")
	p = mk(pool("x", "2G"))
	p.Interleave = InterleavePass
	if err := p.Decide(proc(24 * gib)); err != nil || p.Layout().Mode != InterleavePass {
		t.Errorf("--interleave pass: %v %+v", err, p.Layout())
	}
	p = mk(pool("x", "lots"))
	testenv.WantErr(t, p.Decide(proc(24*gib)), "config x", "innodb_buffer_pool_size=lots")
	p = mk(pool("x", "1G"))
	p.Interleave = "sideways"
	testenv.WantErr(t, p.Decide(proc(24*gib)), "--interleave sideways", "use test", "or pass")
}
