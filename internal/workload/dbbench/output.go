package dbbench

// db_bench's output is read by hand: it is text for people, documented
// only by the scripts that grep it (RocksDB's tools/benchmark.sh), and no
// library parses it. The formats read here, from RocksDB 5.x to 9.x:
//
//	readrandom   :      10.218 micros/op 3131616 ops/sec; 1254.3 MB/s (176144999 of 176144999 found)
//	multireadrandom :   10.164 micros/op 3148272 ops/sec; (177099990 of 177099990 found)
//	overwrite    :       7.854 micros/op 127320 ops/sec 1800.001 seconds 229176999 operations;   51.0 MB/s
//
// the --histogram block after it ("Microseconds per read:", Count, Min,
// Percentiles, the buckets), and the statistics the stats benchmark and
// --stats_interval_seconds print (the compaction table's Sum row, read by
// its header, whose columns differ between versions; Cumulative
// compaction; Flush(GB); Cumulative stall; Stalls(count) before 8.x, Write
// Stall (count) after; --statistics' tickers).

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Output is what one db_bench run printed.
type Output struct {
	Version    string           // RocksDB:    version 7.8.3
	Benchmarks []BenchLine      // one per benchmark that counts operations, in order
	Hists      []Histogram      // each "Microseconds per OP:" block, in order
	Stats      Stats            // the last of each statistic
	Counters   map[string]int64 // --statistics tickers (rocksdb.compact.write.bytes COUNT : N)
}

// BenchLine is a benchmark's result line.
type BenchLine struct {
	Name        string
	MicrosPerOp float64
	OpsPerSec   float64
	Seconds     float64 // 0 where the version does not print it (before 6.x)
	Ops         int64   // 0 where the version does not print it
	MBPerSec    float64
	HasMB       bool
	Found       int64 // reads: "(N of M found)"
	Of          int64
	Hist        int // index in Output.Hists of its --histogram block; -1 for none
	// Hists are the indexes of all its --histogram blocks, one per kind of
	// operation it does (readrandomwriterandom: read, then write).
	Hists []int
}

// Histogram is one --histogram block, in microseconds.
type Histogram struct {
	Op                         string // write, read, seek, op …
	Count                      int64
	Average, StdDev            float64
	Min, Median, Max           float64
	P50, P75, P99, P999, P9999 float64
	HasPercentiles             bool
	Buckets                    []Bucket
}

// Bucket is one line of a histogram's table: (Lo, Hi] and its count.
type Bucket struct {
	Lo, Hi float64
	Count  int64
}

// Stats are the last compaction and stall statistics printed.
type Stats struct {
	Uptime          float64 // seconds
	FlushGB         float64 // Flush(GB): cumulative
	CompactWriteGB  float64 // Cumulative compaction: X GB write
	CompactWriteMBs float64
	CompactReadGB   float64
	CompactSeconds  float64
	StallSeconds    float64 // Cumulative stall: H:M:S
	StallPct        float64
	Stalls          int64   // Stalls(count) less its *_with_compaction subsets; Write Stall (count)'s total-delays + total-stops
	WAmp            float64 // the compaction table's Sum row: W-Amp
	LSMBytes        float64 // the compaction table's Sum row: Size
	CompWallSecs    float64 // Sum row: Comp(sec)
	CompCPUSecs     float64 // Sum row: CompMergeCPU(sec)
	Has             map[string]bool
}

var (
	versionRE = regexp.MustCompile(`^RocksDB:\s+version (\S+)`)
	// name : X micros/op Y ops/sec[ S seconds N operations];[ M MB/s][ rest]
	benchRE = regexp.MustCompile(`^(\w+)\s*:\s*([0-9.]+) micros/op ([0-9.]+) ops/sec(?: ([0-9.]+) seconds ([0-9]+) operations)?;\s*(?:([0-9.]+) MB/s)?(.*)$`)
	foundRE = regexp.MustCompile(`\((\d+) of (\d+) found\)`)
	histRE  = regexp.MustCompile(`^Microseconds per (\w+)`)
	countRE = regexp.MustCompile(`^Count: (\d+)\s+Average: ([0-9.eE+-]+)\s+StdDev: ([0-9.eE+-]+)`)
	minRE   = regexp.MustCompile(`^Min: ([0-9.eE+-]+)\s+Median: ([0-9.eE+-]+)\s+Max: ([0-9.eE+-]+)`)
	pctRE   = regexp.MustCompile(`^Percentiles: P50: ([0-9.eE+-]+) P75: ([0-9.eE+-]+) P99: ([0-9.eE+-]+) P99\.9: ([0-9.eE+-]+) P99\.99: ([0-9.eE+-]+)`)
	// [       0,       1 ]      617   3.085%   3.085% #
	bucketRE  = regexp.MustCompile(`^[\[(]\s*([0-9.eE+-]+),\s*([0-9.eE+-]+)\s*\]\s+(\d+)\s`)
	uptimeRE  = regexp.MustCompile(`^Uptime\(secs\): ([0-9.]+) total`)
	flushRE   = regexp.MustCompile(`^Flush\(GB\): cumulative ([0-9.]+)`)
	compactRE = regexp.MustCompile(`^Cumulative compaction: ([0-9.]+) GB write, ([0-9.]+) MB/s write, ([0-9.]+) GB read, ([0-9.]+) MB/s read, ([0-9.]+) seconds`)
	stallRE   = regexp.MustCompile(`^Cumulative stall: (\d+):(\d+):([0-9.]+) H:M:S, ([0-9.]+) percent`)
	tickerRE  = regexp.MustCompile(`^(rocksdb\.[a-z0-9._-]+) COUNT : (\d+)`)
)

// Parse reads a db_bench run's output.
func Parse(r io.Reader) (*Output, error) {
	o := &Output{Counters: map[string]int64{}, Stats: Stats{Has: map[string]bool{}}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var hist *Histogram
	var header []string // the compaction table's columns
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		if hist != nil {
			if m := bucketRE.FindStringSubmatch(l); m != nil {
				n, _ := strconv.ParseInt(m[3], 10, 64)
				hist.Buckets = append(hist.Buckets, Bucket{Lo: num(m[1]), Hi: num(m[2]), Count: n})
				continue
			}
			switch {
			case countRE.MatchString(l):
				m := countRE.FindStringSubmatch(l)
				hist.Count, _ = strconv.ParseInt(m[1], 10, 64)
				hist.Average, hist.StdDev = num(m[2]), num(m[3])
				continue
			case minRE.MatchString(l):
				m := minRE.FindStringSubmatch(l)
				hist.Min, hist.Median, hist.Max = num(m[1]), num(m[2]), num(m[3])
				continue
			case pctRE.MatchString(l):
				m := pctRE.FindStringSubmatch(l)
				hist.P50, hist.P75, hist.P99, hist.P999, hist.P9999 = num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5])
				hist.HasPercentiles = true
				continue
			case strings.HasPrefix(l, "-----"):
				continue
			}
			hist = nil // the block ended
		}
		switch {
		case versionRE.MatchString(l):
			o.Version = versionRE.FindStringSubmatch(l)[1]
		case benchRE.MatchString(l):
			m := benchRE.FindStringSubmatch(l)
			b := BenchLine{Name: m[1], MicrosPerOp: num(m[2]), OpsPerSec: num(m[3]), Seconds: num(m[4]), Hist: -1}
			b.Ops, _ = strconv.ParseInt(m[5], 10, 64)
			if m[6] != "" {
				b.MBPerSec, b.HasMB = num(m[6]), true
			}
			if f := foundRE.FindStringSubmatch(m[7]); f != nil {
				b.Found, _ = strconv.ParseInt(f[1], 10, 64)
				b.Of, _ = strconv.ParseInt(f[2], 10, 64)
			}
			o.Benchmarks = append(o.Benchmarks, b)
		case histRE.MatchString(l):
			o.Hists = append(o.Hists, Histogram{Op: histRE.FindStringSubmatch(l)[1]})
			hist = &o.Hists[len(o.Hists)-1]
			if n := len(o.Benchmarks); n > 0 { // db_bench prints a benchmark's histograms right after its line
				b := &o.Benchmarks[n-1]
				if b.Hist < 0 {
					b.Hist = len(o.Hists) - 1
				}
				b.Hists = append(b.Hists, len(o.Hists)-1)
			}
		case strings.HasPrefix(l, "Level ") && strings.Contains(l, "Files") && strings.Contains(l, "Size"):
			header = strings.Fields(l)
		case strings.HasPrefix(l, " Sum ") && header != nil:
			o.Stats.sumRow(header, strings.Fields(l))
		case uptimeRE.MatchString(l):
			o.Stats.set("uptime", &o.Stats.Uptime, num(uptimeRE.FindStringSubmatch(l)[1]))
		case flushRE.MatchString(l):
			o.Stats.set("flush", &o.Stats.FlushGB, num(flushRE.FindStringSubmatch(l)[1]))
		case compactRE.MatchString(l):
			m := compactRE.FindStringSubmatch(l)
			o.Stats.set("compaction", &o.Stats.CompactWriteGB, num(m[1]))
			o.Stats.CompactWriteMBs, o.Stats.CompactReadGB, o.Stats.CompactSeconds = num(m[2]), num(m[3]), num(m[5])
		case stallRE.MatchString(l):
			m := stallRE.FindStringSubmatch(l)
			o.Stats.set("stall", &o.Stats.StallSeconds, num(m[1])*3600+num(m[2])*60+num(m[3]))
			o.Stats.StallPct = num(m[4])
		case strings.HasPrefix(l, "Stalls(count):"):
			o.Stats.Stalls, o.Stats.Has["stalls"] = stallCount(l), true
		case strings.HasPrefix(l, "Write Stall (count):"):
			if n, ok := writeStallCount(l); ok {
				o.Stats.Stalls, o.Stats.Has["stalls"] = n, true
			}
		case tickerRE.MatchString(l):
			m := tickerRE.FindStringSubmatch(l)
			o.Counters[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read db_bench's output: %w", err)
	}
	return o, nil
}

func (s *Stats) set(name string, field *float64, v float64) {
	*field = v
	s.Has[name] = true
}

// asGB turns a size in MB, GB or TB into GB.
func asGB(v float64, unit string) (float64, bool) {
	switch strings.ToUpper(unit) {
	case "KB":
		return v / (1 << 20), true
	case "MB":
		return v / 1024, true
	case "GB":
		return v, true
	case "TB":
		return v * 1024, true
	}
	return 0, false
}

// sizeBytes reads a size as the compaction table prints it: "12.87 MB".
func sizeBytes(v float64, unit string) (float64, bool) {
	gb, ok := asGB(v, unit)
	if !ok && strings.ToUpper(unit) == "B" {
		return v, true
	}
	return gb * (1 << 30), ok
}

// sumRow reads the compaction table's Sum row by its header, whose columns
// differ between versions; Size takes two fields (value and unit).
func (s *Stats) sumRow(header, row []string) {
	j := 0
	for _, col := range header {
		if j >= len(row) {
			return
		}
		v := row[j]
		switch col {
		case "Size":
			if j+1 < len(row) {
				if n, err := strconv.ParseFloat(v, 64); err == nil {
					if b, ok := sizeBytes(n, row[j+1]); ok {
						s.set("lsm", &s.LSMBytes, b)
					}
				}
			}
			j += 2
			continue
		case "Comp(sec)":
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				s.set("comp_sec", &s.CompWallSecs, n)
			}
		case "CompMergeCPU(sec)":
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				s.set("comp_cpu", &s.CompCPUSecs, n)
			}
		case "W-Amp":
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				s.set("w_amp", &s.WAmp, n)
			}
		}
		j++
	}
}

// stallCount sums Stalls(count): "0 level0_slowdown, 0 level0_slowdown_with_compaction, …,
// interval 0 total count", leaving out the *_with_compaction counts (each a
// part of the count before it), as benchmark.sh does.
func stallCount(l string) int64 {
	body := strings.TrimPrefix(l, "Stalls(count):")
	var n int64
	for _, item := range strings.Split(body, ",") {
		f := strings.Fields(item)
		if len(f) < 2 || f[0] == "interval" {
			continue
		}
		c, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || strings.HasSuffix(f[len(f)-1], "_with_compaction") {
			continue
		}
		n += c
	}
	return n
}

// writeStallCount reads the line that replaced Stalls(count) in RocksDB
// 8.x, "Write Stall (count): cf-l0-file-count-limit-delays-with-ongoing-compaction: 0, …,
// total-delays: 0, total-stops: 0": the delays and stops. The database's
// own line (write-buffer-manager-limit-stops) has no totals: false.
func writeStallCount(l string) (int64, bool) {
	var n int64
	found := false
	for _, item := range strings.Split(strings.TrimPrefix(l, "Write Stall (count):"), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok || (k != "total-delays" && k != "total-stops") {
			continue
		}
		c, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err == nil {
			n, found = n+c, true
		}
	}
	return n, found
}

// Bench returns the result line of benchmark name (the last, if it ran more
// than once).
func (o *Output) Bench(name string) (BenchLine, bool) {
	for i := len(o.Benchmarks) - 1; i >= 0; i-- {
		if o.Benchmarks[i].Name == name {
			return o.Benchmarks[i], true
		}
	}
	return BenchLine{}, false
}

// Percentile interpolates the q-th percentile (0–100) from the buckets, as
// RocksDB's HistogramStat::Percentile does: linearly within the bucket the
// rank falls in, clamped to the histogram's min and max. NaN without
// buckets.
func (h Histogram) Percentile(q float64) float64 {
	var total int64
	for _, b := range h.Buckets {
		total += b.Count
	}
	if total == 0 {
		return math.NaN()
	}
	threshold := float64(total) * q / 100
	var cum int64
	for _, b := range h.Buckets {
		cum += b.Count
		if float64(cum) < threshold {
			continue
		}
		left := b.Lo
		before := float64(cum - b.Count)
		pos := 0.0
		if b.Count > 0 {
			pos = (threshold - before) / float64(b.Count)
		}
		v := left + (b.Hi-left)*pos
		if h.Max > 0 && v > h.Max {
			v = h.Max
		}
		if v < h.Min {
			v = h.Min
		}
		return v
	}
	return h.Max
}

// HistsOf are b's --histogram blocks, in order.
func (o *Output) HistsOf(b BenchLine) []Histogram {
	var out []Histogram
	for _, i := range b.Hists {
		if i >= 0 && i < len(o.Hists) {
			out = append(out, o.Hists[i])
		}
	}
	return out
}

// Merge is the histogram of all of hs together (a benchmark's reads and
// writes): counts, mean, min and max combined, buckets added up (RocksDB's
// buckets are the same in every histogram), and the percentiles
// interpolated from them as RocksDB does. One histogram is itself.
func Merge(hs []Histogram) Histogram {
	if len(hs) == 1 {
		return hs[0]
	}
	m := Histogram{Op: "op", Min: math.Inf(1)}
	var sum float64
	type edge struct{ lo, hi float64 }
	counts := map[edge]int64{}
	var order []edge
	for _, h := range hs {
		if h.Count == 0 {
			continue
		}
		m.Count += h.Count
		sum += h.Average * float64(h.Count)
		m.Min, m.Max = math.Min(m.Min, h.Min), math.Max(m.Max, h.Max)
		for _, b := range h.Buckets {
			e := edge{b.Lo, b.Hi}
			if _, seen := counts[e]; !seen {
				order = append(order, e)
			}
			counts[e] += b.Count
		}
	}
	if m.Count == 0 {
		return Histogram{Op: "op"}
	}
	m.Average = sum / float64(m.Count)
	sort.Slice(order, func(i, j int) bool { return order[i].lo < order[j].lo })
	for _, e := range order {
		m.Buckets = append(m.Buckets, Bucket{Lo: e.lo, Hi: e.hi, Count: counts[e]})
	}
	if len(m.Buckets) > 0 {
		m.P50, m.P75, m.P99, m.P999, m.P9999 = m.Percentile(50), m.Percentile(75), m.Percentile(99), m.Percentile(99.9), m.Percentile(99.99)
		m.Median, m.HasPercentiles = m.P50, true
	}
	return m
}

// Figures are what a step reports beside its headline: the columns of
// benchmark.sh's report.tsv that a run of one step has (figures.go
// registers them).
func (o *Output) Figures(b BenchLine, h *Histogram) map[string]float64 {
	f := map[string]float64{"ops_sec": b.OpsPerSec, "usec_op": b.MicrosPerOp}
	if b.HasMB {
		f["mb_sec"] = b.MBPerSec
	}
	if h != nil && h.HasPercentiles {
		f["p75"], f["p99.9"], f["p99.99"] = h.P75, h.P999, h.P9999
	}
	if h != nil && h.Count > 0 {
		f["pmax"] = h.Max
	}
	s := o.Stats
	if s.Has["compaction"] {
		f["c_wgb"], f["c_mbps"] = s.CompactWriteGB, s.CompactWriteMBs
	}
	if w, ok := o.WriteAmp(); ok {
		f["w_amp"] = w
	}
	if s.Has["lsm"] {
		f["lsm_gb"] = s.LSMBytes / (1 << 30)
	}
	if s.Has["comp_sec"] {
		f["c_wsecs"] = s.CompWallSecs
	}
	if s.Has["comp_cpu"] {
		f["c_csecs"] = s.CompCPUSecs
	}
	if s.Has["stall"] {
		f["stall%"], f["stall_secs"] = s.StallPct, s.StallSeconds
	}
	if s.Has["stalls"] {
		f["nstall"] = float64(s.Stalls)
	}
	if s.Has["uptime"] {
		f["uptime"] = s.Uptime
	}
	return f
}

// WriteAmp is RocksDB's write amplification: bytes written by flush and
// compaction per byte flushed (the compaction table's Sum W-Amp, and what
// benchmark.sh's report.tsv says w_amp is). From --statistics' tickers when
// the run kept them (exact), else the table's figure (one decimal). false
// when nothing was flushed or neither is there.
func (o *Output) WriteAmp() (float64, bool) {
	c, cok := o.Counters["rocksdb.compact.write.bytes"]
	fl, fok := o.Counters["rocksdb.flush.write.bytes"]
	if cok && fok && fl > 0 {
		return float64(c+fl) / float64(fl), true
	}
	if o.Stats.Has["w_amp"] && o.Stats.WAmp > 0 {
		return o.Stats.WAmp, true
	}
	return 0, false
}
