// Package plan owns turning what the user asked for into runs, for every
// suite alike: builds × configs × thread counts × repeats, interleaved
// (each repeat runs every build with every config in turn, A B A B), each
// build × config in a fresh sandbox (or, for a suite that runs a program of
// its own, a scratch folder), the suite's steps in order at each
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
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/metrics"
	"github.com/qpslab/qpslab/internal/owned"
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
	// Grid varies settings over the configs (--set, --grid): Resolve
	// derives a config per base config and combination; Points says which
	// combination each derived config (by ID) is, recorded with its runs.
	Grid   config.Grid
	Points map[string]string
	// ServerCPUs and ClientCPUs pin the server's process tree and the
	// client (nil: not pinned).
	ServerCPUs, ClientCPUs host.CPUs
	// Host is the host fingerprint recorded with every run.
	Host json.RawMessage
	// Engines are the storage engines the suites create their tables in
	// (MySQL family; owned.ParseEngine's names): each build and config
	// with each, in turn. EngineSet says --engine was given.
	Engines   []string
	EngineSet bool
	// Counters are the server counters read over each window (--counters);
	// PMP, if set, captures the server's thread stacks that often during
	// each window (--pmp); Perf profiles its CPU with perf (--perf).
	Counters counters.Selection
	PMP      time.Duration
	Perf     bool

	// Interleave is how the labels take turns (InterleaveTest or
	// InterleavePass; "" is InterleaveTest where the servers fit in memory
	// together), and Slices how many slices per repeat a sliced test runs
	// (0: one a second, 4 to 20). Decide settles the Layout.
	Interleave string
	Slices     int
	layout     Layout
	// ID identifies the plan's runs, whose rounds pair with each other
	// (result.Run.Plan); Run makes one when it is empty.
	ID string

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
	Warn     func(line string)       // what puts figures at risk or the user must hear, whatever the verbosity (nil: Log)
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
	// Engine is the storage engine of the tables ("" on PostgreSQL).
	Engine string
	// Group is the group of labels whose servers are up together, under
	// test-level interleaving in pairs (Layout.Groups).
	Group int
}

// Items lists the runs in the order they will start.
func (p *Plan) Items() []Item {
	if p.testLevel() {
		return p.testItems()
	}
	var out []Item
	for rep := 1; rep <= max(p.Repeat, 1); rep++ {
		for _, b := range p.Builds {
			for _, c := range p.Configs {
				for _, e := range p.enginesOf(b) {
					for i, st := range p.Steps.Steps {
						for _, nt := range p.threadsOf(st) {
							it := Item{Repeat: rep, Build: b, Config: c, Engine: e, Step: i, Test: st.Test, Threads: nt}
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
	}
	return out
}

// Label is how the item's results are addressed: build.config, with
// :engine for an engine other than InnoDB (result.Run.Label).
func (it Item) Label() string {
	l := it.Build.Name + "." + result.ConfigName(configID(it.Config))
	if it.Engine != "" && it.Engine != owned.DefaultEngine {
		l += ":" + it.Engine
	}
	return l
}

// enginesOf are the storage engines build b runs with: the plan's where
// its flavor's tables take one (InnoDB when Engines is empty), else none.
func (p *Plan) enginesOf(b build.Build) []string {
	if !b.Flavor.Describe().Engines {
		return []string{""}
	}
	if len(p.Engines) == 0 {
		return []string{owned.DefaultEngine}
	}
	return p.Engines
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
	if p.Steps.NoServer && p.Sandbox != "" {
		return fmt.Errorf("suite %s runs a program of its own, on no server: leave out --sandbox", p.Suite.Name())
	}
	for _, b := range p.Builds {
		switch {
		case len(p.Steps.Flavors) > 0 && !slices.Contains(p.Steps.Flavors, b.Flavor):
			return fmt.Errorf("suite %s runs %s builds, and build %s is %s: see qpslab suites for one that runs it", p.Suite.Name(), flavorList(p.Steps.Flavors), b.Name, b.Flavor)
		case !p.Steps.NoServer && b.Flavor != "" && !b.Flavor.HasServer():
			return fmt.Errorf("build %s is %s, which is no server, and suite %s needs one: see qpslab suites for one that runs it", b.Name, b.Flavor, p.Suite.Name())
		}
		d := b.Flavor.Describe()
		fam := config.Family(d.Family)
		for _, c := range p.Configs {
			if c.Content != nil && c.Family != fam {
				return fmt.Errorf("config %s is a %s config and build %s is %s: use a %s config", c.Name, c.Family, b.Name, b.Flavor, fam)
			}
		}
		if ps := p.Steps.Protocols; len(ps) > 0 && !slices.Contains(ps, client.Protocol(d.Protocol)) {
			return fmt.Errorf("suite %s does not run on %s (build %s)", p.Suite.Name(), b.Flavor, b.Name)
		}
		if !d.Engines && p.EngineSet {
			return fmt.Errorf("--engine chooses a MySQL-family storage engine, and build %s is %s, which has none to choose: leave --engine out", b.Name, d.Title)
		}
	}
	if len(p.Steps.Steps) == 0 {
		return fmt.Errorf("suite %s has no steps to run: see qpslab run %s --list-tests", p.Suite.Name(), p.Suite.Name())
	}
	if p.Steps.Check != nil {
		for _, b := range p.Builds {
			for _, c := range p.Configs {
				if err := p.Steps.Check(context.Background(), b, c); err != nil {
					return err
				}
			}
		}
	}
	if p.Device != "" {
		if err := metrics.CheckDevice(host.Real, p.Device); err != nil {
			return err
		}
	}
	conns := 0
	for _, it := range p.Items() {
		conns = max(conns, p.connections(it))
	}
	if err := host.ReadLimits(host.Real).CheckConnections(conns, p.Client.TCP); err != nil {
		return err
	}
	for _, w := range host.ReadLimits(host.Real).Warnings(conns) {
		p.logf("host: %s", w)
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

func flavorList(fs []build.Flavor) string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f))
	}
	return strings.Join(out, " or ")
}

// Run runs the plan, after Check. On cancellation the run in progress is
// recorded as aborted, every sandbox is stopped, and ctx's error returned.
func (p *Plan) Run(ctx context.Context, h home.Home) error {
	if err := p.Check(h); err != nil {
		return err
	}
	if len(p.ClientCPUs) > 0 {
		if err := host.PinSelf(p.ClientCPUs); err != nil {
			return err
		}
	}
	if o := p.ServerCPUs.Overlap(p.ClientCPUs); len(o) > 0 && len(p.ClientCPUs) > 0 {
		p.logf("host: the server's CPUs %s and the client's %s share %s: they compete for them", p.ServerCPUs, p.ClientCPUs, o)
	}
	if p.Perf {
		if err := stacks.CheckPerf(ctx); err != nil {
			if p.Watch.Warn != nil {
				p.Watch.Warn("--perf: " + err.Error() + "; the runs go on without CPU profiles")
			}
			p.Perf = false
		}
	}
	if p.layout.Mode == "" {
		if err := p.Decide(host.Real); err != nil {
			return err
		}
	}
	if p.ID == "" {
		p.ID = newID()
	}
	items := p.Items()
	n := len(items)
	if err := p.checkEngines(ctx, h, items); err != nil {
		return err
	}
	if p.testLevel() {
		return p.interleaved(ctx, h, items)
	}
	for i := 0; i < n; {
		// One session: the items of one repeat, build, config and engine, on one server.
		j := i
		for j < n && items[j].Repeat == items[i].Repeat && items[j].Build.Name == items[i].Build.Name && items[j].Config.Name == items[i].Config.Name && items[j].Engine == items[i].Engine {
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

// session runs items[from:to], which share a repeat, a build, a config
// and an engine, on one server: a new sandbox, or the --sandbox one.
func (p *Plan) session(ctx context.Context, h home.Home, items []Item, from, to int) (err error) {
	first := items[from]
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	maxConns := 1
	for _, it := range items[from:to] {
		maxConns = max(maxConns, p.connections(it))
	}
	s, err := p.up(ctx, cancel, h, first.spec(), maxConns, fmt.Sprintf(", repeat %d", first.Repeat))
	if err != nil {
		return err
	}
	defer func() {
		if derr := s.down(); derr != nil && err == nil {
			err = derr
		}
	}()
	return p.steps(ctx, s.srv, s.m, items, from, to, s.died)
}

// LabelSpec is one label of a plan: a build with a config and a storage
// engine.
type LabelSpec struct {
	Build  build.Build
	Config config.Config
	Engine string
}

func (it Item) spec() LabelSpec { return LabelSpec{it.Build, it.Config, it.Engine} }

// same says whether two specs are one label.
func (l LabelSpec) same(o LabelSpec) bool {
	return l.Build.Name == o.Build.Name && configID(l.Config) == configID(o.Config) && l.Engine == o.Engine
}

// server is one label's server, up: what its steps run on, how to tell
// that it died, and how to stop it.
type server struct {
	spec LabelSpec
	srv  *suite.Server
	m    measure
	pid  int // the server's main process (0 for a suite without a server)
	died func() error
	down func() error
}

// up starts the label's server (a new sandbox, the --sandbox one, or for a
// suite without a server a scratch folder), watches it (if it dies, cancel
// ends what runs on it, with why), pins it, and checks it takes maxConns
// connections. what ends the log line that says it starts.
func (p *Plan) up(ctx context.Context, cancel context.CancelCauseFunc, h home.Home, l LabelSpec, maxConns int, what string) (_ *server, err error) {
	b, cfg := l.Build, l.Config
	if p.Steps.NoServer {
		p.logf("== %s %s (%s) with config %s%s", b.Name, b.Version, b.Flavor, configID(cfg), what)
		srv, m, done, serr := p.scratch(h, b, cfg)
		if serr != nil {
			return nil, serr
		}
		return &server{spec: l, srv: srv, m: m, died: func() error { return nil }, down: done}, nil
	}
	s := &server{spec: l, died: func() error { return nil }, down: func() error { return nil }}
	var st sandbox.State
	if p.Sandbox != "" {
		if st, err = sandbox.Get(h, p.Sandbox); err != nil {
			return nil, err
		}
	} else {
		p.logf("== %s %s (%s) with config %s%s", b.Name, b.Version, b.Flavor, configID(cfg), what)
		spec := sandbox.Spec{Build: b, Config: cfg}
		if l.Engine != "" && l.Engine != owned.DefaultEngine {
			// Its own sandbox beside the same build and config's with
			// InnoDB, which test-level interleaving keeps up at once.
			spec.Name = b.Name + "." + cfg.Name + "-" + l.Engine
		}
		srv, serr := sandbox.Start(ctx, h, spec)
		if serr != nil {
			return nil, serr
		}
		s.down = srv.Stop
		defer func() {
			if err != nil {
				srv.Stop()
			}
		}()
		st = srv.State
		// Watch the server: if it dies, what runs on it ends at once, and
		// the run says the server died and why (its exit and its log).
		go func() {
			select {
			case <-srv.Exited():
				if !srv.Exit().Stopped {
					cancel(&ServerDied{Build: b.Name, Cause: srv.ExitCause()})
				}
			case <-ctx.Done():
			}
		}()
		s.died = func() error {
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
	s.pid = st.PID
	if len(p.ServerCPUs) > 0 {
		if err := host.Pin(st.PID, p.ServerCPUs); err != nil {
			return nil, err
		}
	}
	s.m = p.measureOf(st)
	if err := p.engineCheck(ctx, st, b, cfg); err != nil {
		return nil, err
	}
	copts := p.Client
	ep := st.Endpoint
	copts.Transport = copts.Transport.Resolve(maxConns, ep.Protocol)
	s.srv = &suite.Server{
		Protocol: ep.Protocol, Flavor: string(b.Flavor), Version: b.Version, Datadir: st.Datadir, Client: copts, Engine: l.Engine,
		Dial: func(ctx context.Context) (client.Conn, error) { return client.Dial(ctx, ep, copts) },
		Log:  func(line string) { p.logf("%s", line) }, Warn: p.warn,
	}
	if err := checkServerConnections(ctx, s.srv, maxConns, configID(cfg)); err != nil {
		return nil, err
	}
	return s, nil
}

// warn tells the user a warning whatever the verbosity.
func (p *Plan) warn(line string) {
	if p.Watch.Warn != nil {
		p.Watch.Warn(line)
		return
	}
	p.logf("%s", line)
}

// scratch makes the scratch sandbox folder of a suite without a server
// (suite.Plan.NoServer) for build b with config cfg, and the suite's view
// of it: the build's program, the config, a way to start the program tied
// to qpslab. done removes the folder. The hardware sampler counts qpslab's
// process tree as the server's: the program is its child.
func (p *Plan) scratch(h home.Home, b build.Build, cfg config.Config) (*suite.Server, measure, func() error, error) {
	l, err := b.Layout()
	if err != nil {
		return nil, measure{}, nil, err
	}
	sc, err := sandbox.NewScratch(h, b, cfg)
	if err != nil {
		return nil, measure{}, nil, err
	}
	m := p.measureOf(sc.State)
	m.serverPID = os.Getpid()
	srv := &suite.Server{
		Flavor: string(b.Flavor), Version: b.Version, Datadir: sc.Datadir,
		Log: func(line string) { p.logf("%s", line) }, Warn: p.warn,
		Program: l.Server, Env: l.Env(os.Environ()), Config: cfg, Start: sc.Start,
	}
	return srv, m, sc.Remove, nil
}

// steps runs items[from:to] of one session on srv, with each step's Before
// and After.
func (p *Plan) steps(ctx context.Context, srv *suite.Server, m measure, items []Item, from, to int, died func() error) error {
	b := items[from].Build
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
		if err := p.runItem(ctx, srv, m, items, k, died, nil); err != nil {
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

// connections is how many connections item it opens at once: a worker
// per thread, or what the step's drive says (the Insert Benchmark's
// inserter, deleter and query threads per client).
func (p *Plan) connections(it Item) int {
	st := p.Steps.Steps[it.Step]
	if st.Drive != nil && st.Drive.Workers != nil {
		return st.Drive.Workers(it.Threads)
	}
	return it.Threads
}

// checkServerConnections refuses, before anything runs, a server whose
// max_connections is below what the plan opens at once (plus one for the
// suite's own setup connection).
func checkServerConnections(ctx context.Context, srv *suite.Server, conns int, cfg string) error {
	c, err := srv.Dial(ctx)
	if err != nil {
		return fmt.Errorf("connect to the server: %w", err)
	}
	defer c.Close()
	q := "SELECT @@max_connections"
	if srv.Protocol == client.Postgres {
		q = "SELECT (SELECT setting::int FROM pg_settings WHERE name = 'max_connections') - (SELECT setting::int FROM pg_settings WHERE name = 'superuser_reserved_connections')"
	}
	n, err := client.Scalar(ctx, c, q)
	if err != nil {
		return fmt.Errorf("read the server's max_connections: %w", err)
	}
	if int64(conns)+1 > n {
		return fmt.Errorf("the server allows %d connections (max_connections, config %s) and the plan opens %d at once: run with a config that raises max_connections (qpslab configs show one-thread-per-connection) or fewer threads", n, cfg, conns)
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
	counters  string          // its flavor's counter set
	disks     []string
	notes     []string
}

func (p *Plan) measureOf(st sandbox.State) measure {
	m := measure{serverPID: st.PID, ep: st.Endpoint, counters: st.Flavor.Describe().Counters}
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

// newID is a plan's identity: its start time and random bits, so that
// plans of several hosts sharing a store never collide.
func newID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
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
		Params: map[string]string{"repeat": strconv.Itoa(it.Repeat)},
		Plan:   p.ID, Pairing: p.pairingOf(step),
	}
	if !p.Steps.NoServer {
		r.Params["tcp"] = strconv.FormatBool(p.Client.TCP)
	}
	if it.Engine != "" {
		r.Params["engine"] = it.Engine
	}
	if c := it.Build.Commit; c != "" { // compiled from a commit: history orders such builds by its time
		r.Params["commit"], r.Params["commit_time"] = c, it.Build.CommitTime.UTC().Format(time.RFC3339)
		r.Params["build_flags"] = it.Build.Flags
	}
	for k, v := range p.Steps.Params {
		r.Params[k] = v
	}
	if pt := p.Points[configID(it.Config)]; pt != "" {
		r.Params["set"] = pt
	}
	if len(p.ServerCPUs) > 0 {
		r.Params["server_cpus"] = p.ServerCPUs.String()
	}
	if len(p.ClientCPUs) > 0 {
		r.Params["client_cpus"] = p.ClientCPUs.String()
	}
	for k, v := range step.Params {
		r.Params[k] = v
	}
	if step.Role == result.RoleTest {
		// Which pool of tests its verdict is judged in (analysis.Pool):
		// the tests that write, or those that do not.
		r.Params["writes"] = strconv.FormatBool(step.Writes)
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
func (p *Plan) runItem(ctx context.Context, srv *suite.Server, m measure, items []Item, k int, died func() error, idle []int) error {
	it := items[k]
	step := p.Steps.Steps[it.Step]
	seed := p.seedOf(step, it)
	start := p.start(it, step, seed)
	if srv.Client.Transport != "" {
		start.Params["transport"] = string(srv.Client.Transport)
	}
	if p.Watch.Start != nil {
		p.Watch.Start(k, len(items), it)
	}
	rec, err := p.record(start)
	if err != nil {
		return err
	}
	win := p.window(ctx, m, idle)
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
		if stalled, longest := result.Stalls(res.Samples, res.Totals.Series, res.Totals.Seconds, result.StallFraction); res.Totals.Seconds >= 3 && len(res.Samples) > 0 {
			engine.SetStalls(&res.Totals, float64(len(stalled)), float64(longest))
		}
		if err == nil && step.Finish != nil {
			if ferr := step.Finish(ctx, srv, res); ferr != nil {
				err = fmt.Errorf("after the run: %w", ferr)
				res.Status, res.Error = result.Failed, err.Error()
			}
		}
		res.Plan, res.Pairing = start.Plan, start.Pairing
		if res.Pairing != "" {
			t := res.Totals
			res.Rounds = []result.Round{{Repeat: it.Repeat, Round: 1, Started: res.Started.Add(time.Duration(res.Warmup * float64(time.Second))).UTC(),
				Seconds: t.Seconds, Events: t.Events, Statements: t.Statements, Rows: t.Rows, Value: t.Reported, IdleCPU: win.idleCPU()}}
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

// mux is the engine's way to run the workers of a server's transport.
func mux(t client.Transport) engine.Mux {
	if t == client.Loop {
		return client.Loops{}
	}
	return nil
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
	o.Mux = mux(srv.Client.Transport)
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
	// The samples a task reports are the run's (kept when it fails or is
	// interrupted: what was measured), and go to the recorder as they come.
	var mu sync.Mutex
	var samples []result.Sample
	tio := suite.TaskIO{Progress: func(int64, int64) {}, Sample: func(s result.Sample) {
		mu.Lock()
		samples = append(samples, s)
		mu.Unlock()
		rec.Sample(s)
	}}
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
	mu.Lock()
	res.Samples = samples
	mu.Unlock()
	if err != nil {
		res.Status, res.Error = result.Failed, err.Error()
		res.Totals = result.Totals{Seconds: tot.Seconds}
	} else if tot.Rows == 0 && tot.Events > 0 {
		p.logf("%s: %d events in %.2f s (%.0f/s)", step.Test, tot.Events, tot.Seconds, tot.TPS)
	} else {
		p.logf("%s: %d rows in %.2f s (%.0f rows/s)", step.Test, tot.Rows, tot.Seconds, tot.RowsPerSec)
	}
	return &res, err
}
