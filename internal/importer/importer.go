// Package importer owns turning benchmark results that qpslab did not run
// into result.Run values, so they can be stored and compared with qpslab's
// own: the text a sysbench 1.0.x or 1.1.x `run` prints (Sysbench), and the
// result folders of the reference harness, mdcallag/mytools
// bench/sysbench.lua (Mytools; docs/reference.md describes their files) and
// bench/ibench (Ibench: the Insert Benchmark's step folders).
//
// Validate is the one check every run stored from outside passes, what
// these importers read as a results file or a post to qpslab serve: the
// registries' suites and enums, names a page can show and a label can give
// back (validate.go).
//
// It reads files only: it stores nothing and runs nothing. Every importer
// returns either all of its runs or one error that names the file, the line
// and what was wrong with it; nothing is half-imported. A figure that is not
// finite, is negative or is out of range (see maxFigure) is such an error.
//
// No library parses these formats, so the parsing here is hand-written,
// following what sysbench's report code, run.sh/an.sh and, for the Insert
// Benchmark, np.sh, iibench.py and ios.sh print.
//
// What an import cannot know is left zero: Started and Ended (sysbench prints
// no wall-clock times) unless the Source gives a time, Seed, Host,
// histograms, rows, and everything in HW that an.sh does not compute. The
// build's version and flavor come from the Source, or else from the
// reference's build-name convention (ReferenceVersion).
//
// Groups: none of these formats carries a grouping of its own (the
// reference's scripts print none; docs/reference.md §1.5), so a run is
// written with its suite's placements, which are derived: the suite's
// layouts decide them again whenever the run is read (result.Placements).
// A grouping that comes with the data is marked result.Placement.Own and
// kept; today only a qpslab results file (or a posted one) can carry such
// placements ("own": true); the formats here never do.
package importer

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/input"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/version"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// Source is where imported results go, a build name and a config name (as
// `qpslab` labels results build.config), and what is known of the build.
type Source struct {
	Build, Config string
	// Flavor and Version are the build's (mariadb, 10.6.17). With no
	// Version, Resolve reads both from the build's name when it follows
	// the reference's convention.
	Flavor, Version string
	// Commit is the build's source commit, when known (Params["commit"]).
	Commit string
	// StorageEngine is the storage engine of the tables the results were
	// measured on (Params["engine"]), when the label names one.
	StorageEngine string
	// Time is when the results were measured (each run's Started); zero
	// when unknown, as sysbench and the reference's files do not say.
	Time time.Time
}

// Resolve fills Flavor and Version from the build's name when no version
// was given (ReferenceVersion), and Flavor alone when a version was given
// but no flavor. ok says whether the build has a version now.
func (s Source) Resolve() (_ Source, ok bool) {
	flavor, ver, named := ReferenceVersion(s.Build)
	if s.Version == "" && named {
		s.Version = ver
	}
	if s.Flavor == "" && named {
		s.Flavor = flavor
	}
	return s, s.Version != ""
}

// refBuild is the reference harness's build name: a flavor prefix, the
// version's digits packed, then anything after an underscore
// (ma100244_rel_withdbg, my8036_rel_o2nofp, pg1222_o2nofp, fbmy5635_202203072101).
var refBuild = regexp.MustCompile(`^(ma|my|fbmy|pg)([0-9]+)(?:_.*)?$`)

// ReferenceVersion reads the flavor and version of a build named the
// reference harness's way (mdcallag/mytools): "ma" is MariaDB, "my" MySQL,
// "fbmy" Facebook's MySQL, "pg" PostgreSQL; MySQL-family versions pack a
// two-digit patch after the major and minor, the minor taking two digits
// after a two-digit major (ma100244 is 10.2.44, ma110401 11.4.1) and one
// after a one-digit major (my8036 is 8.0.36, my5651 5.6.51, my9500 9.5.0);
// PostgreSQL's, from 10 on, are a two-digit major and the minor (pg1222 is
// 12.22, pg178 17.8). ok is false for any other name. No library knows
// this convention: it is the reference's own, read from its result folders.
func ReferenceVersion(name string) (flavor, version string, ok bool) {
	m := refBuild.FindStringSubmatch(name)
	if m == nil || m[2][0] == '0' {
		return "", "", false
	}
	d := m[2]
	num := func(s string) string { n, _ := strconv.Atoi(s); return strconv.Itoa(n) }
	switch m[1] {
	case "pg":
		major, _ := strconv.Atoi(d[:min(2, len(d))])
		if (len(d) != 3 && len(d) != 4) || major < 10 || major > 39 {
			return "", "", false
		}
		return string(build.Postgres), d[:2] + "." + num(d[2:]), true
	case "ma":
		flavor = string(build.MariaDB)
	default:
		flavor = string(build.MySQL)
	}
	switch len(d) {
	case 6:
		return flavor, num(d[:2]) + "." + num(d[2:4]) + "." + num(d[4:]), true
	case 4:
		return flavor, d[:1] + "." + d[1:2] + "." + num(d[2:]), true
	}
	return "", "", false
}

// What each importer reads of one file at most: one line limit and one
// file size bound each, here and nowhere else (docs/results.md, "What
// every import refuses"). No output of the tools comes near them (a
// day of sysbench's --report-interval=1 lines is about 20 MiB, a line of
// EXPLAIN a few KiB); they end a file of another kind in one clear line
// instead of in memory exhausted. Every file is also a regular file, and
// in a folder's import one under that folder (package input).
var (
	// Sysbench: a sysbench run's output.
	sysbenchLimits = input.Limits{Line: 1 << 20, File: 256 << 20}
	// Mytools: sb.r.* (one line each), sb.o.* (sysbench's output, as
	// above) and sb.met.*.
	mytoolsLimits = input.Limits{Line: 1 << 20, File: 256 << 20}
	// Ibench: o.res.dop<N> and each client's o.ib.dop<N>.<n>, a line a
	// second.
	ibenchLimits = input.Limits{Line: 1 << 20, File: 256 << 20}
	// ResultsFiles: qpslab's JSON, decoded whole, not read by lines (Line
	// 0). A plan of thousands of runs with their samples and histograms
	// is a few hundred MiB.
	resultsLimits = input.Limits{File: 1 << 30}
)

// fileError is an import error in one file: `import <kind> <file>:<line>:
// <what>`. Line 0 leaves the line out (the file as a whole is wrong).
type fileError struct {
	kind, file string
	line       int
	msg        string
	err        error // the error it says, if it says one: a read's end (context.Canceled) stays one
}

func (e *fileError) Unwrap() error { return e.err }

func (e *fileError) Error() string {
	if e.line <= 0 {
		return fmt.Sprintf("import %s %s: %s", e.kind, e.file, e.msg)
	}
	return fmt.Sprintf("import %s %s:%d: %s", e.kind, e.file, e.line, e.msg)
}

func errorf(kind, file string, line int, format string, args ...any) error {
	e := &fileError{kind: kind, file: file, line: line, msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok && e.err == nil {
			e.err = err
		}
	}
	return e
}

// lookup finds the qpslab test a label names.
func lookup(label string) (sysbench.Test, error) { return sysbench.Lookup(label) }

// newRun fills what every imported run shares: what the suite says of
// the test (its groups, role and place in the order, sysbench.Stamp) and
// where the numbers came from.
func newRun(t sysbench.Test, src Source, source, file string) result.Run {
	src, _ = src.Resolve()
	r := result.Run{
		SchemaVersion: result.SchemaVersion,
		QpslabVersion: version.Version, // the importing qpslab; Params["source"] says where the numbers came from
		Test:          t.Label(),
		Build:         src.Build,
		Flavor:        src.Flavor,
		Version:       src.Version,
		Config:        src.Config,
		Loop:          "closed",
		Status:        result.OK,
		Params:        map[string]string{"source": source, "file": file},
		// Started is the time given, if any; Ended stays zero: sysbench
		// prints no wall-clock times.
		Started: src.Time,
	}
	if src.Commit != "" {
		r.Params["commit"] = src.Commit
	}
	if src.StorageEngine != "" {
		r.Params["engine"] = src.StorageEngine
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

// maxFigure bounds every figure an import reads (a rate, a latency in ms, a
// time in seconds, an sb.met average): 10⁹ queries/s, or 11.6 days of
// latency, is beyond any sysbench run, and the bound keeps every figure
// derived from them finite and exact (latencies in µs, a sample's events as
// its rate × its interval, at most 10¹⁸, within int64).
const maxFigure = 1e9

// figureError is the one line an import says about a figure it refuses.
func figureError(s, why string) error {
	return fmt.Errorf("value %q %s: fix or remove the file", s, why)
}

// number parses a figure: a finite decimal from 0 to maxFigure. sysbench
// and awk print nan and inf when they divide by zero, which JSON cannot
// hold; a negative rate or latency is no measurement.
func number(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, figureError(s, "is out of range")
	case err != nil:
		return 0, figureError(s, "is not a number")
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, figureError(s, "is not finite")
	case v < 0:
		return 0, figureError(s, "is negative")
	case v > maxFigure:
		return 0, figureError(s, "is out of range (above 1e9)")
	}
	return v, nil
}

// count parses a count (events, queries, errors, a queue's length): a whole
// number from 0 to what int64 holds.
func count(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		if strings.HasPrefix(s, "-") {
			return 0, figureError(s, "is negative")
		}
		return 0, figureError(s, "is out of range (above 2^63-1)")
	case err != nil:
		return 0, figureError(s, "is not a count")
	case v < 0:
		return 0, figureError(s, "is negative")
	}
	return v, nil
}

// positive parses a thread or CPU count: a whole number from 1 to 10⁶.
func positive(s string) (int, error) {
	v, err := count(s)
	if err != nil {
		return 0, err
	}
	if v < 1 || v > 1e6 {
		return 0, figureError(s, "is out of range (1 to 1000000)")
	}
	return int(v), nil
}
