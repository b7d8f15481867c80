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
		result.Metric{Name: "ops_sec", Max: result.MaxRate, Unit: "ops/s", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.0f", Suite: Name,
			Help: "operations per second, as db_bench printed it (its headline)"},
		result.Metric{Name: "usec_op", Max: result.DayUs, Unit: "µs", Per: "op", Class: result.ClassFigure, Verb: "%.3f", Suite: Name,
			Help: "microseconds per operation, as db_bench printed it (micros/op)"},
		result.Metric{Name: "mb_sec", Max: 1e8, Unit: "MB/s", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.1f", Suite: Name,
			Help: "MB of keys and values per second, as db_bench printed it"},
		result.Metric{Name: "p75", Max: result.DayUs, Unit: "µs", Per: "op", Class: result.ClassLatency, Verb: "%.1f", Suite: Name, Help: "75th percentile response time (--histogram)"},
		result.Metric{Name: "p99.9", Max: result.DayUs, Unit: "µs", Per: "op", Class: result.ClassLatency, Verb: "%.0f", Suite: Name, Help: "99.9th percentile response time (--histogram)"},
		result.Metric{Name: "p99.99", Max: result.DayUs, Unit: "µs", Per: "op", Class: result.ClassLatency, Verb: "%.0f", Suite: Name, Help: "99.99th percentile response time (--histogram)"},
		result.Metric{Name: "pmax", Max: result.DayUs, Unit: "µs", Per: "op", Class: result.ClassLatency, Verb: "%.0f", Suite: Name, Help: "largest response time (--histogram)"},
		result.Metric{Name: "w_amp", Max: 1e6, Per: "byte", Class: result.ClassFigure, Verb: "%.2f", Suite: Name,
			Help: "write amplification: bytes written by flush and compaction per byte flushed (RocksDB's W-Amp)"},
		result.Metric{Name: "c_wgb", Max: 1e7, Unit: "GB", Per: "step", Class: result.ClassFigure, Verb: "%.2f", Suite: Name, Help: "GB written by compaction"},
		result.Metric{Name: "c_mbps", Max: 1e8, Unit: "MB/s", Per: "s", Class: result.ClassFigure, Verb: "%.1f", Suite: Name, Help: "compaction's average write rate"},
		result.Metric{Name: "c_wsecs", Max: 1e8, Unit: "s", Per: "step", Class: result.ClassFigure, Verb: "%.0f", Suite: Name, Help: "wall-clock seconds of compaction"},
		result.Metric{Name: "c_csecs", Max: 1e9, Unit: "s", Per: "step", Class: result.ClassFigure, Verb: "%.0f", Suite: Name, Help: "CPU seconds of compaction"},
		result.Metric{Name: "lsm_gb", Max: 1e7, Unit: "GB", Per: "step", Class: result.ClassFigure, Verb: "%.2f", Suite: Name, Help: "size of the LSM tree after the step"},
		result.Metric{Name: "stall%", Max: 100, Unit: "%", Per: "s", Class: result.ClassFigure, Verb: "%.1f", Suite: Name, Help: "share of the time writes were stalled"},
		result.Metric{Name: "stall_secs", Max: 1e8, Unit: "s", Per: "step", Class: result.ClassFigure, Verb: "%.1f", Suite: Name, Help: "seconds writes were stalled"},
		result.Metric{Name: "nstall", Max: 1e12, Per: "step", Class: result.ClassFigure, Verb: "%.0f", Suite: Name, Help: "write stalls and stops (benchmark.sh's Nstall)"},
		result.Metric{Name: FigureReadaheadKB, Max: 1 << 22, Unit: "KB", Per: "run", Class: result.ClassDevice, Verb: "%.0f", Suite: Name,
			Help: "compaction_readahead_size the db_bench ran with, as RocksDB wrote it in the database's OPTIONS file (0: none of its own; the file system's read-ahead then applies to buffered reads)"},
		result.Metric{Name: FigureMaxSectorsKB, Max: 1 << 22, Unit: "KB", Per: "run", Class: result.ClassDevice, Verb: "%.0f", Suite: Name,
			Help: "max_sectors_kb of the datadir's disk (the smallest under a RAID or device-mapper device): the largest request it takes whole; a compaction readahead above it is split (RocksDB issue 12038)"},
		result.Metric{Name: "rareq-sz", Max: 1e8, Unit: "KB", HigherIsBetter: true, Per: "request", Class: result.ClassDevice, Verb: "%.1f", Suite: Name,
			Of:   disk(func(a result.HWSecond) float64 { return a.RareqSz }),
			Help: "average read request size of the datadir's disk (iostat's rareq-sz): compaction readahead split into small requests shows here"},
		result.Metric{Name: "wareq-sz", Max: 1e8, Unit: "KB", HigherIsBetter: true, Per: "request", Class: result.ClassDevice, Verb: "%.1f", Suite: Name,
			Of:   disk(func(a result.HWSecond) float64 { return a.WareqSz }),
			Help: "average write request size of the datadir's disk (iostat's wareq-sz)"},
	)
}

// The readahead study's figures of each db_bench run: the effective
// compaction readahead, and the largest request the datadir's disk takes.
const (
	FigureReadaheadKB  = "readahead_kb"
	FigureMaxSectorsKB = "max_sectors_kb"
)

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
