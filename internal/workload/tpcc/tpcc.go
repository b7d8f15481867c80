// Package tpcc owns the TPC-C suite: the nine tables of the TPC-C
// specification (revision 5.11) and their loader at a number of
// warehouses, the five transactions in the specification's mix on
// qpslab's lean client (prepared statements, their rows read without
// allocation), NURand keys, remote warehouses and the New-Order
// rollbacks as specified, without keying and think times by default (as
// HammerDB's TPROC-C and go-tpc run it) or with them (--wait), the
// retries of serialization failures and deadlocks (--max-tries), the
// consistency conditions of clause 3.3.2 checked before and after every
// run, and its figures (NOPM, TPM, the 90th-percentile limits).
//
// It must not start servers, time runs or store anything (the plan and
// the engine do), and it drops or fills no table qpslab did not make
// (package owned).
package tpcc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// Name is the suite's name in the registry, the store and the CLI.
const Name = "tpcc"

// The steps' test names.
const (
	LoadTest = "load"
	Test     = "tpcc"
)

func init() { suite.Register(tpccSuite{}) }

type tpccSuite struct{}

var _ suite.Suite = tpccSuite{}

func (tpccSuite) Name() string { return Name }

func (tpccSuite) Summary() string {
	return "TPC-C: the nine tables at --warehouses and the five transactions in the specification's mix (NOPM, TPM), on PostgreSQL and the MySQL family"
}

func (tpccSuite) Help() string {
	return `Run TPC-C as HammerDB's TPROC-C and go-tpc run it: the nine tables of the
TPC-C specification loaded at --warehouses (COPY or LOAD DATA, one
connection per warehouse up to --load-threads, every table's cardinality
checked), then the five transactions in the specification's mix
(New-Order 45 %, Payment 43 %, Order-Status, Delivery and Stock-Level 4 %
each: --mix to change it) with NURand keys, 1 % of New-Orders rolled back
and remote warehouses as specified, each thread a terminal of its home
warehouse, without keying and think times (--wait: with the
specification's), for --secs.

The headline is New-Orders per second (NOPM / 60), and its hardware cost
is per New-Order (cpu/o …). Figures: NOPM and TPM (HammerDB's names),
each transaction's rate and response times (new-order/s, payment.p90 …
.max), the specification's 90th-percentile limits as verdicts, the
rolled-back New-Orders, retries and failures (serialization failures and
deadlocks are tried again up to --max-tries).

The consistency conditions of clause 3.3.2 (1–4) are checked before the
test and after every run: a run whose database fails them fails, and is
never compared. See docs/tpcc.md.`
}

func (tpccSuite) Params() []suite.Param {
	return append([]suite.Param{
		{Name: "warehouses", Kind: suite.Int, Default: "1", Usage: "TPC-C's scale: warehouses loaded and run (about 120 MiB each on disk)"},
		{Name: "mix", Kind: suite.List, Usage: "the transaction mix in percent, adding to 100 (default new-order=45,payment=43,order-status=4,delivery=4,stock-level=4)"},
		{Name: "wait", Kind: suite.Bool, Usage: "keying and think times as the specification gives them (each terminal then runs about 1 transaction in 20 s)"},
		{Name: "max-tries", Kind: suite.Int, Default: "10", Usage: "tries of a transaction that fails with a serialization failure or deadlock (1: no retry)"},
		{Name: "load-threads", Kind: suite.Int, Default: "4", Usage: "connections loading warehouses at once"},
		{Name: "secs", Kind: suite.Seconds, Default: "60", Usage: "measured seconds of the test"},
		{Name: "no-load", Kind: suite.Bool, Usage: "skip the load: run on the tables a running --sandbox or --target has, after checking they are a finished load of --warehouses"},
	}, suite.ServerWorkloadParams()...)
}

// Layouts: the load, then the test.
func (tpccSuite) Layouts() []suite.Layout {
	return []suite.Layout{{Name: "tpcc", Title: "the load, then the transactions", Groups: []string{"load", "tpcc"},
		Members: map[string][]string{"load": {LoadTest}, "tpcc": {"tpcc*"}}}}
}

func (tpccSuite) Figures() []suite.Figure {
	fs := []suite.Figure{
		{Name: "qps", Unit: "new-orders/s", HigherIsBetter: true, Per: "new-order", Tests: "tpcc: committed New-Orders per second (NOPM / 60)"},
		{Name: "qps", Unit: "rows/s", HigherIsBetter: true, Per: "row", Tests: LoadTest},
	}
	for _, n := range []string{FigureNOPM, FigureTPM, FigureRollbackPct} {
		m, _ := result.Lookup(n)
		fs = append(fs, suite.FigureOf(m))
	}
	fs = append(fs, suite.Figure{Name: "KIND/s", Unit: "transactions/s", HigherIsBetter: true, Per: "s",
		Tests: "tpcc: each transaction (new-order, payment, order-status, delivery, stock-level); KIND.p50, .p90, .p95, .p99, .p99.9, .max its response times"})
	return append(append(fs, suite.RetryFigures()...), suite.CommonFigures("qps")...)
}

// Conditions: the scale (warehouses) and the keying and think times
// (wait): runs at another scale, or paced as the specification paces its
// terminals, are never repeats of each other.
func (tpccSuite) Conditions() []string {
	return append([]string{"warehouses", "wait"}, suite.CacheConditions()...)
}

func (tpccSuite) Tests() []suite.Test {
	return []suite.Test{
		{Name: LoadTest, Role: result.RoleLoad, Groups: result.PlacementsOf(Name, LoadTest), Note: "create and load the nine tables at --warehouses, check their cardinalities"},
		{Name: Test, Role: result.RoleTest, Groups: result.PlacementsOf(Name, Test), Note: "the five transactions in the mix, for --secs (tpcc_mix=… with another --mix)"},
	}
}

// Options are the suite's configured parameters.
type Options struct {
	Warehouses  int64
	Mix         [nTx]int
	Wait        bool
	MaxTries    int
	LoadThreads int
	Secs        time.Duration
	NoLoad      bool
	Cache       float64
	loaded      *loadedConsts
}

// loadedConsts are the load's constants C of each server's tables, which
// the test's Before reads from tpcc_loaded for the run's Workload: a run's
// C for C_LAST must differ from its load's (clause 2.1.6.1), whatever
// seed the load ran with (--no-load: a load of another run).
type loadedConsts struct {
	mu sync.Mutex
	m  map[*suite.Server]consts
}

func (l *loadedConsts) set(s *suite.Server, c consts) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[s] = c
}

func (l *loadedConsts) get(s *suite.Server) (consts, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.m[s]
	return c, ok
}

// StandardMix is the specification's mix (clause 5.2.3): the minimum
// shares of the four, New-Order the rest.
var StandardMix = [nTx]int{45, 43, 4, 4, 4}

// parseMix reads --mix: NAME=PERCENT for each transaction named (the
// others 0), adding to 100.
func parseMix(c *suite.Checker, vals []string) [nTx]int {
	if len(vals) == 0 {
		return StandardMix
	}
	var mix [nTx]int
	seen := [nTx]bool{}
	sum := 0
	for _, v := range vals {
		name, pct, ok := strings.Cut(v, "=")
		k := -1
		for i, n := range Kinds {
			if n == strings.TrimSpace(name) {
				k = i
			}
		}
		p, err := strconv.Atoi(strings.TrimSpace(pct))
		switch {
		case !ok || k < 0:
			c.Problem("--mix %s: give NAME=PERCENT, NAME one of %s", suite.Quote(v), strings.Join(Kinds[:], ", "))
			return StandardMix
		case err != nil || p < 0 || p > 100:
			c.Problem("--mix %s: the percent must be a whole number from 0 to 100", suite.Quote(v))
			return StandardMix
		case seen[k]:
			c.Problem("--mix gives %s twice: give it once", Kinds[k])
			return StandardMix
		}
		seen[k], mix[k] = true, p
		sum += p
	}
	if sum != 100 {
		c.Problem("--mix adds to %d%%, not 100%%: make the percents add to 100 (the standard mix: new-order=45,payment=43,order-status=4,delivery=4,stock-level=4)", sum)
		return StandardMix
	}
	return mix
}

// testName is the test's label: tpcc for the standard mix, else
// tpcc_mix=NO-P-OS-D-SL.
func (o Options) testName() string {
	if o.Mix == StandardMix {
		return Test
	}
	p := make([]string, nTx)
	for i, x := range o.Mix {
		p[i] = strconv.Itoa(x)
	}
	return Test + "_mix=" + strings.Join(p, "-")
}

// Configure reads the values and makes the steps; every problem is a line
// before anything starts.
func (tpccSuite) Configure(v suite.Values) (*suite.Plan, error) {
	c := v.Check()
	o := Options{
		Warehouses:  c.Int("warehouses", 1, 100000),
		Mix:         parseMix(c, c.List("mix")),
		Wait:        c.Bool("wait"),
		MaxTries:    int(c.Int("max-tries", 1, 1000)),
		LoadThreads: int(c.Int("load-threads", 1, 256)),
		NoLoad:      c.Bool("no-load"),
		Cache:       c.Cache(),
	}
	o.Secs = c.Seconds("secs", false)
	if o.NoLoad && c.String("sandbox") == "" && c.String("target") == "" {
		c.Problem("--no-load runs on the tables of a server already up: use it with --sandbox or --target")
	}
	if o.Wait && v.Changed("rate") {
		c.Problem("--wait paces each terminal by the specification's keying and think times, --rate paces arrivals: give one")
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return o.Plan(), nil
}

// Plan makes the steps: the load (unless --no-load), then the test.
func (o Options) Plan() *suite.Plan {
	o.loaded = &loadedConsts{m: map[*suite.Server]consts{}}
	p := &suite.Plan{
		Params: map[string]string{"warehouses": strconv.FormatInt(o.Warehouses, 10), suite.MaxTriesParam: strconv.Itoa(o.MaxTries),
			"mix": o.mixText()},
		RunsOn: suite.AnyDialect,
		Cache:  o.Cache,
	}
	if o.Wait {
		p.Params["wait"] = "spec" // keying and think times: a condition of the run
	}
	suite.RecordCache(p.Params, o.Cache)
	if !o.NoLoad {
		p.Steps = append(p.Steps, o.loadStep())
	}
	p.Steps = append(p.Steps, o.testStep())
	return p
}

func (o Options) mixText() string {
	p := make([]string, nTx)
	for i, x := range o.Mix {
		p[i] = Kinds[i] + "=" + strconv.Itoa(x)
	}
	return strings.Join(p, ",")
}

func (o Options) loadStep() suite.Step {
	return suite.Step{
		Test: LoadTest, Role: result.RoleLoad, Groups: result.PlacementsOf(Name, LoadTest), Threads: []int{o.LoadThreads},
		Params: map[string]string{"load_threads": strconv.Itoa(o.LoadThreads)}, Once: true, Reloads: true, Sizes: true,
		Headline: suite.Headline{Unit: "rows/s", Op: "row", Series: result.SeriesRows, Value: func(t result.Totals) float64 { return t.RowsPerSec }},
		Task: &suite.Task{Run: func(ctx context.Context, s *suite.Server, threads int, seed uint64, io suite.TaskIO) (result.Totals, error) {
			if err := checkSpace(s.Datadir, o.Warehouses); err != nil {
				return result.Totals{}, err
			}
			s.Log(fmt.Sprintf("load: %d warehouse(s) over %d connection(s)", o.Warehouses, min(int64(threads), o.Warehouses)))
			rows, err := load(ctx, s.Dialect, s.StorageEngine, s.Dial, o.Warehouses, threads, seed, io.Progress)
			return result.Totals{Rows: rows}, err
		}},
	}
}

func (o Options) testStep() suite.Step {
	name := o.testName()
	return suite.Step{
		Test: name, Order: 1, Role: result.RoleTest, Groups: result.PlacementsOf(Name, name),
		Params: map[string]string{"mix": o.mixText()}, Seconds: o.Secs, Slice: true, Writes: true,
		Headline: suite.Headline{Unit: "new-orders/s", Op: Kinds[txNewOrder], Series: result.SeriesOp(Kinds[txNewOrder]),
			Value: func(t result.Totals) float64 { return newOrdersPerSec(t) }},
		Before: func(ctx context.Context, s *suite.Server) error {
			return withConn(ctx, s, func(conn client.Conn) error {
				c, err := checkLoaded(ctx, conn, s.Dialect, o.Warehouses)
				if err != nil {
					return err
				}
				o.loaded.set(s, c)
				return Check(ctx, s.Dialect, conn)
			})
		},
		Finish: func(ctx context.Context, s *suite.Server, r *result.Run) error {
			r.Verdicts = append(r.Verdicts, limits(r.Totals, o.Wait)...)
			return withConn(ctx, s, func(conn client.Conn) error { return Check(ctx, s.Dialect, conn) })
		},
		Drive: &suite.Drive{Retry: true, Workload: func(s *suite.Server, seed uint64) engine.Workload {
			c, ok := o.loaded.get(s)
			if !ok {
				return suite.Failing(fmt.Errorf("tpcc: the load's constants of %s were not read before the test", s.Flavor))
			}
			return &Workload{Dialect: s.Dialect, Dial: s.Dial, Warehouses: o.Warehouses, Mix: o.Mix, MaxTries: o.MaxTries, Wait: o.Wait, Seed: seed, Load: c}
		}},
	}
}

// withConn runs f on a new connection to s.
func withConn(ctx context.Context, s *suite.Server, f func(client.Conn) error) error {
	conn, err := s.Dial(ctx)
	if err != nil {
		return fmt.Errorf("tpcc: connect: %w", err)
	}
	defer conn.Close()
	return f(conn)
}

var _ suite.SQLer = tpccSuite{}

// SQLOf is TPC-C's tables' DDL and its transactions' statements for a
// server of dialect d (what TestSQLIsTheDialects pins).
func (tpccSuite) SQLOf(d client.Dialect) []string {
	var out []string
	for _, tb := range tables(d, "") {
		out = append(out, tb.DDL)
	}
	for k := range nStatements {
		out = append(out, statementSQL(d, k))
	}
	return out
}
