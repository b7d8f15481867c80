// Package ycsb owns the ycsb suite: YCSB's core workloads A to F
// (site.ycsb.workloads.CoreWorkload with the workloads/ files' settings)
// on one usertable, on PostgreSQL and the MySQL family. It owns the
// usertable (YCSB's JDBC binding's: YCSB_KEY and FIELD0…FIELDn), its load
// through the loader (COPY, LOAD DATA), YCSB's key generators (zipfian
// and scrambled zipfian at 0.99, uniform, skewed latest, the acknowledged
// insert counter, FNV-hashed key names), and the workers that run each
// operation (read, update, insert, scan, read-modify-write) as an
// operation kind of the engine on the lean client's prepared path.
//
// It must not start servers, time runs or store anything (the plan and
// the engine do), and it drops or fills no table qpslab did not make
// (package owned).
package ycsb

import (
	"context"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// Name is the suite's name in the registry, the store and the CLI.
const Name = "ycsb"

// LoadTest is the load step's test name.
const LoadTest = "load"

// The operation kinds (engine.Outcome.Kind): each has its own rate and
// latencies (read/s, read.p99 …).
const (
	OpRead   = "read"
	OpUpdate = "update"
	OpInsert = "insert"
	OpScan   = "scan"
	OpRMW    = "read-modify-write"
)

// Workload is one of YCSB's core workloads as its workloads/ file sets
// it: the operations' proportions and the request distribution.
type Workload struct {
	Name                            string
	Read, Update, Insert, Scan, RMW float64
	Distribution                    string
	MaxScanLength                   int64 // scans: lengths uniform in 1 … MaxScanLength
	Note                            string
	// DBBench: RocksDB's db_bench has a benchmark that runs its operations
	// (qpslab run db_bench --ycsb; docs/ycsb.md says how close each is).
	DBBench bool
}

// Workloads are YCSB's core workloads, in order (workloads/workloada …
// workloadf).
var Workloads = []Workload{
	{Name: "workloada", Read: 0.5, Update: 0.5, Distribution: DistZipfian, Note: "update heavy: 50% reads, 50% updates, zipfian", DBBench: true},
	{Name: "workloadb", Read: 0.95, Update: 0.05, Distribution: DistZipfian, Note: "read mostly: 95% reads, 5% updates, zipfian", DBBench: true},
	{Name: "workloadc", Read: 1, Distribution: DistZipfian, Note: "read only: 100% reads, zipfian", DBBench: true},
	{Name: "workloadd", Read: 0.95, Insert: 0.05, Distribution: DistLatest, Note: "read latest: 95% reads, 5% inserts, latest"},
	{Name: "workloade", Scan: 0.95, Insert: 0.05, Distribution: DistZipfian, MaxScanLength: 100, Note: "short ranges: 95% scans (1 to 100 rows, uniform), 5% inserts, zipfian", DBBench: true},
	{Name: "workloadf", Read: 0.5, RMW: 0.5, Distribution: DistZipfian, Note: "read-modify-write: 50% reads, 50% read-modify-writes, zipfian", DBBench: true},
}

// Writes says whether w changes the table.
func (w Workload) Writes() bool { return w.Update+w.Insert+w.RMW > 0 }

// Kinds are the operation kinds w runs.
func (w Workload) Kinds() []string {
	var out []string
	for _, k := range []struct {
		p    float64
		kind string
	}{{w.Read, OpRead}, {w.Update, OpUpdate}, {w.Insert, OpInsert}, {w.Scan, OpScan}, {w.RMW, OpRMW}} {
		if k.p > 0 {
			out = append(out, k.kind)
		}
	}
	return out
}

// Defaults and bounds of the parameters.
const (
	DefaultRecords = 1_000_000
	MaxRecords     = math.MaxInt32 // YCSB's key numbers are ints
	MaxFieldCount  = 100
	MaxFieldLength = 10_000
)

func init() { suite.Register(ycsbSuite{}) }

type ycsbSuite struct{}

var _ suite.Suite = ycsbSuite{}

func (ycsbSuite) Name() string { return Name }

func (ycsbSuite) Summary() string {
	return "YCSB's core workloads A to F on one usertable, on PostgreSQL and the MySQL family (RocksDB: qpslab run db_bench --ycsb; docs/ycsb.md)"
}

func (ycsbSuite) Help() string {
	return `Run YCSB's core workloads (workloada … workloadf, as YCSB's workloads/
files set them) through qpslab's engine: first the load (YCSB's load phase:
the usertable with --records rows of --fieldcount fields of --fieldlength
characters, keys "user" and the FNV hash of the key number, loaded by COPY or
LOAD DATA; rows/s), then each workload for --secs at every thread count.

The headline is operations/s; each operation (read, update, insert, scan,
read-modify-write) is an operation kind of its own, with its rate and
response times (read/s, read.p99, …). Requests pick keys as YCSB's
CoreWorkload does: scrambled zipfian (0.99), uniform, or latest (workloadd);
--distribution makes every workload use one. RocksDB builds run them as
db_bench benchmarks (qpslab run db_bench --ycsb workloada,…; workloadd has
none): docs/ycsb.md says how close each is.`
}

func (ycsbSuite) Params() []suite.Param {
	return append([]suite.Param{
		{Name: "records", Kind: suite.Int, Default: strconv.Itoa(DefaultRecords), Usage: "rows the load puts in the usertable (YCSB recordcount)"},
		{Name: "tests", Kind: suite.List, Usage: "only the workloads matching these globs (workloada … workloadf, e.g. workloada,workloadc or 'workload[a-c]'); default all"},
		{Name: "secs", Kind: suite.Seconds, Default: "60", Usage: "measured seconds of each workload"},
		{Name: "distribution", Kind: suite.String, Usage: "the request distribution of every workload: zipfian, uniform or latest (default: each workload's own, YCSB requestdistribution: latest for workloadd, zipfian for the others)"},
		{Name: "fieldcount", Kind: suite.Int, Default: "10", Usage: "fields per row (YCSB fieldcount): FIELD0 … FIELDn-1"},
		{Name: "fieldlength", Kind: suite.Int, Default: "100", Usage: "characters per field (YCSB fieldlength)"},
		{Name: "no-load", Kind: suite.Bool, Usage: "skip the load: keep the usertable a running --sandbox or --target has (loaded with the same --records, --fieldcount and --fieldlength)"},
	}, suite.ServerWorkloadParams()...)
}

// Layouts: the load, then the workloads.
func (ycsbSuite) Layouts() []suite.Layout {
	return []suite.Layout{{Name: "workloads", Title: "the load, then YCSB's core workloads", Groups: []string{"load", "workloads"},
		Members: map[string][]string{"load": {LoadTest}, "workloads": {"workload*"}}}}
}

func (ycsbSuite) Figures() []suite.Figure {
	fs := []suite.Figure{
		{Name: "qps", Unit: "operations/s", HigherIsBetter: true, Per: "operation", Tests: "workloada … workloadf: YCSB operations per second (YCSB's Throughput)"},
		{Name: "qps", Unit: "rows/s", HigherIsBetter: true, Per: "row", Tests: LoadTest},
	}
	for _, k := range []string{OpRead, OpUpdate, OpInsert, OpScan, OpRMW} {
		fs = append(fs, suite.Figure{Name: k + "/s", Unit: "operations/s", HigherIsBetter: true, Per: "s",
			Tests: "the workloads that run it: its rate; " + k + ".p50, .p95, .p99, .max its response times (YCSB's [" + strings.ToUpper(k) + "] lines)"})
	}
	return append(fs, suite.CommonFigures("qps")...)
}

// Conditions: the usertable's rows and their fields' count and length, and
// a request distribution other than a workload's own.
func (ycsbSuite) Conditions() []string {
	return append([]string{"rows", "fieldcount", "fieldlength", "distribution"}, suite.CacheConditions()...)
}

func (ycsbSuite) Tests() []suite.Test {
	out := []suite.Test{{Name: LoadTest, Role: result.RoleLoad, Groups: result.PlacementsOf(Name, LoadTest), Note: "create the usertable and load --records rows (YCSB's load phase)"}}
	for _, w := range Workloads {
		out = append(out, suite.Test{Name: w.Name, Role: result.RoleTest, Groups: result.PlacementsOf(Name, w.Name), Note: w.Note + ", for --secs"})
	}
	return out
}

// Options are the suite's configured parameters.
type Options struct {
	Records      int64
	FieldCount   int
	FieldLength  int
	Distribution string // "": each workload's own
	Secs         time.Duration
	Workloads    []Workload
	NoLoad       bool
	NoPrepare    bool    // the plan's --no-prepare: statements sent as text
	Cache        float64 // --workload iobound's cache fraction (0: cached)
}

// Configure reads the values (every problem at once) and makes the steps.
func (ycsbSuite) Configure(v suite.Values) (*suite.Plan, error) {
	c := v.Check()
	o := Options{
		Records:     c.Int("records", 1, MaxRecords),
		FieldCount:  int(c.Int("fieldcount", 1, MaxFieldCount)),
		FieldLength: int(c.Int("fieldlength", 1, MaxFieldLength)),
		Secs:        c.Seconds("secs", false),
		NoLoad:      c.Bool("no-load"),
		NoPrepare:   c.Bool("no-prepare"),
		Cache:       c.Cache(),
	}
	if c.String("distribution") != "" { // YCSB's names, as it spells them
		o.Distribution = c.OneOf("distribution", DistZipfian, DistUniform, DistLatest)
	}
	ws, err := Select(c.List("tests"))
	if err != nil {
		c.Problem("%v", err)
	}
	o.Workloads = ws
	if o.NoLoad && c.String("sandbox") == "" && c.String("target") == "" {
		c.Problem("--no-load keeps the usertable of a server already up: use it with --sandbox or --target")
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return o.Plan(), nil
}

// Select returns the workloads whose names match one of globs, in YCSB's
// order (every one with none).
func Select(globs []string) ([]Workload, error) {
	if len(globs) == 0 {
		return Workloads, nil
	}
	var out []Workload
	for _, w := range Workloads {
		for _, g := range globs {
			if ok, _ := path.Match(g, w.Name); ok {
				out = append(out, w)
				break
			}
		}
	}
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("--tests %s: not a glob (%v): give workloada … workloadf, or globs such as 'workload[a-c]'", suite.Quote(g), err)
		}
		found := false
		for _, w := range Workloads {
			if ok, _ := path.Match(g, w.Name); ok {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("--tests %s matches no workload: give workloada … workloadf, or globs such as 'workload[a-c]'", suite.Quote(g))
		}
	}
	return out, nil
}

// Plan makes the steps: the load (unless --no-load), then each workload.
func (o Options) Plan() *suite.Plan {
	p := &suite.Plan{
		Params: map[string]string{"rows": strconv.FormatInt(o.Records, 10), "fieldcount": strconv.Itoa(o.FieldCount),
			"fieldlength": strconv.Itoa(o.FieldLength)},
		RunsOn:  suite.AnyDialect,
		Cache:   o.Cache,
		Instead: o.dbBench,
	}
	suite.RecordCache(p.Params, o.Cache)
	if !o.NoLoad {
		p.Steps = append(p.Steps, o.loadStep())
	}
	for _, w := range o.Workloads {
		p.Steps = append(p.Steps, o.testStep(w))
	}
	return p
}

// dbBench is what runs this run's workloads on RocksDB build b: the
// db_bench suite's --ycsb, with this run's sizes and seconds, for the
// workloads db_bench has a benchmark for ("" for a build that is not a
// db_bench: one whose configs are no db_bench option sets).
func (o Options) dbBench(b build.Build) string {
	if config.Family(b.Flavor.Describe().Family) != config.RocksDB {
		return ""
	}
	var mapped, not []string
	for _, w := range o.Workloads {
		if w.DBBench {
			mapped = append(mapped, w.Name)
		} else {
			not = append(not, w.Name)
		}
	}
	none := ""
	if len(not) > 0 {
		none = strings.Join(not, ", ") + " has no db_bench benchmark (no read-latest distribution, no inserts beside reads): run it on MyRocks, --engine rocksdb --config myrocks; "
	}
	if len(mapped) == 0 {
		return none + "docs/ycsb.md says which workloads db_bench runs"
	}
	return fmt.Sprintf("RocksDB runs YCSB's workloads as db_bench benchmarks: qpslab run db_bench --build %s --ycsb %s --size %s --seconds %s --fieldcount %d --fieldlength %d; keys are uniform there, never zipfian; %sdocs/ycsb.md says how close each is",
		b.Name, strings.Join(mapped, ","), strconv.FormatFloat(max(float64(o.Records)/1e6, 0.001), 'g', -1, 64), strconv.FormatFloat(o.Secs.Seconds(), 'g', -1, 64), o.FieldCount, o.FieldLength, none)
}

func (o Options) table(s *suite.Server) Table {
	return Table{Dialect: s.Dialect, Dial: s.Dial, StorageEngine: s.StorageEngine, Records: o.Records, FieldCount: o.FieldCount,
		FieldLength: o.FieldLength, Warn: s.Warn, Shared: s.External}
}

// loadStep is YCSB's load phase: the usertable dropped (outside the
// timing) and loaded, rows/s; then analyzed and flushed, outside it. It
// runs once and may run again to put the table back (the same seed loads
// the same rows).
func (o Options) loadStep() suite.Step {
	return suite.Step{
		Test: LoadTest, Role: result.RoleLoad, Groups: result.PlacementsOf(Name, LoadTest), Threads: []int{1}, Once: true, Reloads: true, Sizes: true,
		Headline: suite.Headline{Unit: "rows/s", Op: "row", Series: result.SeriesRows, Value: func(t result.Totals) float64 { return t.RowsPerSec }},
		Before: func(ctx context.Context, s *suite.Server) error {
			s.Log(fmt.Sprintf("loading the usertable: %d records of %d × %d characters", o.Records, o.FieldCount, o.FieldLength))
			return o.table(s).Drop(ctx)
		},
		After: func(ctx context.Context, s *suite.Server) error {
			s.Log("after the load: analyze, flush")
			return o.table(s).Settle(ctx)
		},
		Task: &suite.Task{Run: func(ctx context.Context, s *suite.Server, threads int, seed uint64, io suite.TaskIO) (result.Totals, error) {
			io.Progress(0, o.Records)
			if err := o.table(s).Load(ctx, seed, func(n int64) { io.Progress(n, o.Records) }); err != nil {
				return result.Totals{}, err
			}
			return result.Totals{Rows: o.Records}, nil
		}},
	}
}

func (o Options) testStep(w Workload) suite.Step {
	if o.Distribution != "" {
		w.Distribution = o.Distribution
	}
	order := 0
	for i, x := range Workloads {
		if x.Name == w.Name {
			order = i + 1
		}
	}
	return suite.Step{
		Test: w.Name, Order: order, Role: result.RoleTest, Groups: result.PlacementsOf(Name, w.Name),
		Params: map[string]string{"distribution": w.Distribution, "operations": strings.Join(w.Kinds(), ","),
			"prepared": strconv.FormatBool(!o.NoPrepare)},
		Seconds: o.Secs, Slice: true, Writes: w.Writes(),
		Headline: suite.Headline{Unit: "operations/s", Op: "operation", Series: result.SeriesEvents, Value: func(t result.Totals) float64 { return t.TPS }},
		Drive: &suite.Drive{Retry: true, Workload: func(s *suite.Server, seed uint64) engine.Workload {
			return &Run{Table: o.table(s), Workload: w, Seed: seed}
		}},
	}
}

var _ suite.SQLer = ycsbSuite{}

// SQLOf is the usertable's DDL for a server of dialect d, with the
// default records and fields (what TestSQLIsTheDialects pins); the
// operations' statements (NewWorker's) are the same on every server but
// for their placeholders (the dialect's Rebind).
func (ycsbSuite) SQLOf(d client.Dialect) []string {
	return []string{Table{Dialect: d, Records: DefaultRecords, FieldCount: 10, FieldLength: 100}.ddl()}
}
