package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/settle"
	"github.com/qpslab/qpslab/internal/suite"
)

// sysbenchSteps are the sysbench suite's steps for tests (2,000 rows, half
// a second each), with a checksum of the tables after the load and
// another at the end.
func sysbenchSteps(t *testing.T, tests string) []suite.Step {
	t.Helper()
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	v := suite.Defaults(Common, s.Params()).With("rows", "2000").With("read-secs", "0.5").With("write-secs", "0.5").
		With("postwrite-scale", "0").With("tests", tests)
	sp, err := s.Configure(v)
	if err != nil {
		t.Fatal(err)
	}
	loaded := checksum()
	loaded.Test = "checksum-loaded"
	end := checksum()
	end.Test = "checksum-end"
	return slices.Concat(sp.Steps[:1], []suite.Step{loaded}, sp.Steps[1:], []suite.Step{end})
}

// Every repeat starts from the state after the load: two labels, three
// repeats of a read test before the writes, a write test and a read test
// after it. Restored by reloading, the load runs in every repeat; from a
// snapshot, once, and the server is restored before each later repeat.
// Either way the tables after the load (or the restore) are the same in
// every repeat and on both labels, the writes leave both labels' tables
// alike, and the tests after the load and the writes waited for the
// servers to be quiet (their runs say how long, and the history list
// then).
func TestEveryRepeatFromTheLoadedState(t *testing.T) {
	for _, mode := range []string{RestoreReload, RestoreSnapshot} {
		t.Run(mode, func(t *testing.T) {
			h, b := serverHome(t)
			tw := twin(t, h.Configs())
			l := &log{}
			var lines []string
			p := newPlan(t, h, testSuite{steps: sysbenchSteps(t, "point-query.pre_range=100,update-index_range=100,point-query_range=100")}, l, b)
			p.Configs, p.Design.Repeat, p.Restore = []config.Config{p.Configs[0], tw}, 3, mode
			p.Watch.Log = func(line string) { lines = append(lines, line) }
			if err := p.Run(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			loads := 0
			sums := map[string]map[string]float64{} // test → "config repeat" → checksum
			for _, r := range l.done {
				if r.Status != result.OK {
					t.Errorf("%s on %s, repeat %s: %s %s", r.Test, r.Config, r.Params["repeat"], r.Status, r.Error)
				}
				switch {
				case r.Test == "load":
					loads++
				case strings.HasPrefix(r.Test, "checksum"):
					if sums[r.Test] == nil {
						sums[r.Test] = map[string]float64{}
					}
					sums[r.Test][result.ConfigName(r.Config)+" "+r.Params["repeat"]] = r.Totals.Figures["checksum"]
				case r.Test == "point-query_range=100":
					if _, ok := r.Totals.Figures[settle.FigureQuietWait]; !ok || r.Totals.Figures[settle.FigureHistoryLen] > settle.QuietHistory {
						t.Errorf("the read test after the writes, repeat %s: figures %v", r.Params["repeat"], r.Totals.Figures)
					}
				case r.Test == "point-query.pre_range=100":
					// After the load (and the checksum, a task): quiet too.
					if _, ok := r.Totals.Figures[settle.FigureQuietWait]; !ok {
						t.Errorf("the read test after the load did not wait: %v", r.Totals.Figures)
					}
				}
			}
			if want := map[string]int{RestoreReload: 6, RestoreSnapshot: 2}[mode]; loads != want {
				t.Errorf("%d load runs, want %d", loads, want)
			}
			loaded := sums["checksum-loaded"]
			if len(loaded) != 6 {
				t.Fatalf("checksums after the load: %v", loaded)
			}
			for k, v := range loaded {
				if v == 0 || v != loaded["default 1"] {
					t.Errorf("the tables after the load differ: %s has %v, default 1 %v", k, v, loaded["default 1"])
				}
			}
			for rep := 1; rep <= 3; rep++ {
				if a, c := sums["checksum-end"][fmt.Sprintf("default %d", rep)], sums["checksum-end"][fmt.Sprintf("twin %d", rep)]; a == 0 || a != c {
					t.Errorf("repeat %d: the tables differ after the writes: %v and %v", rep, a, c)
				}
			}
			said := strings.Join(lines, "\n")
			for _, want := range map[string][]string{
				RestoreReload:   {"between repeats by reloading"},
				RestoreSnapshot: {"between repeats from a snapshot", "repeat 2: mariadb-system.default restored from its snapshot", "repeat 3: mariadb-system.twin restored from its snapshot"},
			}[mode] {
				if !strings.Contains(said, want) {
					t.Errorf("the log does not say %q:\n%s", want, said)
				}
			}
		})
	}
}

// --until-decided's looks: after the first block of repeats only the
// tests still undecided get more, with what they need before them (the
// reload, the warm-up, the writes they follow) and nothing else; the
// plan stops asking once none is undecided, and every run records the
// most looks the plan could take.
func TestMoreRepeatsOfTheUndecided(t *testing.T) {
	h, b := serverHome(t)
	tw := twin(t, h.Configs())
	l := &log{}
	p := newPlan(t, h, testSuite{steps: sysbenchSteps(t, "point-query.pre_range=100,update-index_range=100,point-query_range=100,hot-points_range=100")}, l, b)
	p.Configs, p.Design.Repeat, p.Design.Looks, p.Design.Step = []config.Config{p.Configs[0], tw}, 2, 4, 1
	var asked []int
	p.More = func(_ context.Context, look int, plan string) ([]string, error) {
		if plan != p.ID {
			t.Errorf("asked about plan %q, not %q", plan, p.ID)
		}
		asked = append(asked, look)
		if look == 1 {
			return []string{"point-query_range=100"}, nil
		}
		return nil, nil
	}
	if err := p.Run(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(asked) != "[1 2]" {
		t.Errorf("asked after looks %v, want [1 2]", asked)
	}
	byRepeat := map[string][]string{}
	for _, r := range l.done {
		if r.Status != result.OK || r.Params["looks"] != "4" {
			t.Errorf("%s: %s, looks %q", r.Test, r.Status, r.Params["looks"])
		}
		if result.ConfigName(r.Config) == "default" {
			byRepeat[r.Params["repeat"]] = append(byRepeat[r.Params["repeat"]], r.Test)
		}
	}
	want := "load update-index_range=100 point-query_range=100"
	if got := strings.Join(byRepeat["3"], " "); got != want {
		t.Errorf("the third repeat ran %s, want %s", got, want)
	}
	if len(byRepeat["2"]) != 7 || len(byRepeat["4"]) != 0 {
		t.Errorf("repeats: %v", byRepeat)
	}
}
