package importer

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/input"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// Sysbench parses one sysbench 1.0.x or 1.1.x `run` output (text) for test
// `test` (a qpslab label such as "point-query_range=100"). The output may
// start with the command line and "N CPUs", as mytools' sb.o files do.
//
// Totals come from the final report; Samples from --report-interval lines,
// when there are any. Scan's reported figure is Krows/s of one scan, which
// needs the table size: only an output that starts with its command line
// (--table-size=) can give it. The file is a regular one within
// sysbenchLimits, read until ctx ends.
func Sysbench(ctx context.Context, path string, src Source, test string) (result.Run, error) {
	t, err := lookup(test)
	if err != nil {
		return result.Run{}, fmt.Errorf("import sysbench %s: %w", path, err)
	}
	f, err := input.Open(ctx, path, sysbenchLimits)
	if err != nil {
		return result.Run{}, fmt.Errorf("import sysbench: %w", err)
	}
	defer f.Close()
	return sysbenchRun(path, f, src, t)
}

// sysbenchRun is Sysbench over the output in r, which path names.
func sysbenchRun(path string, r io.Reader, src Source, t sysbench.Test) (result.Run, error) {
	o, err := parseOutput("sysbench", path, input.NewScanner(r, sysbenchLimits.Line))
	if err != nil {
		return result.Run{}, err
	}
	run := newRun(t, src, "sysbench-"+o.series, filepath.Base(path))
	o.fill(&run)
	if t.Krows {
		rows, ok := o.tableSize()
		if !ok {
			return result.Run{}, errorf("sysbench", path, 0, "scan reports Krows/s of one scan (table size / mean latency), "+
				"and this output does not start with a sysbench command line that has --table-size=")
		}
		krows, err := o.krows(rows)
		if err != nil {
			return result.Run{}, err
		}
		run.Totals.Reported, run.Totals.ReportedUnit = krows, "Krows/s"
	}
	setSeries(&run.Totals)
	return run, nil
}

// output is what one sysbench run output says. Latencies are in ms, as
// printed.
type output struct {
	kind, file string // for errors
	lines      int

	version  string // "1.0.20", "1.1.0-3ceba0b"
	series   string // "1.0" or "1.1"
	threads  int
	warmup   float64 // seconds (1.1's --warmup-time)
	interval float64 // seconds between intermediate reports
	rate     float64 // --rate, events/s; 0 is closed loop
	cpus     int     // run.sh's "N CPUs" line
	args     map[string]string

	events, queries         int64
	errors, reconnects      int64
	tps, qps                float64
	seconds                 float64
	min, avg, max           float64
	pct                     map[int]float64 // percentile → ms
	samples                 []interval
	maxQueue                int64
	seen                    map[string]int // required lines → line number
	versionLine, reportLine int
}

// interval is one --report-interval line.
type interval struct {
	line                 int     // in the file
	t                    float64 // seconds since the start, at the interval's end
	tps, qps             float64
	reads, writes, other float64
	pct                  int
	lat                  float64 // ms
	errs, reconn         float64
}

var (
	versionRe  = regexp.MustCompile(`^sysbench v?(\d+)\.(\d+)(\S*)`)
	cpusRe     = regexp.MustCompile(`^(\d+) CPUs$`)
	stampRe    = regexp.MustCompile(`^\[\s*(\d+(?:\.\d+)?)s\s*\]\s*(.*)$`)
	intervalRe = regexp.MustCompile(`^thds:\s*(\d+)\s+tps:\s*(\S+)\s+qps:\s*(\S+)\s+\(r/w/o:\s*([^/\s]+)/([^/\s]+)/([^)\s]+)\)\s+` +
		`lat\s+\(ms,(\d+)%\):\s*(\S+)\s+err/s:?\s*(\S+)\s+reconn/s:?\s*(\S+)$`)
	queueRe   = regexp.MustCompile(`^queue length:\s*(\d+),\s*concurrency:\s*(\d+)$`)
	perSecRe  = regexp.MustCompile(`^(\d+)\s+\((\S+) per sec\.\)$`)
	pctRe     = regexp.MustCompile(`^(\d+)th percentile$`)
	everyRe   = regexp.MustCompile(`^Report intermediate results every (\d+) second`)
	rateRe    = regexp.MustCompile(`^Target transaction rate: (\d+)/sec`)
	warmupRe  = regexp.MustCompile(`^Warmup time: (\d+(?:\.\d+)?)s$`)
	threadsRe = regexp.MustCompile(`^Number of threads: (\d+)$`)
)

// Sections of the final report.
const (
	secNone = iota
	secSQL
	secGeneral
	secLatency
	secOther // threads fairness, latency histogram: read past
)

// parseOutput reads sysbench's text line by line from sc. Keys of the
// final report count only inside their section, so EXPLAIN plans and Lua
// prints that mytools' scripts add cannot be taken for numbers.
func parseOutput(kind, file string, sc *input.Scanner) (*output, error) {
	o := &output{kind: kind, file: file, args: map[string]string{}, pct: map[int]float64{}, seen: map[string]int{}}
	sec := secNone
	for sc.Scan() {
		o.lines++
		n, s := o.lines, strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		bad := func(format string, args ...any) error { return errorf(kind, file, n, format, args...) }
		if strings.HasPrefix(s, "FATAL:") {
			return nil, bad("sysbench failed: %s", s)
		}
		if m := versionRe.FindStringSubmatch(s); m != nil {
			if o.version != "" {
				return nil, bad("a second sysbench version line (the first is line %d): one run per file", o.versionLine)
			}
			o.version, o.series, o.versionLine = m[1]+"."+m[2]+strings.TrimSuffix(m[3], ":"), m[1]+"."+m[2], n
			if o.series != "1.0" && o.series != "1.1" {
				return nil, bad("sysbench %s output: the importer reads sysbench 1.0 and 1.1", o.version)
			}
			continue
		}
		if o.version == "" {
			// Before the version line, run.sh writes the command line and "N CPUs".
			if m := cpusRe.FindStringSubmatch(s); m != nil {
				var err error
				if o.cpus, err = positive(m[1]); err != nil {
					return nil, bad("CPU count: %v", err)
				}
			} else if strings.Contains(s, " --") {
				for _, f := range strings.Fields(s) {
					if k, v, ok := strings.Cut(strings.TrimPrefix(f, "--"), "="); ok && strings.HasPrefix(f, "--") {
						o.args[strings.ReplaceAll(k, "_", "-")] = v
					}
				}
			}
			continue
		}
		if m := stampRe.FindStringSubmatch(s); m != nil {
			if err := o.stamp(m[1], m[2], n); err != nil {
				return nil, bad("%v", err)
			}
			continue
		}
		if m := threadsRe.FindStringSubmatch(s); m != nil {
			var err error
			if o.threads, err = positive(m[1]); err != nil {
				return nil, bad("thread count: %v", err)
			}
			o.seen["threads"] = n
			continue
		}
		var dst *float64
		var m []string
		if m = everyRe.FindStringSubmatch(s); m != nil {
			dst = &o.interval
		} else if m = rateRe.FindStringSubmatch(s); m != nil {
			dst = &o.rate
		} else if m = warmupRe.FindStringSubmatch(s); m != nil {
			dst = &o.warmup
		}
		if dst != nil {
			v, err := number(m[1])
			if err != nil {
				return nil, bad("%v", err)
			}
			*dst = v
			continue
		}
		switch s {
		case "SQL statistics:":
			if o.reportLine != 0 {
				return nil, bad("a second final report (the first starts on line %d): --report-checkpoints output is not one run", o.reportLine)
			}
			sec, o.reportLine = secSQL, n
			continue
		case "General statistics:", "Throughput:":
			sec = secGeneral
			continue
		case "Latency (ms):":
			sec = secLatency
			continue
		case "Threads fairness:":
			sec = secOther
			continue
		}
		if strings.HasPrefix(s, "Latency histogram") {
			sec = secOther
			continue
		}
		key, val, ok := strings.Cut(s, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		var err error
		switch sec {
		case secSQL:
			err = o.sqlLine(key, val, n)
		case secGeneral:
			err = o.generalLine(key, val, n)
		case secLatency:
			err = o.latencyLine(key, val, n)
		}
		if err != nil {
			return nil, bad("cannot read %q line: %v", key+":", err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, errorf(kind, file, o.lines+1, "%v", err)
	}
	return o, o.complete()
}

// stamp reads a line that starts "[ 10s ]": an intermediate report or, with
// --rate, the event queue's length.
func (o *output) stamp(at, rest string, line int) error {
	if m := queueRe.FindStringSubmatch(rest); m != nil {
		q, err := count(m[1])
		if err != nil {
			return fmt.Errorf("queue length: %v", err)
		}
		o.maxQueue = max(o.maxQueue, q)
		return nil
	}
	if !strings.HasPrefix(rest, "thds:") {
		return nil // something a Lua script printed with a timestamp
	}
	t, err := number(at)
	if err != nil {
		return fmt.Errorf("the intermediate report's time: %v", err)
	}
	m := intervalRe.FindStringSubmatch(rest)
	if m == nil {
		return fmt.Errorf("cannot read the intermediate report: want `thds: N tps: X qps: X (r/w/o: X/X/X) lat (ms,95%%): X err/s: X reconn/s: X`")
	}
	iv := interval{t: t, line: line}
	iv.pct, _ = strconv.Atoi(m[7])
	for i, p := range []*float64{&iv.tps, &iv.qps, &iv.reads, &iv.writes, &iv.other, nil /* the percentile */, &iv.lat, &iv.errs, &iv.reconn} {
		if p == nil {
			continue
		}
		v, err := number(m[i+2])
		if err != nil {
			return fmt.Errorf("cannot read the intermediate report: %v", err)
		}
		*p = v
	}
	o.samples = append(o.samples, iv)
	return nil
}

func (o *output) sqlLine(key, val string, n int) error {
	var err error
	switch key {
	case "read", "write", "other", "total": // "queries performed:"; queries: has the total
		_, err = count(val)
	case "transactions", "queries", "ignored errors", "reconnects":
		m := perSecRe.FindStringSubmatch(val)
		if m == nil {
			return fmt.Errorf("want `N (X per sec.)`, got %q", val)
		}
		c, err := count(m[1])
		if err != nil {
			return err
		}
		rate, err := number(m[2])
		if err != nil {
			return err
		}
		switch key {
		case "transactions":
			o.events, o.tps = c, rate
		case "queries":
			o.queries, o.qps = c, rate
		case "ignored errors":
			o.errors = c
		case "reconnects":
			o.reconnects = c
		}
		o.seen[key] = n
	}
	return err
}

func (o *output) generalLine(key, val string, n int) error {
	var err error
	switch key {
	case "total time", "time elapsed": // 1.0, 1.1
		o.seconds, err = number(strings.TrimSuffix(val, "s"))
		o.seen["time"] = n
	case "total number of events": // the same as transactions
		_, err = count(val)
	}
	return err
}

func (o *output) latencyLine(key, val string, n int) error {
	if key == "percentile stats" { // --percentile=0: "disabled"
		return nil
	}
	var dst *float64
	switch key {
	case "min":
		dst = &o.min
	case "avg":
		dst = &o.avg
	case "max":
		dst = &o.max
	case "sum":
		_, err := number(val)
		return err
	default:
		m := pctRe.FindStringSubmatch(key)
		if m == nil {
			return nil
		}
		p, _ := strconv.Atoi(m[1])
		v, err := number(val)
		o.pct[p] = v
		return err
	}
	v, err := number(val)
	*dst = v
	o.seen["latency "+key] = n
	return err
}

// complete checks that the lines a run needs were all there.
func (o *output) complete() error {
	missing := func(what string) error {
		return errorf(o.kind, o.file, o.lines, "no %s: is this sysbench run output?", what)
	}
	if o.version == "" {
		return missing(`"sysbench 1.x" version line`)
	}
	for _, k := range []struct{ key, what string }{
		{"threads", `"Number of threads:" line`},
		{"transactions", `"transactions:" line`},
		{"queries", `"queries:" line`},
		{"time", `"total time:" or "time elapsed:" line`},
		{"latency min", `"min:" latency line`},
		{"latency avg", `"avg:" latency line`},
		{"latency max", `"max:" latency line`},
	} {
		if o.seen[k.key] == 0 {
			return missing(k.what)
		}
	}
	every := o.every()
	for _, iv := range o.samples {
		if math.Round(iv.t-every) < 0 {
			return errorf(o.kind, o.file, iv.line, "the intermediate report at %gs ends before its first interval of %gs: fix or remove the file", iv.t, every)
		}
	}
	return nil
}

// every is the intermediate reports' interval in seconds: --report-interval,
// else the first report's time.
func (o *output) every() float64 {
	if o.interval == 0 && len(o.samples) > 0 {
		return o.samples[0].t
	}
	return o.interval
}

// krows is scan's Krows/s of one scan: the table size over the mean latency.
func (o *output) krows(tableSize int64) (float64, error) {
	v := krowsPerSec(tableSize, o.avg)
	if math.IsInf(v, 0) || v > maxFigure {
		return 0, errorf(o.kind, o.file, o.seen["latency avg"], "--table-size=%d over a mean latency of %g ms is %g Krows/s, out of range (above 1e9): fix or remove the file",
			tableSize, o.avg, v)
	}
	return v, nil
}

// tableSize is --table-size from the command line before the output.
func (o *output) tableSize() (int64, bool) {
	v, err := strconv.ParseInt(o.args["table-size"], 10, 64)
	return v, err == nil && v > 0
}

// fill sets what the output says on run: threads, loop, times, totals with
// Reported = QPS, samples and the version.
func (o *output) fill(run *result.Run) {
	run.Threads = o.threads
	run.Warmup = o.warmup
	run.Duration = o.seconds
	run.Params["sysbench_version"] = o.version
	run.Params["reconnects"] = strconv.FormatInt(o.reconnects, 10)
	for _, k := range []string{"table-size", "tables", "db-driver"} {
		if v, ok := o.args[k]; ok {
			run.Params[strings.ReplaceAll(k, "-", "_")] = v
		}
	}
	// The conditions it ran under, as qpslab's runs record them
	// (result.Run.Conditions): the client was sysbench's own, and the
	// table size is known when the output starts with its command line.
	run.Params["transport"] = "sysbench"
	if v, ok := o.args["table-size"]; ok {
		run.Params["rows"] = v
	}
	if v, ok := o.args["tables"]; ok {
		run.Params["tables"] = v
	}
	if p, ok := o.firstPct(); ok {
		run.Params["percentile"] = strconv.Itoa(p)
	}
	if o.args["db-driver"] == "pgsql" {
		run.Flavor = "postgres" // the mysql driver serves MySQL and MariaDB alike
	}
	if o.rate > 0 {
		// sysbench's --rate draws exponential gaps and its latency counts
		// the queue wait: the response time, not the service time.
		run.Loop, run.Rate, run.Arrivals = "open", o.rate, "poisson"
	}

	tot := &run.Totals
	tot.Seconds = o.seconds
	tot.Events = o.events
	tot.Statements = o.queries
	tot.Errors = o.errors
	tot.TPS, tot.QPS = o.tps, o.qps
	tot.MaxBacklog = o.maxQueue
	tot.Reported, tot.ReportedUnit = o.qps, "qps"
	tot.Response = result.Latency{Count: o.events, Min: msToUs(o.min), Mean: msToUs(o.avg), Max: msToUs(o.max)}
	for p, ms := range o.pct {
		setPct(&tot.Response, p, msToUs(ms))
	}
	if o.rate == 0 {
		tot.Service = tot.Response // closed loop: the same, as qpslab's engine records it
	}

	every := o.every()
	for _, iv := range o.samples {
		s := result.Sample{
			Second:     int(math.Round(iv.t - every)),
			Events:     int64(math.Round(iv.tps * every)),
			Statements: int64(math.Round(iv.qps * every)),
			Errors:     int64(math.Round(iv.errs * every)),
		}
		s.Response.Count = s.Events
		setPct(&s.Response, iv.pct, msToUs(iv.lat))
		if o.rate == 0 {
			s.Service = s.Response
		}
		run.Samples = append(run.Samples, s)
	}
}

// firstPct is the percentile sysbench printed: 95 unless --percentile said
// otherwise (forks print more than one; this is the lowest).
func (o *output) firstPct() (int, bool) {
	best := -1
	for p := range o.pct {
		if best < 0 || p < best {
			best = p
		}
	}
	return best, best >= 0
}

// setPct puts a percentile where result.Latency has a field for it; sysbench
// prints 95 unless --percentile says otherwise ("999th" is a fork's 99.9).
func setPct(l *result.Latency, p int, us float64) {
	switch p {
	case 50:
		l.P50 = us
	case 95:
		l.P95 = us
	case 99:
		l.P99 = us
	case 999:
		l.P999 = us
	}
}
