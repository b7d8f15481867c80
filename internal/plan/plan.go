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
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/metrics"
	"github.com/qpslab/qpslab/internal/owned"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/stacks"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/target"
	"github.com/qpslab/qpslab/internal/version"
)

// Runner runs a Spec: its suite's steps over the builds and configs, as
// its Design repeats them, with what it resolved and keeps as it goes.
type Runner struct {
	Spec
	Suite   suite.Suite
	Steps   *suite.Plan
	Builds  []build.Build   // run in turn (the Spec's, looked up by Resolve)
	Configs []config.Config // each build with each, in turn
	// Design is how the runner repeats and looks: Parse starts it from the
	// Spec; the application designs --repeat auto on this host.
	Design Design
	// ServerFiles are the files outside their sandboxes that a config or
	// the grid may point the servers at: the Spec's --allow-server-file,
	// or, on a fleet agent, the agent's own (config.CheckServerFiles).
	ServerFiles []string
	// targets are what Resolve found of each target (its endpoint,
	// version and flavor), by build name.
	targets map[string]*target.Report
	// TargetDefs, if set, define targets by name in place of the home's
	// (a spread run's part, whose target travels with its job).
	TargetDefs map[string]target.Target
	// Share, if set, makes the runner one part of a spread run (share.go).
	Share *Share
	// Points says which combination of the grid each derived config (by
	// ID) is, recorded with its runs (Resolve derives a config per base
	// config and combination).
	Points map[string]string
	// configOf is, with --config-for, each build's config by build name
	// (Resolve: ConfigsOf).
	configOf map[string]config.Config
	// Host is the host fingerprint recorded with every run.
	Host json.RawMessage
	// HostStates, if set, are the labels' states of the host, by config
	// ID (qpslab run --boost: hoststate.go): each label's runs record its
	// state's fingerprint instead of Host.
	HostStates map[string]HostState
	layout     Layout
	// perfOff: --perf was asked for, and perf does not work here (Run
	// warns, and the runs go on without CPU profiles).
	perfOff bool
	// Sweep, if set, is the labels' order in a version sweep (a study,
	// whose labels run base first: Labels' indexes, each once). Where the
	// labels' servers do not fit in memory together, they run in pairs of
	// neighbours in this order (each label beside the one before it in the
	// sweep, whose neighbour verdicts place each change) rather than each
	// beside the base.
	Sweep []int

	// More, if set, is asked after each look (a block of repeats) of a
	// test-level plan which tests are still undecided (--until-decided):
	// each gets Design.Step more repeats, up to Design.Looks looks in all,
	// while the plan's time stays within Design.Budget (0: none).
	// More is given the plan id of the group asked about (a pair's own,
	// where the labels run in pairs: planOf).
	More func(ctx context.Context, look int, plan string) (undecided []string, err error)
	// ID identifies the plan's runs, whose rounds pair with each other
	// (result.Run.Plan); Run makes one when it is empty.
	ID string

	Watch Watcher
	// total, base and offset count the runs for the watcher: the plan's so
	// far, those of the groups and looks before the current one, and the
	// current block's place in its group's; began is when
	// the plan started (the budget's); quietFigures are what the quiet wait
	// before the current step saw on each server, for its runs.
	total, base  int
	offset       int // of the current block in its group's items
	began        time.Time
	quietFigures map[*server]map[string]float64
	// logMu makes the watcher's lines one at a time: the servers' hooks
	// (the post-write flush, the quiet wait) run at once and log as they go.
	// Run sets it (a Plan is copied as a value before it runs).
	logMu *sync.Mutex
	// Record, if set, is called as each run starts, with what is known of
	// it; the Recorder it returns gets the run's samples as they are
	// measured and the whole result at its end.
	Record func(start result.Run) (Recorder, error)
}

// perfs says the runner profiles the server's CPU with perf: --perf, where
// perf works.
func (p *Runner) perfs() bool { return p.Perf && !p.perfOff }

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
	// StorageEngine is the storage engine of the tables ("" on PostgreSQL).
	StorageEngine string
	// Group is the group of labels whose servers are up together, under
	// test-level interleaving in pairs (Layout.Groups).
	Group int
}

// Label is how the item's results are addressed: build.config, with
// :engine for an engine other than InnoDB (result.Run.Label).
func (it Item) Label() string {
	return label.Of(it.Build.Name, result.ConfigName(configID(it.Config)), it.StorageEngine).String()
}

// storageEnginesOf are the storage engines build b runs with: the plan's where
// its flavor's tables take one (InnoDB when StorageEngines is empty), else none.
func (p *Runner) storageEnginesOf(b build.Build) []string {
	if !b.Flavor.Describe().StorageEngines {
		return []string{""}
	}
	if len(p.StorageEngines) == 0 {
		return []string{owned.DefaultStorageEngine}
	}
	return p.StorageEngines
}

func (p *Runner) threadsOf(st suite.Step) []int {
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
func (p *Runner) Check(h home.Home) error {
	if len(p.Builds) == 0 {
		return fmt.Errorf("name a build with --build (see qpslab builds list), or a running sandbox with --sandbox")
	}
	if len(p.Configs) == 0 {
		return fmt.Errorf("name a config with --config (see qpslab configs list)")
	}
	if p.Steps.NoServer && p.external() {
		return fmt.Errorf("suite %s runs a program of its own, on no server: leave out --sandbox and --target", p.Suite.Name())
	}
	for _, b := range p.Builds {
		switch {
		case len(p.Steps.Flavors) > 0 && !slices.Contains(p.Steps.Flavors, b.Flavor):
			return fmt.Errorf("suite %s runs %s builds, and build %s is %s: see qpslab suites for one that runs it", p.Suite.Name(), flavorList(p.Steps.Flavors), b.Name, b.Flavor)
		case !p.Steps.NoServer && b.Flavor != "" && !b.Flavor.HasServer():
			instead := "see qpslab suites for one that runs it"
			if p.Steps.Instead != nil {
				if s := p.Steps.Instead(b); s != "" {
					instead = s
				}
			}
			return fmt.Errorf("build %s is %s, which is no server, and suite %s needs one: %s", b.Name, b.Flavor, p.Suite.Name(), instead)
		}
		d := b.Flavor.Describe()
		fam := config.Family(d.Family)
		for _, c := range p.ConfigsOf(b) {
			if c.Content != nil && c.Family != fam {
				return fmt.Errorf("config %s is a %s config and build %s is %s: use a %s config", c.Name, c.Family, b.Name, b.Flavor, fam)
			}
		}
		if runs := p.Steps.RunsOn; runs != nil && !runsOn(runs, d.Dialect) {
			return fmt.Errorf("suite %s does not run on %s (build %s)", p.Suite.Name(), b.Flavor, b.Name)
		}
		if !d.StorageEngines && p.StorageEngineSet {
			return fmt.Errorf("--engine chooses a MySQL-family storage engine, and build %s is %s, which has none to choose: leave --engine out", b.Name, d.Title)
		}
	}
	if err := p.CheckShare(); err != nil {
		return err
	}
	if len(p.Steps.Steps) == 0 {
		return fmt.Errorf("suite %s has no steps to run: see qpslab run %s --list-tests", p.Suite.Name(), p.Suite.Name())
	}
	if p.Restore == RestoreReload {
		for _, st := range p.Steps.Steps {
			if st.Once && !st.Reloads {
				return fmt.Errorf("--restore reload: %s cannot run again to put the tables back (it does not drop what it made): use --restore snapshot or auto", st.Test)
			}
		}
	}
	if p.Steps.Check != nil {
		for _, b := range p.Builds {
			for _, c := range p.ConfigsOf(b) {
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
		conns = max(conns, workers(p.Steps.Steps[it.Step], it.Threads))
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

func (p *Runner) logf(format string, args ...any) {
	if p.Watch.Log != nil {
		line := fmt.Sprintf(format, args...)
		if p.logMu != nil {
			p.logMu.Lock()
			defer p.logMu.Unlock()
		}
		p.Watch.Log(line)
	}
}

// LabelSpec is one label of a plan: a build with a config and a storage
// engine.
type LabelSpec struct {
	Build         build.Build
	Config        config.Config
	StorageEngine string
}

func (it Item) spec() LabelSpec { return LabelSpec{it.Build, it.Config, it.StorageEngine} }

// same says whether two specs are one label.
func (l LabelSpec) same(o LabelSpec) bool {
	return l.Build.Name == o.Build.Name && configID(l.Config) == configID(o.Config) && l.StorageEngine == o.StorageEngine
}

// server is one label's server, up: what its steps run on, how to tell
// that it died, and how to stop it; for putting its tables back between
// repeats (restore), its datadir, how long it took to start, how long
// its load took, and how it is restored.
type server struct {
	spec    LabelSpec
	srv     *suite.Server
	m       measure
	pid     int // the server's main process (0 for a suite without a server)
	died    func() error
	down    func() error
	conns   int
	datadir string
	started time.Duration // how long the server took to start
	loaded  time.Duration // how long the steps that run once (the load) took on it
	snap    string        // its snapshot's folder (RestoreSnapshot)
	// sized is the config it runs with since an iobound plan sized its
	// cache (nil: spec's), and cacheMB and tablesMB the cache it reported
	// and what its tables took on disk then.
	sized             *config.Config
	cacheMB, tablesMB float64
}

// up starts the label's server for the group (a new sandbox, the
// --sandbox one, or for a suite without a server a scratch folder in the
// group's home), watches it (if it dies, the group's cancel ends what runs
// on it, with why), pins it, and checks it takes maxConns connections.
// what ends the log line that says it starts.
func (g *grouped) up(ctx context.Context, l LabelSpec, maxConns int, what string, reuse bool) (_ *server, err error) {
	p, cancel, h := g.p, g.cancel, g.h
	t0 := time.Now()
	b, cfg := l.Build, l.Config
	if p.Steps.NoServer {
		p.logf("== %s %s (%s) with config %s%s", b.Name, b.Version, b.Flavor, configID(cfg), what)
		srv, m, done, serr := p.scratch(h, b, cfg)
		if serr != nil {
			return nil, serr
		}
		return &server{spec: l, srv: srv, m: m, died: func() error { return nil }, down: done, conns: maxConns}, nil
	}
	s := &server{spec: l, died: func() error { return nil }, down: func() error { return nil }, conns: maxConns}
	defer func() { s.started = time.Since(t0) }()
	var st sandbox.State
	if r := p.targets[b.Name]; r != nil {
		p.logf("== target %s: %s %s at %s", r.Target.Name, r.Flavor.Describe().Title, r.Version, r.Target.Where())
		st = sandbox.State{Name: r.Target.Name, Build: r.Label(), Flavor: r.Flavor, Version: r.Version, Config: target.Config, Endpoint: r.Endpoint}
		// A target on this host is measured as a sandbox is: its process
		// and the disk of the folder it runs in.
		if st.PID, st.Datadir = target.Local(r.Target); st.PID > 0 {
			p.logf("target %s runs on this host (pid %d, in %s): its CPU, context switches and disk are measured", r.Target.Name, st.PID, st.Datadir)
		}
	} else if p.Sandbox != "" {
		if st, err = sandbox.Get(h, p.Sandbox); err != nil {
			return nil, err
		}
	} else {
		p.logf("== %s %s (%s) with config %s%s", b.Name, b.Version, b.Flavor, configID(cfg), what)
		spec := sandbox.Spec{Build: b, Config: cfg, Reuse: reuse, AllowFiles: p.AllowFiles}
		if label.OtherStorageEngine(l.StorageEngine) != "" {
			// Its own sandbox beside the same build and config's with
			// InnoDB, which test-level interleaving keeps up at once.
			spec.Name = b.Name + "." + cfg.Name + "-" + l.StorageEngine
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
		// Watch the server: if it dies, what runs on it ends at once (and
		// what runs on the group's other servers: they share ctx), and
		// the run says which label's server died and why (its exit and
		// its log).
		go func() {
			select {
			case <-srv.Exited():
				if !srv.Exit().Stopped {
					cancel(deathOf(l, srv.Exit()))
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
			return deathOf(l, srv.Exit())
		}
	}
	s.pid, s.datadir = st.PID, st.Datadir
	if len(p.ServerCPUs) > 0 {
		if err := host.Pin(st.PID, p.ServerCPUs); err != nil {
			return nil, err
		}
	}
	s.m = p.measureOf(st)
	if err := p.storageEngineCheck(ctx, st, b, cfg); err != nil {
		return nil, err
	}
	copts := p.Client
	ep := st.Endpoint
	copts.Transport = copts.Transport.Resolve(maxConns, ep.Protocol)
	s.srv = &suite.Server{
		Protocol: ep.Protocol, Dialect: ServerDialect(b, p.targets[b.Name] != nil, ep), Flavor: string(b.Flavor), Version: b.Version, Datadir: st.Datadir, Client: copts, StorageEngine: l.StorageEngine,
		External: p.targets[b.Name] != nil,
		Dial:     func(ctx context.Context) (client.Conn, error) { return client.Dial(ctx, ep, copts) },
		Log:      func(line string) { p.logf("%s", line) }, Warn: p.warn,
	}
	if err := checkServerConnections(ctx, s.srv, maxConns, configID(cfg)); err != nil {
		return nil, err
	}
	return s, nil
}

// runsOn asks a suite's RunsOn (runs) of the dialect a flavor's
// descriptor names: a flavor without one runs no such suite.
func runsOn(runs func(client.Dialect) bool, dialect string) bool {
	d, ok := client.DialectNamed(dialect)
	return ok && runs(d)
}

// ServerDialect is the SQL of build b's server at ep, chosen once here: the
// dialect b's flavor names (build.Descriptor.Dialect) for a server qpslab
// started, its protocol's for a target (the user's server, whose flavor is
// only what it was registered as), and the protocol's too for a flavor
// that names no dialect the client knows.
func ServerDialect(b build.Build, target bool, ep client.Endpoint) client.Dialect {
	if !target {
		if d, ok := client.DialectNamed(b.Flavor.Describe().Dialect); ok {
			return d
		}
	}
	return ep.Dialect()
}

// warn tells the user a warning whatever the verbosity.
func (p *Runner) warn(line string) {
	if p.Watch.Warn != nil {
		if p.logMu != nil {
			p.logMu.Lock()
			defer p.logMu.Unlock()
		}
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
func (p *Runner) scratch(h home.Home, b build.Build, cfg config.Config) (*suite.Server, measure, func() error, error) {
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

// checkServerConnections refuses, before anything runs, a server whose
// max_connections is below what the plan opens at once (plus one for the
// suite's own setup connection).
func checkServerConnections(ctx context.Context, srv *suite.Server, conns int, cfg string) error {
	c, err := srv.Dial(ctx)
	if err != nil {
		return fmt.Errorf("connect to the server: %w", err)
	}
	defer c.Close()
	n, err := client.Scalar(ctx, c, srv.Dialect.MaxConnections)
	if err != nil {
		return fmt.Errorf("read the server's max_connections: %w", err)
	}
	if int64(conns)+1 > n {
		return fmt.Errorf("the server allows %d connections (max_connections, config %s) and the plan opens %d at once: run with a config that raises max_connections (qpslab configs show one-thread-per-connection) or fewer threads", n, cfg, conns)
	}
	return nil
}

// diedUnder is err told by the server's death where the server died
// under what failed with err (a run or a hook: its exit and its log
// first, then err), and err itself where it did not.
func (s *server) diedUnder(err error) error {
	if derr := s.died(); derr != nil {
		return fmt.Errorf("%w (while: %v)", derr, err)
	}
	return err
}

// hookErr is what a failed Before or After hook ends the plan with: the
// server's death if that is why, an interrupt, or the hook's error.
func hookErr(ctx context.Context, s *server, err error) error {
	var dead *ServerDied
	switch {
	case errors.As(context.Cause(ctx), &dead):
		if !dead.of(s) {
			return dead
		}
		return fmt.Errorf("%w (while: %v)", dead, err)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return s.diedUnder(err)
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
	// remote: the server runs on another host (a target), whose CPU,
	// context switches and IO the sampler on this one does not see.
	remote bool
}

func (p *Runner) measureOf(st sandbox.State) measure {
	m := measure{serverPID: st.PID, ep: st.Endpoint, counters: st.Flavor.Describe().Counters}
	if r := p.targets[st.Build]; r != nil && st.PID == 0 {
		m.remote = true
		m.notes = append(m.notes, "target "+r.Target.Name+" runs on another host: its CPU, context switches, IO and memory per operation are not measured (only qpslab's client CPU is)")
		return m
	}
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

// NewID is a plan's identity: its start time and random bits, so that
// plans of several hosts sharing a store, or two started in one second in
// one home, never collide. The commands name a plan's results file by it.
func NewID() string {
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
func (p *Runner) start(it Item, step suite.Step, seed uint64) result.Run {
	r := result.Run{
		SchemaVersion: result.SchemaVersion, QpslabVersion: version.Version,
		Suite: p.Suite.Name(), Test: step.Test, Step: step.Order, Role: step.Role, Groups: step.Groups,
		Seed: seed, Threads: it.Threads, Loop: "closed", Started: time.Now().UTC(),
		Build: it.Build.Name, Flavor: string(it.Build.Flavor), Version: it.Build.Version, Config: configID(it.Config),
		Params: map[string]string{"repeat": strconv.Itoa(it.Repeat)},
		Plan:   p.planOf(it), Pairing: p.pairingOf(step),
	}
	if !p.Steps.NoServer {
		r.Params["tcp"] = strconv.FormatBool(p.Client.TCP)
	}
	if it.StorageEngine != "" {
		r.Params["engine"] = it.StorageEngine
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
	if p.Design.Looks > 1 {
		r.Params["looks"] = strconv.Itoa(p.Design.Looks)
	}
	if p.Share != nil && step.Task == nil {
		r.Threads = p.Share.Threads(it.Threads)
		r.Params["load_hosts"] = strconv.Itoa(p.Share.Parts)
		r.Params[ItemParam] = ShareKey(step.Test, it.Threads, r.Params["repeat"])
	}
	if step.Role == result.RoleTest {
		// Which pool of tests its verdict is judged in (analysis.Pool):
		// the tests that write, or those that do not.
		r.Params["writes"] = strconv.FormatBool(step.Writes)
	}
	p.stackParams(r.Params)
	p.stampHost(it, &r)
	if step.Drive != nil && !step.Drive.UntilScheduled {
		r.Warmup, r.Duration = p.Warmup.Seconds(), step.Seconds.Seconds()
		if p.Rate > 0 {
			r.Loop, r.Rate, r.Arrivals = "open", p.Rate, string(p.Arrivals)
		}
	}
	return r
}

// planOf is the plan id item it's run records, whose rounds pair with
// each other: the plan's, or, where the labels run in pairs (Layout), the
// pair's within it (ID/pair-N), so that a label that runs in two pairs
// (the base) pairs each time with the label beside it, never with a round
// of the other pair that has the same repeat and number.
func (p *Runner) planOf(it Item) string {
	if p.testLevel() && len(p.layout.Groups) > 1 {
		return fmt.Sprintf("%s/pair-%d", p.ID, it.Group+1)
	}
	return p.ID
}

func (p *Runner) record(start result.Run) (Recorder, error) {
	if p.Record == nil {
		return nopRecorder{}, nil
	}
	return p.Record(start)
}

type nopRecorder struct{}

func (nopRecorder) Sample(result.Sample)  {}
func (nopRecorder) Done(result.Run) error { return nil }

// ServerDied is the error of a run whose server died under it: the
// label whose server it was, its build and config, and how it ended.
type ServerDied struct {
	Label  string // build.config[:engine]
	Build  string
	Config string // name@hash
	// Cause is how it ended and the log lines that explain it (or, where
	// none does, as after a SIGKILL, its last lines), and the full log.
	Cause string
	spec  LabelSpec
}

func (e *ServerDied) Error() string {
	return fmt.Sprintf("the server of %s (build %s, config %s) died: %s", e.Label, e.Build, e.Config, e.Cause)
}

// of says whether the server that died is s.
func (e *ServerDied) of(s *server) bool { return e.spec.same(s.spec) }

// deathOf is the death of label l's server that ended as x.
func deathOf(l LabelSpec, x sandbox.Exit) *ServerDied {
	cause := x.Status
	switch {
	case x.Cause != "":
		cause += "; log: " + x.Cause
	case x.Log != "":
		if tail := sandbox.LogTail(x.Log, 3); tail != "" {
			cause += "; the log's last lines: " + tail
		}
	}
	if x.Log != "" {
		cause += " (full log: " + x.Log + ")"
	}
	return &ServerDied{Label: l.Label(), Build: l.Build.Name, Config: configID(l.Config), Cause: cause, spec: l}
}

// anotherDied is why a run on a healthy server ends when another label's
// server of its group died: every server of the group is stopped with it.
func anotherDied(dead *ServerDied) string { return "another label's server failed: " + dead.Error() }

// serverDeathGrace is how long a failed run waits for its server's exit to
// be seen: a lost connection comes a moment before the process is reaped.
const serverDeathGrace = 2 * time.Second

// mux is the engine's way to run the workers of a server's transport.
func mux(t client.Transport) engine.Mux {
	if t == client.Loop {
		return client.Loops{}
	}
	return nil
}

// progress is the engine's per-interval line sink: the watcher's log, one
// line at a time (nil without a watcher, as the engine expects).
func (p *Runner) progress() func(string) {
	if p.Watch.Log == nil {
		return nil
	}
	return func(line string) { p.logf("%s", line) }
}
