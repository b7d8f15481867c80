package ibench

import (
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// The Insert Benchmark's own figures (result.Register): per inserted row
// whatever the step's headline counts, and what its steps compute
// (Totals.Figures: the insert rate, the SLA, the database's size after
// the step).
func init() {
	result.Register(
		result.Metric{Name: FigureIPS, Max: result.MaxRate, Unit: "rows/s", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.0f", Suite: Name,
			Help: "rows inserted per second over the step (the Insert Benchmark's IPS)"},
		result.Metric{Name: FigureSLA, Max: 100, Unit: "%", HigherIsBetter: true, Per: "s", Class: result.ClassFigure, Verb: "%.1f", Suite: Name,
			Help: "share of whole seconds whose insert rate reached 95 % of the target (read+write steps)"},
		result.Metric{Name: FigureDBMB, Max: 1e10, Unit: "MB", Per: "step", Class: result.ClassFigure, Verb: "%.1f", Suite: Name,
			Help: "the tables' size after the step, as the server counts it (data and indexes)"},
		result.Metric{Name: FigureLiveRows, Max: 1e13, Unit: "rows", Per: "step", Class: result.ClassFigure, Verb: "%.0f", Suite: Name,
			Help: "each table's max - min transactionid + 1 after the step, summed: the live rows the reference keeps constant from l.i1 on with a delete per insert"},
		result.Metric{Name: FigureDatadirMB, Max: 1e10, Unit: "MB", Per: "step", Class: result.ClassFigure, Verb: "%.1f", Suite: Name,
			Help: "the datadir's size on disk after the step (du)"},
		result.Metric{Name: "cpu/i", Max: 1e9, Per: "insert", Class: result.ClassInsert, Verb: "%.6f", Suite: Name,
			Of:   perInsert(false, func(a result.HWSecond) float64 { return a.User + a.System }),
			Help: "avg(us+sy) / (rows inserted/s): cpu/o per inserted row"},
		result.Metric{Name: "cs/i", Max: 1e9, Per: "insert", Class: result.ClassInsert, Verb: "%.3f", Suite: Name,
			Of: perInsert(false, func(a result.HWSecond) float64 { return a.CS }), Help: "context switches per inserted row"},
		result.Metric{Name: "rKB/i", Max: 1e12, Unit: "KB", Per: "insert", Class: result.ClassInsert, Verb: "%.3f", Suite: Name,
			Of: perInsert(true, func(a result.HWSecond) float64 { return a.ReadKB }), Help: "KB read per inserted row"},
		result.Metric{Name: "wKB/i", Max: 1e12, Unit: "KB", Per: "insert", Class: result.ClassInsert, Verb: "%.3f", Suite: Name,
			Of: perInsert(true, func(a result.HWSecond) float64 { return a.WriteKB }), Help: "KB written per inserted row (the reference's wkbpi, in every step)"},
	)
}

// The figures the steps compute (Totals.Figures), by their registered
// names.
const (
	FigureIPS       = "ips"
	FigureSLA       = "sla%"
	FigureDBMB      = "db_mb"
	FigureDatadirMB = "datadir_mb"
	FigureLiveRows  = "live_rows"
)

// VerdictLiveRows is the verdict of each step that deletes a row per
// insert: the tables' live rows stayed what l.x left.
const VerdictLiveRows = "live rows"

// perInsert is a hardware figure per inserted row of a run whose events
// include inserts (the Insert Benchmark's wKB/i and friends, which the
// reference divides by the insert rate in every step).
func perInsert(disk bool, f func(result.HWSecond) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
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

// StepTables are the reference's step tables: throughput, and the
// background insert rate of the read+write steps against their target.
func (ibenchSuite) StepTables() []suite.StepTable {
	return []suite.StepTable{
		{Metric: "qps", Title: "Throughput: rows/s for the load steps (indexed rows/s for l.x), queries/s for the read+write steps; * the column's best among steps that met their SLA, ! missed it", Relative: true},
		{Metric: FigureIPS, Title: "Background insert rate (rows/s) in the read+write steps; ! below 95 % of the target", Targets: true},
	}
}
