package sysbench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// Name is the suite's name in the registry, the store and the CLI.
const Name = "sysbench"

func init() { suite.Register(sysbenchSuite{}) }

type sysbenchSuite struct{}

var _ suite.Suite = sysbenchSuite{}

func (sysbenchSuite) Name() string { return Name }

func (sysbenchSuite) Summary() string {
	return "The sysbench microbenchmarks as the reference harness runs them: 42 tests (or its 2025 list of 32), closed or open loop"
}

func (sysbenchSuite) Help() string {
	return `Run the sysbench microbenchmarks as the reference harness (mytools
bench/sysbench.lua) runs them, with qpslab's own client: each build in a fresh
sandbox, tables loaded, then every test in the reference's order (the .pre
reads, the writes, a flush-and-wait after read-write_range=100, the post reads,
delete, insert), at each thread count. See docs/tests.md for the tests, their
SQL and their quirks.

Per test it reports QPS (statements/s, BEGIN and COMMIT included, as sysbench
counts; Krows/s for scan; rows/s for the load), TPS (events/s), rows/s,
response and service time percentiles, errors, and its hardware cost per
operation (docs/metrics.md).`
}

func (sysbenchSuite) Params() []suite.Param {
	return append([]suite.Param{
		{Name: "tables", Kind: suite.Int, Default: "1", Usage: "tables (sbtest1..N)"},
		{Name: "rows", Kind: suite.Int, Default: "1000000", Usage: "rows per table"},
		{Name: "read-secs", Kind: suite.Seconds, Default: "600", Usage: "seconds per read test (the reference: 600)"},
		{Name: "write-secs", Kind: suite.Seconds, Default: "900", Usage: "seconds per write test (the reference: 900)"},
		{Name: "insert-secs", Kind: suite.Seconds, Usage: "seconds for the insert and scan tests (default: --write-secs, as the reference passes it)"},
		{Name: "list", Kind: suite.String, Default: "2024", Usage: "test order: 2024 (the 42 tests) or head (the 2025 order; 32 reported)"},
		{Name: "tests", Kind: suite.List, Usage: "only tests whose label matches these globs (e.g. 'point-query*,read-only_range=10'); the load runs whatever they select"},
		{Name: "postwrite-scale", Kind: suite.Float, Default: "1", Usage: "scale the postwrite wait min(1200, 60+tables×rows/1e6) s (0 to skip the wait, not the flush)"},
		{Name: "load-threads", Kind: suite.Int, Default: "2", Usage: "connections loading the tables in parallel"},
		{Name: "load-method", Kind: suite.String, Default: "insert", Usage: "how the load writes rows: insert (multi-row INSERTs, comparable with sysbench prepare) or copy (COPY on PostgreSQL, LOAD DATA LOCAL INFILE on MySQL-family servers: for when the load is only setup)"},
		{Name: "no-load", Kind: suite.Bool, Usage: "keep the tables an earlier qpslab load left in the sandbox (with --sandbox)"},
	}, suite.ServerWorkloadParams()...)
}

func (sysbenchSuite) Layouts() []suite.Layout { return Layouts }

func (sysbenchSuite) Figures() []suite.Figure {
	fs := []suite.Figure{
		{Name: "qps", Unit: "statements/s", HigherIsBetter: true, Per: "statement", Tests: "all but scan"},
		{Name: "qps", Unit: "Krows/s", HigherIsBetter: true, Per: "Krow", Tests: "scan: thousands of rows per second of one scan"},
		{Name: "qps", Unit: "rows/s", HigherIsBetter: true, Per: "row", Tests: "load"},
	}
	return append(fs, suite.CommonFigures("qps")...)
}

// Conditions: the tables' count and size, and a load by COPY or LOAD DATA
// (load_method) against one by INSERTs.
func (sysbenchSuite) Conditions() []string {
	return append([]string{"tables", "rows", "load_method"}, suite.CacheConditions()...)
}

// Role is how reports treat t's results.
func (t Test) Role() string {
	if t.Warm() {
		return result.RoleWarm
	}
	return result.RoleTest
}

// Params are what every run of t records about it.
func (t Test) Params(noPrepare bool) map[string]string {
	return map[string]string{
		"name": t.Name, "variant": t.Variant, "range": strconv.Itoa(t.Range),
		"statements_per_event": strconv.Itoa(t.Statements),
		"prepared":             strconv.FormatBool(t.Prepared && !noPrepare),
	}
}

// Tests are the 2024 order's tests, then the 2025 list's that it lacks.
func (sysbenchSuite) Tests() []suite.Test {
	out := []suite.Test{{Name: "load", Role: result.RoleLoad, Note: "create and fill sbtest1..N, build the k index (rows/s)"}}
	seen := map[string]bool{}
	for _, list := range [][]Test{Order2024(), OrderHEAD()} {
		for _, t := range list {
			if seen[t.Label()] {
				continue
			}
			seen[t.Label()] = true
			out = append(out, suite.Test{Name: t.Label(), Role: t.Role(), Groups: t.Placements(),
				Note: fmt.Sprintf("%d statement(s) per event, for %s", t.Statements, t.Time.Describe())})
		}
	}
	return out
}

// catalogIndex is a test's position in the suite's catalogue (Tests: the
// load, the 2024 order, then the 2025 list's other tests): the order of
// every sysbench run, whichever list ran it.
func catalogIndex(label string) int {
	for i, c := range (sysbenchSuite{}).Tests() {
		if c.Name == label {
			return i
		}
	}
	return 1 << 20
}

// Options are the suite's configured parameters.
type Options struct {
	Tables              int
	Rows                int64
	Read, Write, Insert time.Duration
	List                string
	Tests               []string
	PostwriteScale      float64
	LoadThreads         int
	LoadMethod          string // LoadInsert or LoadCopy
	NoLoad, NoPrepare   bool
	// Cache is --workload iobound's cache fraction (0: cached).
	Cache float64
}

// Configure reads the suite's values (and the plan's --no-prepare and
// --sandbox) and makes its steps.
func (sysbenchSuite) Configure(v suite.Values) (*suite.Plan, error) {
	c := v.Check()
	o := Options{
		Tables:         int(c.Int("tables", 1, 1<<20)),
		Rows:           c.Int("rows", 1, math.MaxInt64/2),
		Read:           c.Seconds("read-secs", false),
		Write:          c.Seconds("write-secs", false),
		List:           c.OneOf("list", "2024", "42", "head", "2025", "32"),
		Tests:          c.List("tests"),
		PostwriteScale: c.Float("postwrite-scale", 0, 1000),
		LoadThreads:    int(c.Int("load-threads", 1, 1<<16)),
		LoadMethod:     c.OneOf("load-method", LoadInsert, LoadCopy),
		NoLoad:         c.Bool("no-load"),
		NoPrepare:      c.Bool("no-prepare"),
		Cache:          c.Cache(),
	}
	// The reference passes the write time as the insert time: follow
	// --write-secs unless --insert-secs is given.
	o.Insert = o.Write
	if v.Changed("insert-secs") {
		o.Insert = c.Seconds("insert-secs", false)
	}
	if o.NoLoad && c.String("sandbox") == "" && c.String("target") == "" {
		c.Problem("--no-load keeps the tables of a server already up: use it with --sandbox or --target")
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return o.Plan()
}

// Steps returns the selected tests in run order.
func (o Options) Steps() ([]Test, error) {
	var all []Test
	switch o.List {
	case "", "2024", "42":
		all = Order2024()
	case "head", "2025", "32":
		all = OrderHEAD()
	default:
		return nil, fmt.Errorf("unknown test list %q: use 2024 (the 42 tests) or head (the 2025 order, 32 reported)", o.List)
	}
	if len(o.Tests) == 0 {
		return all, nil
	}
	sel, err := Select(all, o.Tests...)
	if err != nil {
		return nil, fmt.Errorf("%w in the %s list: see qpslab run sysbench --list-tests [--list head]", err, o.listName())
	}
	return sel, nil
}

func (o Options) listName() string {
	if o.List == "" {
		return "2024"
	}
	return o.List
}

// Plan makes the steps: the load (point-query.warm's setup in the
// reference, run.sh setup=1; done whatever --tests selects, since every
// test reads the tables), then each test at every thread count, with a
// flush and wait after the postwrite steps (point-query.warm after the
// load, read-write_range=100 after the writes), as run.sh does.
func (o Options) Plan() (*suite.Plan, error) {
	tests, err := o.Steps()
	if err != nil {
		return nil, err
	}
	p := &suite.Plan{
		Params: map[string]string{"tables": strconv.Itoa(o.Tables), "rows": strconv.FormatInt(o.Rows, 10), "list": o.listName()},
		RunsOn: suite.AnyDialect,
		Cache:  o.Cache,
	}
	suite.RecordCache(p.Params, o.Cache)
	if !o.NoLoad {
		p.Steps = append(p.Steps, o.loadStep())
	}
	for _, t := range tests {
		p.Steps = append(p.Steps, o.testStep(t, catalogIndex(t.Label())))
	}
	return p, nil
}

func (o Options) target(s *suite.Server) Target {
	return Target{Dialect: s.Dialect, Dial: s.Dial, Tables: o.Tables, Rows: o.Rows, StorageEngine: s.StorageEngine, Warn: s.Warn, Shared: s.External}
}

// loadStep loads the tables, measured as the reference measures its
// prepare step: rows/s, and the hardware cost per row. Tables of an
// earlier load are dropped first, outside the timing. A load by COPY or
// LOAD DATA records its method (runs of the two methods are not repeats
// of each other).
//
// After the load, outside its timing, the tables are analyzed and flushed
// (Postwrite without its wait: ANALYZE TABLE and InnoDB's flush on the
// MySQL family, VACUUM (ANALYZE) and CHECKPOINT on PostgreSQL), so that
// the tests after it find the same statistics and visibility map after
// every load of a plan. The reference runs its .pre tests on the tables
// as prepare left them, whose statistics are whatever autovacuum had done
// by then: PostgreSQL 14 to 18 planned points-covered-si.pre_range=100 as
// a scan of the table until autovacuum analyzed it (136 against 5,000 qps
// here, one repeat or the other by autovacuum's timing; docs/tests.md).
func (o Options) loadStep() suite.Step {
	var params map[string]string
	if o.LoadMethod == LoadCopy {
		params = map[string]string{"load_method": LoadCopy}
	}
	return suite.Step{
		Test: "load", Role: result.RoleLoad, Threads: []int{o.LoadThreads}, Params: params, Once: true, Reloads: true, Sizes: true,
		Headline: suite.Headline{Unit: "rows/s", Op: "row", Series: result.SeriesRows, Value: func(t result.Totals) float64 { return t.RowsPerSec }},
		Before: func(ctx context.Context, s *suite.Server) error {
			s.Log(fmt.Sprintf("loading %d table(s) × %d rows", o.Tables, o.Rows))
			return o.target(s).Drop(ctx)
		},
		After: func(ctx context.Context, s *suite.Server) error {
			s.Log("after the load: analyze, flush")
			if err := o.target(s).Postwrite(ctx, 0); err != nil {
				return fmt.Errorf("analyze and flush after the load: %w", err)
			}
			return nil
		},
		Task: &suite.Task{Run: func(ctx context.Context, s *suite.Server, threads int, seed uint64, io suite.TaskIO) (result.Totals, error) {
			rows := int64(o.Tables) * o.Rows
			io.Progress(0, rows)
			err := o.target(s).Load(ctx, LoadOptions{Threads: threads, Method: o.LoadMethod, Seed: seed, Progress: func(n int64) { io.Progress(n, rows) }})
			if err != nil {
				return result.Totals{}, err
			}
			return result.Totals{Rows: rows}, nil
		}},
	}
}

func (o Options) testStep(t Test, order int) suite.Step {
	dur := t.Time.Of(o.Read, o.Write, o.Insert)
	if t.Time == WarmSecs && o.Read < dur {
		dur = o.Read // the reference's 60 s warm runs, shortened with the reads
	}
	// Every reported test is steady over its window (the tables are
	// cached, the writes short), so it may be sliced; the writes' slices
	// are bounded by events. The warm-up runs stay whole.
	st := suite.Step{
		Test: t.Label(), Order: order, Role: t.Role(), Groups: t.Placements(), Params: t.Params(o.NoPrepare), Seconds: dur,
		Slice: !t.Warm(), Writes: isWrite(t.Name),
		Drive: &suite.Drive{Retry: t.Retry, Workload: func(s *suite.Server, seed uint64) engine.Workload {
			return &Workload{Target: o.target(s), Test: t, Seed: seed}
		}},
	}
	if t.PerTable {
		st.Threads = []int{o.Tables}
	}
	if t.Krows {
		krows := float64(o.Rows) / 1000
		st.Headline = suite.Headline{Unit: "Krows/s", Op: "Krow", Series: result.SeriesEvents,
			Value: func(tot result.Totals) float64 { return KrowsPerSec(krows, tot.Service.Mean) }}
	}
	if t.Postwrite {
		st.After = func(ctx context.Context, s *suite.Server) error {
			target := o.target(s)
			wait := time.Duration(float64(target.PostwriteWait()) * o.PostwriteScale)
			s.Log(fmt.Sprintf("postwrite after %s: analyze, flush, wait %s", t.Label(), wait.Round(time.Second)))
			if err := target.Postwrite(ctx, o.PostwriteScale); err != nil {
				return fmt.Errorf("postwrite after %s: %w", t.Label(), err)
			}
			return nil
		}
	}
	return st
}

// KrowsPerSec is the reference's scan figure since mytools 59c1b9cd
// (2025-04): the thousands of rows one scan reads, divided by the average
// event latency in seconds (meanUs is in µs). Zero without events.
func KrowsPerSec(krowsPerScan, meanUs float64) float64 {
	if meanUs <= 0 {
		return 0
	}
	return krowsPerScan / (meanUs / 1e6)
}

// Classify is how the engine treats an event's error: deadlocks and
// lock-wait timeouts are retryable (sysbench's default), a dead connection
// ends the run.
func (wl *Workload) Classify(err error) engine.ErrorClass { return suite.ClassifySQL(err) }

var _ engine.Classifier = (*Workload)(nil)

// Lookup finds the test a label names, among both run orders.
func Lookup(label string) (Test, error) {
	var ranges []string
	id, _, _ := strings.Cut(label, "_range=")
	for _, order := range [][]Test{OrderHEAD(), Order2024()} {
		for _, t := range order {
			if t.Label() == label {
				return t, nil
			}
			if r := strconv.Itoa(t.Range); t.ID() == id && !slices.Contains(ranges, r) {
				ranges = append(ranges, r)
			}
		}
	}
	const form = "want a qpslab label <testType>[.<variant>]_range=<R>"
	if len(ranges) > 0 {
		sort.Strings(ranges)
		return Test{}, fmt.Errorf("unknown test %q: %s, and qpslab runs %s with range %s", label, form, id, strings.Join(ranges, ", "))
	}
	return Test{}, fmt.Errorf("unknown test %q: %s (point-query_range=100, random-points.pre_range=1000, scan_range=100, …; qpslab suites sysbench lists them)", label, form)
}

// Stamp fills what the suite says about a run of one of its tests (or of
// its load, the test "load") from the run's Test: the suite, its role,
// groups and position in the suite's order, and the test's params. For
// runs the suite did not run itself (imports).
func Stamp(r *result.Run) error {
	r.Suite = Name
	if r.Test == "load" {
		r.Role, r.Step, r.Groups = result.RoleLoad, 0, nil
		return nil
	}
	t, err := Lookup(r.Test)
	if err != nil {
		return err
	}
	r.Role, r.Groups, r.Step = t.Role(), t.Placements(), catalogIndex(r.Test)
	if r.Params == nil {
		r.Params = map[string]string{}
	}
	for k, v := range t.Params(false) {
		if _, ok := r.Params[k]; !ok {
			r.Params[k] = v
		}
	}
	return nil
}

var _ suite.SQLer = sysbenchSuite{}

// SQLOf is the SQL a run sends a server of dialect d (sbtest1's): the
// table, its load's INSERTs and index, then each test's statements, once
// per label, in the reference's orders (what TestSQLIsTheDialects pins).
func (sysbenchSuite) SQLOf(d client.Dialect) []string {
	out := []string{createTable(d, 1, ""), insertText(d, 1, 1, "c", "pad"), Target{Dialect: d}.insertRows(1, 2), createIndex(1)}
	seen := map[string]bool{}
	for _, list := range [][]Test{Order2024(), OrderHEAD()} {
		for _, tt := range list {
			if !seen[tt.Label()] {
				seen[tt.Label()] = true
				out = append(out, tt.Queries(d, 1)...)
			}
		}
	}
	return out
}
