// Package result owns the one versioned result type that the engine emits and
// that everything downstream (the JSON files, the store, compare, report,
// import) speaks. It holds data and its encoding only: no measuring, no I/O
// beyond reading and writing a result file.
package result

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/label"
)

// SchemaVersion is bumped whenever a field changes meaning.
// Version 2: hardware cost per operation (HW) replaced Totals' client CPU
// fields, and the load is a run of its own (test "load", rows/s).
// Version 3: a run carries its place in its suite (Step, Role, Groups),
// figures per operation kind (Totals.Ops, Sample.Ops), verdicts, and the
// sample counter its headline figure follows (Totals.Series). Version 2
// files are read and upgraded (Upgrade).
const SchemaVersion = 3

// Latency summarises a latency distribution, in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min_us"`
	Mean  float64 `json:"mean_us"`
	P50   float64 `json:"p50_us"`
	P90   float64 `json:"p90_us,omitempty"` // TPC-C's limits are on it (0 in runs stored before it)
	P95   float64 `json:"p95_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
}

// Part is one client host's share of a run whose load came from several
// hosts at once: its threads, counts and seconds, its own headline rate
// (Reported, in the run's unit) and service p99 (µs), and its client's CPU
// per op (µs) and in all (% of one CPU; NoClientCPU where they were not
// measured: unknown, not zero), so that a host that could not keep up
// shows beside the others.
type Part struct {
	Host          string  `json:"host"`
	Threads       int     `json:"threads"`
	Events        int64   `json:"events"`
	Statements    int64   `json:"statements"`
	Seconds       float64 `json:"seconds"`
	Reported      float64 `json:"reported"`
	P99           float64 `json:"p99_us"`
	ClientCPUUsOp float64 `json:"client_cpu_us/o"`
	ClientCPU     float64 `json:"client_cpu"`
	NoClientCPU   bool    `json:"no_client_cpu,omitempty"`
	Status        string  `json:"status"`
	Error         string  `json:"error,omitempty"`
}

// Sample is one second of the measured window.
type Sample struct {
	Second     int     `json:"s"` // 0 is the first second after the warmup
	Events     int64   `json:"events"`
	Statements int64   `json:"statements"`
	Rows       int64   `json:"rows"`
	Errors     int64   `json:"errors"`
	Retries    int64   `json:"retries"`
	Late       int64   `json:"late,omitempty"`
	Backlog    int64   `json:"backlog,omitempty"` // open loop: events queued, not yet started, as the second was closed
	Response   Latency `json:"response"`          // from the intended start (open loop); the same as Service in closed loop
	Service    Latency `json:"service"`           // from the actual send
	// HDR histograms (HdrHistogram V2 compressed encoding, 1 µs to 1 h, 3
	// significant digits) of this second's service times and, in open loop,
	// response times.
	ServiceHist  []byte `json:"service_hist,omitempty"`
	ResponseHist []byte `json:"response_hist,omitempty"`
	// Ops is this second per operation kind, for a workload whose events
	// are of several kinds (inserts beside queries); empty otherwise.
	Ops []OpSample `json:"ops,omitempty"`
	// Dur is the seconds the sample covers where that is not a whole
	// second: the part of a second a slice of a test ended in, or a whole
	// slice shorter than a second (test-level interleaving); 0 for a
	// whole second. Its rate is its counts over Dur.
	Dur float64 `json:"dur,omitempty"`
}

// Rate is a sample's count of series per second of what it covers.
func (s Sample) Rate(series string) float64 {
	if s.Dur > 0 {
		return s.Count(series) / s.Dur
	}
	return s.Count(series)
}

// OpSample is one operation kind's part of one second.
type OpSample struct {
	Kind         string  `json:"kind"` // insert, delete, query, …
	Count        int64   `json:"count"`
	Errors       int64   `json:"errors,omitempty"`
	Response     Latency `json:"response"`
	Service      Latency `json:"service"`
	ServiceHist  []byte  `json:"service_hist,omitempty"`
	ResponseHist []byte  `json:"response_hist,omitempty"`
}

// OpTotals is one operation kind over the measured window: what a second
// holds of it, for the whole window, and its rate.
type OpTotals struct {
	OpSample
	Rate float64 `json:"rate"` // per second of the measured window
}

// Count is a second's count of what a run's headline figure counts
// (Totals.Series): statements, events, rows, or one operation kind's
// events (SeriesOp).
func (s Sample) Count(series string) float64 {
	if kind, ok := strings.CutPrefix(series, seriesOpPrefix); ok {
		for _, o := range s.Ops {
			if o.Kind == kind {
				return float64(o.Count)
			}
		}
		return 0
	}
	switch series {
	case SeriesEvents:
		return float64(s.Events)
	case SeriesRows:
		return float64(s.Rows)
	}
	return float64(s.Statements)
}

// What a headline figure's per-second series counts (Totals.Series).
const (
	SeriesStatements = "statements"
	SeriesEvents     = "events"
	SeriesRows       = "rows"
	seriesOpPrefix   = "op:"
)

// SeriesOp is the series of one operation kind's events ("op:query").
func SeriesOp(kind string) string { return seriesOpPrefix + kind }

// Totals are the merged numbers of the measured window.
type Totals struct {
	Seconds    float64 `json:"seconds"`
	Events     int64   `json:"events"`
	Statements int64   `json:"statements"` // sysbench's "queries": BEGIN and COMMIT count
	Rows       int64   `json:"rows"`
	Errors     int64   `json:"errors"`
	Retries    int64   `json:"retries"`
	Late       int64   `json:"late"`        // open loop: events that started more than 1 ms after their intended time
	MaxBacklog int64   `json:"max_backlog"` // open loop: most events queued at once
	TPS        float64 `json:"tps"`         // events/s
	QPS        float64 `json:"qps"`         // statements/s
	RowsPerSec float64 `json:"rows_per_sec"`
	// Reported is the step's headline figure, as its suite defines it
	// (sysbench: QPS, or Krows/s for scan; a load: rows/s), in
	// ReportedUnit. Series names the sample counter whose per-second rate
	// follows it (statements, events or rows), for timelines and drift.
	Reported     float64 `json:"reported"`
	ReportedUnit string  `json:"reported_unit"`
	Series       string  `json:"series,omitempty"`
	Response     Latency `json:"response"`
	Service      Latency `json:"service"`
	ResponseHist []byte  `json:"response_hist,omitempty"`
	ServiceHist  []byte  `json:"service_hist,omitempty"`
	// Ops are the figures per operation kind, when the step's events are
	// of several kinds; empty otherwise.
	Ops []OpTotals `json:"ops,omitempty"`
	// Figures are the suite's own figures of the step, by name (the Insert
	// Benchmark's database size after it, its share of seconds at the
	// insert SLA); metrics of the same name (MetricNamed) compare them.
	Figures map[string]float64 `json:"figures,omitempty"`
}

// Op returns the totals of operation kind k.
func (t Totals) Op(k string) (OpTotals, bool) {
	for _, o := range t.Ops {
		if o.Kind == k {
			return o, true
		}
	}
	return OpTotals{}, false
}

// HW is the hardware cost of the measured window: host, disk, server and
// client counters read once a second (internal/metrics), averaged over the
// window and normalised per operation. The "op" is the unit of the reported
// figure: a statement (QPS), a row (the load's rows/s) or a Krow (scan's
// Krows/s), as the reference harness normalises.
type HW struct {
	Op      string  `json:"op"`      // statement, row or Krow
	Seconds float64 `json:"seconds"` // covered by the samples (first to last)
	Samples int     `json:"samples"` // snapshots taken in the window
	Skipped int     `json:"skipped"` // snapshots that could not be read (not counted as zeros)

	// Per operation. CPUPerOp is the reference's cpu/o: avg(us+sy) / (o/s),
	// with us and sy in vmstat's % of the whole host; the µs figures are CPU
	// time per op, host-wide and for the server's process tree and the
	// client process apart.
	CPUPerOp      float64 `json:"cpu/o"`
	CSPerOp       float64 `json:"cs/o"`
	ReadsPerOp    float64 `json:"r/o"`
	ReadKBPerOp   float64 `json:"rKB/o"`
	WriteKBPerOp  float64 `json:"wKB/o"`
	OpsPerSec     float64 `json:"o/s"`
	HostCPUUsOp   float64 `json:"host_cpu_us/o"`
	ServerCPUUsOp float64 `json:"server_cpu_us/o"`
	ClientCPUUsOp float64 `json:"client_cpu_us/o"`

	// Raw averages over the window: vmstat's us, sy, wa, st, id (% of all
	// CPUs), cs and in per second; iostat's r/s, rkB/s, w/s, wkB/s,
	// rareq-sz, wareq-sz (KB) and %util for Devices; the server's process
	// tree and the client's CPU (% of one CPU) and the tree's largest RSS.
	Avg    HWSecond `json:"avg"`
	CPUs   int      `json:"cpus"`
	Device []string `json:"device,omitempty"` // the datadir's disk(s), or the one named with --device
	// Frequency of each CPU (MHz, mean over the window) where cpufreq
	// exposes it, and the lowest and highest per-second mean over CPUs.
	FreqMHz    []float64 `json:"freq_mhz,omitempty"`
	FreqMinMHz float64   `json:"freq_min_mhz,omitempty"`
	FreqMaxMHz float64   `json:"freq_max_mhz,omitempty"`

	// NoDisk: the disk was not measured (no block device found for the
	// datadir); r/o, rKB/o and wKB/o are then unknown, not zero.
	NoDisk bool `json:"no_disk,omitempty"`
	// NoCPUTime: CPU time per op (host, server, client) was not measured
	// (an import of the reference's figures): unknown, not zero.
	NoCPUTime bool `json:"no_cpu_time,omitempty"`
	// Remote: the server ran on another host than the sampler's (a
	// target): the host's CPU and context switches (cpu/o, cs/o,
	// host_cpu_us/o), the server's CPU and memory and the disk are not the
	// server's and are unknown, not zero; the client's CPU per op is
	// measured.
	Remote bool `json:"remote,omitempty"`
	// Server is what the server itself counted over the window (its
	// global status or statistics views, internal/counters); nil when
	// they were not read (--counters none, an import).
	Server *ServerCounters `json:"server,omitempty"`
	Flags  []Flag          `json:"flags,omitempty"`
	Notes  []string        `json:"notes,omitempty"` // what could not be measured, and why
	Series []HWSecond      `json:"series,omitempty"`
}

// HWSecond is one sampling interval (about a second), or the window's average.
type HWSecond struct {
	T         float64 `json:"t"`   // start, seconds after the window opened
	Dur       float64 `json:"dur"` // length in seconds
	User      float64 `json:"us"`
	System    float64 `json:"sy"`
	IOWait    float64 `json:"wa"`
	Steal     float64 `json:"st"`
	Idle      float64 `json:"id"`
	CS        float64 `json:"cs"`
	Intr      float64 `json:"in"`
	Reads     float64 `json:"r/s"`
	ReadKB    float64 `json:"rkB/s"`
	Writes    float64 `json:"w/s"`
	WriteKB   float64 `json:"wkB/s"`
	RareqSz   float64 `json:"rareq-sz"`
	WareqSz   float64 `json:"wareq-sz"`
	Util      float64 `json:"%util"`
	ServerCPU float64 `json:"server_cpu_pct"`
	ClientCPU float64 `json:"client_cpu_pct"`
	ServerRSS uint64  `json:"server_rss_kb"`
	// ServerPSS is the tree's proportional set size (shared pages counted
	// once, /proc/PID/smaps_rollup), read after the window's last
	// snapshot: in Avg only; 0 where unknown.
	ServerPSS  uint64  `json:"server_pss_kb,omitempty"`
	FreqMHz    float64 `json:"freq_mhz,omitempty"`
	ServerProc int     `json:"server_procs"`
}

// Flag is a condition of the run that puts its numbers at risk.
type Flag struct {
	Name   string `json:"name"` // frequency-drift, steal
	Detail string `json:"detail"`
}

// Verdict is a step's pass or fail against a stated goal (an SLA, a
// sustained rate).
type Verdict struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Roles of a step (Run.Role).
const (
	RoleTest = ""     // a reported test
	RoleLoad = "load" // a setup step that is measured (the load): compared in a group of its own, never in "all"
	RoleWarm = "warm" // run but not reported (a warm-up)
)

// Run is one test at one thread count against one build × config.
type Run struct {
	SchemaVersion int    `json:"schema_version"`
	QpslabVersion string `json:"qpslab_version"`
	Suite         string `json:"suite"` // sysbench
	Test          string `json:"test"`  // label as result tables print it: point-query_range=100
	// Step is the test's position in its suite's run order and Role
	// whether it is reported; analysis orders by these, never by knowing
	// the suite. Groups are where it sits in each of the suite's report
	// layouts (the first is the default) as written: derived, not
	// authoritative. Its suite's registered layouts decide when the run is
	// read (Placements, layouts.go); only a placement marked Own, or in a
	// layout the suite does not register, stands as written.
	Step     int               `json:"step"`
	Role     string            `json:"role,omitempty"`
	Groups   []Placement       `json:"groups,omitempty"`
	Params   map[string]string `json:"params"`
	Seed     uint64            `json:"seed"`
	Build    string            `json:"build"`
	Flavor   string            `json:"flavor"`
	Version  string            `json:"version"`
	Config   string            `json:"config"` // name@hash
	Threads  int               `json:"threads"`
	Loop     string            `json:"loop"` // closed or open
	Rate     float64           `json:"rate,omitempty"`
	Arrivals string            `json:"arrivals,omitempty"`
	Warmup   float64           `json:"warmup_seconds"`
	Duration float64           `json:"duration_seconds"`
	Started  time.Time         `json:"started"`
	Ended    time.Time         `json:"ended"`
	// Host is the fingerprint of the machine the run ran on: qpslab host
	// check's JSON (kernel, CPU model, cores, memory, cpufreq state, risks).
	Host     json.RawMessage `json:"host,omitempty"`
	Status   string          `json:"status"` // ok, failed, aborted
	Error    string          `json:"error,omitempty"`
	Totals   Totals          `json:"totals"`
	Verdicts []Verdict       `json:"verdicts,omitempty"`
	HW       *HW             `json:"hw,omitempty"`
	Samples  []Sample        `json:"samples"`
	// Parts are what each client host measured of its share, for a run
	// whose load came from several hosts at once (engine.MergeConcurrent);
	// empty for a run from one.
	Parts []Part `json:"parts,omitempty"`
	// Stacks are the server's thread stacks captured during the window
	// (--pmp) and its on-CPU profile (--perf), one set per source.
	Stacks []Stacks `json:"stacks,omitempty"`
	// Plan identifies the qpslab run (one invocation's plan) the run was
	// part of; its Rounds pair with the rounds of the other labels' runs of
	// the same plan, test, thread count and conditions.
	Plan string `json:"plan,omitempty"`
	// Pairing is how the plan put the run beside the other labels' runs
	// (PairedSlices, PairedTests, PairedPasses); "" for a run that was not
	// measured beside others (a single label, an import, a store written
	// before pairing).
	Pairing string  `json:"pairing,omitempty"`
	Rounds  []Round `json:"rounds,omitempty"`
}

// Pairings: how a plan puts the runs of its labels beside each other.
const (
	// PairedSlices: every label's server up for the whole plan, each test
	// run as short slices that alternate between the labels in a
	// counterbalanced order (A B B A …); a round is one slice per label,
	// next to each other in time.
	PairedSlices = "slices"
	// PairedTests: servers up for the whole plan, each test run whole on
	// every label in turn, the order alternating by repeat (tests whose
	// point is sustained state, open loop, stack captures); a round is a
	// repeat.
	PairedTests = "tests"
	// PairedPasses: each label's whole pass of the suite in turn, a fresh
	// server each repeat (A B A B); a round is a repeat, minutes apart.
	PairedPasses = "passes"
)

// Round is one of a run's paired observations: one slice of its measured
// window (PairedSlices), or the whole run (a round of PairedTests or
// PairedPasses). Rounds of the labels of one plan with the same Repeat and
// Round were measured next to each other.
type Round struct {
	Repeat     int       `json:"repeat"`
	Round      int       `json:"round"` // within the repeat, from 1
	Started    time.Time `json:"started"`
	Seconds    float64   `json:"seconds"` // measured
	Events     int64     `json:"events"`
	Statements int64     `json:"statements"`
	Rows       int64     `json:"rows"`
	// Value is the round's headline figure, as Totals.Reported is the
	// run's.
	Value float64 `json:"value"`
	// IdleCPU is the CPU the plan's other servers used while this slice
	// was measured (% of one CPU, summed over them): their background
	// work (purge, checkpoints, autovacuum), which competes with the
	// measured server. -1 where it was not measured.
	IdleCPU float64 `json:"idle_cpu_pct"`
	// Figures are the slice's own hardware cost per op (the registry's
	// hardware and CPU metrics by name: cpu/o, cs/o, server_cpu_us/o, …),
	// so that they too are compared round by round; empty for a whole run,
	// whose figures are the run's.
	Figures map[string]float64 `json:"figures,omitempty"`
}

// Statuses of a run.
const (
	OK      = "ok"
	Failed  = "failed"
	Aborted = "aborted"
	// Saturated: an open-loop run that did not sustain its target rate
	// (below SustainedShare of it, or its backlog still growing at the
	// end). Its figures measure what the server managed, not the target;
	// comparisons leave it out, and its verdict says by how much it fell
	// short.
	Saturated = "saturated"
)

// SustainedShare is the part of its target rate an open-loop run must
// achieve to count as sustained.
const SustainedShare = 0.95

// File is what `qpslab run` writes: every run of one invocation.
type File struct {
	SchemaVersion int   `json:"schema_version"`
	Runs          []Run `json:"runs"`
}

// Write writes runs to path as JSON, replacing the file whole
// (atomicfile): a reader, a second writer or a crash finds the old file
// or the new one.
func Write(path string, runs []Run) error {
	b, err := json.MarshalIndent(File{SchemaVersion: SchemaVersion, Runs: runs}, "", " ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, b, 0o600); err != nil { // the owner's alone, as the store
		return fmt.Errorf("write results %s: %w", path, unwrapPath(err))
	}
	return nil
}

// Read reads a result file, refusing versions it does not know; a version 2
// file is upgraded. Its errors name the file, then Decode's.
func Read(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("read results: %w", err)
	}
	f, err := Decode(b)
	if err != nil {
		return File{}, fmt.Errorf("results %s: %w: fix or remove the file", path, err)
	}
	return f, nil
}

// Decode reads a results file's JSON (what Read reads, what the ingest
// API is posted), refusing versions it does not know; a version 2 file is
// upgraded. Its errors are in the JSON's words: the path of the field,
// runs counted from 0 as the JSON's list is (runs[3].totals.qps: a
// number is expected, got a string), never a Go type or a file name.
func Decode(b []byte) (File, error) {
	var head struct {
		SchemaVersion int               `json:"schema_version"`
		Runs          []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return File{}, JSONError(b, err)
	}
	if head.SchemaVersion != SchemaVersion && head.SchemaVersion != 2 {
		return File{}, fmt.Errorf("the results have schema version %d, this qpslab reads 2 and %d: use a matching qpslab",
			head.SchemaVersion, SchemaVersion)
	}
	f := File{SchemaVersion: SchemaVersion, Runs: make([]Run, len(head.Runs))}
	for i, raw := range head.Runs {
		at := fmt.Sprintf("runs[%d]", i)
		if err := json.Unmarshal(raw, &f.Runs[i]); err != nil {
			return File{}, JSONErrorAt(at, raw, err)
		}
		Upgrade(&f.Runs[i])
		Regroup(&f.Runs[i])
		if err := f.Runs[i].Check(); err != nil {
			return File{}, fmt.Errorf("%s: %w", at, err)
		}
	}
	return f, nil
}

// Upgrade fills what a run written before schema 3 lacks, from what it had:
// every such run is sysbench's; its params held the groups ("group5",
// "group4"), the position ("step") and whether it was a warm-up; its load
// was the test "load". It changes nothing in a run that has them.
func Upgrade(r *Run) {
	if r.SchemaVersion >= 3 && r.Suite != "" {
		return
	}
	if r.Suite == "" {
		r.Suite = "sysbench"
	}
	p := r.Params
	switch {
	case r.Test == "load" || p["step"] == "load":
		r.Role = RoleLoad
	case p["warm"] == "true" || strings.Contains(r.Test, ".warm"):
		r.Role = RoleWarm
	}
	if n, err := strconv.Atoi(p["step"]); err == nil {
		r.Step = n + 1 // schema 2 counted from point-query.warm; the suite's catalogue counts the load first
	}
	if len(r.Groups) == 0 {
		for _, l := range legacyLayouts {
			if g := p[l.param]; g != "" {
				r.Groups = append(r.Groups, Placement{Layout: l.name, Group: g, Pos: indexOf(l.groups, g)})
			}
		}
	}
	if r.Totals.Series == "" {
		r.Totals.Series = SeriesEvents // scan's Krows/s and the load's rows/s followed events
		if r.Totals.ReportedUnit == "qps" {
			r.Totals.Series = SeriesStatements
		}
	}
	r.SchemaVersion = SchemaVersion
}

// legacyLayouts are sysbench's two layouts as schema 2 recorded them (a
// param per layout). Only Upgrade needs them, and only where sysbench's
// layouts are not registered: where they are, they decide (Placements).
var legacyLayouts = []struct {
	name, param string
	groups      []string
}{
	{"5", "group5", []string{"point-1", "range-1", "writes", "point-2", "range-2"}},
	{"4", "group4", []string{"point", "range-noagg", "range-agg", "writes"}},
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return len(list)
}

// Measured says whether the hardware figures were measured: two snapshots
// at least and an operation rate. An unmeasured window is no zero cost.
func (h *HW) Measured() bool { return h != nil && h.Samples >= 2 && h.OpsPerSec > 0 }

// Comparable says whether a run counts in comparisons and histories: it
// ended ok and is not an unreported warm-up step.
func (r Run) Comparable() bool { return r.Status == OK && r.Role != RoleWarm }

// Writes says whether the run's step changes the tables (Params["writes"],
// which qpslab records from the step), and whether the run says so at all
// (runs from before it did, and imports, do not).
func (r Run) Writes() (writes, known bool) {
	switch r.Params["writes"] {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Looks is the most looks at its data the run's plan could take
// (Params["looks"], --until-decided), each judged at a level that keeps
// the false-positive rate over all of them within α; 1 for a plan judged
// once.
func (r Run) Looks() int {
	n, err := strconv.Atoi(r.Params["looks"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// ConfigName is a config id's name: "default@0123456789ab" → "default".
func ConfigName(id string) string {
	if i := strings.Index(id, "@"); i >= 0 {
		return id[:i]
	}
	return id
}

// commonConditions are the params the plan and the client record that
// change what a run's figures mean, whatever its suite: runs that differ
// in one are never repeats of each other, nor points of one series. Each
// suite declares its own beside them (RegisterConditions).
var commonConditions = []string{"prepared", "tcp", "transport", "engine", "server_cpus", "client_cpus", "pmp", "perf", "load_hosts"}

// DefaultStorageEngine is the storage engine of a MySQL-family run that records
// none: every table qpslab made before --engine existed was InnoDB.
const DefaultStorageEngine = label.InnoDB

// StorageEngine is the storage engine the run's tables were created with
// ("innodb", "rocksdb"), "" for a run that records none (PostgreSQL, and
// MySQL-family runs from before --engine, which were InnoDB).
func (r Run) StorageEngine() string { return r.Params["engine"] }

// OtherStorageEngine is the run's engine when it is not the default one (InnoDB,
// or none recorded), else "": what its label and conditions add.
func (r Run) OtherStorageEngine() string { return label.OtherStorageEngine(r.StorageEngine()) }

// Label is how the run's results are addressed: build.config, and
// build.config:engine for a storage engine other than InnoDB
// (mariadb-system.myrocks:rocksdb), so that results of two engines are two
// result sets. InnoDB runs keep the label runs had before --engine.
func (r Run) Label() string {
	return label.Of(r.Build, ConfigName(r.Config), r.StorageEngine()).String()
}

// Conditions is what must be equal for two runs of a test at a thread
// count to be repeats of each other: the loop (closed, or open with its
// target rate and arrivals), prepared statements or not, the transport and
// the client ("transport=sysbench" for imports of its output), the storage
// engine unless it is InnoDB, and stack captures or perf during the window
// (pmp, perf), which cost the server time; then what its suite declares
// (ConditionParams: the table size, an iobound workload with its cache
// fraction, …). As "k=v,k=v", sorted; a param the run does not record is
// left out.
func (r Run) Conditions() string {
	loop := r.Loop
	if loop == "" {
		loop = "closed"
	}
	kv := []string{"loop=" + loop}
	if loop == "open" {
		kv = append(kv, "rate="+strconv.FormatFloat(r.Rate, 'g', -1, 64), "arrivals="+r.Arrivals)
	}
	for _, k := range conditionParams(r.Suite) {
		if k == "engine" && r.OtherStorageEngine() == "" {
			continue // InnoDB: keyed as runs from before --engine, which were InnoDB
		}
		if v, ok := r.Params[k]; ok && v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// LabelConditions is Conditions without what a run's label already tells
// apart (its storage engine, result.Run.Label): what the runs of two labels
// must share for a comparison to set them side by side, test by test, as
// InnoDB's and MyRocks' runs of one build and config are. Within a label it
// is as Conditions.
func (r Run) LabelConditions() string {
	if r.OtherStorageEngine() == "" {
		return r.Conditions()
	}
	var kv []string
	for _, c := range strings.Split(r.Conditions(), ",") {
		if !strings.HasPrefix(c, "engine=") {
			kv = append(kv, c)
		}
	}
	return strings.Join(kv, ",")
}

// ConditionsDiff says how two Conditions differ: "loop=closed against
// loop=open, rate=30000 against -", "" when they do not.
func ConditionsDiff(a, b string) string {
	split := func(s string) map[string]string {
		m := map[string]string{}
		for _, kv := range strings.Split(s, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				m[k] = v
			}
		}
		return m
	}
	ma, mb := split(a), split(b)
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		va, oka := ma[k]
		vb, okb := mb[k]
		if va == vb && oka == okb {
			continue
		}
		if !oka {
			va = "-"
		}
		if !okb {
			vb = "-"
		}
		out = append(out, fmt.Sprintf("%s=%s against %s=%s", k, va, k, vb))
	}
	return strings.Join(out, ", ")
}

// Check refuses a run whose figures no measurement gives: non-finite or
// negative numbers, in its totals, per-kind figures, samples and hardware
// cost (what a hand-edited or foreign results file may hold). The error
// names the figure and its value.
func (r Run) Check() error {
	bad := func(what string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%s %s: %s is %v: a measured figure is finite and not negative", r.Test, r.Build, what, v)
		}
		return nil
	}
	lat := func(what string, l Latency) error {
		for _, f := range []struct {
			n string
			v float64
		}{{"min", l.Min}, {"mean", l.Mean}, {"p50", l.P50}, {"p90", l.P90}, {"p95", l.P95}, {"p99", l.P99}, {"p99.9", l.P999}, {"max", l.Max}, {"count", float64(l.Count)}} {
			if err := bad(what+" "+f.n, f.v); err != nil {
				return err
			}
		}
		return nil
	}
	t := r.Totals
	for _, f := range []struct {
		n string
		v float64
	}{
		{"seconds", t.Seconds}, {"events", float64(t.Events)}, {"statements", float64(t.Statements)}, {"rows", float64(t.Rows)},
		{"errors", float64(t.Errors)}, {"retries", float64(t.Retries)}, {"late", float64(t.Late)}, {"tps", t.TPS}, {"qps", t.QPS},
		{"rows/s", t.RowsPerSec}, {"reported", t.Reported}, {"rate", r.Rate}, {"warmup", r.Warmup}, {"duration", r.Duration},
		{"threads", float64(r.Threads)},
	} {
		if err := bad(f.n, f.v); err != nil {
			return err
		}
	}
	if err := lat("response", t.Response); err != nil {
		return err
	}
	if err := lat("service", t.Service); err != nil {
		return err
	}
	for _, o := range t.Ops {
		if err := bad(o.Kind+" rate", o.Rate); err != nil {
			return err
		}
		if err := lat(o.Kind+" response", o.Response); err != nil {
			return err
		}
	}
	for _, s := range r.Samples {
		if err := lat(fmt.Sprintf("second %d response", s.Second), s.Response); err != nil {
			return err
		}
		for _, c := range []int64{s.Events, s.Statements, s.Rows, s.Errors, s.Late, s.Backlog} {
			if err := bad(fmt.Sprintf("second %d count", s.Second), float64(c)); err != nil {
				return err
			}
		}
		if err := bad(fmt.Sprintf("second %d length", s.Second), s.Dur); err != nil || s.Dur > 1 {
			return fmt.Errorf("%s %s: second %d covers %v s: a sample covers at most a second", r.Test, r.Build, s.Second, s.Dur)
		}
	}
	for _, rd := range r.Rounds {
		for _, f := range []struct {
			n string
			v float64
		}{{"seconds", rd.Seconds}, {"value", rd.Value}, {"events", float64(rd.Events)}, {"statements", float64(rd.Statements)}, {"rows", float64(rd.Rows)}} {
			if err := bad(fmt.Sprintf("round %d.%d %s", rd.Repeat, rd.Round, f.n), f.v); err != nil {
				return err
			}
		}
		for name, v := range rd.Figures {
			if err := bad(fmt.Sprintf("round %d.%d %s", rd.Repeat, rd.Round, name), v); err != nil {
				return err
			}
		}
		if math.IsNaN(rd.IdleCPU) || math.IsInf(rd.IdleCPU, 0) {
			return fmt.Errorf("%s %s: round %d.%d idle CPU is %v: a measured figure is finite", r.Test, r.Build, rd.Repeat, rd.Round, rd.IdleCPU)
		}
	}
	// Every registered figure the run has: its hardware cost per op, the
	// suites' own figures.
	for _, m := range All() {
		if v, ok := m.Of(r); ok {
			if err := bad(m.Name, v); err != nil {
				return err
			}
		}
	}
	if h := r.HW; h != nil {
		if err := h.Server.check(); err != nil {
			return fmt.Errorf("%s %s: %w", r.Test, r.Build, err)
		}
	}
	return nil
}
