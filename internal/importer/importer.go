// Package importer owns turning benchmark results that qpslab did not run
// into result.Run values, so they can be stored and compared with qpslab's
// own: the text a sysbench 1.0.x or 1.1.x `run` prints (Sysbench), and the
// result folders of the reference harness, mdcallag/mytools
// bench/sysbench.lua (Mytools; docs/reference.md describes their files).
//
// It reads files only: it stores nothing and runs nothing. Every importer
// returns either all of its runs or one error that names the file, the line
// and what was wrong with it; nothing is half-imported.
//
// No library parses these formats, so the parsing here is hand-written,
// following what sysbench's report code and run.sh/an.sh print.
//
// What an import cannot know is left zero: Started and Ended (sysbench prints
// no wall-clock times), Seed, Host, histograms, rows, and everything in HW
// that an.sh does not compute.
package importer

import (
	"fmt"
	"math"
	"strconv"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/version"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// Source is where imported results go: a build name and a config name (as
// `qpslab` labels results build.config).
type Source struct {
	Build, Config string
}

// fileError is an import error in one file: `import <kind> <file>:<line>:
// <what>`. Line 0 leaves the line out (the file as a whole is wrong).
type fileError struct {
	kind, file string
	line       int
	msg        string
}

func (e *fileError) Error() string {
	if e.line <= 0 {
		return fmt.Sprintf("import %s %s: %s", e.kind, e.file, e.msg)
	}
	return fmt.Sprintf("import %s %s:%d: %s", e.kind, e.file, e.line, e.msg)
}

func errorf(kind, file string, line int, format string, args ...any) error {
	return &fileError{kind: kind, file: file, line: line, msg: fmt.Sprintf(format, args...)}
}

// lookup finds the qpslab test a label names.
func lookup(label string) (sysbench.Test, error) { return sysbench.Lookup(label) }

// newRun fills what every imported run shares: what the suite says of
// the test (its groups, role and place in the order, sysbench.Stamp) and
// where the numbers came from.
func newRun(t sysbench.Test, src Source, source, file string) result.Run {
	r := result.Run{
		SchemaVersion: result.SchemaVersion,
		QpslabVersion: version.Version, // the importing qpslab; Params["source"] says where the numbers came from
		Test:          t.Label(),
		Build:         src.Build,
		Config:        src.Config,
		Loop:          "closed",
		Status:        result.OK,
		Params:        map[string]string{"source": source, "file": file},
		// Started and Ended stay zero: sysbench prints no wall-clock times.
	}
	sysbench.Stamp(&r) // t came from Lookup: it is the suite's
	return r
}

// setSeries says which sample counter follows a run's headline figure:
// statements for QPS, events for scan's Krows/s (one scan is one event).
func setSeries(t *result.Totals) {
	t.Series = result.SeriesStatements
	if t.ReportedUnit != "qps" {
		t.Series = result.SeriesEvents
	}
}

// reportedUnit is the unit of Totals.Reported for a test, and the HW op.
func reportedUnit(t sysbench.Test) (unit, op string) {
	if t.Krows {
		return "Krows/s", "Krow"
	}
	return "qps", "statement"
}

// krowsPerSec is scan's reported figure as the reference computes it since
// run.sh commit 59c1b9cd (and the sysbench suite too): thousands of rows of
// one table per second of one scan, from sysbench's average event latency
// in ms.
func krowsPerSec(tableSize int64, avgMs float64) float64 {
	return sysbench.KrowsPerSec(float64(tableSize)/1000, avgMs*1000)
}

// msToUs converts sysbench's milliseconds (two decimals) to microseconds,
// rounded to a nanosecond so 0.07 ms reads 70 µs, not 70.00000000000001.
func msToUs(ms float64) float64 { return math.Round(ms*1e6) / 1e3 }

// number parses a finite decimal; sysbench and awk print nan and inf when
// they divide by zero, which JSON cannot hold.
func number(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

func count(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	return v, nil
}
