package dbbench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/counters"
)

func parseFile(t *testing.T, name string) *Output {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// db_bench's output over the versions the seeds search (5.18 … 9.x): the
// 7.8.3 files were recorded from Debian's rocksdb-tools, the others
// written from the public format (tools/benchmark.sh reads the same
// lines). Each gives the step's totals and report.tsv's figures.
func TestParseVersions(t *testing.T) {
	for _, tt := range []struct {
		file, bench, version string
		ops, usec, secs      float64
		events               int64
		mb                   float64 // -1: not printed
		p50, p99, p999       float64
		hcount               int64
		stalls               float64
		wamp                 float64 // -1: none
		stallPct             float64
		lsmGB                float64
	}{
		{"db_bench-5.18-overwrite.txt", "overwrite", "5.18", 125963, 7.939, 226733400.0 / 125963, 226733400, 50.5, 4.68, 2148.70, 8012.33, 226733400, 1262, 14.1, 16.2, 563.79},
		{"db_bench-6.29-readrandom.txt", "readrandom", "6.29", 266125, 60.120, 15967501.0 / 266125, 15967501, 107.2, 51.02, 183.99, 398.12, 15967501, 0, -1, 0, 8.43},
		{"db_bench-6.29-multireadrandom.txt", "multireadrandom", "6.29", 1574136, 10.164, 94448160.0 / 1574136, 94448160, -1, 89.30, 295.40, 611.55, 9444816, 0, -1, 0, -1},
		{"db_bench-7.8.3-fillseq.txt", "fillseq", "7.8.3", 173266, 5.771, 0.289, 50000, 69.4, 0.63, 3.41, 1825.00, 50000, 70, 1.0, 59.9, 11.26 / 1024},
		{"db_bench-7.8.3-readwhilewriting.txt", "readwhilewriting", "7.8.3", 25204, 78.096, 3.214, 80998, 10.1, 9.90, 212.76, 18869.91, 80998, 0, 4.2, 0, 12.53 / 1024},
		{"db_bench-7.8.3-multireadrandom.txt", "multireadrandom", "7.8.3", 48301, 20.680, 2.008, 96990, 19.3, 82.84, 4029.38, 12104.26, 9699, 0, 66.0, 0, 12.26 / 1024},
		{"db_bench-7.8.3-revrange.txt", "seekrandom", "7.8.3", 10814, 92.336, 2.034, 21999, 43.3, 31.72, 1220.53, 10925.26, 21999, 0, 1.0, 0, 13.03 / 1024},
		{"db_bench-7.8.3-overwriteandwait.txt", "overwrite", "7.8.3", 16944, 59.014, 3.187, 53999, 6.8, 5.47, 1156.70, 10434.96, 53999, 59, (48703957.0 + 12762274) / 12762274, 18.9, 12.97 / 1024},
		{"db_bench-9.7-overwriteandwait.txt", "overwrite", "9.7.3", 45862, 21.804, 1800.004, 82551999, 18.5, 3.12, 12.13, 3011.38, 82551999, 47, 11.5, 2.7, 21.05},
	} {
		t.Run(tt.file, func(t *testing.T) {
			o := parseFile(t, tt.file)
			if o.Version != tt.version {
				t.Errorf("version %q, want %q", o.Version, tt.version)
			}
			tot, err := totals(o, tt.bench, nil)
			if err != nil {
				t.Fatal(err)
			}
			f := tot.Figures
			if !near(f["ops_sec"], tt.ops) || !near(f["usec_op"], tt.usec) || tot.Events != tt.events || !near(tot.Seconds, tt.secs) {
				t.Errorf("ops/s %v µs/op %v events %d seconds %v; want %v %v %d %v", f["ops_sec"], f["usec_op"], tot.Events, tot.Seconds, tt.ops, tt.usec, tt.events, tt.secs)
			}
			if mb, ok := f["mb_sec"]; tt.mb < 0 && ok || tt.mb >= 0 && !near(mb, tt.mb) {
				t.Errorf("MB/s %v (%v), want %v", mb, ok, tt.mb)
			}
			r := tot.Response
			if r.Count != tt.hcount || !near(r.P50, tt.p50) || !near(r.P99, tt.p99) || !near(r.P999, tt.p999) {
				t.Errorf("latency %+v, want count %d p50 %v p99 %v p99.9 %v", r, tt.hcount, tt.p50, tt.p99, tt.p999)
			}
			if r.Max != f["pmax"] || r.Max <= 0 || r.P95 < r.P50 || r.P95 > r.P99 || r != tot.Service {
				t.Errorf("max %v (pmax %v), p95 %v between p50 %v and p99 %v; service %+v", r.Max, f["pmax"], r.P95, r.P50, r.P99, tot.Service)
			}
			if f["nstall"] != tt.stalls || !near(f["stall%"], tt.stallPct) {
				t.Errorf("stalls %v, stall%% %v; want %v, %v", f["nstall"], f["stall%"], tt.stalls, tt.stallPct)
			}
			if w, ok := f["w_amp"]; tt.wamp < 0 && ok || tt.wamp >= 0 && !near(w, tt.wamp) {
				t.Errorf("w_amp %v (%v), want %v", w, ok, tt.wamp)
			}
			if l, ok := f["lsm_gb"]; tt.lsmGB < 0 && ok || tt.lsmGB >= 0 && math.Abs(l-tt.lsmGB) > 1e-9 {
				t.Errorf("lsm_gb %v (%v), want %v", l, ok, tt.lsmGB)
			}
		})
	}
}

// The figures a long overwrite prints: compaction GB, rate and seconds from
// the Sum row (read by its header: 5.18's has no CompMergeCPU column), stall
// time, and the stall count less the *_with_compaction subsets (5.x–7.x) or
// total-delays + total-stops (8.x on).
func TestParseStatistics(t *testing.T) {
	o := parseFile(t, "db_bench-5.18-overwrite.txt")
	f := o.Figures(o.Benchmarks[0], &o.Hists[0])
	if f["c_wgb"] != 1313.90 || f["c_mbps"] != 747.44 || f["c_wsecs"] != 17618 || f["stall_secs"] != 4*60+51.3 || f["uptime"] != 1800.1 {
		t.Errorf("5.18 figures %v", f)
	}
	if _, ok := f["c_csecs"]; ok {
		t.Error("5.18 prints no CompMergeCPU, yet c_csecs")
	}
	o = parseFile(t, "db_bench-9.7-overwriteandwait.txt")
	f = o.Figures(o.Benchmarks[0], &o.Hists[0])
	if f["c_csecs"] != 2221.19 || f["c_wsecs"] != 2750.58 || !near(f["stall_secs"], 72.044) || f["nstall"] != 47 {
		t.Errorf("9.7 figures %v", f)
	}
	for _, l := range []struct {
		line string
		n    int64
		ok   bool
	}{
		{"Write Stall (count): write-buffer-manager-limit-stops: 3", 0, false},
		{"Write Stall (count): l0-file-count-limit-delays: 4, total-delays: 4, total-stops: 1", 5, true},
	} {
		if n, ok := writeStallCount(l.line); n != l.n || ok != l.ok {
			t.Errorf("%q: %d %v", l.line, n, ok)
		}
	}
}

// The percentiles interpolated from the buckets are the ones db_bench
// prints (RocksDB's HistogramStat::Percentile): P95, which it does not
// print, comes the same way.
func TestHistogramPercentile(t *testing.T) {
	for _, file := range []string{"db_bench-7.8.3-fillseq.txt", "db_bench-7.8.3-readwhilewriting.txt", "db_bench-7.8.3-overwriteandwait.txt"} {
		o := parseFile(t, file)
		h := o.Hists[o.Benchmarks[0].Hist]
		for _, p := range []struct{ q, printed float64 }{{50, h.P50}, {75, h.P75}, {99, h.P99}, {99.9, h.P999}} {
			if got := h.Percentile(p.q); math.Abs(got-p.printed) > 0.006*math.Max(1, p.printed) {
				t.Errorf("%s: P%v from the buckets %v, printed %v", file, p.q, got, p.printed)
			}
		}
		if math.IsNaN(h.Percentile(95)) {
			t.Errorf("%s: no P95", file)
		}
	}
	if !math.IsNaN((Histogram{}).Percentile(50)) {
		t.Error("an empty histogram has a percentile")
	}
}

// A step without its result line (db_bench failed before it) is an error
// that names the benchmark; lines that are not db_bench's are ignored.
func TestParseWithoutResult(t *testing.T) {
	o, err := Parse(strings.NewReader("RocksDB:    version 8.6.7\nsomething else\nfillseq : garbage\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := totals(o, "fillseq", nil); err == nil || !strings.Contains(err.Error(), "no result line for fillseq") {
		t.Errorf("totals: %v", err)
	}
	if o.Version != "8.6.7" || len(o.Benchmarks) != 0 {
		t.Errorf("parsed %+v", o)
	}
}

// The report file db_bench writes once a second, read as it grows: a line
// is taken only whole, seconds are numbered on from where the last command
// of the step ended.
func TestReportTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.csv")
	tail := &reportTail{path: p, second: 3}
	if got := tail.read(); got != nil {
		t.Errorf("no file yet: %v", got)
	}
	os.WriteFile(p, []byte("secs_elapsed,interval_qps\n1,23108\n2,217"), 0o644)
	got := tail.read()
	if len(got) != 1 || got[0].Second != 3 || got[0].Events != 23108 {
		t.Fatalf("first read %+v", got)
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("77\n3,19101\nbad,line\n4,-5\n")
	f.Close()
	got = tail.read()
	if len(got) != 2 || got[0].Second != 4 || got[0].Events != 21777 || got[1].Second != 5 || got[1].Events != 19101 || tail.second != 6 {
		t.Errorf("second read %+v (next %d)", got, tail.second)
	}
}

// readrandomwriterandom (--ycsb's workloada) prints a histogram per kind
// of operation, reads then writes: both belong to its line, and as YCSB's
// workloada its totals have each as a kind of its own, with db_bench's
// percentiles, and all its operations together as its latencies (the
// buckets added up). Outside --ycsb a step's latencies stay its first
// histogram's.
func TestParseReadRandomWriteRandom(t *testing.T) {
	o := parseFile(t, "db_bench-7.8.3-readrandomwriterandom.txt")
	b, ok := o.Bench("readrandomwriterandom")
	if !ok || len(b.Hists) != 2 || b.Hist != b.Hists[0] || o.Hists[b.Hists[0]].Op != "read" || o.Hists[b.Hists[1]].Op != "write" {
		t.Fatalf("line %+v, histograms %d", b, len(o.Hists))
	}
	w, _ := ycsbWorkloadNamed("workloada")
	tot, err := totals(o, "readrandomwriterandom", w.kinds)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Events != 308998 || len(tot.Ops) != 2 || !near(tot.Figures["ops_sec"], 153309) {
		t.Fatalf("totals %+v", tot)
	}
	rd, _ := tot.Op("read")
	up, _ := tot.Op("update")
	if rd.Count != 154500 || up.Count != 154498 || !near(rd.Response.P99, 10.84) || !near(up.Response.P99, 103.74) || !near(up.Response.Max, 40965) ||
		!near(rd.Rate, 154500/2.016) || rd.Response.Count != rd.Count {
		t.Errorf("read %+v, update %+v", rd, up)
	}
	r := tot.Response
	if r.Count != rd.Count+up.Count || r.Max != 40965 || r.Min != 0 || !near(r.Mean, (4.9028*154500+21.1756*154498)/308998) ||
		r.P50 <= rd.Response.P50 || r.P50 >= up.Response.P50 || r.P99 <= rd.Response.P99 || r.P99 >= up.Response.P99 {
		t.Errorf("all operations' latencies %+v", r)
	}
	plain, err := totals(o, "readrandomwriterandom", nil)
	if err != nil || plain.Response.Count != 154500 || len(plain.Ops) != 0 {
		t.Errorf("outside --ycsb: %+v, %v", plain.Response, err)
	}
	// A db_bench that names its histograms otherwise gives no kinds rather
	// than wrong ones.
	if tot, err := totals(o, "readrandomwriterandom", map[string]string{"read": "read"}); err != nil || len(tot.Ops) != 0 {
		t.Errorf("an unmapped histogram: ops %+v, %v", tot.Ops, err)
	}
}

// --statistics' block cache tickers become the cache figures the IO-bound
// verdict reads: misses per op and the hit ratio; without them, none.
func TestCacheFigures(t *testing.T) {
	f := map[string]float64{}
	cacheFigures(&Output{Counters: map[string]int64{"rocksdb.block.cache.miss": 300, "rocksdb.block.cache.hit": 700}}, 1000, f)
	if f[counters.FigureMissPerOp] != 0.3 || f[counters.FigureHitPct] != 70 {
		t.Errorf("figures %v", f)
	}
	none := map[string]float64{}
	cacheFigures(&Output{Counters: map[string]int64{"rocksdb.block.cache.hit": 700}}, 1000, none)
	cacheFigures(&Output{Counters: map[string]int64{"rocksdb.block.cache.miss": 3}}, 0, none)
	if len(none) != 0 {
		t.Errorf("without misses or ops: %v", none)
	}
}
