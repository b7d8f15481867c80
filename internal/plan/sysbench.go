// Package plan owns turning what the user asked for into runs: which builds,
// configs, tests, thread counts and repeats, in which order, each in a fresh
// sandbox with its tables loaded. It starts and stops sandboxes, hands each
// test to the engine, and passes every result on as it arrives. It does not
// measure (the engine does) and does not format (the command does).
package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/metrics"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/version"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// Sysbench is a sysbench microbenchmark run over one or more builds.
type Sysbench struct {
	Builds  []build.Build // run in turn (A B A B … with Repeat)
	Config  config.Config
	Tables  int
	Rows    int64
	Threads []int
	// Durations: reads, writes and insert (the reference's nsecs_r, nsecs_w
	// and insertsecs), and the unmeasured warmup before each test.
	Read, Write, Insert, Warmup time.Duration
	List                        string   // "2024" (the 42-test order) or "head" (2025)
	Tests                       []string // globs over labels; empty: the whole list
	Rate                        float64  // open loop; 0: closed loop
	Arrivals                    engine.Arrivals
	MaxBacklog                  int
	Repeat                      int
	Seed                        uint64
	Client                      client.Options // TCP, NoPrepare, Transport (Auto resolved here)
	PostwriteScale              float64        // 1 as the reference; smaller for quick runs
	LoadThreads                 int
	// Sandbox, if set, runs against that running sandbox instead of starting
	// one per build (Builds is then ignored); NoLoad keeps the tables a
	// previous qpslab load left there.
	Sandbox string
	NoLoad  bool
	// Device is the block device whose I/O is measured; "" finds the disk
	// that holds the sandbox's datadir.
	Device string
	// ReportInterval is how often a progress line is printed during a test
	// (sysbench's --report-interval); default 10 s.
	ReportInterval time.Duration
	// Host is the host fingerprint recorded with every result (qpslab host
	// check's JSON); the command takes it once before the run.
	Host json.RawMessage

	Log     func(line string)               // progress lines
	LoadBar func(total int64) func(n int64) // a progress bar for the load: returns its update function
	// Record, if set, is called as each run starts, with what is known of
	// it; the Recorder it returns gets the run's samples as they are
	// measured and the whole result at its end (store, print).
	Record func(start result.Run) (Recorder, error)
}

// Recorder keeps one run as it goes. Sample must not block.
type Recorder interface {
	Sample(result.Sample)
	Done(result.Run) error
}

// record starts a run's recorder; without Record it records nothing.
func (p Sysbench) record(start result.Run) (Recorder, error) {
	if p.Record == nil {
		return nopRecorder{}, nil
	}
	return p.Record(start)
}

type nopRecorder struct{}

func (nopRecorder) Sample(result.Sample)  {}
func (nopRecorder) Done(result.Run) error { return nil }

// Steps returns the tests the run will execute, in order.
func (p Sysbench) Steps() ([]sysbench.Test, error) {
	var all []sysbench.Test
	switch p.List {
	case "", "2024", "42":
		all = sysbench.Order2024()
	case "head", "2025", "32":
		all = sysbench.OrderHEAD()
	default:
		return nil, fmt.Errorf("unknown test list %q: use 2024 (the 42 tests) or head (the 2025 order, 32 reported)", p.List)
	}
	if len(p.Tests) == 0 {
		return all, nil
	}
	sel, err := sysbench.Select(all, p.Tests...)
	if err != nil {
		return nil, fmt.Errorf("%w in the %s list: see qpslab run sysbench --list-tests [--list head]", err, p.listName())
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("no test matches %q: see qpslab run sysbench --list-tests", p.Tests)
	}
	return sel, nil
}

func (p Sysbench) listName() string {
	if p.List == "" {
		return "2024"
	}
	return p.List
}

// Check reports what would stop the plan before it starts: an unknown test
// selection, bad table sizes, a missing build or a config of the wrong
// family, a sandbox that is not there or not running.
func (p Sysbench) Check(h home.Home) error {
	if _, err := p.Steps(); err != nil {
		return err
	}
	if p.Tables < 1 || p.Rows < 1 {
		return fmt.Errorf("--tables and --rows must be at least 1")
	}
	if p.Sandbox == "" && len(p.Builds) == 0 {
		return fmt.Errorf("name a build with --build")
	}
	for _, b := range p.Builds {
		if config.FamilyOf(string(b.Flavor)) != p.Config.Family {
			return fmt.Errorf("config %s is a %s config and build %s is %s: use a %s config", p.Config.Name, p.Config.Family, b.Name, b.Flavor, config.FamilyOf(string(b.Flavor)))
		}
	}
	if p.Device != "" {
		if err := metrics.CheckDevice(host.Real, p.Device); err != nil {
			return err
		}
	}
	if p.Sandbox != "" {
		st, err := sandbox.Get(h, p.Sandbox)
		if err != nil {
			return err
		}
		if !st.Running() {
			return fmt.Errorf("sandbox %s is not running: start it with qpslab server start, or leave out --sandbox", p.Sandbox)
		}
	}
	return nil
}

// Run runs the plan, after Check. Each run goes to Record as it starts,
// its samples as they come, and its result when it ends;
// on cancellation the test in progress is passed on with status aborted,
// every sandbox is stopped, and ctx's error is returned.
func (p Sysbench) Run(ctx context.Context, h home.Home) error {
	if err := p.Check(h); err != nil {
		return err
	}
	steps, _ := p.Steps()
	if len(p.Threads) == 0 {
		p.Threads = []int{1}
	}
	if p.Sandbox != "" {
		st, err := sandbox.Get(h, p.Sandbox)
		if err != nil {
			return err
		}
		b := build.Build{Name: st.Build, Flavor: st.Flavor, Version: st.Version}
		p.Config = config.Config{Name: st.Config} // name@hash, as the sandbox recorded it
		for rep := 1; rep <= max(p.Repeat, 1); rep++ {
			if err := p.runOn(ctx, b, st, steps, rep); err != nil {
				return err
			}
		}
		return nil
	}
	for rep := 1; rep <= max(p.Repeat, 1); rep++ {
		for _, b := range p.Builds {
			if err := p.runBuild(ctx, h, b, steps, rep); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p Sysbench) configID() string {
	if p.Config.Content == nil {
		return p.Config.Name
	}
	return p.Config.ID()
}

func (p Sysbench) logf(format string, args ...any) {
	if p.Log != nil {
		p.Log(fmt.Sprintf(format, args...))
	}
}

func (p Sysbench) runBuild(ctx context.Context, h home.Home, b build.Build, steps []sysbench.Test, rep int) (err error) {
	p.logf("== %s %s (%s) with config %s, repeat %d", b.Name, b.Version, b.Flavor, p.configID(), rep)
	srv, err := sandbox.Start(ctx, h, sandbox.Spec{Build: b, Config: p.Config})
	if err != nil {
		return err
	}
	defer func() {
		if serr := srv.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	return p.runOn(ctx, b, srv.State, steps, rep)
}

// measure is what the hardware sampler of each test needs: the server's
// process and the datadir's disk.
type measure struct {
	serverPID int
	disks     []string
	notes     []string
}

func (p Sysbench) measureOf(st sandbox.State) measure {
	m := measure{serverPID: st.PID}
	if p.Device != "" {
		m.disks = []string{p.Device}
	} else if d, err := metrics.DisksOf(host.Real, st.Datadir); err == nil {
		m.disks = d
	} else {
		m.notes = append(m.notes, "no disk metrics: "+err.Error())
		p.logf("no disk metrics: %v", err)
	}
	if len(m.disks) > 0 {
		p.logf("disk metrics from %s (the datadir's disk%s)", strings.Join(m.disks, "+"), map[bool]string{true: ", as --device says", false: ""}[p.Device != ""])
	}
	return m
}

// sampler makes the hardware sampler of one test. On error it is nil (a nil
// Sampler does nothing) and the notes say why.
func (m measure) sampler() (*metrics.Sampler, []string) {
	s, err := metrics.NewSampler(metrics.Spec{Roots: host.Real, ServerPID: m.serverPID, ClientPID: os.Getpid(), Disks: m.disks})
	if err != nil {
		return nil, []string{"no hardware metrics: " + err.Error()}
	}
	return s, m.notes
}

// runOn loads the tables (unless NoLoad) and runs the steps on the server st.
func (p Sysbench) runOn(ctx context.Context, b build.Build, st sandbox.State, steps []sysbench.Test, rep int) error {
	ep := st.Endpoint
	hw := p.measureOf(st)
	maxThreads := p.Tables
	for _, t := range p.Threads {
		maxThreads = max(maxThreads, t)
	}
	copts := p.Client
	copts.Transport = copts.Transport.Resolve(max(maxThreads, p.LoadThreads))
	target := sysbench.Target{
		Protocol: ep.Protocol, Tables: p.Tables, Rows: p.Rows,
		Dial: func(ctx context.Context) (client.Conn, error) { return client.Dial(ctx, ep, copts) },
	}

	// The load: point-query.warm's setup in the reference (run.sh setup=1).
	// It is done whatever --tests selects, since every test reads the tables.
	if !p.NoLoad {
		p.logf("loading %d table(s) × %d rows", p.Tables, p.Rows)
		lo := sysbench.LoadOptions{Threads: max(p.LoadThreads, 1), Seed: p.Seed}
		if p.LoadBar != nil {
			lo.Progress = p.LoadBar(int64(p.Tables) * p.Rows)
		}
		// Tables of an earlier load are dropped first, outside the timing.
		if err := target.Drop(ctx); err != nil {
			return fmt.Errorf("load %s: %w", b.Name, err)
		}
		if err := p.load(ctx, b, target, lo, hw, rep, copts); err != nil {
			return err
		}
	}

	// As run.sh does for each step: run it at every thread count, then flush
	// and wait if it is a postwrite step (point-query.warm after the load,
	// read-write_range=100 after the writes).
	for i, t := range steps {
		threads := p.Threads
		if t.PerTable {
			threads = []int{p.Tables}
		}
		for _, nt := range threads {
			if err := p.runTest(ctx, b, target, t, i, nt, rep, copts, hw); err != nil {
				return err
			}
		}
		if t.Postwrite {
			if err := p.postwrite(ctx, target, t); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p Sysbench) postwrite(ctx context.Context, target sysbench.Target, t sysbench.Test) error {
	wait := time.Duration(float64(target.PostwriteWait()) * p.PostwriteScale)
	p.logf("postwrite after %s: analyze, flush, wait %s", t.Label(), wait.Round(time.Second))
	if err := target.Postwrite(ctx, p.PostwriteScale); err != nil {
		return fmt.Errorf("postwrite after %s: %w", t.Label(), err)
	}
	return nil
}

// seedFor derives a test's seed from the run's, so that every test of a run
// is repeatable on its own.
func seedFor(seed uint64, label string, threads int) uint64 {
	h := fnv.New64a()
	io.WriteString(h, label+"/"+strconv.Itoa(threads))
	return seed ^ h.Sum64()
}

// load loads the tables, measured as the reference measures its prepare
// step: rows/s, and the hardware cost per row. It is a result of its own.
func (p Sysbench) load(ctx context.Context, b build.Build, target sysbench.Target, lo sysbench.LoadOptions, m measure, rep int, copts client.Options) error {
	smp, notes := m.sampler()
	rows := int64(p.Tables) * p.Rows
	start := result.Run{SchemaVersion: result.SchemaVersion, Test: "load", Seed: p.Seed, Threads: lo.Threads, Loop: "closed", Started: time.Now().UTC()}
	p.describe(&start, b, copts, rep)
	start.Params["step"] = "load"
	rec, err := p.record(start)
	if err != nil {
		return err
	}
	// Timed and sampled over the same span: CREATE TABLE, the inserts and
	// the secondary index.
	smp.Open()
	t0 := time.Now()
	err = target.Load(ctx, lo)
	smp.Close()
	t1 := time.Now()
	secs := t1.Sub(t0).Seconds()
	res := result.Run{
		SchemaVersion: result.SchemaVersion, QpslabVersion: version.Version, Suite: "sysbench", Test: "load",
		Seed: p.Seed, Threads: lo.Threads, Loop: "closed", Duration: secs, Started: t0.UTC(), Ended: t1.UTC(), Host: p.Host,
		Totals: result.Totals{Seconds: secs, Rows: rows, RowsPerSec: float64(rows) / secs, Reported: float64(rows) / secs, ReportedUnit: "rows/s"},
	}
	p.describe(&res, b, copts, rep)
	res.Params["step"] = "load"
	res.Status = result.OK
	if err != nil {
		res.Status, res.Error = result.Failed, err.Error()
		if ctx.Err() != nil {
			res.Status, res.Error = result.Aborted, "interrupted"
		}
		res.Totals = result.Totals{Seconds: secs}
	} else {
		p.logf("loaded %d rows in %.2f s (%.0f rows/s)", rows, secs, float64(rows)/secs)
	}
	res.HW = smp.Result(res.Totals.Reported, "row", nil, notes)
	if rerr := rec.Done(res); rerr != nil {
		return rerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("load %s: %w", b.Name, err)
	}
	return nil
}

// describe fills what every result of this plan says about itself.
func (p Sysbench) describe(res *result.Run, b build.Build, copts client.Options, rep int) {
	res.QpslabVersion = version.Version
	res.Host = p.Host
	res.Suite = "sysbench"
	res.Build, res.Flavor, res.Version, res.Config = b.Name, string(b.Flavor), b.Version, p.configID()
	res.Params = map[string]string{
		"tables": strconv.Itoa(p.Tables), "rows": strconv.FormatInt(p.Rows, 10), "list": p.List,
		"repeat": strconv.Itoa(rep), "tcp": strconv.FormatBool(copts.TCP), "transport": string(copts.Transport),
	}
}

// perSecond is the measured ops of each second, in the reported unit where
// a second has its own (statements for QPS; events for scan's Krows/s).
func perSecond(res *result.Run) []float64 {
	out := make([]float64, 0, len(res.Samples))
	for _, s := range res.Samples {
		for len(out) < s.Second {
			out = append(out, 0) // a second with no events
		}
		out = append(out, s.Ops(res.Totals.ReportedUnit))
	}
	return out
}

func (p Sysbench) runTest(ctx context.Context, b build.Build, target sysbench.Target, t sysbench.Test, step, threads, rep int, copts client.Options, m measure) error {
	dur := t.Time.Of(p.Read, p.Write, p.Insert)
	if t.Time == sysbench.WarmSecs && p.Read < dur {
		dur = p.Read // the reference's 60 s warm runs, shortened with the reads
	}
	seed := seedFor(p.Seed, t.Label(), threads)
	wl := &sysbench.Workload{Target: target, Test: t, Seed: seed}
	o := engine.Options{
		Threads: threads, Warmup: p.Warmup, Duration: dur,
		Rate: p.Rate, Arrivals: p.Arrivals, MaxBacklog: p.MaxBacklog,
		RetryErrors: t.Retry, Seed: seed, Progress: p.Log, ReportInterval: p.ReportInterval,
	}
	if p.Warmup == 0 {
		o.Warmup = -1
	}
	if t.Krows {
		o.ReportedUnit, o.KRowsPerEvent = "Krows/s", float64(p.Rows)/1000
	}
	start := result.Run{SchemaVersion: result.SchemaVersion, Test: t.Label(), Seed: seed, Threads: threads, Loop: "closed",
		Warmup: max(o.Warmup, 0).Seconds(), Duration: dur.Seconds(), Started: time.Now().UTC()}
	if p.Rate > 0 {
		start.Loop, start.Rate, start.Arrivals = "open", p.Rate, string(p.Arrivals)
	}
	p.describe(&start, b, copts, rep)
	for k, v := range map[string]string{
		"name": t.Name, "variant": t.Variant, "range": strconv.Itoa(t.Range),
		"group5": t.Group5, "group4": t.Group4, "step": strconv.Itoa(step),
		"prepared":             strconv.FormatBool(t.Prepared && !copts.NoPrepare),
		"statements_per_event": strconv.Itoa(t.Statements), "warm": strconv.FormatBool(t.Warm()),
	} {
		start.Params[k] = v
	}
	rec, err := p.record(start)
	if err != nil {
		return err
	}
	smp, notes := m.sampler()
	o.Window, o.OnSample = smp, rec.Sample
	p.logf("-- %s, %d thread(s), %s", t.Label(), threads, dur)
	res, err := engine.Run(ctx, wl, o)
	if res == nil {
		fail := start
		fail.Status, fail.Error, fail.Ended = result.Failed, err.Error(), time.Now().UTC()
		if ctx.Err() != nil {
			fail.Status, fail.Error = result.Aborted, "interrupted"
		}
		if rerr := rec.Done(fail); rerr != nil {
			return rerr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %w", t.Label(), err)
	}
	res.QpslabVersion, res.Host, res.Suite = start.QpslabVersion, start.Host, start.Suite
	res.Build, res.Flavor, res.Version, res.Config = start.Build, start.Flavor, start.Version, start.Config
	res.Test, res.Seed, res.Params = start.Test, seed, start.Params
	op := "statement"
	if t.Krows {
		op = "Krow"
	}
	res.HW = smp.Result(res.Totals.Reported, op, perSecond(res), notes)
	if rerr := rec.Done(*res); rerr != nil {
		return rerr
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s on %s: %w", t.Label(), b.Name, err)
	}
	return nil
}
