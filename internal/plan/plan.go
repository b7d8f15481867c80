// Package plan owns turning what the user asked for into runs, for every
// suite alike: builds × configs × thread counts × repeats, interleaved
// (each repeat runs every build with every config in turn, A B A B), each
// build × config in a fresh sandbox, the suite's steps in order at each
// thread count, with what runs before and after each step. It starts and
// stops sandboxes, hands driven steps to the engine and runs the suite's
// tasks, samples the hardware and reads the server's counters over each
// measured window (and captures its stacks when asked), and passes every
// run on as it starts, second by second, and when it ends (Recorder).
//
// It does not measure events (the engine does), know any suite's tests
// (the suite says), store or format anything (its Recorder and Watcher do).
package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/metrics"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/stacks"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/version"
)

// Plan is one run of a suite over builds and configs.
type Plan struct {
	Suite      suite.Suite
	Steps      *suite.Plan
	Builds     []build.Build   // run in turn
	Configs    []config.Config // each build with each, in turn
	Threads    []int
	Repeat     int
	Seed       uint64
	Warmup     time.Duration // before each driven step; 0 for none
	Rate       float64       // open loop; 0: closed loop
	Arrivals   engine.Arrivals
	MaxBacklog int
	Client     client.Options // TCP, NoPrepare, Transport (Auto resolved per server)
	// Sandbox, if set, runs on that running sandbox instead of starting
	// one per build and config (Builds and Configs are then its own).
	Sandbox string
	// Device is the block device whose I/O is measured; "" finds the disk
	// that holds the datadir.
	Device string
	// ReportInterval is how often a driven step's progress line goes to
	// Watch.Log (sysbench's --report-interval).
	ReportInterval time.Duration
	// Host is the host fingerprint recorded with every run.
	Host json.RawMessage
	// Counters are the server counters read over each window (--counters);
	// PMP, if set, captures the server's thread stacks that often during
	// each window (--pmp); Perf profiles its CPU with perf (--perf).
	Counters counters.Selection
	PMP      time.Duration
	Perf     bool

	Watch Watcher
	// Record, if set, is called as each run starts, with what is known of
	// it; the Recorder it returns gets the run's samples as they are
	// measured and the whole result at its end.
	Record func(start result.Run) (Recorder, error)
}

// Recorder keeps one run as it goes. Sample must not block.
type Recorder interface {
	Sample(result.Sample)
	Done(result.Run) error
}

// Watcher is told what happens; every field may be nil.
type Watcher struct {
	Log      func(line string)       // what the plan does, step by step (verbose output)
	Start    func(i, n int, it Item) // run i of n begins
	Done     func(i, n int, r result.Run)
	Progress func(done, total int64) // a task's progress (the load's rows)
	Warn     func(line string)       // what the user must hear even without -v (perf cannot run)
}

// Item is one planned run: a step at one thread count on one build and
// config in one repeat.
type Item struct {
	Repeat  int
	Build   build.Build
	Config  config.Config
	Step    int // index into Steps.Steps
	Test    string
	Threads int
	Seconds time.Duration // planned: warmup and measured time (0 for a task, which runs to its end)
}

// Items lists the runs in the order they will run.
func (p *Plan) Items() []Item {
	var out []Item
	for rep := 1; rep <= max(p.Repeat, 1); rep++ {
		for _, b := range p.Builds {
			for _, c := range p.Configs {
				for i, st := range p.Steps.Steps {
					for _, nt := range p.threadsOf(st) {
						it := Item{Repeat: rep, Build: b, Config: c, Step: i, Test: st.Test, Threads: nt}
						switch {
						case st.Drive != nil && st.Drive.UntilScheduled:
							it.Seconds = st.Seconds // as planned, if the server keeps up; no warmup
						case st.Drive != nil:
							it.Seconds = st.Seconds + p.Warmup
						}
						out = append(out, it)
					}
				}
			}
		}
	}
	return out
}

func (p *Plan) threadsOf(st suite.Step) []int {
	if len(st.Threads) > 0 {
		return st.Threads
	}
	if len(p.Threads) == 0 {
		return []int{1}
	}
	return p.Threads
}

// Check reports what would stop the plan before it starts: a build and a
// config of different families, a server the suite cannot run on, a device
// that is not there, a sandbox that is not running.
func (p *Plan) Check(h home.Home) error {
	if len(p.Builds) == 0 {
		return fmt.Errorf("name a build with --build (see qpslab builds list), or a running sandbox with --sandbox")
	}
	if len(p.Configs) == 0 {
		return fmt.Errorf("name a config with --config (see qpslab configs list)")
	}
	for _, b := range p.Builds {
		fam := config.FamilyOf(string(b.Flavor))
		for _, c := range p.Configs {
			if c.Content != nil && c.Family != fam {
				return fmt.Errorf("config %s is a %s config and build %s is %s: use a %s config", c.Name, c.Family, b.Name, b.Flavor, fam)
			}
		}
		if ps := p.Steps.Protocols; len(ps) > 0 && !slices.Contains(ps, protocolOf(b.Flavor)) {
			return fmt.Errorf("suite %s does not run on %s (build %s)", p.Suite.Name(), b.Flavor, b.Name)
		}
	}
	if len(p.Steps.Steps) == 0 {
		return fmt.Errorf("suite %s has no steps to run: see qpslab run %s --list-tests", p.Suite.Name(), p.Suite.Name())
	}
	if p.Device != "" {
		if err := metrics.CheckDevice(host.Real, p.Device); err != nil {
			return err
		}
	}
	if p.PMP > 0 {
		if _, err := stacks.FindTool(""); err != nil {
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

func protocolOf(f build.Flavor) client.Protocol {
	if f == build.Postgres {
		return client.Postgres
	}
	return client.MySQL
}

// Run runs the plan, after Check. On cancellation the run in progress is
// recorded as aborted, every sandbox is stopped, and ctx's error returned.
func (p *Plan) Run(ctx context.Context, h home.Home) error {
	if err := p.Check(h); err != nil {
		return err
	}
	if p.Perf {
		if err := stacks.CheckPerf(ctx); err != nil {
			if p.Watch.Warn != nil {
				p.Watch.Warn("--perf: " + err.Error() + "; the runs go on without CPU profiles")
			}
			p.Perf = false
		}
	}
	items := p.Items()
	n := len(items)
	for i := 0; i < n; {
		// One session: the items of one repeat, build and config, on one server.
		j := i
		for j < n && items[j].Repeat == items[i].Repeat && items[j].Build.Name == items[i].Build.Name && items[j].Config.Name == items[i].Config.Name {
			j++
		}
		if err := p.session(ctx, h, items, i, j); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (p *Plan) logf(format string, args ...any) {
	if p.Watch.Log != nil {
		p.Watch.Log(fmt.Sprintf(format, args...))
	}
}

// session runs items[from:to], which share a repeat, a build and a config,
// on one server: a new sandbox, or the --sandbox one.
func (p *Plan) session(ctx context.Context, h home.Home, items []Item, from, to int) (err error) {
	first := items[from]
	b, cfg := first.Build, first.Config
	var st sandbox.State
	died := func() error { return nil }
	if p.Sandbox != "" {
		if st, err = sandbox.Get(h, p.Sandbox); err != nil {
			return err
		}
	} else {
		p.logf("== %s %s (%s) with config %s, repeat %d", b.Name, b.Version, b.Flavor, configID(cfg), first.Repeat)
		srv, err := sandbox.Start(ctx, h, sandbox.Spec{Build: b, Config: cfg})
		if err != nil {
			return err
		}
		defer func() {
			if serr := srv.Stop(); serr != nil && err == nil {
				err = serr
			}
		}()
		st = srv.State
		// Watch the server: if it dies, what runs on it ends at once, and
		// the run says the server died and why (its exit and its log).
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		go func() {
			select {
			case <-srv.Exited():
				if !srv.Exit().Stopped {
					cancel(&ServerDied{Build: b.Name, Cause: srv.ExitCause()})
				}
			case <-ctx.Done():
			}
		}()
		died = func() error {
			select {
			case <-srv.Exited():
			case <-time.After(serverDeathGrace):
				return nil
			}
			if srv.Exit().Stopped {
				return nil
			}
			return &ServerDied{Build: b.Name, Cause: srv.ExitCause()}
		}
	}
	m := p.measureOf(st)
	maxConns := 1
	for _, it := range items[from:to] {
		maxConns = max(maxConns, it.Threads)
	}
	copts := p.Client
	copts.Transport = copts.Transport.Resolve(maxConns)
	ep := st.Endpoint
	srv := &suite.Server{
		Protocol: ep.Protocol, Flavor: string(b.Flavor), Version: b.Version, Datadir: st.Datadir, Client: copts,
		Dial: func(ctx context.Context) (client.Conn, error) { return client.Dial(ctx, ep, copts) },
		Log:  func(line string) { p.logf("%s", line) },
	}
	prevStep := -1
	for k := from; k < to; k++ {
		it := items[k]
		step := p.Steps.Steps[it.Step]
		if it.Step != prevStep && step.Before != nil {
			if err := step.Before(ctx, srv); err != nil {
				return hookErr(ctx, died, fmt.Errorf("before %s on %s: %w", step.Test, b.Name, err))
			}
		}
		prevStep = it.Step
		if err := p.runItem(ctx, srv, m, items, k, died); err != nil {
			return err
		}
		lastOfStep := k+1 == to || items[k+1].Step != it.Step
		if lastOfStep && step.After != nil {
			if err := step.After(ctx, srv); err != nil {
				return hookErr(ctx, died, err)
			}
		}
	}
	return nil
}

// hookErr is what a failed Before or After hook ends the plan with: the
// server's death if that is why, an interrupt, or the hook's error.
func hookErr(ctx context.Context, died func() error, err error) error {
	var dead *ServerDied
	switch {
	case errors.As(context.Cause(ctx), &dead):
		return fmt.Errorf("%w (while: %v)", dead, err)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	if derr := died(); derr != nil {
		return fmt.Errorf("%w (while: %v)", derr, err)
	}
	return err
}

func configID(c config.Config) string {
	if c.Content == nil {
		return c.Name // a --sandbox run: the sandbox's recorded name@hash
	}
	return c.ID()
}

// measure is what the hardware sampler of each run needs: the server's
// process and the datadir's disk.
type measure struct {
	serverPID int
	ep        client.Endpoint // for the server's counters
	disks     []string
	notes     []string
}

func (p *Plan) measureOf(st sandbox.State) measure {
	m := measure{serverPID: st.PID, ep: st.Endpoint}
	if p.Device != "" {
		m.disks = []string{p.Device}
	} else if d, err := metrics.DisksOf(host.Real, st.Datadir); err == nil {
		m.disks = d
	} else {
		m.notes = append(m.notes, "no disk metrics: "+err.Error())
		p.logf("no disk metrics: %v", err)
	}
	if len(m.disks) > 0 {
		via := ""
		if p.Device != "" {
			via = ", as --device says"
		}
		p.logf("disk metrics from %s (the datadir's disk%s)", strings.Join(m.disks, "+"), via)
	}
	return m
}

// seedFor derives a run's seed from the plan's, so that every run of a plan
// is repeatable on its own.
func seedFor(seed uint64, label string, threads int) uint64 {
	h := fnv.New64a()
	io.WriteString(h, label+"/"+strconv.Itoa(threads))
	return seed ^ h.Sum64()
}

// start is what is known of a run before it runs.
func (p *Plan) start(it Item, step suite.Step, seed uint64) result.Run {
	r := result.Run{
		SchemaVersion: result.SchemaVersion, QpslabVersion: version.Version, Host: p.Host,
		Suite: p.Suite.Name(), Test: step.Test, Step: step.Order, Role: step.Role, Groups: step.Groups,
		Seed: seed, Threads: it.Threads, Loop: "closed", Started: time.Now().UTC(),
		Build: it.Build.Name, Flavor: string(it.Build.Flavor), Version: it.Build.Version, Config: configID(it.Config),
		Params: map[string]string{"repeat": strconv.Itoa(it.Repeat), "tcp": strconv.FormatBool(p.Client.TCP)},
	}
	for k, v := range p.Steps.Params {
		r.Params[k] = v
	}
	for k, v := range step.Params {
		r.Params[k] = v
	}
	p.stackParams(r.Params)
	if step.Drive != nil && !step.Drive.UntilScheduled {
		r.Warmup, r.Duration = p.Warmup.Seconds(), step.Seconds.Seconds()
		if p.Rate > 0 {
			r.Loop, r.Rate, r.Arrivals = "open", p.Rate, string(p.Arrivals)
		}
	}
	return r
}

func (p *Plan) record(start result.Run) (Recorder, error) {
	if p.Record == nil {
		return nopRecorder{}, nil
	}
	return p.Record(start)
}

type nopRecorder struct{}

func (nopRecorder) Sample(result.Sample)  {}
func (nopRecorder) Done(result.Run) error { return nil }

// ServerDied is the error of a run whose server died under it.
type ServerDied struct {
	Build string
	Cause string // how it ended and the log lines that explain it
}

func (e *ServerDied) Error() string { return "the server " + e.Build + " died: " + e.Cause }

// serverDeathGrace is how long a failed run waits for its server's exit to
// be seen: a lost connection comes a moment before the process is reaped.
const serverDeathGrace = 2 * time.Second

// runItem runs items[k] and records it. died says whether the server died
// (waiting a moment for its exit to be seen): a run that fails is then
// recorded as failed because the server died, with why.
func (p *Plan) runItem(ctx context.Context, srv *suite.Server, m measure, items []Item, k int, died func() error) error {
	it := items[k]
	step := p.Steps.Steps[it.Step]
	seed := seedFor(p.Seed, step.Test, it.Threads)
	start := p.start(it, step, seed)
	start.Params["transport"] = string(srv.Client.Transport)
	if p.Watch.Start != nil {
		p.Watch.Start(k, len(items), it)
	}
	rec, err := p.record(start)
	if err != nil {
		return err
	}
	win := p.window(ctx, m)
	var res *result.Run
	if step.Drive != nil {
		if step.Drive.UntilScheduled {
			p.logf("-- %s, %d thread(s), until its scheduled work is done", step.Test, it.Threads)
		} else {
			p.logf("-- %s, %d thread(s), %s", step.Test, it.Threads, step.Seconds)
		}
		res, err = p.drive(ctx, srv, step, start, win, rec)
	} else {
		p.logf("-- %s, %d thread(s)", step.Test, it.Threads)
		res, err = p.task(ctx, srv, step, start, win, rec)
	}
	if res == nil { // it never started: what is known, with why
		fail := start
		fail.Status, fail.Error, fail.Ended = result.Failed, err.Error(), time.Now().UTC()
		res = &fail
		win.release()
	} else {
		op := step.Headline.Of(&res.Totals)
		var perSec []float64
		for _, s := range res.Samples {
			for len(perSec) < s.Second {
				perSec = append(perSec, 0) // a second with no events
			}
			perSec = append(perSec, s.Count(res.Totals.Series))
		}
		win.finish(res, op, perSec, p.logf)
		if err == nil && step.Finish != nil {
			if ferr := step.Finish(ctx, srv, res); ferr != nil {
				err = fmt.Errorf("after the run: %w", ferr)
				res.Status, res.Error = result.Failed, err.Error()
			}
		}
	}
	var dead *ServerDied
	switch {
	case err == nil:
	case errors.As(context.Cause(ctx), &dead):
		err = dead
		res.Status, res.Error = result.Failed, dead.Error()
	case ctx.Err() != nil:
		res.Status, res.Error = result.Aborted, "interrupted"
	default:
		if derr := died(); derr != nil {
			err = fmt.Errorf("%w (the run saw: %v)", derr, err)
			res.Status, res.Error = result.Failed, err.Error()
		}
	}
	if p.Watch.Done != nil {
		p.Watch.Done(k, len(items), *res)
	}
	if rerr := rec.Done(*res); rerr != nil {
		return rerr
	}
	switch {
	case err == nil:
		return nil
	case errors.As(err, &dead):
		return fmt.Errorf("%s on %s: %w", step.Test, it.Build.Name, err)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("%s on %s: %w", step.Test, it.Build.Name, err)
}

// drive runs a driven step through the engine.
func (p *Plan) drive(ctx context.Context, srv *suite.Server, step suite.Step, start result.Run, win *window, rec Recorder) (*result.Run, error) {
	o := engine.Options{
		Threads: start.Threads, Warmup: p.Warmup, Duration: step.Seconds,
		Rate: p.Rate, Arrivals: p.Arrivals, MaxBacklog: p.MaxBacklog,
		RetryErrors: step.Drive.Retry, Seed: start.Seed, Progress: p.Watch.Log, ReportInterval: p.ReportInterval,
		Window: win, OnSample: rec.Sample,
	}
	if p.Warmup == 0 {
		o.Warmup = -1 // the engine's 0 is its default
	}
	if step.Drive.Workers != nil {
		o.Threads = step.Drive.Workers(start.Threads)
	}
	if step.Drive.UntilScheduled {
		o.Duration, o.Warmup, o.Rate, o.UntilScheduled = 0, -1, 0, true
	}
	res, err := engine.Run(ctx, step.Drive.Workload(srv, start.Seed), o)
	if res == nil {
		return nil, err
	}
	// What the engine does not know of the run.
	res.QpslabVersion, res.Host, res.Suite, res.Test = start.QpslabVersion, start.Host, start.Suite, start.Test
	res.Step, res.Role, res.Groups = start.Step, start.Role, start.Groups
	res.Build, res.Flavor, res.Version, res.Config = start.Build, start.Flavor, start.Version, start.Config
	res.Seed, res.Params, res.Threads = start.Seed, start.Params, start.Threads
	return res, err
}

// task runs a step the suite runs itself, timed and sampled over the same
// span.
func (p *Plan) task(ctx context.Context, srv *suite.Server, step suite.Step, start result.Run, win *window, rec Recorder) (*result.Run, error) {
	tio := suite.TaskIO{Progress: func(int64, int64) {}, Sample: rec.Sample}
	if p.Watch.Progress != nil {
		tio.Progress = p.Watch.Progress
	}
	win.Open()
	t0 := time.Now()
	tot, err := step.Task.Run(ctx, srv, start.Threads, start.Seed, tio)
	win.Close()
	t1 := time.Now()
	res := start
	res.Started, res.Ended = t0.UTC(), t1.UTC()
	if tot.Seconds <= 0 {
		tot.Seconds = t1.Sub(t0).Seconds()
	}
	res.Duration = tot.Seconds
	if tot.Seconds > 0 && !math.IsInf(tot.Seconds, 0) {
		tot.TPS = float64(tot.Events) / tot.Seconds
		tot.QPS = float64(tot.Statements) / tot.Seconds
		tot.RowsPerSec = float64(tot.Rows) / tot.Seconds
	}
	res.Totals, res.Status = tot, result.OK
	if err != nil {
		res.Status, res.Error = result.Failed, err.Error()
		res.Totals = result.Totals{Seconds: tot.Seconds}
	} else {
		p.logf("%s: %d rows in %.2f s (%.0f rows/s)", step.Test, tot.Rows, tot.Seconds, tot.RowsPerSec)
	}
	return &res, err
}
