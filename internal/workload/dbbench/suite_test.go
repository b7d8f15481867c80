package dbbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// recorded keeps what a plan tells its recorder and watcher.
type recorded struct {
	mu      sync.Mutex
	runs    []result.Run
	samples map[string]int // per test, samples streamed as the run went
	warns   []string
}

type rec struct {
	r    *recorded
	test string
}

func (x rec) Sample(result.Sample) { x.r.mu.Lock(); x.r.samples[x.test]++; x.r.mu.Unlock() }
func (x rec) Done(r result.Run) error {
	x.r.mu.Lock()
	x.r.runs = append(x.r.runs, r)
	x.r.mu.Unlock()
	return nil
}

// runPlan runs the db_bench suite with values (over the defaults, on
// rocksdb-system) in h, and returns what was recorded and Run's error.
func runPlan(t *testing.T, ctx context.Context, h home.Home, values map[string]string) (*recorded, error) {
	t.Helper()
	s, err := suite.Get(Name)
	if err != nil {
		t.Fatal(err)
	}
	v := suite.Defaults(plan.Common, s.Params()).With("build", "rocksdb-system").With("seed", "7")
	for k, x := range values {
		v = v.With(k, x)
	}
	p, err := plan.Parse(s, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Resolve(ctx, h); err != nil {
		t.Fatalf("%v (make setup installs rocksdb-tools)", err)
	}
	r := &recorded{samples: map[string]int{}}
	p.Record = func(start result.Run) (plan.Recorder, error) { return rec{r, start.Test}, nil }
	p.Watch.Warn = func(l string) { r.mu.Lock(); r.warns = append(r.warns, l); r.mu.Unlock() }
	return r, p.Run(ctx, h)
}

func newHome(t *testing.T) home.Home {
	h := testenv.Home(t)
	t.Setenv("QPSLAB_HOME", h.Root)
	t.Cleanup(func() {
		if left := testenv.Processes(h.Root); len(left) > 0 {
			t.Errorf("processes left behind: %q", left)
		}
	})
	return h
}

// The whole suite at a tiny size against Debian's db_bench, both workloads,
// with the shipped odirect option set: every step in benchmark_compare.sh's
// order ends ok with db_bench's figures, the timed steps have per-second
// samples, the tests their hardware cost, and the scratch folder is gone.
func TestSuiteOnDebian(t *testing.T) {
	h := newHome(t)
	ctx := context.Background()
	r, err := runPlan(t, ctx, h, map[string]string{"size": "0.01", "seconds": "2", "settle-secs": "1", "workload": "cached,iobound", "config": "odirect"})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, run := range r.runs {
		order = append(order, run.Test)
	}
	want := "fillseq.cached revrange.cached readrandom.cached fwdrange.cached multireadrandom.cached overwritesome.cached flush_mt_l0.cached " +
		"revrangewhilewriting.cached fwdrangewhilewriting.cached readwhilewriting.cached overwriteandwait.cached " +
		"fillseq.iobound revrange.iobound readrandom.iobound fwdrange.iobound multireadrandom.iobound overwritesome.iobound flush_mt_l0.iobound " +
		"revrangewhilewriting.iobound fwdrangewhilewriting.iobound readwhilewriting.iobound overwriteandwait.iobound"
	if strings.Join(order, " ") != want {
		t.Errorf("ran %s", strings.Join(order, " "))
	}
	for _, run := range r.runs {
		if run.Status != result.OK {
			t.Errorf("%s: %s %s", run.Test, run.Status, run.Error)
			continue
		}
		if run.Suite != Name || run.Flavor != "rocksdb" || !strings.HasPrefix(run.Config, "odirect@") || run.Params["rows"] != "10000" || run.Params["tcp"] != "" {
			t.Errorf("%s: recorded as %s %s %s %v", run.Test, run.Suite, run.Flavor, run.Config, run.Params)
		}
		wl := run.Params["workload"]
		if !strings.HasSuffix(run.Test, "."+wl) {
			t.Errorf("%s: workload %q", run.Test, wl)
		}
		if run.Role == result.RoleWarm {
			continue
		}
		f := run.Totals.Figures
		if run.Totals.Reported <= 0 || run.Totals.Reported != f["ops_sec"] || f["usec_op"] <= 0 || run.Totals.Events <= 0 || run.Totals.Seconds <= 0 || run.Totals.ReportedUnit != "ops/s" {
			t.Errorf("%s: totals %+v", run.Test, run.Totals)
		}
		if run.Totals.Response.Count <= 0 || run.Totals.Response.P99 < run.Totals.Response.P50 {
			t.Errorf("%s: latency %+v", run.Test, run.Totals.Response)
		}
		if _, ok := f["lsm_gb"]; !ok {
			t.Errorf("%s: no LSM size in %v", run.Test, f)
		}
		if run.HW == nil || run.HW.Op != "op" || run.HW.OpsPerSec != run.Totals.Reported {
			t.Errorf("%s: hardware %+v", run.Test, run.HW)
		}
		// A step of 2 seconds has the report file's line of its first second.
		timed := strings.HasPrefix(run.Test, "readrandom") || strings.HasPrefix(run.Test, "readwhilewriting")
		if timed && len(run.Samples) == 0 || r.samples[run.Test] != len(run.Samples) {
			t.Errorf("%s: %d samples kept, %d streamed", run.Test, len(run.Samples), r.samples[run.Test])
		}
	}
	// Beside each result, the compaction readahead RocksDB ran with (7.8.3
	// and earlier raise 0 to 2 MB under O_DIRECT: its OPTIONS file says
	// so) and the disk's max_sectors_kb; iobound's tests have the block
	// cache's misses from --statistics and the IO-bound verdict.
	d, hasDisk := host.StorageOf(host.Real, h.Sandboxes()).SmallestMaxSectors()
	for _, run := range r.runs {
		if run.Role == result.RoleWarm || run.Status != result.OK {
			continue
		}
		f := run.Totals.Figures
		if ra, ok := f[FigureReadaheadKB]; !ok || ra <= 0 {
			t.Errorf("%s: readahead_kb %v, %v (odirect's compaction reads ahead)", run.Test, ra, ok)
		}
		if ms, ok := f[FigureMaxSectorsKB]; hasDisk && (!ok || ms != float64(d.MaxSectorsKB)) {
			t.Errorf("%s: max_sectors_kb %v, want %d", run.Test, ms, d.MaxSectorsKB)
		}
		_, miss := f[counters.FigureMissPerOp]
		var verdict *result.Verdict
		for i, v := range run.Verdicts {
			if v.Name == counters.VerdictIOBound {
				verdict = &run.Verdicts[i]
			}
		}
		iob := run.Params["workload"] == IOBound
		if miss != iob {
			t.Errorf("%s: block cache misses recorded %v (statistics on for iobound only)", run.Test, miss)
		}
		reads := !strings.HasPrefix(run.Test, "overwrite") // the write-only steps' misses are compaction's
		if (verdict != nil) != (iob && run.Role == result.RoleTest && reads) {
			t.Errorf("%s: IO-bound verdict %+v", run.Test, verdict)
		}
		if run.Test == "readrandom.iobound" && verdict != nil && !verdict.OK {
			t.Errorf("readrandom.iobound with O_DIRECT and a block cache of a sixteenth: %+v", *verdict)
		}
	}
	for _, run := range r.runs {
		if run.Test == "overwriteandwait.cached" {
			if _, ok := run.Totals.Figures["w_amp"]; !ok {
				t.Errorf("overwriteandwait has no write amplification: %v", run.Totals.Figures)
			}
		}
		if run.Test == "readrandom.iobound" && run.Params["cache_mb"] >= "1" {
			t.Errorf("the IO-bound block cache is %s MB, want a sixteenth of 4 MB", run.Params["cache_mb"])
		}
	}
	if _, err := os.Stat(sandbox.Dir(h, "rocksdb-system.odirect")); !os.IsNotExist(err) {
		t.Errorf("the scratch folder outlived the run: %v", err)
	}
}

// A compaction readahead above the datadir disk's max_sectors_kb is warned
// of once, as the run starts, and flags every run; at or below it, nothing.
func TestReadaheadWarning(t *testing.T) {
	h := newHome(t)
	ctx := context.Background()
	if err := os.MkdirAll(h.Sandboxes(), 0o755); err != nil {
		t.Fatal(err)
	}
	d, ok := host.StorageOf(host.Real, h.Sandboxes()).SmallestMaxSectors()
	if !ok {
		testenv.Skip(t, "the home is on no block device with max_sectors_kb")
	}
	write := func(name, text string) {
		p := filepath.Join(t.TempDir(), name+".flags")
		os.WriteFile(p, []byte(text), 0o644)
		if _, err := (config.Store{Dir: h.Configs()}).AddWith(name, p, config.AddOptions{Base: "default"}); err != nil {
			t.Fatal(err)
		}
	}
	write("above", fmt.Sprintf("--compaction_readahead_size=%dK\n", 2*d.MaxSectorsKB))
	write("atmax", fmt.Sprintf("--compaction_readahead_size=%dK\n", d.MaxSectorsKB))
	r, err := runPlan(t, ctx, h, map[string]string{"size": "0.01", "seconds": "1", "settle-secs": "0", "tests": "readrandom", "config": "above,atmax"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.warns) != 1 || !strings.Contains(r.warns[0], fmt.Sprintf("compaction_readahead_size %d KB (set by config above) is above max_sectors_kb %d of %s", 2*d.MaxSectorsKB, d.MaxSectorsKB, d.Name)) {
		t.Errorf("warnings %q", r.warns)
	}
	for _, run := range r.runs {
		flagged := false
		for _, f := range run.HW.Flags {
			flagged = flagged || f.Name == "readahead"
		}
		above := strings.HasPrefix(run.Config, "above@")
		if flagged != above {
			t.Errorf("%s with %s: flagged %v", run.Test, run.Config, flagged)
		}
		want := map[bool]float64{true: float64(2 * d.MaxSectorsKB), false: float64(d.MaxSectorsKB)}[above]
		if ra := run.Totals.Figures[FigureReadaheadKB]; ra != want || run.Totals.Figures[FigureMaxSectorsKB] != float64(d.MaxSectorsKB) {
			t.Errorf("%s with %s: readahead_kb %v, max_sectors_kb %v", run.Test, run.Config, ra, run.Totals.Figures[FigureMaxSectorsKB])
		}
	}
}

// Interrupted, db_bench stops at once, the run is recorded as aborted with
// the seconds it measured, and nothing is left: no process, no folder.
func TestInterrupt(t *testing.T) {
	h := newHome(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for { // cancel once readrandom has reported two seconds
			time.Sleep(200 * time.Millisecond)
			ents, _ := filepath.Glob(filepath.Join(h.Sandboxes(), "*", "data", "cached.readrandom.1.report.csv"))
			if len(ents) > 0 {
				if b, _ := os.ReadFile(ents[0]); strings.Count(string(b), "\n") >= 3 {
					cancel()
					return
				}
			}
		}
	}()
	t0 := time.Now()
	r, err := runPlan(t, ctx, h, map[string]string{"size": "0.01", "seconds": "600", "settle-secs": "0", "tests": "readrandom"})
	if err != context.Canceled {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if time.Since(t0) > 2*time.Minute {
		t.Errorf("the interrupted run took %s", time.Since(t0))
	}
	if len(r.runs) != 2 || r.runs[1].Status != result.Aborted || len(r.runs[1].Samples) < 2 {
		t.Fatalf("runs %+v", r.runs)
	}
	if ents, _ := os.ReadDir(h.Sandboxes()); len(ents) != 0 {
		t.Errorf("left in the sandboxes folder: %v", ents)
	}
}

// --cache: iobound's block cache is that fraction of the raw data, and a
// run records it only when it was given (runs before --cache record none);
// with no iobound workload it is refused, as are fractions outside (0, 1).
func TestCacheParam(t *testing.T) {
	s, err := suite.Get(Name)
	if err != nil {
		t.Fatal(err)
	}
	v := suite.Defaults(plan.Common, s.Params()).With("workload", "cached,iobound").With("size", "1")
	p, err := s.Configure(v.With("cache", "0.25"))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range p.Steps {
		iob := strings.HasSuffix(st.Test, "."+IOBound)
		if want := map[bool]string{true: "0.25", false: ""}[iob]; st.Params["cache"] != want {
			t.Errorf("%s records cache=%q, want %q", st.Test, st.Params["cache"], want)
		}
		if iob && st.Params["cache_mb"] != "100.14" { // a quarter of 1e6 × 420 bytes
			t.Errorf("%s: cache_mb %s", st.Test, st.Params["cache_mb"])
		}
	}
	if p, err := s.Configure(v); err != nil || p.Steps[len(p.Steps)-1].Params["cache"] != "" {
		t.Errorf("the default cache is recorded: %v", err)
	}
	for val, want := range map[string]string{"1": "--cache 1", "NaN": "--cache NaN", "-1": "--cache -1"} {
		if _, err := s.Configure(v.With("cache", val)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--cache %s: %v", val, err)
		}
	}
	if _, err := s.Configure(v.With("workload", "cached").With("cache", "0.1")); err == nil || !strings.Contains(err.Error(), "add iobound to --workload") {
		t.Errorf("--cache without iobound: %v", err)
	}
}

// --ycsb on Debian's db_bench: YCSB's load, the settle and every workload
// db_bench runs, at 2000 records of 10 × 100 bytes for 2 seconds each at
// two threads: each a stored run named as YCSB's workload, ended ok, with
// ops/s > 0 from db_bench's line, the latencies of its histograms, and its
// operations as YCSB's kinds, each with its rate and response times (the
// reads and writes of workloada in its 50/50 proportion).
func TestYCSBOnDebian(t *testing.T) {
	h := newHome(t)
	ctx := context.Background()
	r, err := runPlan(t, ctx, h, map[string]string{"ycsb": "workload*", "size": "0.002", "seconds": "2", "threads": "2", "fieldcount": "10", "fieldlength": "100"})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, run := range r.runs {
		order = append(order, run.Test)
	}
	if got, want := strings.Join(order, " "), "load.cached settle.cached workloada.cached workloadb.cached workloadc.cached workloade.cached workloadf.cached"; got != want {
		t.Fatalf("ran %s, want %s", got, want)
	}
	kinds := map[string][]string{"workloada": {"read", "update"}, "workloadb": {"read", "update"}, "workloadc": {"read"}, "workloade": {"scan"}, "workloadf": {"read-modify-write"}}
	for _, run := range r.runs {
		if run.Status != result.OK {
			t.Errorf("%s: %s %s", run.Test, run.Status, run.Error)
			continue
		}
		if run.Params["rows"] != "2000" || run.Params["fieldcount"] != "10" || run.Params["fieldlength"] != "100" || run.Params["load"] != "filluniquerandom" {
			t.Errorf("%s: params %v", run.Test, run.Params)
		}
		if run.Role == result.RoleWarm {
			continue
		}
		tot := run.Totals
		if tot.Reported <= 0 || tot.Reported != tot.Figures["ops_sec"] || tot.Events <= 0 || tot.Seconds <= 0 || tot.Response.Count != tot.Events {
			t.Errorf("%s: totals %+v", run.Test, tot)
		}
		if run.HW == nil || run.HW.OpsPerSec != tot.Reported {
			t.Errorf("%s: hardware %+v", run.Test, run.HW)
		}
		wl, _, _ := strings.Cut(run.Test, ".")
		if wl == "load" {
			if run.Threads != 1 || tot.Events != 2000 || len(tot.Ops) != 0 {
				t.Errorf("load: %d threads, %d events, ops %+v; want 1 thread putting each of the 2000 keys once", run.Threads, tot.Events, tot.Ops)
			}
			continue
		}
		writes := strconv.FormatBool(wl == "workloada" || wl == "workloadb" || wl == "workloadf")
		if run.Threads != 2 || run.Params["distribution"] != "uniform" || run.Params["operations"] != strings.Join(kinds[wl], ",") || run.Params["writes"] != writes {
			t.Errorf("%s: threads %d, params %v", run.Test, run.Threads, run.Params)
		}
		var got []string
		var n int64
		for _, o := range tot.Ops {
			got = append(got, o.Kind)
			n += o.Count
			if o.Count <= 0 || o.Rate <= 0 || o.Response.Count != o.Count || o.Response.P99 < o.Response.P50 || o.Response.P50 <= 0 && o.Response.Max <= 0 {
				t.Errorf("%s: %s %+v", run.Test, o.Kind, o)
			}
		}
		if strings.Join(got, ",") != strings.Join(kinds[wl], ",") || n != tot.Events {
			t.Errorf("%s: kinds %v counting %d of %d events, want %v", run.Test, got, n, tot.Events, kinds[wl])
		}
		if wl == "workloada" {
			rd, _ := tot.Op("read")
			up, _ := tot.Op("update")
			if d := rd.Count - up.Count; d < -200 || d > 200 { // batches of 100: 50 reads, then 50 writes, per thread
				t.Errorf("workloada: %d reads, %d updates", rd.Count, up.Count)
			}
		}
		if wl == "workloadb" {
			rd, _ := tot.Op("read")
			if share := float64(rd.Count) / float64(tot.Events); share < 0.9 || share > 0.99 {
				t.Errorf("workloadb: reads are %.3f of its operations", share)
			}
		}
	}
}

// The claim docs/ycsb.md makes of the load, against the db_bench the
// tests run: filluniquerandom puts every key (a readrandom over them finds
// each it reads), fillrandom draws keys with repetition (about 63% of the
// key space is there, so reads miss).
func TestYCSBLoadFillsEveryKey(t *testing.T) {
	h := newHome(t)
	l, err := testenv.Build(t, h, "rocksdb-system").Layout()
	if err != nil {
		t.Fatal(err)
	}
	found := func(fill string) (int64, int64) {
		db := filepath.Join(t.TempDir(), "db")
		common := []string{"--db=" + db, "--num=2000", "--key_size=23", "--value_size=100", "--seed=7"}
		for _, args := range [][]string{{"--benchmarks=" + fill, "--use_existing_db=0"}, {"--benchmarks=readrandom", "--use_existing_db=1", "--reads=4000"}} {
			cmd := exec.Command(l.Server, append(common, args...)...)
			cmd.Env = l.Env(nil)
			raw, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("db_bench %v: %v: %s", args, err, raw)
			}
			if strings.Contains(args[0], "readrandom") {
				o, err := Parse(strings.NewReader(string(raw)))
				if err != nil {
					t.Fatal(err)
				}
				b, ok := o.Bench("readrandom")
				if !ok || b.Of == 0 {
					t.Fatalf("no readrandom line: %s", raw)
				}
				return b.Found, b.Of
			}
		}
		return 0, 0
	}
	if f, of := found("filluniquerandom"); f != of {
		t.Errorf("after filluniquerandom, readrandom found %d of %d", f, of)
	}
	if f, of := found("fillrandom"); f >= of*9/10 || f <= of/2 {
		t.Errorf("after fillrandom, readrandom found %d of %d; want about 63%%", f, of)
	}
}

// --ycsb's bad input, one line each before anything runs: workloadd (which
// db_bench has no benchmark for, and why), an unknown workload, the
// sequence's flags, --fieldcount without --ycsb; and an option set that
// changes what makes a benchmark a YCSB workload.
func TestYCSBBadInput(t *testing.T) {
	s, err := suite.Get(Name)
	if err != nil {
		t.Fatal(err)
	}
	v := suite.Defaults(plan.Common, s.Params())
	for _, c := range []struct {
		values map[string]string
		want   string
	}{
		{map[string]string{"ycsb": "workloadd"}, "--ycsb workloadd: db_bench has no read-latest request distribution"},
		{map[string]string{"ycsb": "workloada,workloadd"}, "--ycsb workloadd: db_bench has no read-latest request distribution"},
		{map[string]string{"ycsb": "workloadg"}, "--ycsb workloadg matches no YCSB workload: give workloada, workloadb, workloadc, workloade, workloadf"},
		{map[string]string{"ycsb": "workloada", "tests": "readrandom"}, "--tests is of benchmark_compare.sh's sequence, which --ycsb replaces"},
		{map[string]string{"ycsb": "workloada", "load": "bulkload"}, "--load is of benchmark_compare.sh's sequence"},
		{map[string]string{"ycsb": "workloada", "fieldcount": "0"}, "--fieldcount 0: give a whole number from 1 to 100"},
		{map[string]string{"fieldlength": "10"}, "--fieldlength sizes YCSB's records: use it with --ycsb"},
		{map[string]string{"ycsb": ","}, "--ycsb: name YCSB workloads"},
	} {
		x := v
		for k, val := range c.values {
			x = x.With(k, val)
		}
		_, err := s.Configure(x)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v; want one line with %q", c.values, err, c.want)
		}
	}
	p, err := s.Configure(v.With("ycsb", "workload*").With("size", "0.01"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range p.Steps {
		names = append(names, st.Test)
	}
	if got := strings.Join(names, " "); got != "load.cached settle.cached workloada.cached workloadb.cached workloadc.cached workloade.cached workloadf.cached" {
		t.Errorf("workload* runs %s", got)
	}
	h := newHome(t)
	f := filepath.Join(t.TempDir(), "rw.flags")
	os.WriteFile(f, []byte("--readwritepercent=80\n"), 0o644)
	if _, err := (config.Store{Dir: h.Configs()}).AddWith("rw", f, config.AddOptions{Base: "default"}); err != nil {
		t.Fatal(err)
	}
	_, err = runPlan(t, context.Background(), h, map[string]string{"ycsb": "workloada", "size": "0.001", "seconds": "1", "config": "rw"})
	if err == nil || !strings.Contains(err.Error(), "config rw: --readwritepercent is --ycsb's own (workloada and workloadb set it)") {
		t.Errorf("an option set with --readwritepercent: %v", err)
	}
}
