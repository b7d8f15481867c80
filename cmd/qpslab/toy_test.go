package main

import (
	"context"
	"strconv"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// The toy suite: what a new suite is, in one file that names it and
// nothing outside it (TestAToySuiteDeclaresItself finds it everywhere
// qpslab shows a suite). A real one is a package under internal/workload
// with its line in internal/workload's imports; a test's toy cannot be in
// the binary, so it registers in this test binary only.

const (
	toyName       = "toy"
	toyFigure     = "toy_selects/event"
	toyCondition  = "selects"
	toyHelpMarker = "counts how many SELECT 1 the server answers"
)

func init() {
	suite.Register(toySuite{})
	// Its own figure, registered with its name as the metric's Suite.
	result.Register(result.Metric{Name: toyFigure, Unit: "statements", Per: "event", Class: result.ClassFigure, Verb: "%.0f", Suite: toyName, Max: 1e6,
		Help: "SELECT 1 statements per event (--selects)",
		Of: func(r result.Run) (float64, bool) {
			if r.Suite != toyName || r.Totals.Events == 0 {
				return 0, false
			}
			return float64(r.Totals.Statements) / float64(r.Totals.Events), true
		}})
}

type toySuite struct{}

func (toySuite) Name() string    { return toyName }
func (toySuite) Summary() string { return "A toy: events of --selects SELECT 1 each, on any server" }

// Help is its long help (qpslab run toy --help).
func (toySuite) Help() string {
	return "The toy suite " + toyHelpMarker + " in events of --selects statements,\nfor --secs at every thread count. It is a test's, to show what a suite declares."
}

// Params are its flags, each with its usage.
func (toySuite) Params() []suite.Param {
	return []suite.Param{
		{Name: toyCondition, Kind: suite.Int, Default: "4", Usage: "SELECT 1 statements per event (runs with another count are not repeats of each other)"},
		{Name: "secs", Kind: suite.Seconds, Default: "10", Usage: "measured seconds of the test"},
	}
}

func (toySuite) Tests() []suite.Test {
	return []suite.Test{{Name: "select-one", Role: result.RoleTest, Groups: result.PlacementsOf(toyName, "select-one"), Note: "--selects SELECT 1 per event, for --secs"}}
}

// Layouts: one group, the selects.
func (toySuite) Layouts() []suite.Layout {
	return []suite.Layout{{Name: "toy", Title: "the toy's one group", Groups: []string{"selects"}, Members: map[string][]string{"selects": {"select-*"}}}}
}

func (toySuite) Figures() []suite.Figure {
	return []suite.Figure{{Name: "qps", Unit: "statements/s", HigherIsBetter: true, Per: "statement", Tests: "select-one"}}
}

// Conditions: the statements per event.
func (toySuite) Conditions() []string { return []string{toyCondition} }

func (toySuite) Configure(v suite.Values) (*suite.Plan, error) {
	c := v.Check()
	n := int(c.Int(toyCondition, 1, 1000))
	secs := c.Seconds("secs", false)
	if err := c.Err(); err != nil {
		return nil, err
	}
	return &suite.Plan{
		Params: map[string]string{toyCondition: strconv.Itoa(n)},
		Steps: []suite.Step{{Test: "select-one", Role: result.RoleTest, Groups: result.PlacementsOf(toyName, "select-one"), Seconds: secs, Slice: true,
			Drive: &suite.Drive{Workload: func(s *suite.Server, _ uint64) engine.Workload { return toyWorkload{s, n} }}}},
	}, nil
}

// toyWorkload's workers each run n SELECT 1 an event on a connection of
// their own.
type toyWorkload struct {
	s *suite.Server
	n int
}

func (w toyWorkload) NewWorker(ctx context.Context, _ int) (engine.Worker, error) {
	c, err := w.s.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return toyWorker{c, w.n}, nil
}

func (toyWorkload) Classify(err error) engine.ErrorClass { return suite.ClassifySQL(err) }

type toyWorker struct {
	c client.Conn
	n int
}

func (w toyWorker) Event(ctx context.Context) (engine.Outcome, error) {
	var rows int64
	for i := 0; i < w.n; i++ {
		k, err := w.c.Query(ctx, "SELECT 1")
		if err != nil {
			return engine.Outcome{Statements: i}, err
		}
		rows += k
	}
	return engine.Outcome{Statements: w.n, Rows: rows}, nil
}

func (w toyWorker) Close() error { return w.c.Close() }
