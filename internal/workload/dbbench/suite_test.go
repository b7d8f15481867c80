package dbbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/config"
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
		if above := strings.HasPrefix(run.Config, "above@"); flagged != above {
			t.Errorf("%s with %s: flagged %v", run.Test, run.Config, flagged)
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
