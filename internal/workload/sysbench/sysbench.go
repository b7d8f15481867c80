// Package sysbench owns the sysbench microbenchmarks of Mark Callaghan's
// harness (mdcallag/mytools bench/sysbench.lua): the tests as data, the SQL
// each one runs on MySQL and PostgreSQL, the workers that run one event at a
// time, and the sbtestN tables (schema, parallel load, drop, postwrite flush).
// docs/reference.md summarises the harness with its public sources; every
// § number in this package's comments points into that page.
//
// It must not time, count or report anything: the engine runs the workers
// and the result packages turn outcomes into QPS. It touches only the tables
// sbtest1..N and qpslab_tables in the connection's own database, and never
// drops or reuses a sbtestN that qpslab_tables does not record.
//
// API:
//
//	Test                       one step of a run: testType, variant, range, statements
//	                           per event, duration class (Secs), prepared, retry, groups
//	Test.Label, Test.ID        "read-only.pre_range=10", "read-only.pre"
//	Test.Queries(p, table)     the statements a worker prepares for table
//	Order2024, OrderHEAD       the run orders (point-query.warm load step first)
//	Report2024, ReportHEAD     the 42 and 32 reported tests
//	Select(tests, globs...)    path.Match over label, ID or name
//	Layout5, Layout4           the group names, in report order
//
//	Target                     where the tables live: protocol, dial, tables, rows
//	Target.Load(ctx, opts)     create, load (LoadOptions: threads, method insert or copy,
//	                           seed, progress), index
//	Target.Drop(ctx)           drop the recorded sbtest1..N
//	Target.Postwrite(ctx, s)   analyze/vacuum, flush, then sleep out PostwriteWait()*s
//	Workload                   a Target plus a Test and a seed: engine.Workload; its
//	                           worker 0 first checks the tables are qpslab's
//
// Randomness: every worker draws from its own PCG seeded with (seed, worker
// id), so a run with the same seed and threads issues the same ids.
package sysbench

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// Secs says which of a run's durations a test runs for (§1.4).
type Secs int

const (
	ReadSecs   Secs = iota // the read duration (his 600 s)
	WriteSecs              // the write duration (his 900 s)
	InsertSecs             // the insert duration (his runs pass the write duration)
	WarmSecs               // a fixed 60 s (scan.warm, scan.warmpre)
)

// Of picks the duration for s from a run's three.
func (s Secs) Of(read, write, insert time.Duration) time.Duration {
	switch s {
	case WriteSecs:
		return write
	case InsertSecs:
		return insert
	case WarmSecs:
		return 60 * time.Second
	}
	return read
}

func (s Secs) String() string {
	return [...]string{"read", "write", "insert", "60s"}[s]
}

// Describe says how long a test of s runs, in the flags' terms.
func (s Secs) Describe() string {
	return [...]string{"--read-secs", "--write-secs", "--insert-secs", "60 s (--read-secs if shorter)"}[s]
}

// Group names of the two report layouts (§1.5).
const (
	Point1 = "point-1"
	Range1 = "range-1"
	Writes = "writes"
	Point2 = "point-2"
	Range2 = "range-2"

	Point      = "point"
	RangeNoAgg = "range-noagg"
	RangeAgg   = "range-agg"
)

// Layout5 is the 2023–2024 five-group layout and Layout4 the 2025 four-group
// one, each in report order (the seeds': points, ranges, writes). The
// four-group layout uses Writes too.
var (
	Layout5 = []string{Point1, Point2, Range1, Range2, Writes}
	Layout4 = []string{Point, RangeNoAgg, RangeAgg, Writes}
)

// Test is one step of a run: a sysbench microbenchmark as the reference
// harness runs it.
type Test struct {
	Name       string // the reference's testType: "point-query", "read-only-sum", …
	Variant    string // "", "pre" (before the writes), "warm" or "warmpre" (not reported)
	Range      int    // R in the label: --range-size, and --random-points for random-points
	Statements int    // statements per event, BEGIN and COMMIT included (sysbench's "queries")
	Time       Secs   // which duration it runs for
	Prepared   bool   // server-side prepared statements (all but insert and scan)
	Retry      bool   // deadlocks and lock-wait timeouts restart the event (the writes; client.Retryable)
	BindTable  bool   // the table is worker id % tables + 1, not random (scan)
	Krows      bool   // its QPS column is Krows/s of one scan (KrowsPerSec)
	PerTable   bool   // run with threads = tables (point-query.warm, scan)
	Load       bool   // the tables are loaded before it (point-query.warm)
	Postwrite  bool   // flush and wait after it (point-query.warm, read-write R=100)
	Group5     string // group in the shipped layout "5" (Layouts); "" for warm runs
	Group4     string // group in the shipped layout "4" (Layouts); "" for warm runs
}

// ID is the testType with its variant: "point-query.pre".
func (t Test) ID() string {
	if t.Variant == "" {
		return t.Name
	}
	return t.Name + "." + t.Variant
}

// Label is the name result tables print: "random-points.pre_range=1000".
func (t Test) Label() string { return t.ID() + "_range=" + strconv.Itoa(t.Range) }

// Warm reports a warm-up run, which reports leave out.
func (t Test) Warm() bool { return strings.HasPrefix(t.Variant, "warm") }

func (t Test) String() string { return t.Label() }

// kinds holds what depends on the testType alone: statements per event as a
// function of nothing (all counts are fixed) and whether it is prepared.
var kinds = map[string]struct {
	statements int
	prepared   bool
}{
	"point-query":          {1, true},
	"random-points":        {1, true},
	"hot-points":           {1, true},
	"points-covered-pk":    {1, true},
	"points-notcovered-pk": {1, true},
	"points-covered-si":    {1, true},
	"points-notcovered-si": {1, true},
	"range-covered-pk":     {1, true},
	"range-notcovered-pk":  {1, true},
	"range-covered-si":     {1, true},
	"range-notcovered-si":  {1, true},
	"read-only":            {16, true}, // BEGIN, 10 points, 4 ranges, COMMIT
	"read-only-simple":     {13, true}, // BEGIN, 10 points, 1 range, COMMIT
	"read-only-sum":        {13, true},
	"read-only-order":      {13, true},
	"read-only-distinct":   {13, true},
	"read-only-count":      {1, true},
	"scan":                 {1, false},
	"update-index":         {1, true},
	"update-nonindex":      {1, true},
	"update-one":           {1, true},
	"update-zipf":          {1, true},
	"update-inlist":        {1, true},
	"write-only":           {6, true},  // BEGIN, 2 updates, delete, insert, COMMIT
	"read-write":           {20, true}, // BEGIN, 10 points, 4 ranges, 2 updates, delete, insert, COMMIT
	"delete":               {1, true},
	"insert":               {1, false},
}

// isWrite is sum_qps_csv.sh's classifier of writes (§1.5): it decides
// which tests retry and run for the write duration. (The groups are data:
// Layouts.)
func isWrite(name string) bool {
	for _, w := range []string{"delete", "insert", "update", "write"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// step builds one test from its testType, variant and range.
func step(name, variant string, r int) Test {
	k, ok := kinds[name]
	if !ok {
		panic("sysbench: unknown test " + name)
	}
	t := Test{Name: name, Variant: variant, Range: r, Statements: k.statements, Prepared: k.prepared}
	switch {
	case name == "scan" && t.Warm():
		t.Time = WarmSecs
	case name == "scan" || name == "insert":
		t.Time = InsertSecs
	case name == "write-only": // a write test that runs for the read duration (§1.4)
		t.Time = ReadSecs
	case isWrite(name):
		t.Time = WriteSecs
	}
	t.Retry = isWrite(name)
	t.BindTable = name == "scan"
	t.Krows = name == "scan"
	t.PerTable = name == "scan" || t.ID() == "point-query.warm"
	t.Group5, t.Group4 = groupIn("5", t.Label()), groupIn("4", t.Label()) // the shipped Layouts' data
	return t
}

// loadStep is point-query.warm: load the tables, flush and wait, then warm
// the cache with one thread per table.
func loadStep() Test {
	t := step("point-query", "warm", 100)
	t.Load, t.Postwrite = true, true
	return t
}

func writeBlock() []Test {
	rw100 := step("read-write", "", 100)
	rw100.Postwrite = true
	return []Test{
		step("update-inlist", "", 100),
		step("update-index", "", 100),
		step("update-nonindex", "", 100),
		step("update-one", "", 100),
		step("update-zipf", "", 100),
		step("write-only", "", 10000),
		step("read-write", "", 10),
		rw100,
	}
}

var pointsRanges = []string{
	"points-covered-pk", "points-notcovered-pk", "points-covered-si", "points-notcovered-si",
	"range-covered-pk", "range-notcovered-pk", "range-covered-si", "range-notcovered-si",
}

// Order2024 is the run order of all_small.sh in 2023–2024 (commits 4c80133a,
// 23aa3363; §1.4): the point-query.warm load step, then the 42 tests (15
// before the writes, 10 writes, 17 after).
func Order2024() []Test {
	out := []Test{loadStep()}
	pre := func(name string, rs ...int) {
		for _, r := range rs {
			out = append(out, step(name, "pre", r))
		}
	}
	pre("point-query", 100)
	pre("random-points", 10, 100, 1000)
	pre("read-only", 10, 100, 10000)
	for _, n := range pointsRanges {
		pre(n, 100)
	}
	out = append(out, writeBlock()...)
	for _, r := range []int{10, 100, 10000} {
		out = append(out, step("read-only", "", r))
	}
	out = append(out, step("point-query", "", 100))
	for _, r := range []int{10, 100, 1000} {
		out = append(out, step("random-points", "", r))
	}
	out = append(out, step("hot-points", "", 100))
	for _, n := range pointsRanges {
		out = append(out, step(n, "", 100))
	}
	out = append(out, step("scan", "", 100), step("delete", "", 100), step("insert", "", 100))
	return out
}

// OrderHEAD is the run order of all_small.sh at mytools HEAD (2025 onward,
// §1.4): 38 steps, of which 32 are reported.
func OrderHEAD() []Test {
	out := []Test{
		loadStep(),
		step("scan", "warmpre", 100),
		step("point-query", "pre", 100),
		step("range-notcovered-si", "pre", 100),
	}
	out = append(out, writeBlock()...)
	out = append(out, step("scan", "warm", 100), step("scan", "", 100))
	for _, r := range []int{10, 100, 10000} {
		out = append(out, step("read-only", "", r))
	}
	for _, n := range []string{"read-only-simple", "read-only-sum", "read-only-order", "read-only-distinct", "read-only-count"} {
		out = append(out, step(n, "", 1000))
	}
	out = append(out, step("point-query", "", 100))
	for _, r := range []int{10, 100, 1000} {
		out = append(out, step("random-points", "", r))
	}
	for _, n := range []string{"hot-points", "points-covered-pk", "points-notcovered-pk", "range-covered-pk", "range-notcovered-pk"} {
		out = append(out, step(n, "", 100))
	}
	out = append(out, step("points-covered-si", "warm", 100))
	for _, n := range []string{"points-covered-si", "points-notcovered-si", "range-covered-si", "range-notcovered-si", "delete", "insert"} {
		out = append(out, step(n, "", 100))
	}
	return out
}

// Report2024 is the 42 tests the 2023–2024 reports list: Order2024 without
// the warm-up run.
func Report2024() []Test { return keep(Order2024(), func(t Test) bool { return !t.Warm() }) }

// ReportHEAD is the 32 tests the 2025 reports list (sum_qps_csv_nopre.sh):
// OrderHEAD without .pre and warm-up runs.
func ReportHEAD() []Test {
	return keep(OrderHEAD(), func(t Test) bool { return !t.Warm() && t.Variant != "pre" })
}

func keep(ts []Test, f func(Test) bool) []Test {
	var out []Test
	for _, t := range ts {
		if f(t) {
			out = append(out, t)
		}
	}
	return out
}

// Select returns the tests, in their order, whose label, ID or name matches
// one of the path.Match patterns ("read-only*", "point-query.pre",
// "random-points_range=1000"). A pattern that is malformed or matches nothing
// is an error.
func Select(tests []Test, patterns ...string) ([]Test, error) {
	hit := make([]bool, len(tests))
	for _, p := range patterns {
		n := 0
		for i, t := range tests {
			ok := false
			for _, s := range []string{t.Label(), t.ID(), t.Name} {
				m, err := path.Match(p, s)
				if err != nil {
					return nil, fmt.Errorf("select tests %q: %w", p, err)
				}
				ok = ok || m
			}
			if ok {
				hit[i] = true
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("select tests: no test matches %q", p)
		}
	}
	var out []Test
	for i, t := range tests {
		if hit[i] {
			out = append(out, t)
		}
	}
	return out, nil
}
