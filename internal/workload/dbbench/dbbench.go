// Package dbbench is the db_bench suite: RocksDB's own benchmark program
// run in the sequence of RocksDB's tools/benchmark_compare.sh (each step
// with tools/benchmark.sh's flags for it), its sizes scaled by --size, for
// the seed's two workloads: cached (the database fits in the block cache)
// and IO-bound (the database is many times the block cache; reads go
// through the file system, or to the disk with O_DIRECT). A config is a
// db_bench option set (config family rocksdb): its flags are laid over the
// suite's, checked against the build's db_bench before anything runs.
//
// There is no server: each step is a task that runs the build's db_bench
// in the run's scratch sandbox folder (suite.Plan.NoServer), reads its
// per-second report file as the run's samples while it runs, and parses
// its output into the step's totals (ops/s, the --histogram latencies) and
// figures (write amplification, compaction, stalls; figures.go registers them).
package dbbench

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// Name is the suite's name in the registry, the store and the CLI.
const Name = "db_bench"

func init() { suite.Register(dbbenchSuite{}) }

type dbbenchSuite struct{}

var _ suite.Suite = dbbenchSuite{}

func (dbbenchSuite) Name() string { return Name }

func (dbbenchSuite) Summary() string {
	return "RocksDB's db_bench in benchmark_compare.sh's sequence (fillseq … overwriteandwait), or YCSB's workloads as its benchmarks (--ycsb), cached and IO-bound, scaled by --size"
}

func (dbbenchSuite) Help() string {
	return `Run RocksDB's db_bench (builds of flavor rocksdb: rocksdb-system is Debian's
rocksdb-tools) in the sequence RocksDB's tools/benchmark_compare.sh runs, each
step with the flags tools/benchmark.sh gives it:

  fillseq               load --size million keys in key order, WAL off (the load)
  revrange              settle: reverse scans of 100 keys at one thread while the
                        load's compaction debt drains (--settle-secs; not reported)
  readrandom            point reads (--seconds)
  fwdrange              range scans, 10 nexts per seek
  multireadrandom       batched MultiGet, 10 keys per batch
  overwritesome         overwrite a tenth of the keys
  flush_mt_l0           flush the memtable and L0, wait for compaction (not reported)
  revrangewhilewriting  reverse scans beside a writer at --mb-write-per-sec
  fwdrangewhilewriting  range scans beside the writer
  readwhilewriting      point reads beside the writer
  overwriteandwait      overwrite for --seconds, then wait for compaction

for each workload of --workload: cached (the block cache holds the whole
database) and iobound (the block cache is a sixteenth of the raw data, so the
database is several times the memory RocksDB may use; with buffered IO the
reads it misses go through the page cache, with the odirect option set to the
disk). Each workload has a database of its own, in the run's sandbox folder,
removed when the run ends. Test names are STEP.WORKLOAD (readrandom.iobound).

With --ycsb workloada,workloadc,… YCSB's core workloads run instead, each as
the db_bench benchmark that runs its operations, on records of 23-byte keys
and values of --fieldcount × --fieldlength bytes (YCSB's 10 × 100):

  load       YCSB's load: filluniquerandom, every key once in random order
  settle     flush, wait for compaction (not reported)
  workloada  readrandomwriterandom --readwritepercent=50 (an update is a Put)
  workloadb  readrandomwriterandom --readwritepercent=95
  workloadc  readrandom
  workloade  seekrandom --seek_nexts=50: scans of 50 rows, no inserts
  workloadf  updaterandom: read-modify-writes only, not YCSB's half reads

Keys are uniform (db_bench has no zipfian); workloadd (read latest) has no
benchmark and is refused. Each operation kind has its rate and response
times from db_bench's histograms (read/s, update.p99, …).

A config is a db_bench option set (qpslab configs add NAME FILE.flags): its
--name=value lines come after the suite's flags, so they override them; sizes
may be written 96K, 64M. Flags the build's db_bench does not know, or that the
suite sets itself (--num, --threads, --duration …), fail before anything runs.
The shipped odirect sets O_DIRECT for reads, flush and compaction.

Each step's figures are db_bench's: ops/s (the headline), µs/op, the
--histogram percentiles, the per-second throughput of its report file as the
run's samples, and from its statistics write amplification, compaction GB and
seconds, the LSM's size and write stalls (qpslab metrics and compare name
them: w_amp, stall%, …). The hardware cost per op, and the disk's request
sizes (rareq-sz), come from the sampler. A run warns when the effective
compaction_readahead_size is above the datadir device's max_sectors_kb
(RocksDB issue 12038). See docs/dbbench.md.`
}

func (dbbenchSuite) Params() []suite.Param {
	return []suite.Param{
		{Name: "workload", Kind: suite.List, Default: suite.Cached, Usage: "workloads, in turn: cached (the block cache holds the database) and iobound (the block cache is --cache of the raw data, so the database is many times it)"},
		suite.CacheParam("the raw keys and values (--size)"),
		{Name: "size", Kind: suite.Float, Default: "1", Usage: "million keys (20-byte keys, 400-byte values; with --ycsb YCSB's records, 23-byte keys and values of --fieldcount × --fieldlength bytes); write buffer, file and level sizes scale with the raw data (benchmark_compare.sh's defaults at 1 million keys of 420 bytes)"},
		{Name: "seconds", Kind: suite.Seconds, Default: "65", Usage: "seconds of each timed step (benchmark_compare.sh's DURATION_RO and DURATION_RW)"},
		{Name: "settle-secs", Kind: suite.Seconds, Usage: "seconds of the revrange settle after the load (default: 300 × --size, at most 300)"},
		{Name: "mb-write-per-sec", Kind: suite.Float, Usage: "MB/s of the writer beside the *whilewriting reads (default: 2 × --size, benchmark_compare.sh's 2 at size 1)"},
		{Name: "load", Kind: suite.String, Default: "fillseq", Usage: "how the database is loaded: fillseq (keys in order, benchmark_compare.sh) or bulkload (random order, then a manual compaction)"},
		{Name: "compression", Kind: suite.String, Default: "lz4", Usage: "compression_type (benchmark_compare.sh's lz4)"},
		{Name: "tests", Kind: suite.List, Usage: "only these steps (e.g. readrandom,overwriteandwait); the load always runs first"},
		{Name: "ycsb", Kind: suite.List, Usage: "YCSB's core workloads instead of benchmark_compare.sh's sequence, each as the db_bench benchmark that runs its operations: workloada,workloadb,workloadc,workloade,workloadf or globs ('workload*'), after YCSB's load (filluniquerandom); workloadd has none (docs/ycsb.md)"},
		{Name: "fieldcount", Kind: suite.Int, Default: "10", Usage: "with --ycsb: fields per record (YCSB fieldcount); a record's value is --fieldcount × --fieldlength bytes"},
		{Name: "fieldlength", Kind: suite.Int, Default: "100", Usage: "with --ycsb: bytes per field (YCSB fieldlength)"},
	}
}

// Workloads: every suite's words (suite.Cached, suite.IOBound).
const (
	Cached  = suite.Cached
	IOBound = suite.IOBound
)

var workloads = []string{Cached, IOBound}

// Groups of the "ops" layout.
const (
	GroupRead  = "read-only"
	GroupWrite = "write-only"
	GroupRW    = "read+write"
)

// step is one step of benchmark_compare.sh's sequence.
type step struct {
	name  string
	role  string
	group string // the "ops" layout's group
	note  string
}

// sequence is benchmark_compare.sh's order (RocksDB 7.x on), after the load.
var sequence = []step{
	{"revrange", result.RoleWarm, "", "settle: reverse scans over 100 keys at one thread while compaction debt drains (not reported)"},
	{"readrandom", result.RoleTest, GroupRead, "point reads for --seconds (ops/s)"},
	{"fwdrange", result.RoleTest, GroupRead, "range scans, 10 nexts per seek, for --seconds (seeks/s)"},
	{"multireadrandom", result.RoleTest, GroupRead, "MultiGet of 10 keys per batch for --seconds (keys/s)"},
	{"overwritesome", result.RoleTest, GroupWrite, "overwrite a tenth of the keys (ops/s)"},
	{"flush_mt_l0", result.RoleWarm, "", "flush the memtable, compact L0, wait for compaction (not reported)"},
	{"revrangewhilewriting", result.RoleTest, GroupRW, "reverse range scans beside a rate-limited writer for --seconds (seeks/s)"},
	{"fwdrangewhilewriting", result.RoleTest, GroupRW, "range scans beside a rate-limited writer for --seconds (seeks/s)"},
	{"readwhilewriting", result.RoleTest, GroupRW, "point reads beside a rate-limited writer for --seconds (reads/s)"},
	{"overwriteandwait", result.RoleTest, GroupWrite, "overwrite for --seconds, then wait for compaction (ops/s)"},
}

var loads = map[string]string{
	"fillseq":  "load the keys in key order, WAL off (benchmark_compare.sh's load; keys/s)",
	"bulkload": "load the keys in random order with compaction off, then compact (keys/s of the load)",
}

// Layouts are the suite's report layouts as data, registered with the
// suite: they decide the groups of its runs when they are read. "workload"
// puts every step of a workload (its load and warm-ups too) in its group;
// "ops" puts each reported step of sequence in its group, in every
// workload.
func (dbbenchSuite) Layouts() []suite.Layout {
	byWorkload := map[string][]string{}
	for _, wl := range workloads {
		byWorkload[wl] = []string{"*." + wl}
	}
	byKind := map[string][]string{}
	for _, s := range append(append([]step{}, sequence...), ycsbSteps()...) {
		if s.group != "" {
			byKind[s.group] = append(byKind[s.group], s.name+".*")
		}
	}
	return []suite.Layout{
		{Name: "workload", Title: "by workload: cached, IO-bound", Groups: workloads, Members: byWorkload},
		{Name: "ops", Title: "by kind: read-only, write-only, read+write (benchmark_compare.sh's sections)", Groups: []string{GroupRead, GroupWrite, GroupRW}, Members: byKind},
	}
}

func (dbbenchSuite) Figures() []suite.Figure {
	return []suite.Figure{{Name: "qps", Unit: "ops/s", HigherIsBetter: true, Per: "op", Tests: "db_bench's ops/sec"}}
}

// Conditions: the keys, the values' fields (--ycsb) and the request
// distribution, and the workload (cached or iobound) with its cache.
func (dbbenchSuite) Conditions() []string {
	return append([]string{"rows", "fieldcount", "fieldlength", "distribution"}, suite.CacheConditions()...)
}

// placement is where the suite's registered layouts put test.
func placement(test string) []result.Placement { return result.PlacementsOf(Name, test) }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return len(list)
}

func (dbbenchSuite) Tests() []suite.Test {
	var out []suite.Test
	for _, wl := range workloads {
		for _, l := range []string{"fillseq", "bulkload"} {
			out = append(out, suite.Test{Name: l + "." + wl, Role: result.RoleLoad, Groups: placement(l + "." + wl), Note: loads[l]})
		}
		for _, s := range sequence {
			out = append(out, suite.Test{Name: s.name + "." + wl, Role: s.role, Groups: placement(s.name + "." + wl), Note: s.note})
		}
	}
	for _, wl := range workloads { // --ycsb's, after the sequence's in the suite's order
		for _, s := range ycsbSteps() {
			out = append(out, suite.Test{Name: s.name + "." + wl, Role: s.role, Groups: placement(s.name + "." + wl), Note: "--ycsb: " + s.note})
		}
	}
	return out
}

// Options are the suite's configured parameters.
type Options struct {
	Workloads   []string
	Size        float64 // million keys
	Seconds     time.Duration
	Settle      time.Duration
	MBPerSec    float64 // the *whilewriting writer's rate
	Load        string
	Compression string
	Tests       []string // sequence steps to run; nil: all
	// Cache is iobound's block cache as a fraction of the raw data
	// (--cache); CacheSet says it was given (a run records it then: runs
	// of the default, stored before --cache, record none).
	Cache    float64
	CacheSet bool
	// YCSB are the YCSB workloads (--ycsb) run instead of the sequence,
	// after YCSB's load, on records of FieldCount × FieldLength bytes.
	YCSB        []string
	FieldCount  int
	FieldLength int

	warned *sync.Map // warnings already given in this plan
}

// Declines are the plan's common parameters db_bench does not take.
func (dbbenchSuite) Declines() map[string]string {
	return map[string]string{
		"warmup":      "each step runs db_bench whole, as benchmark.sh does",
		"rate":        "db_bench runs closed loop",
		"arrivals":    "db_bench runs closed loop",
		"max-backlog": "db_bench runs closed loop",
		"tcp":         "db_bench runs no server",
		"no-prepare":  "db_bench runs no server",
		"transport":   "db_bench runs no server",
		"sandbox":     "db_bench runs no server: each run gets a scratch folder",
		"target":      "db_bench runs no server: each run gets a scratch folder",

		"allow-server-file": "db_bench runs no server",
	}
}

// Configure reads the suite's values and makes its steps.
func (dbbenchSuite) Configure(v suite.Values) (*suite.Plan, error) {
	c := v.Check()
	o := Options{
		Workloads:   c.List("workload"),
		Size:        c.Float("size", 0.001, 1e6),
		Seconds:     c.Seconds("seconds", false),
		Load:        c.OneOf("load", "fillseq", "bulkload"),
		Compression: c.String("compression"),
		Tests:       c.List("tests"),
		Cache:       c.CacheFraction(),
		CacheSet:    v.Changed("cache"),
		FieldCount:  int(c.Int("fieldcount", 1, 100)),
		FieldLength: int(c.Int("fieldlength", 1, 10_000)),
	}
	if globs := c.List("ycsb"); len(globs) > 0 {
		ws, err := selectYCSB(globs)
		if err != nil {
			c.Problem("%v", err)
		}
		o.YCSB = ws
		for _, f := range []string{"tests", "load", "settle-secs", "mb-write-per-sec"} {
			if v.Changed(f) {
				c.Problem("--%s is of benchmark_compare.sh's sequence, which --ycsb replaces: leave it out (--ycsb names the workloads; YCSB's load is filluniquerandom)", f)
			}
		}
	} else if v.Changed("ycsb") {
		c.Problem("--ycsb: name YCSB workloads (%s), or leave it out", strings.Join(ycsbNames(), ", "))
	} else {
		for _, f := range []string{"fieldcount", "fieldlength"} {
			if v.Changed(f) {
				c.Problem("--%s sizes YCSB's records: use it with --ycsb, or leave it out", f)
			}
		}
	}
	if v.Changed("settle-secs") {
		o.Settle = c.Seconds("settle-secs", true)
	} else {
		o.Settle = time.Duration(math.Min(300, 300*o.Size) * float64(time.Second))
	}
	o.MBPerSec = 2 * o.Size
	if v.Changed("mb-write-per-sec") {
		o.MBPerSec = c.Float("mb-write-per-sec", 0, 1e6)
	}
	if len(o.Workloads) == 0 {
		c.Problem("--workload: name cached, iobound or both")
	}
	for _, w := range o.Workloads {
		if indexOf(workloads, w) == len(workloads) {
			c.Problem("--workload %s: use cached or iobound", suite.Quote(w))
		}
	}
	if o.CacheSet && indexOf(o.Workloads, IOBound) == len(o.Workloads) {
		c.Problem("--cache sizes the block cache of --workload iobound: add iobound to --workload, or leave --cache out")
	}
	if o.Compression == "" {
		c.Problem("--compression: name a compression_type (none, snappy, lz4, zstd …)")
	}
	var names []string
	for _, s := range sequence {
		names = append(names, s.name)
	}
	for _, t := range o.Tests {
		if indexOf(names, t) == len(names) {
			c.Problem("--tests %s: unknown step; db_bench's are %s (the load, --load, always runs)", suite.Quote(t), strings.Join(names, ", "))
		}
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	o.warned = &sync.Map{}
	return o.Plan(), nil
}

// Keys is the number of keys of a workload's database.
func (o Options) Keys() int64 { return int64(math.Max(1000, math.Round(o.Size*1e6))) }

// Value and key sizes, as benchmark_compare.sh's defaults.
const (
	keySize   = 20
	valueSize = 400
)

// keyBytes and valueBytes are the sizes of a key and a value: YCSB's with
// --ycsb, else benchmark_compare.sh's.
func (o Options) keyBytes() int {
	if len(o.YCSB) > 0 {
		return ycsbKeySize
	}
	return keySize
}

func (o Options) valueBytes() int {
	if len(o.YCSB) > 0 {
		return o.FieldCount * o.FieldLength
	}
	return valueSize
}

// rawBytes is the database's keys and values, uncompressed.
func (o Options) rawBytes() int64 { return o.Keys() * int64(o.keyBytes()+o.valueBytes()) }

// scaled is a size benchmark_compare.sh gives at 1 million keys of 420
// bytes, scaled by the raw data (--size, and with --ycsb the records'
// size), in whole KB, at least 64 KB.
func (o Options) scaled(mb float64) int64 {
	scale := o.Size * float64(o.keyBytes()+o.valueBytes()) / (keySize + valueSize)
	return int64(math.Max(64, math.Round(mb*1024*scale))) * 1024
}

// CacheBytes is a workload's block cache: for cached, twice the raw data
// (uncompressed blocks, index and filters fit); for iobound, --cache of the
// raw data (a sixteenth by default: about an eighth of the database, which
// compresses to half).
func (o Options) CacheBytes(wl string) int64 {
	if wl == IOBound {
		f := o.Cache
		if f <= 0 {
			f = suite.DefaultCache
		}
		return max(256<<10, int64(float64(o.rawBytes())*f))
	}
	return max(8<<20, 2*o.rawBytes())
}

// Plan makes the steps: for each workload, the load, then the sequence.
func (o Options) Plan() *suite.Plan {
	p := &suite.Plan{
		Params: map[string]string{
			"rows": strconv.FormatInt(o.Keys(), 10), "size": strconv.FormatFloat(o.Size, 'g', -1, 64),
			"seconds": strconv.FormatFloat(o.Seconds.Seconds(), 'g', -1, 64), "compression": o.Compression, "load": o.Load,
		},
		NoServer: true,
		Flavors:  []build.Flavor{build.RocksDB},
		Check:    o.check,
	}
	if o.CacheSet {
		p.Params["cache"] = strconv.FormatFloat(o.Cache, 'g', -1, 64)
	}
	if o.warned == nil {
		o.warned = &sync.Map{}
	}
	if len(o.YCSB) > 0 {
		o.ycsbPlan(p)
		return p
	}
	per := len(sequence) + 1
	for _, wl := range o.Workloads {
		base := indexOf(workloads, wl) * per
		load := o.step(wl, step{name: o.Load, role: result.RoleLoad}, base)
		load.Before = o.prepare(wl)
		p.Steps = append(p.Steps, load)
		for i, s := range sequence {
			if len(o.Tests) > 0 && indexOf(o.Tests, s.name) == len(o.Tests) || s.name == "revrange" && o.Settle == 0 {
				continue
			}
			p.Steps = append(p.Steps, o.step(wl, s, base+1+i))
		}
		last := &p.Steps[len(p.Steps)-1]
		last.After = o.drop(wl)
	}
	return p
}

// step makes one step of workload wl.
func (o Options) step(wl string, s step, order int) suite.Step {
	st := suite.Step{
		Test: s.name + "." + wl, Order: order, Role: s.role, Groups: placement(s.name + "." + wl),
		Params: map[string]string{"workload": wl, "cache_mb": strconv.FormatFloat(float64(o.CacheBytes(wl))/(1<<20), 'f', 2, 64)},
		Headline: suite.Headline{Unit: "ops/s", Op: "op", Series: result.SeriesEvents, Value: func(t result.Totals) float64 {
			if v, ok := t.Figures["ops_sec"]; ok {
				return v
			}
			return t.TPS
		}},
		Task:   &suite.Task{Run: o.run(wl, s.name)},
		Finish: o.finish(wl, s),
	}
	if wl == IOBound && o.CacheSet {
		st.Params["cache"] = strconv.FormatFloat(o.Cache, 'g', -1, 64)
	}
	switch s.name {
	case "fillseq", "bulkload", "revrange", "flush_mt_l0", ycsbLoad, ycsbSettle:
		st.Threads = []int{1} // benchmark.sh runs these at one thread; filluniquerandom runs at one
	}
	return st
}

// ycsbPlan makes --ycsb's steps: for each workload, YCSB's load, the
// settle, then each YCSB workload, in YCSB's order. Their order numbers
// come after the sequence's, so that stored runs keep theirs.
func (o Options) ycsbPlan(p *suite.Plan) {
	p.Params["load"] = "filluniquerandom"
	p.Params["fieldcount"], p.Params["fieldlength"] = strconv.Itoa(o.FieldCount), strconv.Itoa(o.FieldLength)
	steps := ycsbSteps()
	for _, wl := range o.Workloads {
		base := len(workloads)*(len(sequence)+1) + indexOf(workloads, wl)*len(steps)
		for i, s := range steps {
			if s.role == result.RoleTest && indexOf(o.YCSB, s.name) == len(o.YCSB) {
				continue
			}
			st := o.step(wl, s, base+i)
			if s.name == ycsbLoad {
				st.Before = o.prepare(wl)
			}
			if w, ok := ycsbWorkloadNamed(s.name); ok {
				var ops []string
				for _, k := range []string{ycsbRead, ycsbUpdate, ycsbScan, ycsbRMW} {
					for _, x := range w.kinds {
						if x == k {
							ops = append(ops, k)
						}
					}
				}
				st.Params["distribution"], st.Params["operations"], st.Params["benchmark"] = "uniform", strings.Join(ops, ","), w.bench
				st.Writes = w.writes() // judged in the pool of the tests that write, as the ycsb suite's
			}
			p.Steps = append(p.Steps, st)
		}
		p.Steps[len(p.Steps)-1].After = o.drop(wl)
	}
}

// check is the plan's check of each build × config: the option set's flags
// against the build's db_bench.
func (o Options) check(ctx context.Context, b build.Build, c config.Config) error {
	if c.Family != config.RocksDB {
		return fmt.Errorf("config %s is a %s config: db_bench takes a rocksdb option set (qpslab configs add NAME FILE.flags)", c.Name, c.Family)
	}
	l, err := b.Layout()
	if err != nil {
		return err
	}
	h, err := helpOf(ctx, l.Server, l.Env(nil))
	if err != nil {
		return err
	}
	_, err = o.options(c, h, b.Name)
	return err
}

// options are config c's flags for this db_bench (checkOptions), and with
// --ycsb none of those that make its benchmarks YCSB's workloads.
func (o Options) options(c config.Config, h *Help, build string) ([]string, error) {
	opts, err := checkOptions(c, h, build)
	if err != nil {
		return nil, err
	}
	if err := o.ycsbOptions(opts, c.Name); err != nil {
		return nil, err
	}
	return opts, nil
}

// dbDir is where workload wl keeps its database in the run's folder.
func dbDir(s *suite.Server, wl string) string { return filepath.Join(s.Datadir, wl) }

var _ suite.SQLer = dbbenchSuite{}

// SQLOf is nil: db_bench sends no SQL (it runs RocksDB's program).
func (dbbenchSuite) SQLOf(client.Dialect) []string { return nil }
