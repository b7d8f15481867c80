package dbbench

import (
	"github.com/qpslab/qpslab/internal/result"
)

// db_bench's own figures (result.Register): the columns of RocksDB's
// benchmark.sh report.tsv (Output.Figures computes them into
// Totals.Figures), and the disk's request sizes, which explain what
// compaction reads cost.
func init() {
	result.Register(
		result.Metric{Name: "ops_sec", Unit: "ops/s", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.0f", Suite: Name,
			Help: "operations per second, as db_bench printed it (its headline)"},
		result.Metric{Name: "usec_op", Unit: "µs", Per: "op", Class: result.ClassFigure, Verb: "%.3f", Suite: Name,
			Help: "microseconds per operation, as db_bench printed it (micros/op)"},
		result.Metric{Name: "mb_sec", Unit: "MB/s", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.1f", Suite: Name,
			Help: "MB of keys and values per second, as db_bench printed it"},
		result.Metric{Name: "p75", Unit: "µs", Per: "op", Class: result.ClassLatency, Verb: "%.1f", Suite: Name, Help: "75th percentile response time (--histogram)"},
		result.Metric{Name: "p99.9", Unit: "µs", Per: "op", Class: result.ClassLatency, Verb: "%.0f", Suite: Name, Help: "99.9th percentile response time (--histogram)"},
		result.Metric{Name: "p99.99", Unit: "µs", Per: "op", Class: result.ClassLatency, Verb: "%.0f", Suite: Name, Help: "99.99th percentile response time (--histogram)"},
		result.Metric{Name: "pmax", Unit: "µs", Per: "op", Class: result.ClassLatency, Verb: "%.0f", Suite: Name, Help: "largest response time (--histogram)"},
		result.Metric{Name: "w_amp", Per: "byte", Class: result.ClassFigure, Verb: "%.2f", Suite: Name,
			Help: "write amplification: bytes written by flush and compaction per byte flushed (RocksDB's W-Amp)"},
		result.Metric{Name: "c_wgb", Unit: "GB", Per: "step", Class: result.ClassFigure, Verb: "%.2f", Suite: Name, Help: "GB written by compaction"},
		result.Metric{Name: "c_mbps", Unit: "MB/s", Per: "s", Class: result.ClassFigure, Verb: "%.1f", Suite: Name, Help: "compaction's average write rate"},
		result.Metric{Name: "c_wsecs", Unit: "s", Per: "step", Class: result.ClassFigure, Verb: "%.0f", Suite: Name, Help: "wall-clock seconds of compaction"},
		result.Metric{Name: "c_csecs", Unit: "s", Per: "step", Class: result.ClassFigure, Verb: "%.0f", Suite: Name, Help: "CPU seconds of compaction"},
		result.Metric{Name: "lsm_gb", Unit: "GB", Per: "step", Class: result.ClassFigure, Verb: "%.2f", Suite: Name, Help: "size of the LSM tree after the step"},
		result.Metric{Name: "stall%", Unit: "%", Per: "s", Class: result.ClassFigure, Verb: "%.1f", Suite: Name, Help: "share of the time writes were stalled"},
		result.Metric{Name: "stall_secs", Unit: "s", Per: "step", Class: result.ClassFigure, Verb: "%.1f", Suite: Name, Help: "seconds writes were stalled"},
		result.Metric{Name: "nstall", Per: "step", Class: result.ClassFigure, Verb: "%.0f", Suite: Name, Help: "write stalls and stops (benchmark.sh's Nstall)"},
		result.Metric{Name: "rareq-sz", Unit: "KB", HigherIsBetter: true, Per: "request", Class: result.ClassDevice, Verb: "%.1f", Suite: Name,
			Of:   disk(func(a result.HWSecond) float64 { return a.RareqSz }),
			Help: "average read request size of the datadir's disk (iostat's rareq-sz): compaction readahead split into small requests shows here"},
		result.Metric{Name: "wareq-sz", Unit: "KB", HigherIsBetter: true, Per: "request", Class: result.ClassDevice, Verb: "%.1f", Suite: Name,
			Of:   disk(func(a result.HWSecond) float64 { return a.WareqSz }),
			Help: "average write request size of the datadir's disk (iostat's wareq-sz)"},
	)
}

// disk is a disk figure of a db_bench run (one that carries db_bench's
// figures) whose disk was measured.
func disk(f func(result.HWSecond) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if _, ok := r.Totals.Figures["usec_op"]; !ok || !r.HW.Measured() || r.HW.NoDisk {
			return 0, false
		}
		return f(r.HW.Avg), true
	}
}
