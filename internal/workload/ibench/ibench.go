// Package ibench is the Insert Benchmark as the reference harness runs it
// (mytools bench/ibench: iq.sh's steps, iibench.py's client), with
// qpslab's own client: a table per client (or one shared), loaded without
// secondary indexes (l.i0), indexed (l.x), loaded further with the indexes
// in place (l.i1, l.i2), settled, then read+write steps in which each
// client inserts at 100, 500 and 1000 rows/s while a query thread runs
// range (qr) or point (qp) queries until the inserts are done.
//
// Better than the reference: inserts arrive smoothly at the target rate
// (--pacing reference reproduces its burst at the start of each second),
// response times count from each statement's intended start, a second
// below the rate is counted, and the SLA (average insert rate at least 95 %
// of the target) is judged per step as the run ends.
package ibench

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/owned"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/settle"
	"github.com/qpslab/qpslab/internal/suite"
)

// Name is the suite's name in the registry, the store and the CLI.
const Name = "ibench"

func init() { suite.Register(ibenchSuite{}) }

type ibenchSuite struct{}

var _ suite.Suite = ibenchSuite{}

func (ibenchSuite) Name() string { return Name }

func (ibenchSuite) Summary() string {
	return "The Insert Benchmark: l.i0, l.x, l.i1, l.i2, then qr100 … qp1000 with background inserts and their SLA"
}

func (ibenchSuite) Help() string {
	return `Run the Insert Benchmark as the reference harness (mytools bench/ibench)
runs it, with qpslab's own client. Each client has its own table piN (or all
share pi1 with --shared-table):

  l.i0   load nr1 = mr1·1e6·clients rows without secondary indexes, 100 rows per INSERT
  l.x    insert 100 rows per client, then create the three secondary indexes (indexed rows/s)
  l.i1   insert 4/5 of nr2 = mr2·1e6·clients rows, 50 per INSERT
  l.i2   insert 1/5 of nr2, 5 per INSERT; then the reference's wait (analyze or
         vacuum, flush, checkpoint; then rest until min(1200, 60 + nr1/1e6) s)
  qrR    inserts at R rows/s per client (50 per INSERT) for --query-secs, while a
         query thread per client runs range queries on the secondary indexes
  qpR    the same with point queries (10 ids in the live range); R = 100, 500, 1000

--clients 1,4 runs the whole sequence at 1 client, then again at 4 on
fresh tables (rows scale with the clients), as --threads does for sysbench:
each run records its client count, and compare shows each count's step
tables. A read+write step ends when its inserts are done; it passes its SLA when its
average insert rate is at least 95 % of clients × R. From l.i1 on a delete of
the oldest rows per insert keeps each table at its size, as the reference's
runs since 2024 do, and each step checks that its live rows (max - min
transactionid) stayed constant (--no-delete-per-insert: the tables grow;
--shared-table has no deletes, as in the reference).
See docs/ibench.md.`
}

func (ibenchSuite) Params() []suite.Param {
	return append([]suite.Param{
		{Name: "clients", Kind: suite.List, Default: "1", Usage: "client counts, comma-separated (e.g. 1,4; the reference's dop): each count runs the whole sequence of steps on fresh tables; a client is an inserter, a deleter with --delete-per-insert, and query threads"},
		{Name: "mr1", Kind: suite.Float, Default: "0.1", Usage: "million rows per client loaded by l.i0 (the reference's real runs: tens)"},
		{Name: "mr2", Kind: suite.Float, Default: "0.02", Usage: "million rows per client inserted by l.i1 and l.i2 together"},
		{Name: "query-secs", Kind: suite.Seconds, Default: "60", Usage: "seconds of inserts per read+write step at its rate (the reference's blog: 1800)"},
		{Name: "rates", Kind: suite.List, Default: "100,500,1000", Usage: "insert rates per client of the read+write steps (qrR and qpR)"},
		{Name: "query-threads", Kind: suite.Int, Default: "1", Usage: "query threads per client in the read+write steps"},
		{Name: "rows-per-query", Kind: suite.Int, Default: "10", Usage: "LIMIT of a range query, ids of a point query"},
		{Name: "delete-per-insert", Kind: suite.Bool, Default: "true", Usage: "a delete of the oldest rows per insert from l.i1 on, so the tables keep their size (the default, as the reference's runs since 2024; off with --shared-table, which cannot have it)"},
		{Name: "no-delete-per-insert", Kind: suite.Bool, Usage: "no deletes: the tables grow by every insert (the reference before 2024)"},
		{Name: "shared-table", Kind: suite.Bool, Usage: "all clients use one table (pi1) (the reference's only1t; it has no deletes, as in the reference)"},
		{Name: "pacing", Kind: suite.String, Default: "smooth", Usage: "paced inserts: smooth (evenly spread) or reference (a burst at the start of each second, as iibench.py)"},
		{Name: "wait-scale", Kind: suite.Float, Default: "1", Usage: "scale the wait after l.i2, min(1200, 60 + nr1/1e6) s (0: the cleanup only)"},
		{Name: "steps", Kind: suite.List, Usage: "only these steps (e.g. 'l.i0,l.x,qr100'); steps that write run in order, and a read+write step needs the indexes of l.x"},
	}, suite.ServerWorkloadParams()...)
}

// Steps are the suite's steps in run order, at the default rates.
var loadSteps = []string{"l.i0", "l.x", "l.i1", "l.i2"}

// Layout groups: the load steps and the read+write steps.
const (
	GroupLoad = "load"
	GroupRW   = "read+write"
)

// Layouts are the suite's report layout as data, registered with the
// suite: it decides the groups of its runs when they are read. The
// read+write steps are qr<rate> and qp<rate> at any rate.
func (ibenchSuite) Layouts() []suite.Layout {
	return []suite.Layout{{Name: "steps", Title: "the reference's load and read+write steps", Groups: []string{GroupLoad, GroupRW}, Steps: true,
		Members: map[string][]string{GroupLoad: loadSteps, GroupRW: {"qr*", "qp*"}}}}
}

func (ibenchSuite) Figures() []suite.Figure {
	fs := []suite.Figure{
		{Name: "qps", Unit: "rows/s", HigherIsBetter: true, Per: "insert", Tests: "l.i0, l.i1, l.i2: rows inserted per second (IPS)"},
		{Name: "qps", Unit: "rows/s", HigherIsBetter: true, Per: "row", Tests: "l.x: rows indexed per second"},
		{Name: "qps", Unit: "queries/s", HigherIsBetter: true, Per: "query", Tests: "qr*, qp*: queries per second beside the inserts"},
	}
	for _, k := range []string{KindInsert, KindDelete, KindQuery} {
		for _, name := range []string{k + "/s", k + ".p99"} {
			m, _ := engine.OpMetric(name)
			fs = append(fs, suite.FigureOf(m))
		}
	}
	return fs
}

// Conditions: the tables, the rows of l.i0 and of l.i1 (rows, rows2), the
// inserters' pacing and whether they delete as they insert.
func (ibenchSuite) Conditions() []string {
	return append([]string{"tables", "rows", "rows2", "pacing", "delete_per_insert"}, suite.CacheConditions()...)
}

// rwName is a read+write step's name: qr100, qp1000.
func rwName(point bool, rate int) string {
	if point {
		return "qp" + strconv.Itoa(rate)
	}
	return "qr" + strconv.Itoa(rate)
}

// placement is where the suite's registered layout puts test.
func placement(test string) []result.Placement { return result.PlacementsOf(Name, test) }

func (ibenchSuite) Tests() []suite.Test {
	notes := map[string]string{
		"l.i0": "load without secondary indexes, 100 rows per INSERT (rows/s)",
		"l.x":  "create the three secondary indexes (indexed rows/s)",
		"l.i1": "insert 4/5 of nr2 with the indexes, 50 rows per INSERT (rows/s)",
		"l.i2": "insert 1/5 of nr2, 5 rows per INSERT (rows/s); then the wait",
	}
	var out []suite.Test
	for _, s := range loadSteps {
		out = append(out, suite.Test{Name: s, Role: result.RoleTest, Groups: placement(s), Note: notes[s]})
	}
	for _, r := range []int{100, 500, 1000} {
		for _, point := range []bool{false, true} {
			kind := "range"
			if point {
				kind = "point"
			}
			out = append(out, suite.Test{Name: rwName(point, r), Role: result.RoleTest, Groups: placement(rwName(point, r)),
				Note: fmt.Sprintf("inserts at %d rows/s per client beside %s queries (queries/s)", r, kind)})
		}
	}
	return out
}

// Options are the suite's configured parameters.
type Options struct {
	// Clients is the client count of one pass of the steps; Passes, if
	// set, are the client counts, each its own pass of every step in
	// order (--clients 1,4), and Clients is then ignored.
	Clients int
	Passes  []int
	// dropUpTo: l.i0 drops the tables pi1..piN of every pass (an earlier
	// pass may have had more clients), N the most clients of any pass.
	dropUpTo     int
	MR1, MR2     float64
	QuerySecs    time.Duration
	Rates        []int
	QueryThreads int
	RowsPerQuery int
	Deletes      bool
	Shared       bool
	Pacing       Pacing
	WaitScale    float64
	Steps        []string
	NoPrepare    bool
	// Cache is --workload iobound's cache fraction (0: cached).
	Cache float64
}

// NR1 is the rows l.i0 loads, over all clients.
func (o Options) NR1() int64 { return int64(math.Round(o.MR1 * 1e6 * float64(o.Clients))) }

// NR2 is the rows l.i1 and l.i2 insert together, over all clients.
func (o Options) NR2() int64 { return int64(math.Round(o.MR2 * 1e6 * float64(o.Clients))) }

// Declines are the plan's common parameters the Insert Benchmark does not take.
func (ibenchSuite) Declines() map[string]string {
	return map[string]string{
		"threads": "the Insert Benchmark's concurrency is --clients",
		"rate":    "its read+write steps pace their inserts at --rates",
		"warmup":  "its steps run to the end of their rows, unwarmed, as the reference's",
	}
}

// Configure reads the suite's values and makes its steps.
func (ibenchSuite) Configure(v suite.Values) (*suite.Plan, error) {
	c := v.Check()
	o := Options{
		Passes:       c.Ints("clients", 1, 4096),
		MR1:          c.Float("mr1", 0, 1e6),
		MR2:          c.Float("mr2", 0, 1e6),
		QuerySecs:    c.Seconds("query-secs", false),
		Rates:        c.Ints("rates", 1, 1e7),
		QueryThreads: int(c.Int("query-threads", 0, 1024)),
		RowsPerQuery: int(c.Int("rows-per-query", 1, 10000)),
		Deletes:      c.Bool("delete-per-insert") && !c.Bool("no-delete-per-insert"),
		Shared:       c.Bool("shared-table"),
		Pacing:       Pacing(c.OneOf("pacing", string(Smooth), string(Reference))),
		WaitScale:    c.Float("wait-scale", 0, 1000),
		Steps:        c.List("steps"),
		NoPrepare:    c.Bool("no-prepare"),
		Cache:        c.Cache(),
	}
	if err := passesProblem(c.String("clients"), o.Passes); err != "" {
		c.Problem("%s", err)
	}
	switch {
	case v.Changed("delete-per-insert") && v.Changed("no-delete-per-insert") && c.Bool("delete-per-insert") && c.Bool("no-delete-per-insert"):
		c.Problem("--delete-per-insert and --no-delete-per-insert contradict each other: give one")
	case o.Shared && v.Changed("delete-per-insert") && c.Bool("delete-per-insert"):
		c.Problem("--delete-per-insert and --shared-table exclude each other (as in the reference): each client deletes the oldest rows of its own table; drop --delete-per-insert (--shared-table runs without deletes)")
	case o.Shared:
		o.Deletes = false // the reference's only1t has no deletes
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return o.Plan()
}

// passesProblem is what is wrong with a list of client counts that parses
// (Checker.Ints said what does not): none given, or a count given twice.
func passesProblem(given string, counts []int) string {
	if len(counts) == 0 && !strings.ContainsFunc(given, func(r rune) bool { return r != ',' && r != ' ' }) { // "", ","
		return "--clients " + suite.Quote(given) + ": give at least one client count (e.g. 1 or 1,4)"
	}
	seen := map[int]bool{}
	for _, n := range counts {
		if seen[n] {
			return fmt.Sprintf("--clients %s: %d clients given twice; give each count once (e.g. 1,4)", suite.Quote(given), n)
		}
		seen[n] = true
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Tables are the clients' tables: pi1..piN, or pi1 for all.
func (o Options) Tables() []string {
	if o.Shared {
		out := make([]string, o.Clients)
		for i := range out {
			out[i] = "pi1"
		}
		return out
	}
	out := make([]string, o.Clients)
	for i := range out {
		out[i] = "pi" + strconv.Itoa(i+1)
	}
	return out
}

// distinct are the tables without repeats.
func (o Options) distinct() []string {
	if o.Shared {
		return []string{"pi1"}
	}
	return o.Tables()
}

// Plan makes the steps in the reference's order (iq.sh), once per client
// count (Passes, or Clients), each pass on tables of its own size: all of
// them at the first count, then all at the next.
func (o Options) Plan() (*suite.Plan, error) {
	counts := o.Passes
	if len(counts) == 0 {
		counts = []int{o.Clients}
	}
	var p *suite.Plan
	for _, n := range counts {
		pass := o
		pass.Clients, pass.dropUpTo = n, slices.Max(counts)
		pp, err := pass.pass()
		if err != nil {
			return nil, err
		}
		if len(counts) > 1 {
			for i := range pp.Steps {
				st := &pp.Steps[i]
				params := map[string]string{}
				for k, v := range st.Params {
					params[k] = v
				}
				for _, k := range passParams {
					params[k] = pp.Params[k]
				}
				st.Params = params
			}
		}
		if p == nil {
			p = pp
		} else {
			p.Steps = append(p.Steps, pp.Steps...)
		}
	}
	if len(counts) > 1 {
		for _, k := range passParams {
			delete(p.Params, k) // each step's own
		}
	}
	return p, nil
}

// passParams are the recorded parameters that depend on the client count:
// with several counts, each step records its pass's.
var passParams = []string{"clients", "rows", "rows2", "tables"}

// pass makes one pass of the steps at o.Clients.
func (o Options) pass() (*suite.Plan, error) {
	all := append([]string{}, loadSteps...)
	for _, r := range o.Rates {
		all = append(all, rwName(false, r), rwName(true, r))
	}
	sel := all
	if len(o.Steps) > 0 {
		sel = nil
		for _, s := range o.Steps {
			if !contains(all, s) {
				return nil, fmt.Errorf("--steps %s: unknown step; ibench's are %s", s, strings.Join(all, ", "))
			}
		}
		for _, s := range all {
			if contains(o.Steps, s) {
				sel = append(sel, s)
			}
		}
	}
	p := &suite.Plan{
		Params: map[string]string{
			"clients": strconv.Itoa(o.Clients), "rows": strconv.FormatInt(o.NR1(), 10), "rows2": strconv.FormatInt(o.NR2(), 10),
			"tables": strconv.Itoa(len(o.distinct())), "pacing": string(o.Pacing),
			"delete_per_insert": strconv.FormatBool(o.Deletes), "query_secs": strconv.FormatFloat(o.QuerySecs.Seconds(), 'g', -1, 64),
			"prepared": strconv.FormatBool(!o.NoPrepare),
		},
		RunsOn: suite.AnyDialect,
		Cache:  o.Cache,
	}
	suite.RecordCache(p.Params, o.Cache)
	for _, name := range sel {
		p.Steps = append(p.Steps, o.step(name, indexOf(all, name)))
	}
	// The load ends with l.x (or l.i0 without it): an iobound plan sizes
	// the cache to the tables and their indexes then, for l.i1 on.
	for i := len(p.Steps) - 1; i >= 0; i-- {
		if t := p.Steps[i].Test; t == "l.x" || t == "l.i0" {
			p.Steps[i].Sizes = true
			break
		}
	}
	return p, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return len(list)
}

// step makes one step.
func (o Options) step(name string, order int) suite.Step {
	st := suite.Step{Test: name, Order: order, Role: result.RoleTest, Groups: placement(name), Threads: []int{o.Clients}, Finish: o.finish(name, order)}
	ins := suite.Headline{Unit: "rows/s", Op: "insert", Series: result.SeriesRows, Value: func(t result.Totals) float64 { return t.RowsPerSec }}
	perClient := func(total int64) int64 { return (total + int64(o.Clients) - 1) / int64(o.Clients) }
	switch name {
	case "l.i0":
		st.Headline = ins
		st.Before = o.create
		st.Drive = o.drive(phase{rows: perClient(o.NR1()), perCommit: 100})
	case "l.x":
		st.Headline = suite.Headline{Unit: "rows/s", Op: "row", Series: result.SeriesRows, Value: func(t result.Totals) float64 { return t.RowsPerSec }}
		st.Task = &suite.Task{Run: o.index}
	case "l.i1":
		st.Headline = ins
		st.Drive = o.drive(phase{rows: perClient(int64(math.Round(float64(o.NR2()) * 4 / 5))), perCommit: 50, deletes: o.Deletes})
	case "l.i2":
		st.Headline = ins
		st.Drive = o.drive(phase{rows: perClient(int64(math.Round(float64(o.NR2()) / 5))), perCommit: 5, deletes: o.Deletes})
		st.After = o.wait
	default:
		point := strings.HasPrefix(name, "qp")
		rate, _ := strconv.Atoi(name[2:])
		st.Params = map[string]string{"insert_rate": strconv.Itoa(rate)}
		st.Headline = suite.Headline{Unit: "queries/s", Op: "query", Series: result.SeriesOp(KindQuery), Value: func(t result.Totals) float64 {
			q, _ := t.Op(KindQuery)
			return q.Rate
		}}
		st.Seconds = o.QuerySecs
		st.Drive = o.drive(phase{rows: int64(math.Round(o.QuerySecs.Seconds() * float64(rate))), perCommit: 50, rate: float64(rate),
			deletes: o.Deletes, queries: o.QueryThreads, point: point, perQuery: o.RowsPerQuery, pacing: o.Pacing})
	}
	return st
}

func (o Options) drive(ph phase) *suite.Drive {
	return &suite.Drive{
		UntilScheduled: true,
		Workers:        func(clients int) int { return clients * ph.workers() },
		Workload: func(s *suite.Server, seed uint64) engine.Workload {
			return &workload{d: s.Dialect, dial: s.Dial, tables: o.Tables(), ph: ph, seed: seed}
		},
	}
}

// create drops the tables of an earlier run (only tables qpslab made) and
// creates them without secondary indexes, as l.i0's setup=yes does.
func (o Options) create(ctx context.Context, s *suite.Server) error {
	conn, err := s.Dial(ctx)
	if err != nil {
		return fmt.Errorf("create the ibench tables: connect: %w", err)
	}
	defer conn.Close()
	names := o.distinct()
	old := o
	old.Clients = max(o.Clients, o.dropUpTo)
	if err := owned.Drop(ctx, s.Dialect, conn, old.distinct()); err != nil {
		return fmt.Errorf("create the ibench tables: %w", err)
	}
	var tables []owned.Table
	for _, t := range names {
		tables = append(tables, owned.Table{Name: t, DDL: createTable(s.Dialect, t, s.StorageEngine)})
	}
	if err := owned.Create(ctx, s.Dialect, conn, tables); err != nil {
		return fmt.Errorf("create the ibench tables: %w", err)
	}
	for _, t := range names {
		for _, q := range afterCreate(s.Dialect, t) {
			if _, err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("create the ibench tables: %s: %w", q, err)
			}
		}
	}
	s.Log(fmt.Sprintf("created %s; loading %d rows", strings.Join(names, ", "), o.NR1()))
	return nil
}

// index is l.x: each client inserts 100 rows into its table, then the
// table's three secondary indexes are built, a table per connection in
// parallel (the reference's clients each index their own table). Its
// figure is indexed rows/s: (100 per client + nr1) / seconds.
func (o Options) index(ctx context.Context, s *suite.Server, clients int, seed uint64, io suite.TaskIO) (result.Totals, error) {
	tables := o.Tables()
	var jobs []func(context.Context, client.Conn) error
	gen := rowGen{r: newRand(seed)}
	for c := range tables {
		q := gen.insert(tables[c], 100, time.Now())
		jobs = append(jobs, func(ctx context.Context, conn client.Conn) error {
			if err := owned.Verify(ctx, s.Dialect, conn, tables[c:c+1]); err != nil {
				return err
			}
			_, err := conn.Exec(ctx, q)
			return err
		})
	}
	if err := settle.Parallel(ctx, len(jobs), s.Dial, jobs); err != nil {
		return result.Totals{}, fmt.Errorf("l.x: insert: %w", err)
	}
	jobs = jobs[:0]
	for _, t := range o.distinct() {
		jobs = append(jobs, func(ctx context.Context, conn client.Conn) error {
			for _, q := range createIndexes(s.Dialect, t, s.StorageEngine) {
				if _, err := conn.Exec(ctx, q); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			return nil
		})
	}
	if err := settle.Parallel(ctx, len(jobs), s.Dial, jobs); err != nil {
		return result.Totals{}, fmt.Errorf("l.x: create indexes: %w", err)
	}
	rows := int64(100*len(tables)) + o.NR1()
	return result.Totals{Rows: rows, Statements: int64(len(tables))}, nil
}

// wait is the reference's wait after l.i2 (iq.sh's vac_my and vac_pg):
// drop the binary logs, analyze and flush (MySQL-family) or vacuum with
// index cleanup and checkpoint (PostgreSQL), then rest until min(1200, 60 +
// nr1/1e6) s, scaled by --wait-scale, have passed.
func (o Options) wait(ctx context.Context, s *suite.Server) error {
	d := time.Duration(float64(settle.Wait(float64(o.NR1()))) * o.WaitScale)
	s.Log(fmt.Sprintf("after l.i2: cleanup, then wait %s", d.Round(time.Second)))
	err := settle.Run(ctx, settle.Options{Dialect: s.Dialect, Dial: s.Dial, Tables: o.distinct(), Wait: d,
		Pause: time.Duration(float64(settle.RocksDBPause) * o.WaitScale), ResetMaster: !s.External, Shared: s.External, IndexCleanup: s.Dialect.IndexCleanup(s.Version), Warn: s.Warn})
	if err != nil {
		return fmt.Errorf("the wait after l.i2: %w", err)
	}
	return nil
}

// finish adds what a run of step name ends with: the read+write steps'
// SLA verdict and figures, the per-second rate percentiles, and the
// database's size after the step.
func (o Options) finish(name string, order int) func(ctx context.Context, s *suite.Server, r *result.Run) error {
	return func(ctx context.Context, s *suite.Server, r *result.Run) error {
		t := &r.Totals
		if t.Figures == nil {
			t.Figures = map[string]float64{}
		}
		if t.Seconds > 0 {
			t.Figures[FigureIPS] = float64(t.Rows) / t.Seconds
		}
		for k, v := range RatePercentiles(r.Samples, t.Seconds) {
			t.Figures[k] = v
		}
		if rate, err := strconv.Atoi(r.Params["insert_rate"]); err == nil {
			v, share := SLA(float64(rate*r.Threads), *t, r.Samples)
			r.Verdicts = append(r.Verdicts, v)
			t.Figures[FigureSLA] = share
		}
		db, err := dbSize(ctx, s, o.distinct())
		if err != nil {
			return fmt.Errorf("database size after %s: %w", name, err)
		}
		t.Figures[FigureDBMB] = db
		if name != "l.i0" {
			live, err := liveRows(ctx, s, o.distinct())
			if err != nil {
				return fmt.Errorf("live rows after %s: %w", name, err)
			}
			var sum int64
			for _, n := range live {
				sum += n
			}
			t.Figures[FigureLiveRows] = float64(sum)
			if o.Deletes && name != "l.x" {
				r.Verdicts = append(r.Verdicts, o.liveVerdict(s.Dialect, order, live))
			}
		}
		if s.Datadir != "" {
			if mb, err := dirMB(s.Datadir); err == nil {
				t.Figures[FigureDatadirMB] = mb
			}
		}
		return nil
	}
}

// SLAShare is the share of the target insert rate a read+write step must
// average (the reference's 95 %).
const SLAShare = 0.95

// SLA judges a read+write step: it passes when its average insert rate is
// at least SLAShare of target (clients × rate, rows/s), as the reference's
// chart_all.sh. share is the percentage of whole seconds whose insert rate
// reached SLAShare of the target, which the reference does not report.
func SLA(target float64, t result.Totals, samples []result.Sample) (result.Verdict, float64) {
	avg := 0.0
	if t.Seconds > 0 {
		avg = float64(t.Rows) / t.Seconds
	}
	whole, ok := 0, 0
	for _, s := range wholeSeconds(samples, t.Seconds) {
		whole++
		if float64(s.Rows) >= SLAShare*target {
			ok++
		}
	}
	share := 0.0
	if whole > 0 {
		share = 100 * float64(ok) / float64(whole)
	}
	v := result.Verdict{Name: "insert SLA", OK: avg >= SLAShare*target}
	v.Detail = fmt.Sprintf("target %.0f rows/s, average %.1f (%.1f%%), %.0f%% of %d seconds at >= 95%%", target, avg, 100*avg/target, share, whole)
	return v, share
}

// wholeSeconds are the samples of whole seconds of a window of secs
// seconds, seconds with no events included as zeros: the last, partial
// second of a step that ended when its inserts were done is left out.
func wholeSeconds(samples []result.Sample, secs float64) []result.Sample {
	n := int(secs)
	out := make([]result.Sample, n)
	for i := range out {
		out[i].Second = i
	}
	for _, s := range samples {
		if s.Second >= 0 && s.Second < n {
			out[s.Second] = s
		}
	}
	return out
}

// RatePercentiles are the reference's per-second rate percentiles: for
// inserts (rows/s), deletes and queries (statements/s), the rate that 50,
// 75, 90, 95 and 99 % of whole seconds beat (sorted descending, the value
// at round(x/100·n)), named "insert/s@p99" and so on. Kinds without events
// are left out.
func RatePercentiles(samples []result.Sample, secs float64) map[string]float64 {
	secsList := wholeSeconds(samples, secs)
	out := map[string]float64{}
	if len(secsList) == 0 {
		return out
	}
	per := map[string][]float64{}
	for _, s := range secsList {
		per[KindInsert] = append(per[KindInsert], float64(s.Rows))
		counts := map[string]float64{}
		for _, o := range s.Ops {
			counts[o.Kind] = float64(o.Count)
		}
		for _, k := range []string{KindDelete, KindQuery} {
			per[k] = append(per[k], counts[k])
		}
	}
	for k, v := range per {
		total := 0.0
		for _, x := range v {
			total += x
		}
		if total == 0 {
			continue
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(v)))
		for _, p := range []int{50, 75, 90, 95, 99} {
			i := int(math.Round(float64(p) / 100 * float64(len(v))))
			i = min(max(i-1, 0), len(v)-1)
			out[fmt.Sprintf("%s/s@p%d", k, p)] = v[i]
		}
	}
	return out
}

// dbSize is the tables' size (data and indexes) in MB as the server counts
// it: information_schema on MySQL-family servers, pg_total_relation_size
// on PostgreSQL. MyRocks counts its SST files only: rows still in its
// memtables are not in the size until they are flushed.
func dbSize(ctx context.Context, s *suite.Server, tables []string) (float64, error) {
	conn, err := s.Dial(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	b, err := client.Scalar(ctx, conn, s.Dialect.TablesBytes(tables))
	if err != nil {
		return 0, err
	}
	return float64(b) / (1 << 20), nil
}

// liveRows is what each of tables holds by the reference's measure, max -
// min transactionid + 1 (0 when it is empty): two reads of the primary
// key's ends, where count(*) would scan the table (and warm an IO-bound
// run's cache).
func liveRows(ctx context.Context, s *suite.Server, tables []string) ([]int64, error) {
	conn, err := s.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	out := make([]int64, len(tables))
	for i, t := range tables {
		if out[i], err = client.Scalar(ctx, conn, "SELECT COALESCE(max(transactionid) - min(transactionid) + 1, 0) FROM "+t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// seqGap is the most ids PostgreSQL's sequence can skip per session that
// inserts (its CACHE 1000: the values a session cached and did not use are
// lost when it ends), so max - min + 1 may exceed the rows by that much
// per inserting session. The MySQL family's auto_increment gives one
// inserter's multi-row INSERTs consecutive ids.
const seqGap = idCache

// liveVerdict judges a step that deletes a row per insert: the live rows of
// each table (max - min + 1) are what l.x left, perClient(NR1) + 100,
// since each step deletes as many rows as it inserts. On PostgreSQL ids
// may skip up to seqGap per inserting session before and in the step (one
// per step in the pass's order up to this one), so the measure may exceed
// the rows by that much; never fall short.
func (o Options) liveVerdict(d client.Dialect, order int, live []int64) result.Verdict {
	want := (o.NR1()+int64(o.Clients)-1)/int64(o.Clients) + 100
	slack := int64(0)
	if afterCreate(d, "t") != nil { // the ids are cached per session
		slack = seqGap * int64(order+1)
	}
	v := result.Verdict{Name: VerdictLiveRows, OK: true}
	lo, hi := live[0], live[0]
	for _, n := range live {
		lo, hi = min(lo, n), max(hi, n)
		if n < want || n > want+slack {
			v.OK = false
		}
	}
	span := fmt.Sprintf("%d", lo)
	if hi != lo {
		span = fmt.Sprintf("%d to %d", lo, hi)
	}
	switch {
	case v.OK && slack > 0:
		v.Detail = fmt.Sprintf("each table's live rows (max - min transactionid + 1) %s, l.x left %d (PostgreSQL's sequence may skip up to %d ids by now)", span, want, slack)
	case v.OK:
		v.Detail = fmt.Sprintf("each table's live rows (max - min transactionid + 1) %s, as l.x left them", span)
	default:
		wanted := fmt.Sprint(want)
		if slack > 0 {
			wanted = fmt.Sprintf("%d to %d (PostgreSQL's sequence skips ids)", want, want+slack)
		}
		v.Detail = fmt.Sprintf("each table's live rows (max - min transactionid + 1) %s, want %s as l.x left them: the deletes did not keep the tables' size, or the tables were not made by this run's l.i0 and l.x", span, wanted)
	}
	return v
}

// dirMB is what the datadir takes on disk (du -s), in MB.
func dirMB(dir string) (float64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed while walking
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return float64(total) / (1 << 20), err
}

var _ suite.SQLer = ibenchSuite{}

// SQLOf is the DDL of ibench's first table for a server of dialect d: the
// table, what follows its CREATE, and its secondary indexes.
func (ibenchSuite) SQLOf(d client.Dialect) []string {
	out := append([]string{createTable(d, "pi1", "")}, afterCreate(d, "pi1")...)
	return append(out, createIndexes(d, "pi1", "")...)
}
