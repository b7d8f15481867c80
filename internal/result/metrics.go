package result

import (
	"fmt"
	"math"
	"strings"
)

// Metric is one figure of a run that can be compared, followed over
// history and printed: the one catalogue that history, analysis, report,
// the CLI lines and detect's --metric use.
type Metric struct {
	Name           string // as users type it: qps, p99, cpu/o, insert/s, insert.p99
	Header         string // as table headers print it ("" is Name)
	Unit           string // "" where the run says (the headline's ReportedUnit)
	HigherIsBetter bool
	Per            string // what it is counted per: the headline's op, an event, a second
	Class          string // ClassFigure, ClassLatency, ClassHW or ClassCPU
	Help           string
	Verb           string // fmt verb for Format (default %.3g)
	// Of returns the figure of r, and false where r does not have it (not
	// measured is not zero).
	Of func(Run) (float64, bool)
}

// Metric classes: the headline figures, latencies, the seeds' per-op
// hardware columns (sum_met.sh) and CPU time per op in honest units.
const (
	ClassFigure  = "figure"
	ClassLatency = "latency"
	ClassHW      = "hw"
	ClassCPU     = "cpu"
)

// Label is the metric's table header.
func (m Metric) Label() string {
	if m.Header != "" {
		return m.Header
	}
	return m.Name
}

// Format prints v as the metric's tables do; "-" for a missing value.
func (m Metric) Format(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	verb := m.Verb
	if verb == "" {
		verb = "%.3g"
	}
	return fmt.Sprintf(verb, v)
}

func headline(r Run) (float64, bool) { return r.Totals.Reported, r.Totals.Reported > 0 }

func perSec(f func(Totals) float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		if r.Totals.Seconds <= 0 {
			return 0, false
		}
		return f(r.Totals), true
	}
}

func latency(f func(Latency) float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		if r.Totals.Response.Count == 0 {
			return 0, false
		}
		return f(r.Totals.Response) / 1000, true
	}
}

// hwOf is a hardware figure; a run whose window was not measured lacks it.
func hwOf(f func(*HW) float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		if !r.HW.Measured() {
			return 0, false
		}
		return f(r.HW), true
	}
}

// diskOf is a disk figure, which a run without a measured disk lacks.
func diskOf(f func(*HW) float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		if !r.HW.Measured() || r.HW.NoDisk {
			return 0, false
		}
		return f(r.HW), true
	}
}

// cpuOf is a CPU time per op, which an import of the reference's figures
// lacks.
func cpuOf(f func(*HW) float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		if !r.HW.Measured() || r.HW.NoCPUTime {
			return 0, false
		}
		return f(r.HW), true
	}
}

// Catalog is every metric a run can have, in the order tables list them.
// Per-operation-kind metrics (KIND/s, KIND.p99, …) come from OpMetric.
var Catalog = []Metric{
	{Name: "qps", Header: "QPS", HigherIsBetter: true, Per: "s", Class: ClassFigure, Verb: "%.1f", Of: headline,
		Help: "the step's reported figure, in its unit: statements/s (sysbench), Krows/s (scan), rows/s (a load)"},
	{Name: "tps", Header: "TPS", Unit: "events/s", HigherIsBetter: true, Per: "s", Class: ClassFigure, Verb: "%.1f",
		Of: perSec(func(t Totals) float64 { return t.TPS }), Help: "events (transactions) per second"},
	{Name: "rows/s", Header: "ROWS/S", Unit: "rows/s", HigherIsBetter: true, Per: "s", Class: ClassFigure, Verb: "%.0f",
		Of: perSec(func(t Totals) float64 { return t.RowsPerSec }), Help: "rows read or changed per second"},
	{Name: "p50", Unit: "ms", Per: "event", Class: ClassLatency, Of: latency(func(l Latency) float64 { return l.P50 }), Help: "median response time"},
	{Name: "p95", Unit: "ms", Per: "event", Class: ClassLatency, Of: latency(func(l Latency) float64 { return l.P95 }), Help: "95th percentile response time"},
	{Name: "p99", Unit: "ms", Per: "event", Class: ClassLatency, Of: latency(func(l Latency) float64 { return l.P99 }), Help: "99th percentile response time"},
	{Name: "max", Unit: "ms", Per: "event", Class: ClassLatency, Of: latency(func(l Latency) float64 { return l.Max }), Help: "largest response time"},
	{Name: "cpu/o", Per: "op", Class: ClassHW, Verb: "%.6f", Of: hwOf(func(h *HW) float64 { return h.CPUPerOp }),
		Help: "avg(us+sy) / (o/s), vmstat's % of the whole host per op/s (the reference's cpu/o)"},
	{Name: "cs/o", Per: "op", Class: ClassHW, Verb: "%.3f", Of: hwOf(func(h *HW) float64 { return h.CSPerOp }), Help: "context switches per op"},
	{Name: "r/o", Per: "op", Class: ClassHW, Verb: "%.4f", Of: diskOf(func(h *HW) float64 { return h.ReadsPerOp }), Help: "disk reads per op"},
	{Name: "rKB/o", Unit: "KB", Per: "op", Class: ClassHW, Verb: "%.3f", Of: diskOf(func(h *HW) float64 { return h.ReadKBPerOp }), Help: "KB read from disk per op"},
	{Name: "wKB/o", Unit: "KB", Per: "op", Class: ClassHW, Verb: "%.3f", Of: diskOf(func(h *HW) float64 { return h.WriteKBPerOp }), Help: "KB written to disk per op"},
	{Name: "o/s", HigherIsBetter: true, Per: "s", Class: ClassHW, Verb: "%.0f", Of: hwOf(func(h *HW) float64 { return h.OpsPerSec }), Help: "ops per second the per-op figures divide by"},
	{Name: "host_cpu_us/o", Header: "host µs/o", Unit: "µs", Per: "op", Class: ClassCPU, Verb: "%.1f", Of: cpuOf(func(h *HW) float64 { return h.HostCPUUsOp }), Help: "CPU time per op, whole host"},
	{Name: "server_cpu_us/o", Header: "server µs/o", Unit: "µs", Per: "op", Class: ClassCPU, Verb: "%.1f", Of: cpuOf(func(h *HW) float64 { return h.ServerCPUUsOp }), Help: "CPU time per op of the server's process tree"},
	{Name: "client_cpu_us/o", Header: "client µs/o", Unit: "µs", Per: "op", Class: ClassCPU, Verb: "%.1f", Of: cpuOf(func(h *HW) float64 { return h.ClientCPUUsOp }), Help: "CPU time per op of qpslab's client"},
}

// perInsert is a hardware figure per inserted row of a run whose events
// include inserts (the Insert Benchmark's wKB/i and friends, which the
// reference divides by the insert rate in every step).
func perInsert(disk bool, f func(HWSecond) float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		if !r.HW.Measured() || (disk && r.HW.NoDisk) || r.Totals.Seconds <= 0 {
			return 0, false
		}
		ins, ok := r.Totals.Op("insert")
		if !ok || r.Totals.Rows == 0 || ins.Count == 0 {
			return 0, false
		}
		return f(r.HW.Avg) / (float64(r.Totals.Rows) / r.Totals.Seconds), true
	}
}

// figure is one of the suite's own figures (Totals.Figures).
func figure(name string) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		v, ok := r.Totals.Figures[name]
		return v, ok
	}
}

// InsertCatalog are the metrics of runs that insert beside other work
// (the Insert Benchmark): per inserted row whatever the step's headline
// counts, and the suite's own figures. They follow Catalog in tables.
var InsertCatalog = []Metric{
	{Name: "ips", Header: "IPS", Unit: "rows/s", HigherIsBetter: true, Per: "s", Class: ClassFigure, Verb: "%.0f",
		Of: figure("ips"), Help: "rows inserted per second over the step (the Insert Benchmark's IPS)"},
	{Name: "sla%", Unit: "%", HigherIsBetter: true, Per: "s", Class: ClassFigure, Verb: "%.1f",
		Of: figure("sla%"), Help: "share of whole seconds whose insert rate reached 95 % of the target (read+write steps)"},
	{Name: "db_mb", Header: "db MB", Unit: "MB", Per: "step", Class: ClassFigure, Verb: "%.1f",
		Of: figure("db_mb"), Help: "the tables' size after the step, as the server counts it (data and indexes)"},
	{Name: "datadir_mb", Header: "dir MB", Unit: "MB", Per: "step", Class: ClassFigure, Verb: "%.1f",
		Of: figure("datadir_mb"), Help: "the datadir's size on disk after the step (du)"},
	{Name: "cpu/i", Per: "insert", Class: ClassHW, Verb: "%.6f", Of: perInsert(false, func(a HWSecond) float64 { return a.User + a.System }),
		Help: "avg(us+sy) / (rows inserted/s): cpu/o per inserted row"},
	{Name: "cs/i", Per: "insert", Class: ClassHW, Verb: "%.3f", Of: perInsert(false, func(a HWSecond) float64 { return a.CS }), Help: "context switches per inserted row"},
	{Name: "rKB/i", Unit: "KB", Per: "insert", Class: ClassHW, Verb: "%.3f", Of: perInsert(true, func(a HWSecond) float64 { return a.ReadKB }), Help: "KB read per inserted row"},
	{Name: "wKB/i", Unit: "KB", Per: "insert", Class: ClassHW, Verb: "%.3f", Of: perInsert(true, func(a HWSecond) float64 { return a.WriteKB }), Help: "KB written per inserted row (the reference's wkbpi, in every step)"},
}

// DbBenchCatalog are the metrics of db_bench runs: the columns of RocksDB's
// benchmark.sh report.tsv (the suite's own figures, Totals.Figures), and
// the disk's request sizes, which explain what compaction reads cost. They
// follow Catalog in tables.
var DbBenchCatalog = []Metric{
	{Name: "ops_sec", Header: "ops/s", Unit: "ops/s", HigherIsBetter: true, Per: "s", Class: ClassFigure, Verb: "%.0f",
		Of: figure("ops_sec"), Help: "operations per second, as db_bench printed it (its headline)"},
	{Name: "usec_op", Header: "µs/op", Unit: "µs", Per: "op", Class: ClassFigure, Verb: "%.3f",
		Of: figure("usec_op"), Help: "microseconds per operation, as db_bench printed it (micros/op)"},
	{Name: "mb_sec", Header: "MB/s", Unit: "MB/s", HigherIsBetter: true, Per: "s", Class: ClassFigure, Verb: "%.1f",
		Of: figure("mb_sec"), Help: "MB of keys and values per second, as db_bench printed it"},
	{Name: "p75", Unit: "µs", Per: "op", Class: ClassLatency, Verb: "%.1f", Of: figure("p75"), Help: "75th percentile response time (--histogram)"},
	{Name: "p99.9", Unit: "µs", Per: "op", Class: ClassLatency, Verb: "%.0f", Of: figure("p99.9"), Help: "99.9th percentile response time (--histogram)"},
	{Name: "p99.99", Unit: "µs", Per: "op", Class: ClassLatency, Verb: "%.0f", Of: figure("p99.99"), Help: "99.99th percentile response time (--histogram)"},
	{Name: "pmax", Unit: "µs", Per: "op", Class: ClassLatency, Verb: "%.0f", Of: figure("pmax"), Help: "largest response time (--histogram)"},
	{Name: "w_amp", Header: "w-amp", Per: "byte", Class: ClassFigure, Verb: "%.2f",
		Of: figure("w_amp"), Help: "write amplification: bytes written by flush and compaction per byte flushed (RocksDB's W-Amp)"},
	{Name: "c_wgb", Header: "c GB", Unit: "GB", Per: "step", Class: ClassFigure, Verb: "%.2f", Of: figure("c_wgb"), Help: "GB written by compaction"},
	{Name: "c_mbps", Unit: "MB/s", Per: "s", Class: ClassFigure, Verb: "%.1f", Of: figure("c_mbps"), Help: "compaction's average write rate"},
	{Name: "c_wsecs", Unit: "s", Per: "step", Class: ClassFigure, Verb: "%.0f", Of: figure("c_wsecs"), Help: "wall-clock seconds of compaction"},
	{Name: "c_csecs", Unit: "s", Per: "step", Class: ClassFigure, Verb: "%.0f", Of: figure("c_csecs"), Help: "CPU seconds of compaction"},
	{Name: "lsm_gb", Header: "LSM GB", Unit: "GB", Per: "step", Class: ClassFigure, Verb: "%.2f", Of: figure("lsm_gb"), Help: "size of the LSM tree after the step"},
	{Name: "stall%", Unit: "%", Per: "s", Class: ClassFigure, Verb: "%.1f", Of: figure("stall%"), Help: "share of the time writes were stalled"},
	{Name: "stall_secs", Unit: "s", Per: "step", Class: ClassFigure, Verb: "%.1f", Of: figure("stall_secs"), Help: "seconds writes were stalled"},
	{Name: "nstall", Per: "step", Class: ClassFigure, Verb: "%.0f", Of: figure("nstall"), Help: "write stalls and stops (benchmark.sh's Nstall)"},
	{Name: "rareq-sz", Unit: "KB", HigherIsBetter: true, Per: "request", Class: ClassHW, Verb: "%.1f", Of: dbBenchDisk(func(a HWSecond) float64 { return a.RareqSz }),
		Help: "average read request size of the datadir's disk (iostat's rareq-sz): compaction readahead split into small requests shows here"},
	{Name: "wareq-sz", Unit: "KB", HigherIsBetter: true, Per: "request", Class: ClassHW, Verb: "%.1f", Of: dbBenchDisk(func(a HWSecond) float64 { return a.WareqSz }),
		Help: "average write request size of the datadir's disk (iostat's wareq-sz)"},
}

// dbBenchDisk is a disk figure of a db_bench run (one that carries
// db_bench's figures) whose disk was measured.
func dbBenchDisk(f func(HWSecond) float64) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		if _, ok := r.Totals.Figures["usec_op"]; !ok || !r.HW.Measured() || r.HW.NoDisk {
			return 0, false
		}
		return f(r.HW.Avg), true
	}
}

// OpMetrics are the per-operation-kind metric forms: KIND/s and the
// latencies KIND.p50 … KIND.max.
var OpMetrics = []string{"KIND/s", "KIND.p50", "KIND.p95", "KIND.p99", "KIND.max"}

// OpMetric is a metric of one operation kind: "insert/s" (its rate),
// "insert.p99" (its response time).
func OpMetric(name string) (Metric, bool) {
	if kind, ok := strings.CutSuffix(name, "/s"); ok && validKind(kind) {
		plural := kind + "s"
		if strings.HasSuffix(kind, "y") {
			plural = strings.TrimSuffix(kind, "y") + "ies" // queries
		}
		return Metric{Name: name, Unit: plural + "/s", HigherIsBetter: true, Per: "s", Class: ClassFigure, Verb: "%.1f",
			Help: kind + " operations per second",
			Of: func(r Run) (float64, bool) {
				o, ok := r.Totals.Op(kind)
				return o.Rate, ok && r.Totals.Seconds > 0
			}}, true
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || !validKind(name[:i]) {
		return Metric{}, false
	}
	kind, q := name[:i], name[i+1:]
	var f func(Latency) float64
	switch q {
	case "p50":
		f = func(l Latency) float64 { return l.P50 }
	case "p95":
		f = func(l Latency) float64 { return l.P95 }
	case "p99":
		f = func(l Latency) float64 { return l.P99 }
	case "max":
		f = func(l Latency) float64 { return l.Max }
	default:
		return Metric{}, false
	}
	return Metric{Name: name, Unit: "ms", Per: kind, Class: ClassLatency, Help: q + " response time of " + kind + " operations",
		Of: func(r Run) (float64, bool) {
			o, ok := r.Totals.Op(kind)
			if !ok || o.Response.Count == 0 {
				return 0, false
			}
			return f(o.Response) / 1000, true
		}}, true
}

func validKind(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// MetricNamed finds a metric of the catalogue, or a per-kind one.
func MetricNamed(name string) (Metric, error) {
	for _, m := range catalogs() {
		if m.Name == name {
			return m, nil
		}
	}
	if m, ok := OpMetric(name); ok {
		return m, nil
	}
	if m, ok := CounterMetric(name); ok {
		return m, nil
	}
	return Metric{}, fmt.Errorf("--metric %s: use one of %s", name, MetricNames())
}

// catalogs are every catalogue's metrics, in table order.
func catalogs() []Metric {
	out := append(Catalog[:len(Catalog):len(Catalog)], FigureCatalog...)
	out = append(out, InsertCatalog...)
	out = append(out, MemoryMetrics...)
	return append(out, DbBenchCatalog...)
}

// MetricNames lists the catalogue's names and the per-kind forms, for help
// texts and errors.
func MetricNames() string {
	var names []string
	for _, m := range catalogs() {
		names = append(names, m.Name)
	}
	names = append(names, OpMetrics...)
	return strings.Join(append(names, "COUNTER/o", "LEVEL.avg"), ", ")
}

// MetricsOf returns the catalogue's metrics of one class, in order.
func MetricsOf(class string) []Metric {
	var out []Metric
	for _, m := range Catalog {
		if m.Class == class {
			out = append(out, m)
		}
	}
	return out
}

// UnitOf is m's unit for run r: the metric's own, or the headline's.
func (m Metric) UnitOf(r Run) string {
	if m.Unit != "" || m.Class != ClassFigure {
		return m.Unit
	}
	return r.Totals.ReportedUnit
}
