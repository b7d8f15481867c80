package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
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
	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/names"
	"github.com/qpslab/qpslab/internal/owned"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/target"
)

// Common are the parameters every suite's run takes; the command offers
// them as flags of every `qpslab run SUITE`, beside the suite's own.
var Common = []suite.Param{
	{Name: "build", Kind: suite.List, Usage: "build(s) to run, in turn (comma-separated or repeated; see qpslab builds list)"},
	{Name: "config", Kind: suite.List, Default: "default", Usage: "config(s): each build runs with each, in turn (comma-separated or repeated; see qpslab configs list)"},
	{Name: "config-for", Kind: suite.List, Usage: "a config per build instead of --config, as the reference's per-version folders: rules BUILDS=CONFIG, each build running with the first that matches it (a build's name, a glob such as mariadb-10.*, or a version range such as 10.2..10.11, 11.0.. or ..10), or a shipped map: cz11_bee (MariaDB 10.x with cz11a_bee, 11.x with cz11b_bee)"},
	{Name: "engine", Kind: suite.List, Default: "innodb", Usage: "MySQL family: storage engine(s) of the tables (innodb, rocksdb with --config myrocks, …); each build and config runs with each, in turn"},
	{Name: "threads", Kind: suite.List, Default: "1", Usage: "thread counts, comma-separated (e.g. 1,4,16)"},
	{Name: "repeat", Kind: suite.String, Default: "auto", Usage: "repeats of the whole plan, builds and configs interleaved: a number, or auto (a comparison of tests run as slices: 6 to 12 repeats and the slices per repeat, both as Kalibera and Jones's rule gives them from this host's variance components, each test's seconds its measured time over all the repeats; otherwise 1)"},
	{Name: "until-decided", Kind: suite.Bool, Usage: "after the first repeats, more repeats to the tests still undecided (neither changed nor the same within the floor) until each is decided or the looks --budget holds (at most 4, fixed before the first) are taken; each look is judged at the level that keeps the false positives of all of them within α"},
	{Name: "budget", Kind: suite.Seconds, Default: "0", Usage: "with --until-decided: the plan's wall time at most, in seconds (0: three times what the first repeats are planned to take)"},
	{Name: "restore", Kind: suite.String, Default: "auto", Usage: "how a label's tables are put back as they were after the load before a repeat that follows writes: auto (reload them, or restore a snapshot of the datadir where that measured faster), reload, or snapshot"},
	{Name: "interleave", Kind: suite.String, Default: "test", Usage: "how the builds and configs take turns: test (every server up for the whole plan, each test's slices alternating between them, A B B A; where their buffer pools fit in memory) or pass (each one's whole pass in turn, a fresh server each repeat)"},
	{Name: "slices", Kind: suite.Int, Default: "0", Usage: "with --interleave test: slices per repeat of each test (0: with --repeat auto, the count Kalibera and Jones's rule gives, none shorter than 0.25 s; else one a second, 4 to 20)"},
	{Name: "seed", Kind: suite.String, Usage: "random seed (default: a new one, recorded with the results)"},
	{Name: "warmup", Kind: suite.Seconds, Default: "5", Usage: "unmeasured seconds before each test (sysbench --warmup-time; 0 for none)"},
	{Name: "rate", Kind: suite.Float, Default: "0", Usage: "open loop: events per second (0: closed loop)"},
	{Name: "arrivals", Kind: suite.String, Default: "poisson", Usage: "open-loop arrivals: poisson or uniform"},
	{Name: "max-backlog", Kind: suite.Int, Usage: "open loop: queued events that end the run (default max(1000, 10×rate))"},
	{Name: "tcp", Kind: suite.Bool, Usage: "connect over loopback TCP instead of the unix socket"},
	{Name: "no-prepare", Kind: suite.Bool, Usage: "text queries instead of server-side prepared statements"},
	{Name: "transport", Kind: suite.String, Default: "auto", Usage: "client transport: blocking, uring (io_uring, a ring per connection), loop (io_uring, several connections per thread), netpoll, or auto (up to 256 connections: loop for several PostgreSQL connections where io_uring works, else blocking; then netpoll)"},
	{Name: "sandbox", Kind: suite.String, Usage: "run on this running sandbox (qpslab server start) instead of starting one per build and config"},
	{Name: "target", Kind: suite.List, Usage: "run on these registered servers that qpslab did not start (qpslab targets add), in turn, in qpslab's own database on each; their runs are labelled NAME-VERSION.target"},
	{Name: "device", Kind: suite.String, Usage: "block device whose I/O is measured (default: the disk that holds the datadir)"},
	{Name: "report-interval", Kind: suite.Seconds, Default: "10", Usage: "seconds between progress lines during a test, with -v (sysbench --report-interval)"},
	{Name: "server-cpus", Kind: suite.String, Usage: "pin the server's process tree to these CPUs (e.g. 0-15); recorded with the runs"},
	{Name: "client-cpus", Kind: suite.String, Usage: "pin qpslab's client to these CPUs (e.g. 16-23); recorded with the runs"},
	{Name: "set", Kind: suite.List, Usage: "a config grid: NAME=V1,V2 (repeat for more settings); one config per combination, derived from each --config and run interleaved"},
	{Name: "grid", Kind: suite.String, Usage: "a config grid from a YAML file mapping each setting to its values (innodb_io_capacity: [2000, 20000])"},
	{Name: "allow-server-file", Kind: suite.List, Usage: "let the servers read, write or run this file, folder or command outside their sandboxes, which a config, --set or --grid names (init_file, ssl keys, plugin folders, includes …; refused otherwise; repeat for more)"},
	{Name: "counters", Kind: suite.List, Default: "default", Usage: "server counters read over each measured window: default (the flavor's curated set), all, none, or counter names to add (e.g. innodb_pages_created, blks_read); qpslab metrics shows them per op"},
	{Name: "pmp", Kind: suite.Seconds, Default: "0", Usage: "every N seconds of each measured window, capture every server thread's stack (poor man's profiler: eu-stack, or gdb); each capture pauses the server; 0: none (see qpslab stacks)"},
	{Name: "perf", Kind: suite.Bool, Usage: "profile the server's CPU with perf record at 49 Hz during each measured window (see qpslab stacks --source perf)"},
}

// New makes the plan of suite s from the values of Common and of the
// suite's parameters (Parse), with its builds and configs looked up in the
// home (Resolve).
func New(ctx context.Context, h home.Home, s suite.Suite, v suite.Values) (*Runner, error) {
	p, err := Parse(s, v)
	if err != nil {
		return nil, err
	}
	if err := p.Resolve(ctx, h); err != nil {
		return nil, err
	}
	return p, nil
}

// Parse checks every value (all problems in one error), builds the Spec
// (the one function that does) and configures the suite's steps into the
// Runner that runs it. The Runner's Builds and Configs hold the names
// given, not yet looked up (Resolve): its Items can be listed, not run.
func Parse(s suite.Suite, v suite.Values) (*Runner, error) {
	c := v.Check()
	p := &Runner{Suite: s}
	p.Threads = c.Ints("threads", 1, 1<<20)
	if r := c.String("repeat"); r != "auto" {
		n, err := strconv.ParseInt(r, 10, 64)
		if err != nil || n < 1 || n > 1<<20 {
			c.Problem("--repeat %s: give a whole number from 1 to %d, or auto", suite.Quote(r), 1<<20)
		}
		p.Repeat = int(n)
	}
	p.Restore = c.OneOf("restore", RestoreAuto, RestoreReload, RestoreSnapshot)
	if c.Bool("until-decided") {
		p.UntilDecided = true
	}
	p.Budget = c.Seconds("budget", true)
	if v.Changed("budget") && !p.UntilDecided {
		c.Problem("--budget bounds the repeats --until-decided adds: give --until-decided too")
	}
	p.Interleave = c.OneOf("interleave", InterleaveTest, InterleavePass)
	p.Slices = int(c.Int("slices", 0, 1000))
	if v.Changed("slices") && p.Interleave == InterleavePass {
		c.Problem("--slices cuts each test into slices that alternate between the labels: it needs --interleave test")
	}
	p.Warmup = c.Seconds("warmup", true)
	p.Rate = c.Float("rate", 0, 1e9)
	if c.String("max-backlog") != "" {
		p.MaxBacklog = int(c.Int("max-backlog", 1, 1<<30))
	}
	p.Client.TCP = c.Bool("tcp")
	p.Client.NoPrepare = c.Bool("no-prepare")
	p.Sandbox, p.Device, p.Targets = c.String("sandbox"), c.String("device"), c.List("target")
	p.ReportInterval = c.Seconds("report-interval", false)
	p.PMP = c.Seconds("pmp", true)
	if p.PMP > 0 && p.PMP < 100*time.Millisecond {
		c.Problem("--pmp %s: give at least 0.1 seconds between captures (each takes a tenth of a second or more), or 0 for none", c.String("pmp"))
	}
	p.Perf = c.Bool("perf")
	var cerr error
	if p.Counters, cerr = counters.ParseSelection(c.List("counters")); cerr != nil {
		c.Problem("%v", cerr)
	}
	if seed := c.String("seed"); seed != "" {
		n, err := strconv.ParseUint(seed, 10, 63)
		if err != nil {
			c.Problem("--seed %s: give a whole number from 0 to %d", suite.Quote(seed), uint64(math.MaxInt64))
		}
		p.Seed = n
	} else {
		p.Seed = rand.Uint64() >> 1
	}
	var err error
	if p.Arrivals, err = engine.ParseArrivals(c.String("arrivals")); err != nil {
		c.Problem("--arrivals: %v", err)
	}
	if p.Client.Transport, err = client.ParseTransport(c.String("transport")); err != nil {
		c.Problem("--transport: %v", err)
	}
	if v.Changed("arrivals") && p.Rate == 0 {
		c.Problem("--arrivals shapes an open loop: give --rate too")
	}
	if v.Changed("max-backlog") && p.Rate == 0 {
		c.Problem("--max-backlog bounds an open loop: give --rate too")
	}
	if sets := c.List("set"); len(sets) > 0 {
		if p.Grid, err = config.ParseSets(sets); err != nil {
			c.Problem("%v", err)
		}
	}
	if f := c.String("grid"); f != "" {
		if len(p.Grid) > 0 {
			c.Problem("--set and --grid exclude each other: put every setting in the grid file")
		} else if p.Grid, err = config.ReadGrid(f); err != nil {
			c.Problem("--grid: %v", err)
		}
	}
	p.AllowFiles = c.List("allow-server-file")
	for _, pin := range []struct {
		flag string
		to   *host.CPUs
	}{{"server-cpus", &p.ServerCPUs}, {"client-cpus", &p.ClientCPUs}} {
		if s := c.String(pin.flag); s != "" {
			if *pin.to, err = host.ParseCPUs(s, runtime.NumCPU()); err != nil {
				c.Problem("--%s: %v", pin.flag, err)
			}
		}
	}
	builds, configs := c.List("build"), c.List("config")
	nameProblems(c, builds, configs, p.Grid)
	p.StorageEngineSet = v.Changed("engine")
	for _, name := range c.List("engine") {
		e, err := owned.ParseStorageEngine(name)
		switch {
		case err != nil:
			c.Problem("--engine: %v", err)
		case slices.Contains(p.StorageEngines, e):
			c.Problem("--engine names %s twice", e)
		default:
			p.StorageEngines = append(p.StorageEngines, e)
		}
	}
	if len(p.StorageEngines) == 0 {
		c.Problem("--engine: name at least one storage engine (innodb, rocksdb, …)")
	}
	switch {
	case p.Sandbox != "" && len(builds) > 0:
		c.Problem("--build and --sandbox exclude each other: --sandbox runs on a server already started")
	case p.Sandbox != "" && v.Changed("config"):
		c.Problem("--config and --sandbox exclude each other: the sandbox runs with the config it was started with")
	case p.Sandbox != "" && len(p.Grid) > 0:
		c.Problem("--set/--grid and --sandbox exclude each other: a grid starts a sandbox per config")
	}
	if len(p.Targets) > 0 {
		targetProblems(c, v, p, len(builds) > 0)
	}
	if rules := c.List("config-for"); len(rules) > 0 {
		switch {
		case v.Changed("config"):
			c.Problem("--config and --config-for exclude each other: --config-for gives each build its config")
		case p.external():
			c.Problem("--config-for and --sandbox or --target exclude each other: those servers run with their own config")
		case len(p.Grid) > 0:
			c.Problem("--config-for and --set/--grid exclude each other: a grid derives configs from --config")
		}
		if p.PerBuild, err = config.ParsePerBuild(rules); err != nil {
			c.Problem("%v", err)
		} else if len(p.PerBuild) == 0 {
			c.Problem("--config-for: give at least one rule BUILDS=CONFIG, or a shipped map (cz11_bee)")
		}
		configs = p.PerBuild.Configs()
	}
	if len(configs) == 0 && !p.external() {
		c.Problem("--config: name at least one config (see qpslab configs list)")
	}
	// Every problem at once: the plan's and the suite's.
	var serr error
	p.Steps, serr = s.Configure(v)
	if serr == nil && p.Steps.Cache > 0 {
		ioboundProblems(c, p)
	}
	if serr == nil && !p.Steps.NoServer {
		if err := p.Grid.CheckServerFiles("", p.AllowFiles); err != nil {
			c.Problem("%v", err)
		}
	}
	if serr == nil && len(p.Targets) > 0 && p.Steps.NoServer {
		c.Problem("suite %s runs a program of its own, on no server: leave out --target", s.Name())
	}
	if err := c.Err(); err != nil || serr != nil {
		return nil, joinLine(err, serr)
	}
	p.Version, p.Spec.Suite, p.Given = SpecVersion, s.Name(), v.Given()
	p.Given["seed"] = strconv.FormatUint(p.Seed, 10)
	p.Spec.Builds, p.Spec.Configs = builds, configs
	if len(p.PerBuild) > 0 {
		p.Spec.Configs = nil // each build's is its rule's (Resolve)
	}
	p.Design, p.ServerFiles = p.design(), p.AllowFiles
	for _, name := range builds {
		p.Builds = append(p.Builds, build.Build{Name: name})
	}
	for _, name := range configs {
		p.Configs = append(p.Configs, config.Config{Name: name})
	}
	if p.Sandbox != "" {
		p.Builds, p.Configs = []build.Build{{Name: p.Sandbox}}, []config.Config{{Name: "(its own)"}}
	}
	if len(p.Targets) > 0 {
		p.Builds, p.Configs = nil, []config.Config{{Name: target.Config}}
		for _, name := range p.Targets {
			p.Builds = append(p.Builds, build.Build{Name: name})
		}
	}
	return p, nil
}

// nameProblems are the builds and configs a plan cannot be given (package
// names): a name not valid, one named twice (two labels of one name would
// share a sandbox), and a grid whose derived configs' names are.
func nameProblems(c *suite.Checker, builds, configs []string, grid config.Grid) {
	valid := true
	for _, l := range []struct {
		flag  string
		list  []string
		check func(string) error
	}{{"--build", builds, names.Build}, {"--config", configs, names.Config}} {
		for _, n := range l.list {
			if err := l.check(n); err != nil {
				c.Problem("%s: %v", l.flag, err)
				valid = false
			}
		}
		if err := names.Once(l.flag, l.list); err != nil {
			c.Problem("%v", err)
			valid = false
		}
	}
	if valid && len(grid) > 0 {
		if _, err := config.DerivedNames(configs, grid); err != nil {
			c.Problem("%v", err)
		}
	}
}

// resolvePerBuild gives each build its config by the plan's --config-for
// rules (the builds resolved: their versions known), and keeps in
// p.Configs the configs some build runs with, in the builds' order. A build
// no rule names is refused, naming the rule to add.
func (p *Runner) resolvePerBuild(cs config.Store, fam config.Family) error {
	p.configOf = map[string]config.Config{}
	p.Configs = nil
	for _, b := range p.Builds {
		name, ok := p.PerBuild.ConfigFor(b.Name, b.Version)
		if !ok {
			v := b.Version
			if v == "" {
				v = "unknown"
			}
			return fmt.Errorf("--config-for: no rule names build %s (version %s): add one, such as %s=CONFIG or a version range", b.Name, v, b.Name)
		}
		p.configOf[b.Name] = config.Config{Name: name}
		if !slices.ContainsFunc(p.Configs, func(c config.Config) bool { return c.Name == name }) {
			p.Configs = append(p.Configs, config.Config{Name: name})
		}
	}
	return nil
}

// ConfigsOf are the configs build b runs with: its own by --config-for,
// else every config of the plan.
func (p *Runner) ConfigsOf(b build.Build) []config.Config {
	if c, ok := p.configOf[b.Name]; ok {
		return []config.Config{c}
	}
	return p.Configs
}

// external says the plan runs on a server it does not start: a running
// sandbox (--sandbox) or a target (--target).
func (p *Runner) external() bool { return p.Sandbox != "" || len(p.Targets) > 0 }

// targetProblems are what a run on a target cannot take: the server is
// someone else's, on another host, as it is.
func targetProblems(c *suite.Checker, v suite.Values, p *Runner, builds bool) {
	for i, name := range p.Targets {
		if err := target.ValidName(name); err != nil {
			c.Problem("--target: %v", err)
		} else if slices.Contains(p.Targets[:i], name) {
			c.Problem("--target names %s twice", name)
		}
	}
	for _, x := range []struct {
		bad  bool
		what string
	}{
		{builds, "--build and --target exclude each other: the target's server is the build"},
		{v.Changed("config"), "--config and --target exclude each other: the target runs with its own config"},
		{p.Sandbox != "", "--sandbox and --target exclude each other: name one server"},
		{len(p.Grid) > 0, "--set/--grid and --target exclude each other: a grid starts a server per config"},
		{len(p.ServerCPUs) > 0, "--server-cpus pins the server's processes, and qpslab does not re-pin a server it did not start: leave it out (pin it yourself, on its host)"},
		{p.Device != "", "--device names the disk of a server qpslab started: a target's is the disk of the folder its server runs in, where that server is on this host: leave it out"},
		{p.Restore == RestoreSnapshot, "--restore snapshot copies a server's datadir, which a target's is not to qpslab: use --restore reload"},
	} {
		if x.bad {
			c.Problem("%s", x.what)
		}
	}
}

// Resolve looks up the plan's builds and configs in the home: the named
// ones, or the --sandbox's own.
func (p *Runner) Resolve(ctx context.Context, h home.Home) error {
	if len(p.Targets) > 0 {
		p.targets, p.Builds = map[string]*target.Report{}, nil
		for _, name := range p.Targets {
			t, ok := p.TargetDefs[name]
			var err error
			if !ok {
				t, err = target.Get(h, name)
			}
			if err != nil {
				return err
			}
			r, err := target.Check(ctx, t)
			if err != nil {
				return err
			}
			if len(p.Builds) > 0 && r.Flavor.Describe().Family != p.Builds[0].Flavor.Describe().Family {
				return fmt.Errorf("targets %s (%s) and %s (%s) are servers of different families (%s, %s): run them in two commands", p.Targets[0], p.Builds[0].Flavor, name, r.Flavor,
					p.Builds[0].Flavor.Describe().Family, r.Flavor.Describe().Family)
			}
			if (p.PMP > 0 || p.Perf) && r.PID == 0 {
				return fmt.Errorf("--pmp and --perf read the server's process, and target %s's is not on this host (%s): leave them out, or run qpslab on the server's host", name, t.Where())
			}
			p.targets[r.Label()] = &r
			p.Builds = append(p.Builds, build.Build{Name: r.Label(), Flavor: r.Flavor, Version: r.Version})
		}
		p.Configs = []config.Config{{Name: target.Config}}
		return p.Decide(host.Real)
	}
	if p.Sandbox != "" {
		st, err := sandbox.Get(h, p.Sandbox)
		if err != nil {
			return err
		}
		p.Builds = []build.Build{{Name: st.Build, Flavor: st.Flavor, Version: st.Version}}
		p.Configs = []config.Config{{Name: st.Config}} // name@hash, as the sandbox recorded it
		return p.Decide(host.Real)
	}
	if len(p.Builds) == 0 {
		return fmt.Errorf("name the build(s) to run with --build (see qpslab builds list), or a running sandbox with --sandbox")
	}
	reg := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	for i, b := range p.Builds {
		rb, err := reg.Get(ctx, b.Name)
		if err != nil {
			return err
		}
		p.Builds[i] = rb
	}
	fam := config.Family(p.Builds[0].Flavor.Describe().Family)
	for _, b := range p.Builds[1:] {
		if config.Family(b.Flavor.Describe().Family) != fam {
			return fmt.Errorf("builds %s (%s) and %s (%s) take configs of different families: run them in two commands", p.Builds[0].Name, p.Builds[0].Flavor, b.Name, b.Flavor)
		}
	}
	cs := config.Store{Dir: h.Configs()}
	if len(p.PerBuild) > 0 {
		if err := p.resolvePerBuild(cs, fam); err != nil {
			return err
		}
	}
	for i, c := range p.Configs {
		cfg, err := cs.Get(c.Name, fam)
		if err != nil {
			return err
		}
		if err := config.CheckServerFiles(cfg, p.ServerFiles); err != nil {
			return err
		}
		p.Configs[i] = cfg
	}
	for b, c := range p.configOf {
		i := slices.IndexFunc(p.Configs, func(x config.Config) bool { return x.Name == c.Name })
		p.configOf[b] = p.Configs[i]
	}
	if len(p.Grid) == 0 {
		return p.Decide(host.Real)
	}
	// One config per base config and grid point, stored like any config,
	// once the grid is checked against the files allowed now (a fleet
	// agent's own, which Parse did not know).
	if err := p.Grid.CheckServerFiles(fam, p.ServerFiles); err != nil {
		return err
	}
	var derived []config.Config
	p.Points = map[string]string{}
	for _, base := range p.Configs {
		for _, pt := range p.Grid.Combinations() {
			d, err := cs.Derived(base, pt)
			if err != nil {
				return fmt.Errorf("the config grid: %w", err)
			}
			derived = append(derived, d)
			p.Points[d.ID()] = pt.String()
		}
	}
	p.Configs = derived
	return p.Decide(host.Real)
}

// Listed is the plan as --list-tests shows it, without Resolve (which
// looks builds up and writes the grid's derived configs into the store):
// one unnamed build when none is named, and with a grid (--set, --grid)
// each config at each grid point, by the name Resolve gives it, with its
// point in Points.
func (p *Runner) Listed() *Runner {
	q := *p
	if len(q.Builds) == 0 {
		q.Builds = make([]build.Build, 1)
	}
	if len(p.Grid) > 0 {
		q.Configs, q.Points = nil, map[string]string{}
		for _, base := range p.Configs {
			for _, pt := range p.Grid.Combinations() {
				c := config.Config{Name: config.DerivedName(base.Name, pt)}
				q.Configs = append(q.Configs, c)
				q.Points[c.Name] = pt.String()
			}
		}
	}
	return &q
}

// joinLine joins errors on one line.
func joinLine(errs ...error) error {
	var msgs []string
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// ioboundProblems are what an iobound workload cannot run with: the plan
// restarts each server it started with its cache sized after the load.
func ioboundProblems(c *suite.Checker, p *Runner) {
	if p.Sandbox != "" {
		c.Problem("--workload iobound restarts the server with its cache sized after the load, which --sandbox's server (started by you) is not restarted for: leave --sandbox out")
	}
	for _, e := range p.StorageEngines {
		if label.OtherStorageEngine(e) != "" {
			c.Problem("--workload iobound sizes InnoDB's buffer pool and PostgreSQL's shared_buffers, not the cache of --engine %s: run it with --engine innodb", e)
		}
	}
	if !slices.ContainsFunc(p.Steps.Steps, func(st suite.Step) bool { return st.Sizes }) {
		c.Problem("--workload iobound sizes the cache after the load, and the steps chosen do not load: add the load's steps")
	}
}
