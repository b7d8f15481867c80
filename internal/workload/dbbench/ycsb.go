package dbbench

import (
	"fmt"
	"path"
	"strings"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// YCSB's core workloads as db_bench runs them (--ycsb): in place of
// benchmark_compare.sh's sequence, YCSB's load, then each workload for
// --seconds, each a db_bench benchmark whose operations are the workload's
// (docs/ycsb.md says how close each is). YCSB's names are written here as
// strings: the ycsb suite is a package of the same layer, which this one
// does not import.

// ycsbWorkload is one of YCSB's core workloads as a db_bench benchmark.
type ycsbWorkload struct {
	name  string   // YCSB's: workloada …
	bench string   // db_bench's benchmark
	flags []string // what makes the benchmark the workload
	// kinds are YCSB's operation kinds by db_bench's histogram ("Microseconds
	// per read"): each has its rate and response times (read/s, read.p99).
	kinds map[string]string
	group string // the "ops" layout's group
	note  string
}

// YCSB's operation kinds, as the ycsb suite names them.
const (
	ycsbRead   = "read"
	ycsbUpdate = "update"
	ycsbScan   = "scan"
	ycsbRMW    = "read-modify-write"
)

// ycsbScanRows is the rows a workloade scan reads: db_bench's seekrandom
// reads the row it seeks to and seek_nexts-1 after it (it reads a value,
// then steps: seek_nexts values in all); YCSB's scans are 1 to 100 rows,
// uniform (maxscanlength 100), 50.5 on average.
const ycsbScanRows = 50

// ycsbWorkloads are the workloads db_bench runs, in YCSB's order.
var ycsbWorkloads = []ycsbWorkload{
	{"workloada", "readrandomwriterandom", []string{"--readwritepercent=50"}, map[string]string{"read": ycsbRead, "write": ycsbUpdate}, GroupRW,
		"YCSB workloada as readrandomwriterandom --readwritepercent=50: 50% reads, 50% updates (a Put of the whole value); keys uniform, for --seconds"},
	{"workloadb", "readrandomwriterandom", []string{"--readwritepercent=95"}, map[string]string{"read": ycsbRead, "write": ycsbUpdate}, GroupRW,
		"YCSB workloadb as readrandomwriterandom --readwritepercent=95: 95% reads, 5% updates (a Put of the whole value); keys uniform, for --seconds"},
	{"workloadc", "readrandom", nil, map[string]string{"read": ycsbRead}, GroupRead,
		"YCSB workloadc as readrandom: point reads; keys uniform, for --seconds"},
	{"workloade", "seekrandom", []string{fmt.Sprintf("--seek_nexts=%d", ycsbScanRows), "--reverse_iterator=false"}, map[string]string{"seek": ycsbScan}, GroupRead,
		"YCSB workloade in part, as seekrandom: scans of 50 rows (YCSB: 1 to 100), no inserts; keys uniform, for --seconds"},
	{"workloadf", "updaterandom", nil, map[string]string{"update": ycsbRMW}, GroupRW,
		"YCSB workloadf in part, as updaterandom: read-modify-writes only (YCSB: half are plain reads); keys uniform, for --seconds"},
}

// ycsbUnmapped are YCSB's core workloads db_bench has no benchmark for,
// and why.
var ycsbUnmapped = map[string]string{
	"workloadd": "db_bench has no read-latest request distribution, and no inserts of new keys beside reads (readwhilewriting's writer overwrites random keys)",
}

// The YCSB mode's steps besides the workloads.
const (
	ycsbLoad   = "load"   // YCSB's load phase: filluniquerandom
	ycsbSettle = "settle" // flush and wait for compaction (not reported)
	// ycsbKeySize is a YCSB key's length: "user" and the decimal FNV hash
	// of its number, 19 digits for most.
	ycsbKeySize = 23
)

var ycsbLoadNote = "YCSB's load phase as filluniquerandom: every key once, in random order, at one thread (keys/s)"
var ycsbSettleNote = "flush the memtable, wait for compaction (not reported)"

// ycsbSteps are the YCSB mode's steps in order: their positions.
func ycsbSteps() []step {
	out := []step{{ycsbLoad, result.RoleLoad, "", ycsbLoadNote}, {ycsbSettle, result.RoleWarm, "", ycsbSettleNote}}
	for _, w := range ycsbWorkloads {
		out = append(out, step{w.name, result.RoleTest, w.group, w.note})
	}
	return out
}

// writes says whether w changes the database (updates, read-modify-writes).
func (w ycsbWorkload) writes() bool {
	for _, k := range w.kinds {
		if k == ycsbUpdate || k == ycsbRMW {
			return true
		}
	}
	return false
}

// ycsbWorkloadNamed returns the workload called name.
func ycsbWorkloadNamed(name string) (ycsbWorkload, bool) {
	for _, w := range ycsbWorkloads {
		if w.name == name {
			return w, true
		}
	}
	return ycsbWorkload{}, false
}

func ycsbNames() []string {
	var names []string
	for _, w := range ycsbWorkloads {
		names = append(names, w.name)
	}
	return names
}

// selectYCSB reads --ycsb: workload names or globs, each matching one of
// YCSB's core workloads that db_bench runs. A name that is only one
// db_bench has no benchmark for is refused with why; a glob takes the
// workloads it matches that db_bench runs. The result is in YCSB's order.
func selectYCSB(globs []string) ([]string, error) {
	all := append(ycsbNames(), "workloadd")
	var problems []string
	picked := map[string]bool{}
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			problems = append(problems, fmt.Sprintf("--ycsb %s: not a glob (%v): give %s, or globs such as 'workload[a-c]'", suite.Quote(g), err, strings.Join(ycsbNames(), ", ")))
			continue
		}
		var mapped, unmapped []string
		for _, n := range all {
			if ok, _ := path.Match(g, n); !ok {
				continue
			}
			if _, no := ycsbUnmapped[n]; no {
				unmapped = append(unmapped, n)
			} else {
				mapped = append(mapped, n)
			}
		}
		switch {
		case len(mapped) > 0:
			for _, n := range mapped {
				picked[n] = true
			}
		case len(unmapped) > 0:
			problems = append(problems, fmt.Sprintf("--ycsb %s: %s; run it on a server (qpslab run ycsb; RocksDB through MyRocks: --engine rocksdb), or leave it out", suite.Quote(g), ycsbUnmapped[unmapped[0]]))
		default:
			problems = append(problems, fmt.Sprintf("--ycsb %s matches no YCSB workload: give %s (workloadd has no db_bench benchmark), or globs such as 'workload[a-c]'", suite.Quote(g), strings.Join(ycsbNames(), ", ")))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	var out []string
	for _, n := range ycsbNames() {
		if picked[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// ycsbReserved are the flags an option set may not give with --ycsb: they
// make the benchmarks YCSB's workloads.
var ycsbReserved = map[string]string{
	"key_size":         "YCSB's keys are 23 bytes",
	"value_size":       "--fieldcount × --fieldlength sets it",
	"readwritepercent": "workloada and workloadb set it",
	"seek_nexts":       "workloade's scans are 50 rows",
	"reverse_iterator": "workloade scans forward",
}

// ycsbOptions refuses, with --ycsb, an option set that sets what makes
// the benchmarks YCSB's workloads.
func (o Options) ycsbOptions(opts []string, config string) error {
	if len(o.YCSB) == 0 {
		return nil
	}
	for _, a := range opts {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		name = strings.TrimPrefix(name, "no")
		if why, ok := ycsbReserved[name]; ok {
			return fmt.Errorf("config %s: --%s is --ycsb's own (%s): remove it, or run without --ycsb", config, name, why)
		}
	}
	return nil
}

// ycsbOps are a YCSB step's operation kinds from db_bench's histograms
// (hists, in µs), over secs: nil when one of them is not of the kinds the
// workload maps (a db_bench that names them otherwise).
func ycsbOps(kinds map[string]string, hists []Histogram, secs float64) []result.OpTotals {
	if len(kinds) == 0 || secs <= 0 {
		return nil
	}
	var out []result.OpTotals
	for _, h := range hists {
		k, ok := kinds[h.Op]
		if !ok {
			return nil
		}
		l := latencyOf(h)
		out = append(out, result.OpTotals{OpSample: result.OpSample{Kind: k, Count: h.Count, Response: l, Service: l}, Rate: float64(h.Count) / secs})
	}
	return out
}
