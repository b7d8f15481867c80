package plan

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// boostSeen is a workload that does nothing but read the host's boost
// file at each event, so that what each label's events ran under is
// known: the servers the plan starts are real, the host's sysfs a fixture
// tree (this machine has no boost to switch).
type boostSeen struct {
	file string
	mu   sync.Mutex
	seen map[string]map[string]int // datadir → boost file content → events
}

func (b *boostSeen) note(datadir string) error {
	v, err := os.ReadFile(b.file)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen[datadir] == nil {
		b.seen[datadir] = map[string]int{}
	}
	b.seen[datadir][strings.TrimSpace(string(v))]++
	return nil
}

type boostLoad struct {
	b       *boostSeen
	datadir string
}

func (l boostLoad) NewWorker(context.Context, int) (engine.Worker, error) {
	return boostWorker{l.b, l.datadir}, nil
}

type boostWorker struct {
	b       *boostSeen
	datadir string
}

func (w boostWorker) Event(ctx context.Context) (engine.Outcome, error) {
	if err := w.b.note(w.datadir); err != nil {
		return engine.Outcome{}, err
	}
	select { // an event of about a millisecond
	case <-time.After(time.Millisecond):
	case <-ctx.Done():
		return engine.Outcome{}, ctx.Err()
	}
	return engine.Outcome{Statements: 1}, nil
}
func (boostWorker) Close() error { return nil }

// Two labels of one server whose host state differs (boost on, boost
// off: qpslab run --boost) take turns slice by slice, a read test's and a
// write test's (its calibration batches too), and the load: every event
// of each label ran with the boost file at its label's state, each run
// records its state's fingerprint and names the state, and the switch
// puts the file back as it was afterwards.
func TestHostStatePerLabel(t *testing.T) {
	h, b := serverHome(t)
	cs := config.Store{Dir: h.Configs()}
	var cfgs []config.Config
	for _, n := range []string{"boost-off", "boost-on"} {
		c, err := cs.AddContent(n, []byte("# qpslab: base=default\n"), config.MySQL, true)
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, c)
	}
	// A sysfs with acpi-cpufreq's global boost file, boost on.
	r, file := testenv.BoostTree(t)
	sw, err := host.BoostSwitch(r, filepath.Join(h.Root, "host", "boost-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]HostState{}
	for i, on := range []bool{false, true} {
		if err := sw.Set(on); err != nil {
			t.Fatal(err)
		}
		c, err := host.Inspect(r)
		if err != nil {
			t.Fatal(err)
		}
		fp, _ := json.Marshal(c)
		name := map[bool]string{true: "boost=on", false: "boost=off"}[on]
		states[cfgs[i].ID()] = HostState{Name: name, Set: func() error { return sw.Set(on) }, Fingerprint: fp}
	}
	bs := &boostSeen{file: file, seen: map[string]map[string]int{}}
	work := func(s *suite.Server, _ uint64) engine.Workload {
		return boostLoad{bs, s.Datadir}
	}
	load := task("load", func(_ context.Context, s *suite.Server) (result.Totals, error) {
		return result.Totals{Rows: 1, Events: 1}, bs.note(s.Datadir)
	})
	load.Once = true
	steps := []suite.Step{load,
		{Test: "read", Order: 1, Seconds: 800 * time.Millisecond, Slice: true, Drive: &suite.Drive{Workload: work}},
		{Test: "write", Order: 2, Seconds: 800 * time.Millisecond, Slice: true, Writes: true, Drive: &suite.Drive{Workload: work}},
	}
	l := &log{}
	p := newPlan(t, h, testSuite{steps: steps}, l, b)
	p.Configs, p.Interleave, p.Design.Slices, p.HostStates = cfgs, InterleaveTest, 4, states
	p.Host = json.RawMessage(`{"kernel":"not the label's state"}`)
	if err := p.Run(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Restore(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "1\n" {
		t.Errorf("the boost file is %q after the plan and the restore, was 1", b)
	}
	if len(bs.seen) != 2 {
		t.Fatalf("events seen on %d servers, want 2: %v", len(bs.seen), bs.seen)
	}
	for dir, seen := range bs.seen {
		want := map[bool]string{true: "1", false: "0"}[strings.Contains(dir, "boost-on")]
		if len(seen) != 1 || seen[want] == 0 {
			t.Errorf("the server in %s saw boost %v, want %s only", dir, seen, want)
		}
	}
	if len(l.done) != 6 {
		t.Fatalf("%d runs, want 6", len(l.done))
	}
	for _, run := range l.done {
		on := strings.HasPrefix(run.Config, "boost-on@")
		var c host.Check
		if err := json.Unmarshal(run.Host, &c); err != nil || c.Boost == nil || *c.Boost != on {
			t.Errorf("%s on %s records the host %s (%v)", run.Test, run.Config, run.Host, err)
		}
		if want := map[bool]string{true: "boost=on", false: "boost=off"}[on]; run.Params[host.StateParam] != want {
			t.Errorf("%s on %s: host_state %q, want %q", run.Test, run.Config, run.Params[host.StateParam], want)
		}
		if run.Test != "load" && (run.Status != result.OK || len(run.Rounds) != 4) {
			t.Errorf("%s on %s: %s, %d rounds", run.Test, run.Config, run.Status, len(run.Rounds))
		}
	}
}
