package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// AgentOptions are what qpslab agent takes.
type AgentOptions struct {
	Name        string   // the host's name in the fleet ("": the hostname)
	Labels      []string // what jobs are submitted by
	OnTerm      string   // finish or abort the job in progress on SIGTERM
	Heartbeat   time.Duration
	RescueAfter time.Duration
	// Builder compiles the commits of bisection jobs (nil: the home's
	// registry, as qpslab bisect).
	Builder bisect.Builder
	// AllowFiles are the files outside their sandboxes that this host's
	// servers may be pointed at (--allow-server-file): a job's settings
	// come from another host, so a setting that names any other is
	// refused here, whatever the job allowed (config.CheckServerFiles).
	AllowFiles []string
}

// Agent registers this host in the fleet of the env's store and works its
// jobs, one at a time, until ctx ends (docs/fleet.md).
func Agent(ctx context.Context, e Env, o AgentOptions) error {
	if o.OnTerm != "finish" && o.OnTerm != "abort" {
		return fmt.Errorf("--on-term %s: give finish (the job in progress ends first) or abort (it is cancelled)", o.OnTerm)
	}
	if o.Heartbeat < time.Second {
		return fmt.Errorf("--heartbeat %s: give 1s or more", o.Heartbeat)
	}
	hostname, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("read the hostname: %w", err)
	}
	name := o.Name
	if name == "" {
		name = fleet.DefaultName(hostname)
	}
	if err := fleet.ValidName(name); err != nil {
		return fmt.Errorf("--name: %w", err)
	}
	for _, l := range o.Labels {
		if err := fleet.ValidName(l); err != nil {
			return fmt.Errorf("--labels %s: a label is named as an agent is: %w", l, err)
		}
	}
	h := e.Home
	Clean(h, e.Err) // what an agent that was killed left
	st, fl, err := e.openFleet(ctx)
	if err != nil {
		return err
	}
	st.Close() // each job opens the store as qpslab run does
	defer fl.Close()
	fleet.SetRiverLog(e.Err)
	hc, err := host.Inspect(host.Real)
	if err != nil {
		return fmt.Errorf("record the host fingerprint: %w", err)
	}
	agent := ""
	if name != fleet.DefaultName(hostname) {
		agent = name // its own host in the store (docs/fleet.md)
	}
	hc.Agent = agent
	fp, err := json.Marshal(hc)
	if err != nil {
		return err
	}
	builds, configs, err := agentHas(ctx, h)
	if err != nil {
		return err
	}
	// A second signal (or the first, with --on-term abort) aborts the job
	// in progress; the command's context ends at the first.
	abort := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	defer TakeSecondSignal()() // the second aborts the job, not the process
	go func() {
		n := 0
		for range sigs {
			if n++; n == 2 || o.OnTerm == "abort" {
				close(abort)
				return
			}
		}
	}()
	a := &fleet.Agent{
		Fleet: fl,
		Host: fleet.Host{Name: name, Labels: o.Labels, HostID: hc.ID(), Fingerprint: fp, Hostname: hostname,
			Builds: builds, Configs: configs, Interval: o.Heartbeat},
		RescueAfter: o.RescueAfter,
		Work: func(ctx context.Context, at fleet.Attempt) error {
			return jobAgent{e: e, name: name, agent: agent, allow: o.AllowFiles}.runJob(ctx, at)
		},
		Bisect: func(ctx context.Context, at fleet.BisectAttempt) error {
			at.Job.Set = narrowAllow(at.Job.Set, o.AllowFiles)
			return bisect.RunJob(ctx, e.ForBisect(), at, o.Builder)
		},
		Have: func() ([]fleet.Build, []fleet.Config) {
			b, c, err := agentHas(context.Background(), h)
			if err != nil {
				fmt.Fprintf(e.Err, "agent %s: %v\n", name, err)
			}
			return b, c
		},
		Log: func(line string) { fmt.Fprintf(e.Err, "%s %s\n", time.Now().UTC().Format("15:04:05"), line) },
	}
	return a.Run(ctx, abort)
}

// agentHas lists the builds and configs of the agent's home.
func agentHas(ctx context.Context, h home.Home) ([]fleet.Build, []fleet.Config, error) {
	bs, err := build.Registry{Dir: h.Builds(), Cache: h.Cache}.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	cs, err := config.Store{Dir: h.Configs()}.List()
	if err != nil {
		return nil, nil, err
	}
	var builds []fleet.Build
	for _, b := range bs {
		builds = append(builds, fleet.Build{Name: b.Name, Flavor: string(b.Flavor), Version: b.Version})
	}
	var configs []fleet.Config
	for _, c := range cs {
		configs = append(configs, fleet.Config{Name: c.Name, Family: string(c.Family), ID: c.ID()})
	}
	return builds, configs, nil
}

// jobAgent is the agent working a fleet's jobs: its env, its name in the
// fleet, agent that name where it is not the hostname (part of the
// host's identity; "" otherwise), and the files outside their sandboxes
// its servers may be pointed at (--allow-server-file).
type jobAgent struct {
	e           Env
	name, agent string
	allow       []string
}

// runJob runs one attempt of a fleet job on this agent: the plan, through
// the code qpslab run uses, with its runs stored under the agent's name and
// the job's id and attempt; the runs of its earlier attempts stop counting
// first.
func (a jobAgent) runJob(ctx context.Context, at fleet.Attempt) error {
	if at.Job.Spread != nil {
		return a.runSpread(ctx, at)
	}
	e, name, agent, allow := a.e, a.name, a.agent, a.allow
	h := e.Home
	// What this host cannot run as it is fails the job at once
	// (fleet.Permanent); what may pass (a fetch, a server's start, a run)
	// is retried.
	p, err := jobPlan(at.Job, allow)
	if err != nil {
		return fleet.Permanent(agentRefuses(name, err))
	}
	job := strconv.FormatInt(at.ID, 10)
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	lost, superseded, err := st.SupersedeJob(ctx, job, at.Attempt)
	st.Close()
	if err != nil {
		return err
	}
	if lost+superseded > 0 {
		fmt.Fprintf(e.Err, "job %d, attempt %d: the runs of its earlier attempts stop counting: %d left running by a lost agent and %d finished are marked aborted\n",
			at.ID, at.Attempt, lost, superseded)
	}
	// The builds a job names that this host lacks are fetched first.
	reg := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	for _, b := range p.Builds {
		if _, err := reg.Get(ctx, b.Name); err == nil {
			continue
		}
		if _, aerr := build.ParseArtifact(b.Name); aerr != nil {
			return fleet.Permanent(fmt.Errorf("this host has no build %s, and it is not a registry build to fetch: add it (qpslab builds add) and retry the job", b.Name))
		}
		fmt.Fprintf(e.Err, "job %d: fetching build %s\n", at.ID, b.Name)
		if _, err := reg.Fetch(ctx, b.Name, build.FetchOptions{Name: b.Name, Log: e.Err}); err != nil {
			return fmt.Errorf("fetch build %s: %w", b.Name, err)
		}
	}
	if err := p.Resolve(ctx, h); err != nil {
		return fleet.Permanent(agentRefuses(name, err))
	}
	if err := p.Check(h); err != nil {
		return fleet.Permanent(err)
	}
	out := filepath.Join(h.Results(), fmt.Sprintf("fleet-job%d-attempt%d-%s.json", at.ID, at.Attempt, time.Now().UTC().Format("20060102-150405")))
	if err := home.EnsurePrivate(filepath.Dir(out)); err != nil {
		return err
	}
	_, err = runPlan(ctx, e, p, planRun{out: out, verbose: true, agent: agent,
		meta: store.Meta{Hostname: name, Job: job, JobAttempt: at.Attempt}})
	if err != nil {
		return withLogTail(h, p, err)
	}
	return nil
}

// withLogTail adds to a failed job's error the tail of the server log of
// the last sandbox it started, unless the error carries it already (a
// server that died or failed to start says why from its log).
func withLogTail(h home.Home, p *plan.Runner, err error) error {
	if strings.Contains(err.Error(), "(full log: ") {
		return err
	}
	var last sandbox.State
	for _, b := range p.Builds {
		for _, c := range p.Configs {
			st, gerr := sandbox.Get(h, sandbox.DefaultName(b, c))
			if gerr == nil && st.Log != "" && st.Started.After(last.Started) {
				last = st
			}
		}
	}
	if last.Log == "" {
		return err
	}
	tail := sandbox.LogTail(last.Log, 5)
	if tail == "" {
		return err
	}
	return fmt.Errorf("%w; the server log of %s ends: %s (full log: %s)", err, last.Name, tail, last.Log)
}

// jobPlan is the plan a fleet job carries: its suite's, from its
// parameters, with the files it read as the submitter had them. The files
// outside their sandboxes that its servers may be pointed at are this
// agent's (allow), not the job's: a setting that names one must pass both
// (Parse checks the job's --allow-server-file, Resolve the agent's).
func jobPlan(j fleet.Job, allow []string) (*plan.Runner, error) {
	p, err := jobRunner(j)
	if err != nil {
		return nil, err
	}
	p.ServerFiles = allow
	if !p.Steps.NoServer { // the grid's settings at once, before a build is fetched
		if err := p.Grid.CheckServerFiles("", allow); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// jobRunner is the runner of job j's spec (plan.FromSpec), or, for a job
// written before jobs carried one, of its parameters, as then.
func jobRunner(j fleet.Job) (*plan.Runner, error) {
	if len(j.Spec) > 0 {
		return plan.FromSpec(j.Spec, j.Files)
	}
	s, err := suite.Get(j.Suite)
	if err != nil {
		return nil, err
	}
	v, err := plan.ValuesOf(s, j.Params)
	if err != nil {
		return nil, err
	}
	return plan.Parse(s, v.WithFiles(j.Files))
}

// narrowAllow is a bisection job's suite flags with its
// --allow-server-file narrowed to what this agent allows too (allow): the
// bisection, stored with them, is resumed with them.
func narrowAllow(set map[string]string, allow []string) map[string]string {
	asked, ok := set["allow-server-file"]
	if !ok {
		return set
	}
	out := maps.Clone(set)
	delete(out, "allow-server-file")
	var both []string
	for _, a := range strings.Split(asked, ",") {
		if slices.ContainsFunc(allow, func(b string) bool { return filepath.Clean(a) == filepath.Clean(b) }) {
			both = append(both, a)
		}
	}
	if len(both) > 0 {
		out["allow-server-file"] = strings.Join(both, ",")
	}
	return out
}

// agentRefuses says that agent name refuses a job whose settings point
// its servers outside their sandboxes (err, when it is that), and how its
// host lets them.
func agentRefuses(name string, err error) error {
	if !errors.Is(err, config.ErrServerFile) {
		return err
	}
	return fmt.Errorf("agent %s refuses the job: %w (on this host: qpslab agent %s PATH)", name, err, config.AllowFlag)
}
