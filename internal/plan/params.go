package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/suite"
)

// Common are the parameters every suite's run takes; the command offers
// them as flags of every `qpslab run SUITE`, beside the suite's own.
var Common = []suite.Param{
	{Name: "build", Kind: suite.List, Usage: "build(s) to run, in turn (comma-separated or repeated; see qpslab builds list)"},
	{Name: "config", Kind: suite.List, Default: "default", Usage: "config(s): each build runs with each, in turn (comma-separated or repeated; see qpslab configs list)"},
	{Name: "threads", Kind: suite.List, Default: "1", Usage: "thread counts, comma-separated (e.g. 1,4,16)"},
	{Name: "repeat", Kind: suite.Int, Default: "1", Usage: "run the whole plan K times, builds and configs interleaved (A B A B …)"},
	{Name: "seed", Kind: suite.String, Usage: "random seed (default: a new one, recorded with the results)"},
	{Name: "warmup", Kind: suite.Seconds, Default: "5", Usage: "unmeasured seconds before each test (sysbench --warmup-time; 0 for none)"},
	{Name: "rate", Kind: suite.Float, Default: "0", Usage: "open loop: events per second (0: closed loop)"},
	{Name: "arrivals", Kind: suite.String, Default: "poisson", Usage: "open-loop arrivals: poisson or uniform"},
	{Name: "max-backlog", Kind: suite.Int, Usage: "open loop: queued events that end the run (default max(1000, 10×rate))"},
	{Name: "tcp", Kind: suite.Bool, Usage: "connect over loopback TCP instead of the unix socket"},
	{Name: "no-prepare", Kind: suite.Bool, Usage: "text queries instead of server-side prepared statements"},
	{Name: "transport", Kind: suite.String, Default: "auto", Usage: "client transport: blocking, netpoll, or auto (blocking up to 256 connections)"},
	{Name: "sandbox", Kind: suite.String, Usage: "run on this running sandbox (qpslab server start) instead of starting one per build and config"},
	{Name: "device", Kind: suite.String, Usage: "block device whose I/O is measured (default: the disk that holds the datadir)"},
	{Name: "report-interval", Kind: suite.Seconds, Default: "10", Usage: "seconds between progress lines during a test, with -v (sysbench --report-interval)"},
	{Name: "counters", Kind: suite.List, Default: "default", Usage: "server counters read over each measured window: default (the flavor's curated set), all, none, or counter names to add (e.g. innodb_pages_created, blks_read); qpslab metrics shows them per op"},
	{Name: "pmp", Kind: suite.Seconds, Default: "0", Usage: "every N seconds of each measured window, capture every server thread's stack (poor man's profiler: eu-stack, or gdb); each capture pauses the server; 0: none (see qpslab stacks)"},
	{Name: "perf", Kind: suite.Bool, Usage: "profile the server's CPU with perf record at 49 Hz during each measured window (see qpslab stacks --source perf)"},
}

// New makes the plan of suite s from the values of Common and of the
// suite's parameters (Parse), with its builds and configs looked up in the
// home (Resolve).
func New(ctx context.Context, h home.Home, s suite.Suite, v suite.Values) (*Plan, error) {
	p, err := Parse(s, v)
	if err != nil {
		return nil, err
	}
	if err := p.Resolve(ctx, h); err != nil {
		return nil, err
	}
	return p, nil
}

// Parse checks every value (all problems in one error) and configures the
// suite. Builds and Configs hold the names given, not yet looked up: the
// plan's Items can be listed, not run.
func Parse(s suite.Suite, v suite.Values) (*Plan, error) {
	c := v.Check()
	p := &Plan{Suite: s}
	p.Threads = c.Ints("threads", 1, 1<<20)
	p.Repeat = int(c.Int("repeat", 1, 1<<20))
	p.Warmup = c.Seconds("warmup", true)
	p.Rate = c.Float("rate", 0, 1e9)
	if c.String("max-backlog") != "" {
		p.MaxBacklog = int(c.Int("max-backlog", 1, 1<<30))
	}
	p.Client.TCP = c.Bool("tcp")
	p.Client.NoPrepare = c.Bool("no-prepare")
	p.Sandbox, p.Device = c.String("sandbox"), c.String("device")
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
	builds, configs := c.List("build"), c.List("config")
	switch {
	case p.Sandbox != "" && len(builds) > 0:
		c.Problem("--build and --sandbox exclude each other: --sandbox runs on a server already started")
	case p.Sandbox != "" && v.Changed("config"):
		c.Problem("--config and --sandbox exclude each other: the sandbox runs with the config it was started with")
	}
	if len(configs) == 0 && p.Sandbox == "" {
		c.Problem("--config: name at least one config (see qpslab configs list)")
	}
	// Every problem at once: the plan's and the suite's.
	var serr error
	p.Steps, serr = s.Configure(v)
	if err := c.Err(); err != nil || serr != nil {
		return nil, joinLine(err, serr)
	}
	for _, name := range builds {
		p.Builds = append(p.Builds, build.Build{Name: name})
	}
	for _, name := range configs {
		p.Configs = append(p.Configs, config.Config{Name: name})
	}
	if p.Sandbox != "" {
		p.Builds, p.Configs = []build.Build{{Name: p.Sandbox}}, []config.Config{{Name: "(its own)"}}
	}
	return p, nil
}

// Resolve looks up the plan's builds and configs in the home: the named
// ones, or the --sandbox's own.
func (p *Plan) Resolve(ctx context.Context, h home.Home) error {
	if p.Sandbox != "" {
		st, err := sandbox.Get(h, p.Sandbox)
		if err != nil {
			return err
		}
		p.Builds = []build.Build{{Name: st.Build, Flavor: st.Flavor, Version: st.Version}}
		p.Configs = []config.Config{{Name: st.Config}} // name@hash, as the sandbox recorded it
		return nil
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
	fam := config.FamilyOf(string(p.Builds[0].Flavor))
	for _, b := range p.Builds[1:] {
		if config.FamilyOf(string(b.Flavor)) != fam {
			return fmt.Errorf("builds %s (%s) and %s (%s) take configs of different families: run them in two commands", p.Builds[0].Name, p.Builds[0].Flavor, b.Name, b.Flavor)
		}
	}
	cs := config.Store{Dir: h.Configs()}
	for i, c := range p.Configs {
		cfg, err := cs.Get(c.Name, fam)
		if err != nil {
			return err
		}
		p.Configs[i] = cfg
	}
	return nil
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
