package importer

import (
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/input"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// The files bench/sysbench.lua/run.sh writes for one test, whose suffix is
// <testType>.range<R>.pk<P> (testType with its variant: point-query.pre):
//
//	sb.r.{qps,trx,rtavg,rt95,rtmax}.<sfx>  one line: a value per thread count, tab-separated,
//	                                       then "<engine> <testType> range=<R>"
//	sb.o.<sfx>.dop<N>                      the command line, "N CPUs", then sysbench's output
//	sb.met.<sfx>.dop<N>                    an.sh's per-operation vmstat/iostat figures
//
// Everything else in a folder (sb.io, sb.vm, sb.prepare.*, sb.o.pw.*, …) is
// not read.
var (
	rFileRe   = regexp.MustCompile(`^sb\.r\.(qps|trx|rtavg|rt95|rtmax)\.(.+)\.range(\d+)\.pk(\d+)$`)
	dopFileRe = regexp.MustCompile(`^sb\.(o|met)\.(.+)\.range(\d+)\.pk(\d+)\.dop(\d+)$`)
)

// Mytools reads a mytools result folder: sb.r.qps.* (+ sb.r.trx.*,
// sb.r.rtavg.*, sb.r.rt95.*, sb.r.rtmax.* when present), sb.met.* and sb.o.*;
// one Run per test × thread count, ordered by test label, then threads.
//
// The thread counts are the dop suffixes of the test's sb.o and sb.met files.
// run.sh writes the sb.r values in the order the thread counts were given to
// it, which this takes to be ascending; where an sb.o file exists, its
// queries/s and transactions/s must agree with the sb.r values, which
// catches any other order. A test with sb.o files and no sb.r files (the
// archives in mytools bench/arc keep none) is imported from sb.o alone.
//
// Totals come from sb.o where there is one (else from the sb.r values);
// Reported is the sb.r.qps value, which for scan is Krows/s of one scan
// (Mrows/s in run.sh's 2024 version, told apart by recomputing both from
// sb.o); HW comes from sb.met.
//
// A folder without sysbench results that holds the Insert Benchmark's step
// folders (l.i0, …, qp1000.L6) is read by Ibench.
//
// It reads regular files under dir only, each within mytoolsLimits (or
// ibenchLimits), and stops with ctx's error once ctx ends.
func Mytools(ctx context.Context, dir string, src Source) ([]result.Run, error) {
	d, err := input.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("import mytools: %w", err)
	}
	defer d.Close()
	entries, err := d.ReadDir(".")
	if err != nil {
		return nil, fmt.Errorf("import mytools: %w", err)
	}
	tests := map[string]*mtTest{}
	get := func(testType, rng, pk string) *mtTest {
		sfx := testType + ".range" + rng + ".pk" + pk
		t := tests[sfx]
		if t == nil {
			r, _ := strconv.Atoi(rng)
			t = &mtTest{ctx: ctx, d: d, sfx: sfx, testType: testType, rng: r, pk: pk,
				r: map[string]string{}, o: map[int]string{}, met: map[int]string{}}
			tests[sfx] = t
		}
		return t
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		name := e.Name()
		if m := rFileRe.FindStringSubmatch(name); m != nil {
			get(m[2], m[3], m[4]).r[m[1]] = name
		} else if m := dopFileRe.FindStringSubmatch(name); m != nil {
			dop, err := strconv.Atoi(m[5])
			if err != nil || dop <= 0 {
				return nil, errorf("mytools", d.Join(name), 0, "dop%s is not a thread count", m[5])
			}
			t := get(m[2], m[3], m[4])
			if m[1] == "o" {
				t.o[dop] = name
			} else {
				t.met[dop] = name
			}
		}
	}
	if len(tests) == 0 {
		if isIbench(d) {
			return ibenchRuns(ctx, d, src)
		}
		return nil, fmt.Errorf("import mytools %s: neither sysbench nor Insert Benchmark results of the reference harness: want the files bench/sysbench.lua/run.sh writes, "+
			"sb.r.qps.<test>.range<R>.pk<P> (and sb.r.trx/rtavg/rt95/rtmax) with sb.o.<test>.range<R>.pk<P>.dop<N> "+
			"and sb.met.<test>.range<R>.pk<P>.dop<N>, or the step folders bench/ibench/iq.sh makes (l.i0, l.x, l.i1, l.i2, qr100.L1, …) "+
			"holding np.sh's o.res.dop<N> and o.ib.dop<N>.<n>", dir)
	}
	sfxs := make([]string, 0, len(tests))
	for sfx := range tests {
		sfxs = append(sfxs, sfx)
	}
	sort.Strings(sfxs) // the same folder fails with the same error
	var runs []result.Run
	for _, sfx := range sfxs {
		rs, err := tests[sfx].runs(src)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs...)
	}
	sort.Slice(runs, func(i, j int) bool {
		if runs[i].Test != runs[j].Test {
			return runs[i].Test < runs[j].Test
		}
		return runs[i].Threads < runs[j].Threads
	})
	return runs, nil
}

// mtTest is one test's files in a mytools folder.
type mtTest struct {
	ctx           context.Context
	d             *input.Dir
	sfx, testType string
	rng           int
	pk            string
	r             map[string]string // qps, trx, … → file name
	o, met        map[int]string    // dop → file name
}

func (t *mtTest) path(name string) string { return t.d.Join(name) }

// anyFile names one of the test's files, for errors about the test as a whole.
func (t *mtTest) anyFile() string {
	if f := t.r["qps"]; f != "" {
		return f
	}
	for _, m := range []map[int]string{t.o, t.met} {
		if ks := sortedKeys(m); len(ks) > 0 {
			return m[ks[0]]
		}
	}
	for _, k := range []string{"trx", "rtavg", "rt95", "rtmax"} {
		if f := t.r[k]; f != "" {
			return f
		}
	}
	return t.sfx
}

func (t *mtTest) runs(src Source) ([]result.Run, error) {
	test, err := lookup(t.testType + "_range=" + strconv.Itoa(t.rng))
	if err != nil {
		return nil, errorf("mytools", t.path(t.anyFile()), 0, "%v", err)
	}
	dops := sortedKeys(t.o)
	for d := range t.met {
		if t.o[d] == "" {
			dops = append(dops, d)
		}
	}
	sort.Ints(dops)

	// The sb.r files: one value per thread count.
	rv := map[string]rLine{}
	if t.r["qps"] == "" {
		for _, k := range []string{"trx", "rtavg", "rt95", "rtmax"} {
			if f := t.r[k]; f != "" {
				return nil, errorf("mytools", t.path(f), 0, "no sb.r.qps.%s to go with it", t.sfx)
			}
		}
		for _, d := range dops {
			if t.o[d] == "" {
				return nil, errorf("mytools", t.path(t.met[d]), 0, "no sb.o.%s.dop%d or sb.r.qps.%s to go with it: the throughput is in those", t.sfx, d, t.sfx)
			}
		}
	} else {
		if len(dops) == 0 {
			return nil, errorf("mytools", t.path(t.r["qps"]), 0, "cannot tell the thread counts: no sb.o.%s.dop<N> or sb.met.%s.dop<N> files", t.sfx, t.sfx)
		}
		for _, k := range []string{"qps", "trx", "rtavg", "rt95", "rtmax"} {
			f := t.r[k]
			if f == "" {
				continue
			}
			l, err := t.readR(f)
			if err != nil {
				return nil, err
			}
			if k == "qps" {
				// run.sh prints 0 for scan at a thread count above the
				// number of tables, and runs nothing there.
				for len(l.values) > len(dops) && l.values[len(l.values)-1] == 0 {
					l.values = l.values[:len(l.values)-1]
				}
			}
			if len(l.values) != len(dops) {
				return nil, errorf("mytools", t.path(f), 1, "%d values, but the sb.o/sb.met files give %d thread counts (dop %s): cannot tell which value is which",
					len(l.values), len(dops), joinInts(dops))
			}
			rv[k] = l
		}
	}

	var out []result.Run
	for i, dop := range dops {
		run, err := t.run(test, src, dop, i, rv)
		if err != nil {
			return nil, err
		}
		out = append(out, run)
	}
	return out, nil
}

// run builds the run at one thread count: the i-th sb.r value.
func (t *mtTest) run(test sysbench.Test, src Source, dop, i int, rv map[string]rLine) (result.Run, error) {
	unit, op := reportedUnit(test)
	file := t.o[dop]
	if file == "" {
		file = t.r["qps"]
	}
	run := newRun(test, src, "mytools", file)
	run.Threads = dop
	run.Params["pk"] = t.pk
	run.Params["transport"] = "sysbench" // the reference's client (result.Run.Conditions)
	if l, ok := rv["qps"]; ok {
		run.Params["engine"] = l.storageEngine
		run.Params["qps_file"] = t.r["qps"]
	}
	val := func(k string) (float64, bool) {
		l, ok := rv[k]
		if !ok {
			return 0, false
		}
		return l.values[i], true
	}
	// disagree is the error for an sb.r value that sb.o contradicts.
	disagree := func(k string, v float64, what string, want float64) error {
		return errorf("mytools", t.path(t.r[k]), 1, "value %d (%g) is for dop %d, but %s says %s %g: are the thread counts not in ascending order?",
			i+1, v, dop, t.o[dop], what, want)
	}

	var o *output
	if t.o[dop] != "" {
		var err error
		if o, err = t.readOutput(t.o[dop]); err != nil {
			return result.Run{}, err
		}
		if o.threads != dop {
			return result.Run{}, errorf("mytools", t.path(t.o[dop]), o.seen["threads"], "sysbench ran %d threads, but the file name says dop%d", o.threads, dop)
		}
		o.fill(&run)
		if v, ok := val("qps"); ok && !test.Krows && math.Abs(v-o.qps) > 0.51 {
			return result.Run{}, disagree("qps", v, "queries/s", o.qps)
		}
		pct, _ := o.firstPct() // run.sh greps "percentile:"
		if v, ok := val("trx"); ok && math.Abs(v-o.tps) > 0.51 {
			return result.Run{}, disagree("trx", v, "transactions/s", o.tps)
		}
		for _, c := range []struct {
			k    string
			got  float64
			what string
		}{{"rtavg", o.avg, "avg latency (ms)"}, {"rtmax", o.max, "max latency (ms)"}, {"rt95", o.pct[pct], "percentile latency (ms)"}} {
			if v, ok := val(c.k); ok && math.Abs(v-c.got) > 0.0051 {
				return result.Run{}, disagree(c.k, v, c.what, c.got)
			}
		}
	} else {
		// Only the sb.r values: rates and latencies in ms, no counts.
		tot := &run.Totals
		tot.QPS, _ = val("qps")
		tot.TPS, _ = val("trx")
		avg, _ := val("rtavg")
		p95, _ := val("rt95")
		mx, _ := val("rtmax")
		tot.Response = result.Latency{Mean: msToUs(avg), P95: msToUs(p95), Max: msToUs(mx)}
		tot.Service = tot.Response
		run.Params["percentile"] = "95" // run.sh greps "percentile:"; his runs keep sysbench's default 95
	}

	tot := &run.Totals
	tot.ReportedUnit = unit
	switch v, ok := val("qps"); {
	case test.Krows:
		rep, u, hwop, err := t.scanFigure(v, ok, o, dop)
		if err != nil {
			return result.Run{}, err
		}
		tot.Reported, tot.ReportedUnit, op = rep, u, hwop
	case o != nil:
		tot.Reported = o.qps // the unrounded figure sb.r.qps was printed from
	default:
		tot.Reported = v
	}

	setSeries(tot)
	if f := t.met[dop]; f != "" {
		m, err := t.readMet(f)
		if err != nil {
			return result.Run{}, err
		}
		run.HW = m.hw(op)
		run.Params["met_file"] = f
		if o != nil {
			run.HW.CPUs = o.cpus
		}
	}
	return run, nil
}

// scanFigure is scan's reported figure and its unit, and the op an.sh
// normalised by. HEAD's run.sh reports Krows/s of one scan from the mean
// latency and gives an.sh the same; the 2024 run.sh (--time=0, one scan per
// table) reported Mrows/s from the elapsed time and gave an.sh rows/s.
func (t *mtTest) scanFigure(v float64, have bool, o *output, dop int) (float64, string, string, error) {
	size, sized := int64(0), false
	if o != nil {
		size, sized = o.tableSize()
	}
	switch {
	case !have && !sized:
		return 0, "", "", errorf("mytools", t.path(t.o[dop]), 0, "scan reports Krows/s of one scan (table size / mean latency), "+
			"and there is no sb.r.qps.%s and no --table-size= on the command line at the top of this file", t.sfx)
	case !have:
		krows, err := o.krows(size)
		return krows, "Krows/s", "Krow", err
	case !sized:
		return v, "Krows/s", "Krow", nil // what run.sh has written since 2025
	}
	krows := krowsPerSec(size, o.avg)
	if math.Abs(v-krows) <= math.Max(0.51, krows*0.001) {
		return v, "Krows/s", "Krow", nil
	}
	tables, err := strconv.ParseInt(o.args["tables"], 10, 64)
	if err != nil || tables <= 0 {
		tables = 1
	}
	var mrows float64
	if o.seconds > 0 {
		mrows = float64(size) * float64(tables) / 1e6 / o.seconds
	}
	if math.Abs(v-mrows) <= math.Max(0.0006, mrows*0.001) {
		return v, "Mrows/s", "row", nil
	}
	return 0, "", "", errorf("mytools", t.path(t.r["qps"]), 1, "scan value %g for dop %d is neither Krows/s of one scan (%.0f, from %s) "+
		"nor Mrows/s of all tables (%.3f, run.sh of 2024)", v, dop, krows, t.o[dop], mrows)
}

// rLine is an sb.r.* file: its values and the engine.
type rLine struct {
	values        []float64
	storageEngine string
}

// readR reads the one line of the test's sb.r.* file name:
// "v1\tv2\t…\t<engine> <testType> range=<R>", of at most a line's
// bound (mytoolsLimits: the file is its one line).
func (t *mtTest) readR(name string) (rLine, error) {
	f, err := t.d.Open(t.ctx, name, input.Limits{Line: mytoolsLimits.Line, File: int64(mytoolsLimits.Line)})
	if err != nil {
		return rLine{}, fmt.Errorf("import mytools: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return rLine{}, errorf("mytools", t.path(name), 0, "%v", err)
	}
	return parseR(t.path(name), b, t.testType, t.rng)
}

// readOutput reads the test's sb.o.* file name: sysbench's output.
func (t *mtTest) readOutput(name string) (*output, error) {
	f, err := t.d.Open(t.ctx, name, mytoolsLimits)
	if err != nil {
		return nil, fmt.Errorf("import mytools: %w", err)
	}
	defer f.Close()
	return parseOutput("mytools", t.path(name), f.Lines())
}

// parseR is readR over the file's content b.
func parseR(path string, b []byte, testType string, rng int) (rLine, error) {
	want := fmt.Sprintf(`want "<value>\t…\t<engine> %s range=%d"`, testType, rng)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if strings.TrimSpace(lines[0]) == "" {
		return rLine{}, errorf("mytools", path, 1, "empty: %s", want)
	}
	if len(lines) > 1 {
		return rLine{}, errorf("mytools", path, 2, "a second line: run.sh writes one")
	}
	parts := strings.Split(lines[0], "\t")
	trailer := strings.Fields(parts[len(parts)-1])
	if len(trailer) != 3 || trailer[1] != testType || trailer[2] != "range="+strconv.Itoa(rng) {
		return rLine{}, errorf("mytools", path, 1, "ends %q: %s, as the file name says", parts[len(parts)-1], want)
	}
	l := rLine{storageEngine: trailer[0]}
	for _, p := range parts[:len(parts)-1] {
		v, err := number(strings.TrimSpace(p))
		if err != nil {
			return rLine{}, errorf("mytools", path, 1, "figure %d: %v", len(l.values)+1, err)
		}
		l.values = append(l.values, v)
	}
	return l, nil
}

// met is an an.sh sb.met file: iostat and vmstat averages, per second and
// per operation.
type met struct {
	io map[string]float64 // samp r/s rMB/s w/s wMB/s r/o rKB/o wKB/o o/s
	vm map[string]float64 // samp cs/s cpu/s cs/o cpu/o
}

var (
	metIO = []string{"samp", "r/s", "rMB/s", "w/s", "wMB/s", "r/o", "rKB/o", "wKB/o", "o/s"}
	metVM = []string{"samp", "cs/s", "cpu/s", "cs/o", "cpu/o"}
)

// readMet reads the test's sb.met file name. an.sh writes a title, the
// iostat header and values (lines 2–3), a blank line, then the vmstat
// header and values (lines 5–6); the headers are found by their text, the
// values are the line under.
func (t *mtTest) readMet(name string) (met, error) {
	f, err := t.d.Open(t.ctx, name, mytoolsLimits)
	if err != nil {
		return met{}, fmt.Errorf("import mytools: %w", err)
	}
	defer f.Close()
	return parseMet(t.path(name), f)
}

// parseMet is readMet over the file's content in r.
func parseMet(path string, r io.Reader) (met, error) {
	m := met{}
	var want []string // the header just read, whose values come next
	var dst *map[string]float64
	n := 0
	sc := input.NewScanner(r, mytoolsLimits.Line)
	for sc.Scan() {
		n++
		fields := strings.Fields(sc.Text())
		if want != nil {
			if len(fields) != len(want) {
				return met{}, errorf("mytools", path, n, "want %d values under the %q header, got %q", len(want), strings.Join(want, " "), sc.Text())
			}
			vals := map[string]float64{}
			for i, h := range want {
				v, err := number(fields[i])
				if err != nil {
					return met{}, errorf("mytools", path, n, "%s: %v", h, err)
				}
				vals[h] = v
			}
			*dst, want = vals, nil
			continue
		}
		switch strings.Join(fields, " ") {
		case strings.Join(metIO, " "):
			want, dst = metIO, &m.io
		case strings.Join(metVM, " "):
			want, dst = metVM, &m.vm
		}
	}
	if err := sc.Err(); err != nil {
		return met{}, errorf("mytools", path, n+1, "%v", err)
	}
	if want != nil {
		return met{}, errorf("mytools", path, n, "no values under the %q header", strings.Join(want, " "))
	}
	for _, h := range []struct {
		got  map[string]float64
		head []string
	}{{m.io, metIO}, {m.vm, metVM}} {
		if h.got == nil {
			return met{}, errorf("mytools", path, n, "no %q header: is this an an.sh sb.met file?", strings.Join(h.head, " "))
		}
	}
	return m, nil
}

// hw is the sb.met figures as qpslab's hardware cost; op is the unit of o/s.
func (m met) hw(op string) *result.HW {
	return &result.HW{
		Op:           op,
		Samples:      int(m.vm["samp"]), // vmstat lines an.sh averaged
		CPUPerOp:     m.vm["cpu/o"],
		CSPerOp:      m.vm["cs/o"],
		ReadsPerOp:   m.io["r/o"],
		ReadKBPerOp:  m.io["rKB/o"],
		WriteKBPerOp: m.io["wKB/o"],
		OpsPerSec:    m.io["o/s"],
		Avg: result.HWSecond{
			Reads:   m.io["r/s"],
			ReadKB:  m.io["rMB/s"] * 1024,
			Writes:  m.io["w/s"],
			WriteKB: m.io["wMB/s"] * 1024,
			CS:      m.vm["cs/s"],
		},
		NoCPUTime: true, // an.sh computes cpu/o, not CPU time per op
		Notes:     []string{"imported from mytools sb.met: vmstat/iostat averages as an.sh computed them"},
	}
}

func sortedKeys(m map[int]string) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
