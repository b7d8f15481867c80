// Package suite owns what a benchmark suite is to the rest of qpslab, and
// the registry of suites. A suite is a package under internal/workload
// that registers itself in init and declares all that is its own: its
// name, its parameters with their usage and its long help (which the
// command offers as flags and help), its tests, its report layouts, the
// figures it reports, the params that make its runs repeats of each other
// (its conditions), and, configured with parameter values, its steps in
// run order: workloads the engine drives over SQL connections, or tasks the
// suite runs itself (a bulk load, an external program whose output it
// parses), with what runs before and after each. Adding one is that
// package and its line in internal/workload (docs/architecture.md).
//
// It runs nothing: the plan starts servers (or, for a suite that runs a
// program of its own, such as db_bench, gives it a scratch sandbox folder
// and a way to start the program tied to qpslab), hands each step to the
// engine or runs its task, and records the results. A suite must not start
// servers, time, or store anything.
package suite

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
)

// Suite is a registered benchmark suite.
type Suite interface {
	Name() string
	// Summary is one line for `qpslab suites` and the command's help.
	Summary() string
	// Params are the suite's own parameters; the command offers each as a
	// flag of `qpslab run NAME`, beside the plan's (Common).
	Params() []Param
	// Tests are every test the suite knows, in its reference order.
	Tests() []Test
	// Layouts are its report layouts, the default first: data that
	// Register hands to result.RegisterLayouts, which then decides the
	// groups of the suite's runs when they are read.
	Layouts() []Layout
	// Figures are its headline for each kind of its tests, and any of
	// every run's figures it lists; FiguresOf adds the figures it
	// registered (result.Register with its name as the Metric's Suite).
	Figures() []Figure
	// Conditions are the params it records (Plan.Params, Step.Params)
	// that change what its figures mean, beside the plan's and the
	// client's (the loop, the transport, the engine …): its runs that
	// differ in one are never repeats of each other, nor points of one
	// series (result.Run.Conditions). Register hands them to
	// result.RegisterConditions.
	Conditions() []string
	// Configure checks the values (every problem at once, before anything
	// starts) and returns the plan's steps.
	Configure(v Values) (*Plan, error)
}

// Decliner is implemented by a suite that does not take some of the
// plan's common parameters (plan.Common): their names, each with why, in
// a few words. The command does not offer them as flags, and a plan that
// names one is refused with the why.
type Decliner interface {
	Declines() map[string]string
}

// Helper is implemented by a suite with more to say in `qpslab run NAME
// --help` than its summary.
type Helper interface {
	Help() string
}

// SQLer is implemented by every registered suite: the SQL it sends a
// server whose dialect is d, said without a server: its tables' DDL (in
// the server's default engine) and then its tests' statements, in a fixed
// order; nil for a suite that sends no SQL (db_bench). A flavor whose
// dialect differs finds its difference here in every suite's SQL (the toy
// flavor test, internal/workload's toyflavor_test.go).
type SQLer interface {
	SQLOf(d client.Dialect) []string
}

// Test is one test a suite knows, as `qpslab suites` lists it.
type Test struct {
	Name   string             `json:"name"`   // the label its results carry: point-query.pre_range=100
	Role   string             `json:"role"`   // result.RoleTest, RoleLoad or RoleWarm
	Groups []result.Placement `json:"groups"` // where its Layouts put it (result.PlacementsOf)
	Note   string             `json:"note"`   // one line: what it runs, for how long
}

// Layout is one way a suite groups its tests in reports: data (its groups
// in report order and each group's members), registered with the suite
// (result.RegisterLayouts) and applied when runs are read, so that a
// corrected layout regroups old results too.
type Layout = result.Layout

// Figure is one figure a suite reports, as `qpslab suites` lists it: a
// registered metric (result.Metric: its name, unit, direction, what it is
// counted per), or the suite's headline for some of its tests, and which of
// the suite's tests report it ("" for all).
type Figure struct {
	Name           string `json:"name"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higher_is_better"`
	Per            string `json:"per"`
	Tests          string `json:"tests,omitempty"`
}

// FigureOf is a registered metric as a suite lists it.
func FigureOf(m result.Metric) Figure {
	return Figure{Name: m.Name, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter, Per: m.Per}
}

// FiguresOf is everything s reports: what its Figures say (its headline
// for each kind of test, and any figures of every run it lists), then the
// figures it registered itself (result.Metric.Suite) that its Figures do
// not list already.
func FiguresOf(s Suite) []Figure {
	out := s.Figures()
	for _, m := range result.All() {
		if m.Suite == s.Name() && !slices.ContainsFunc(out, func(f Figure) bool { return f.Name == m.Name }) {
			out = append(out, FigureOf(m))
		}
	}
	return out
}

// CommonFigures are the registered figures every run may have (those of
// no suite), but those named in except, for a suite's Figures.
func CommonFigures(except ...string) []Figure {
	var out []Figure
	for _, m := range result.All() {
		if m.Suite == "" && !slices.Contains(except, m.Name) && m.Name != FigureFailedPct && m.Name != FigureRetriesPerTx {
			out = append(out, FigureOf(m))
		}
	}
	return out
}

// StepTabler is implemented by a suite whose default layout runs in steps
// (Layout.Steps): the reference's step tables compare prints, one per
// figure.
type StepTabler interface {
	StepTables() []StepTable
}

// StepTable is one step table: its figure (a registered metric's name),
// its title, whether it is also shown relative to the first label, and
// whether the steps' targets mark it.
type StepTable struct {
	Metric, Title     string
	Relative, Targets bool
}

// AnyDialect is the RunsOn of a suite that writes its SQL through the
// dialect: it runs on every server that has one.
func AnyDialect(client.Dialect) bool { return true }

// Plan is a configured suite: its steps in run order, and what every run
// of it records.
type Plan struct {
	Steps []Step
	// Params are recorded with every run (the table size, the test list).
	Params map[string]string
	// RunsOn says the suite runs on a server of dialect d: what it needs
	// of the server is what the dialect says, never its protocol (nil: any
	// server, and builds that are none). A flavor without a dialect runs
	// no suite that has RunsOn.
	RunsOn func(d client.Dialect) bool
	// NoServer: the suite runs a program of its own (db_bench) instead of
	// talking to a server. The plan gives each build × config a scratch
	// sandbox folder (Server.Datadir, removed afterwards), the build's
	// program and a way to start it (Server.Start), and no Dial.
	NoServer bool
	// Flavors are the build flavors the suite runs (nil: any server).
	Flavors []build.Flavor
	// Check, if set, is called for each build × config before anything
	// runs; its error stops the plan at once (an option set the build's
	// program does not take).
	Check func(ctx context.Context, b build.Build, c config.Config) error
	// Instead, if set, says how to run what the suite was asked on a build
	// it refuses (a flavor with no server): the command that does, which
	// the refusal names instead of "see qpslab suites" ("" where there is
	// none to name).
	Instead func(b build.Build) string
	// Cache, above 0, is an iobound workload's cache as a fraction of the
	// loaded tables (--workload iobound --cache F): after each step marked
	// Sizes, the plan restarts each server with its cache sized to that
	// fraction of what its tables take on disk, and with direct IO, and
	// judges each run after it IO-bound or served from memory.
	Cache float64
}

// Step is one step of a plan: exactly one of Drive and Task is set.
type Step struct {
	Test string // the label results carry
	// Order is the step's position in the suite's whole run order (not
	// only the selected steps'), so reports order runs of different
	// selections alike.
	Order int
	Role  string // result.RoleTest, RoleLoad or RoleWarm
	// Groups are where the suite's Layouts put the step
	// (result.PlacementsOf), written with its runs: derived, since the
	// layouts registered when the runs are read decide.
	Groups []result.Placement
	Params map[string]string // recorded with the step's runs
	// Threads, if set, replaces the plan's thread counts for this step
	// (sysbench runs scan with one thread per table; the load with its
	// own connection count).
	Threads []int
	// Seconds is the measured time of a driven step; for a task, nothing
	// (it runs to its end); for a step UntilScheduled, the time its
	// schedule takes if the server keeps up (0: unpaced, to its end).
	Seconds time.Duration
	// Before runs before the step's first thread count, After after its
	// last, both unmeasured (drop old tables; flush and wait).
	Before, After func(ctx context.Context, s *Server) error
	// Headline says how the step's reported figure is computed.
	Headline Headline
	// Finish, if set, runs after each run of the step that ended as
	// planned, before it is recorded: it may add the step's verdicts (an
	// SLA) and figures (Totals.Figures: the database's size after it),
	// reading the server.
	Finish func(ctx context.Context, s *Server, r *result.Run) error
	Drive  *Drive
	Task   *Task
	// Slice: the step's figure is steady over its window (cached reads,
	// short writes), so a plan that keeps every label's server up may run
	// it as short slices that alternate between the labels. A step whose
	// point is sustained state (the Insert Benchmark's l.i1 and l.i2,
	// db_bench's overwrite with its compaction debt) leaves it unset and
	// runs whole on each label in turn.
	Slice bool
	// Writes: the step changes the tables. Its slices are bounded by a
	// number of events, the same on every label, so that every label's
	// tables change alike whichever server is faster.
	Writes bool
	// Once: where each label's server stays up for the whole plan, the
	// step runs in the first repeat only, and later repeats use what it
	// made (sysbench's load), put back as it was after it where the plan
	// writes (the plan's restore).
	Once bool
	// Reloads: a step that runs once may run again to put the tables back
	// as it made them: it drops what it made first and makes the same
	// again with the same seed (sysbench's load). Without it the plan
	// restores from a snapshot of the datadir (the script suite's --init,
	// the user's own SQL, which may not run twice).
	Reloads bool
	// Sizes: the load ends with this step; an iobound plan (Plan.Cache)
	// sizes each server's cache after it.
	Sizes bool
}

// Headline is how a step's reported figure comes from its totals: its
// unit, the operation the hardware cost is counted per, the sample counter
// whose per-second rate follows it, and the value (nil: statements/s).
type Headline struct {
	Unit   string // "qps" when empty
	Op     string // "statement" when empty
	Series string // result.SeriesStatements when empty
	Value  func(result.Totals) float64
}

// Of fills t's headline, with the defaults filled in.
func (h Headline) Of(t *result.Totals) (op string) {
	t.ReportedUnit, t.Series, op = h.Unit, h.Series, h.Op
	if t.ReportedUnit == "" {
		t.ReportedUnit = "qps"
	}
	if t.Series == "" {
		t.Series = result.SeriesStatements
	}
	if op == "" {
		op = "statement"
	}
	t.Reported = t.QPS
	if h.Value != nil {
		t.Reported = h.Value(*t)
	}
	return op
}

// Drive is a workload the engine runs over SQL connections.
type Drive struct {
	// Workload makes the engine's workload for one run of the step.
	Workload func(s *Server, seed uint64) engine.Workload
	// Retry restarts events whose error the workload classifies as
	// retryable (deadlocks, lock-wait timeouts).
	Retry bool
	// Workers, if set, is how many workers (connections) the workload
	// makes at a thread count (the Insert Benchmark's client is an
	// inserter, a deleter and a query thread); nil: one per thread.
	Workers func(threads int) int
	// UntilScheduled: the step has no measured time and no warmup; it ends
	// when the workload's scheduled workers (engine.Scheduler) are done,
	// and the plan's --rate does not apply.
	UntilScheduled bool
}

// Task is something the suite runs itself and measures as a whole: a bulk
// load, an external program. It returns the totals of what it did (rows,
// events; the plan sets Seconds and the rates from its timing unless the
// task sets Seconds), and may report progress and per-second samples.
type Task struct {
	Run func(ctx context.Context, s *Server, threads int, seed uint64, t TaskIO) (result.Totals, error)
}

// TaskIO is what a task may tell the plan as it runs.
type TaskIO struct {
	Progress func(done, total int64) // never nil
	Sample   func(result.Sample)     // never nil
}

// Server is the server under test, as a step sees it.
type Server struct {
	Protocol client.Protocol
	// Dialect is the SQL that differs between the protocols, chosen once
	// from the server's endpoint (client.Endpoint.Dialect): a suite asks it,
	// never Protocol (internal/arch's TestAskTheDialectNotTheProtocol).
	Dialect client.Dialect
	Flavor  string
	Version string
	Datadir string
	// Dial opens one dedicated connection to qpslab's database on it, with
	// the run's client options.
	Dial   func(ctx context.Context) (client.Conn, error)
	Client client.Options
	Log    func(line string) // never nil
	// Warn tells the user what puts the run's figures at risk, whatever
	// the verbosity (never nil).
	Warn func(line string)

	// For a suite without a server (Plan.NoServer): the build's program
	// and the environment it needs (its libraries), the config, which the
	// suite applies itself (db_bench's option set), and Start, which starts
	// a program in the sandbox tied to qpslab, so that it dies with qpslab
	// however qpslab ends; its wait reaps it.
	Program string
	Env     []string
	Config  config.Config
	Start   func(cmd *exec.Cmd) (wait func() error, err error)

	// External: the server is not qpslab's (a target, internal/target):
	// the suite changes nothing on it but its own tables (no SET GLOBAL,
	// RESET MASTER or CHECKPOINT).
	External bool

	// StorageEngine is the storage engine the suite creates its tables in on the
	// MySQL family ("innodb", "rocksdb": the Dialect's TableOptions writes it);
	// "" on PostgreSQL.
	StorageEngine string
}

var registry = struct {
	sync.Mutex
	m map[string]Suite
}{m: map[string]Suite{}}

// Register adds s to the registry; suites call it from init. A second
// suite of the same name is a programming error.
func Register(s Suite) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[s.Name()]; dup {
		panic("suite: " + s.Name() + " registered twice")
	}
	registry.m[s.Name()] = s
	result.RegisterLayouts(s.Name(), s.Layouts())
	result.RegisterConditions(s.Name(), s.Conditions())
}

// Get returns the suite called name.
func Get(name string) (Suite, error) {
	registry.Lock()
	defer registry.Unlock()
	if s, ok := registry.m[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("unknown suite %q: use one of %s (qpslab suites lists them)", name, strings.Join(namesLocked(), ", "))
}

// All returns every registered suite, by name.
func All() []Suite {
	registry.Lock()
	defer registry.Unlock()
	var out []Suite
	for _, n := range namesLocked() {
		out = append(out, registry.m[n])
	}
	return out
}

// Named returns the suites named, or with none every one.
func Named(names ...string) ([]Suite, error) {
	if len(names) == 0 {
		return All(), nil
	}
	var out []Suite
	for _, n := range names {
		s, err := Get(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func namesLocked() []string {
	var names []string
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Failing is a workload whose workers cannot start, for a Drive whose
// Workload finds, given the server, that it cannot run (a script that
// does not parse for the server's flavor): err ends the run at its start.
func Failing(err error) engine.Workload { return failing{err} }

type failing struct{ err error }

func (f failing) NewWorker(context.Context, int) (engine.Worker, error) { return nil, f.err }

// ClassifySQL is how the engine treats a SQL statement's error, for the
// suites whose workloads run SQL: deadlocks and lock-wait timeouts are
// retryable (sysbench's default), a dead connection ends the run, anything
// else is fatal.
func ClassifySQL(err error) engine.ErrorClass {
	switch {
	case client.Retryable(err):
		return engine.Retryable
	case client.ConnectionLost(err):
		return engine.ConnectionLost
	}
	return engine.Fatal
}
