// Package result owns the one versioned result type that the engine emits and
// that everything downstream (the JSON files, the store, compare, report,
// import) speaks. It holds data and its encoding only: no measuring, no I/O
// beyond reading and writing a result file.
package result

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// SchemaVersion is bumped whenever a field changes meaning.
// Version 2: hardware cost per operation (HW) replaced Totals' client CPU
// fields, and the load is a run of its own (test "load", rows/s).
const SchemaVersion = 2

// Latency summarises a latency distribution, in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min_us"`
	Mean  float64 `json:"mean_us"`
	P50   float64 `json:"p50_us"`
	P95   float64 `json:"p95_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
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
	Response   Latency `json:"response"` // from the intended start (open loop); the same as Service in closed loop
	Service    Latency `json:"service"`  // from the actual send
	// HDR histograms (HdrHistogram V2 compressed encoding, 1 µs to 1 h, 3
	// significant digits) of this second's service times and, in open loop,
	// response times.
	ServiceHist  []byte `json:"service_hist,omitempty"`
	ResponseHist []byte `json:"response_hist,omitempty"`
}

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
	// Reported is the number the reference harness reports for this test:
	// QPS, or Krows/s for scan (see docs/tests.md).
	Reported     float64 `json:"reported"`
	ReportedUnit string  `json:"reported_unit"`
	Response     Latency `json:"response"`
	Service      Latency `json:"service"`
	ResponseHist []byte  `json:"response_hist,omitempty"`
	ServiceHist  []byte  `json:"service_hist,omitempty"`
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
	NoDisk bool       `json:"no_disk,omitempty"`
	Flags  []Flag     `json:"flags,omitempty"`
	Notes  []string   `json:"notes,omitempty"` // what could not be measured, and why
	Series []HWSecond `json:"series,omitempty"`
}

// HWSecond is one sampling interval (about a second), or the window's average.
type HWSecond struct {
	T          float64 `json:"t"`   // start, seconds after the window opened
	Dur        float64 `json:"dur"` // length in seconds
	User       float64 `json:"us"`
	System     float64 `json:"sy"`
	IOWait     float64 `json:"wa"`
	Steal      float64 `json:"st"`
	Idle       float64 `json:"id"`
	CS         float64 `json:"cs"`
	Intr       float64 `json:"in"`
	Reads      float64 `json:"r/s"`
	ReadKB     float64 `json:"rkB/s"`
	Writes     float64 `json:"w/s"`
	WriteKB    float64 `json:"wkB/s"`
	RareqSz    float64 `json:"rareq-sz"`
	WareqSz    float64 `json:"wareq-sz"`
	Util       float64 `json:"%util"`
	ServerCPU  float64 `json:"server_cpu_pct"`
	ClientCPU  float64 `json:"client_cpu_pct"`
	ServerRSS  uint64  `json:"server_rss_kb"`
	FreqMHz    float64 `json:"freq_mhz,omitempty"`
	ServerProc int     `json:"server_procs"`
}

// Flag is a condition of the run that puts its numbers at risk.
type Flag struct {
	Name   string `json:"name"` // frequency-drift, steal
	Detail string `json:"detail"`
}

// Run is one test at one thread count against one build × config.
type Run struct {
	SchemaVersion int               `json:"schema_version"`
	QpslabVersion string            `json:"qpslab_version"`
	Suite         string            `json:"suite"` // sysbench
	Test          string            `json:"test"`  // label as result tables print it: point-query_range=100
	Params        map[string]string `json:"params"`
	Seed          uint64            `json:"seed"`
	Build         string            `json:"build"`
	Flavor        string            `json:"flavor"`
	Version       string            `json:"version"`
	Config        string            `json:"config"` // name@hash
	Threads       int               `json:"threads"`
	Loop          string            `json:"loop"` // closed or open
	Rate          float64           `json:"rate,omitempty"`
	Arrivals      string            `json:"arrivals,omitempty"`
	Warmup        float64           `json:"warmup_seconds"`
	Duration      float64           `json:"duration_seconds"`
	Started       time.Time         `json:"started"`
	Ended         time.Time         `json:"ended"`
	// Host is the fingerprint of the machine the run ran on: qpslab host
	// check's JSON (kernel, CPU model, cores, memory, cpufreq state, risks).
	Host    json.RawMessage `json:"host,omitempty"`
	Status  string          `json:"status"` // ok, failed, aborted
	Error   string          `json:"error,omitempty"`
	Totals  Totals          `json:"totals"`
	HW      *HW             `json:"hw,omitempty"`
	Samples []Sample        `json:"samples"`
}

// Statuses of a run.
const (
	OK      = "ok"
	Failed  = "failed"
	Aborted = "aborted"
)

// File is what `qpslab run` writes: every run of one invocation.
type File struct {
	SchemaVersion int   `json:"schema_version"`
	Runs          []Run `json:"runs"`
}

// Write writes runs to path as JSON, atomically.
func Write(path string, runs []Run) error {
	b, err := json.MarshalIndent(File{SchemaVersion: SchemaVersion, Runs: runs}, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write results %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// Read reads a result file, refusing versions it does not know.
func Read(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("read results: %w", err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, fmt.Errorf("read results %s: %w", path, err)
	}
	if f.SchemaVersion != SchemaVersion {
		return File{}, fmt.Errorf("results %s have schema version %d, this qpslab reads %d: use a matching qpslab", path, f.SchemaVersion, SchemaVersion)
	}
	return f, nil
}

// Measured says whether the hardware figures were measured: two snapshots
// at least and an operation rate. An unmeasured window is no zero cost.
func (h *HW) Measured() bool { return h != nil && h.Samples >= 2 && h.OpsPerSec > 0 }

// Comparable says whether a run counts in comparisons and histories: it
// ended ok and is not one of the reference's unreported warm-up steps.
func (r Run) Comparable() bool {
	return r.Status == OK && r.Params["warm"] != "true" && !strings.Contains(r.Test, ".warm")
}

// ConfigName is a config id's name: "default@0123456789ab" → "default".
func ConfigName(id string) string {
	if i := strings.Index(id, "@"); i >= 0 {
		return id[:i]
	}
	return id
}

// Ops is a second's operations in the unit of a run's reported figure:
// statements for QPS, events otherwise (a scan, whose Krows/s is derived
// from latency, or a load).
func (s Sample) Ops(unit string) float64 {
	if unit == "qps" {
		return float64(s.Statements)
	}
	return float64(s.Events)
}
