package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// openFleet opens the shared PostgreSQL store (migrating it: River's
// schema is among its migrations) and the fleet in it.
func openFleet(cmd *cobra.Command) (*store.Store, *fleet.Fleet, error) {
	if !strings.HasPrefix(storeDSN(cmd), "postgres://") && !strings.HasPrefix(storeDSN(cmd), "postgresql://") {
		return nil, nil, fmt.Errorf("the fleet lives in a shared PostgreSQL store: give --store postgres://user@host/db (or $QPSLAB_STORE) on every host and where jobs are submitted")
	}
	h, err := resolveHome()
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(cmd.Context(), storeDSN(cmd), h.StoreFile())
	if err != nil {
		return nil, nil, err
	}
	fl, err := fleet.Open(cmd.Context(), storeDSN(cmd), st.Where())
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, fl, nil
}

const agentLong = `Run this host's benchmark jobs from the shared PostgreSQL store (--store
postgres://…; docs/fleet.md). The agent registers the host under --name (default:
the hostname, in lower case) with its --labels, its fingerprint (qpslab host
check) and the builds and configs it has, then works the jobs queued for it
(qpslab fleet submit) one at a time, each a plan run as qpslab run runs it:
builds a job names that are missing are fetched first (registry builds such as
mariadb-10.2.11), and every run goes to the shared store as it runs, under the
agent's name as its host. It heartbeats every --heartbeat; a host whose
heartbeats stop is shown lost by qpslab fleet hosts.

SIGTERM (or SIGINT) stops it: --on-term finish lets the job in progress end
first (a second signal aborts it), abort cancels it at once (its run in
progress is stored aborted, its servers stopped, and the job is retried when
the agent is back). If the agent is killed outright, River's rescuer retries
its job once the job's timeout has passed, and the runs of the lost attempt
stop counting.

Two agents on one machine (tests, trials) must have different --name: a name
other than the hostname is part of the host's identity, so each counts as a
host of its own. On a real fleet run one agent per machine: a benchmark host
must be alone with its benchmark.`

func newAgentCmd() *cobra.Command {
	var name, onTerm string
	var labels []string
	var beat, rescue time.Duration
	c := &cobra.Command{
		Use:   "agent --store postgres://… [--labels L,…] [--name N]",
		Short: "Work this host's benchmark jobs from the shared store, one at a time (docs/fleet.md)",
		Long:  agentLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if onTerm != "finish" && onTerm != "abort" {
				return fmt.Errorf("--on-term %s: give finish (the job in progress ends first) or abort (it is cancelled)", onTerm)
			}
			if beat < time.Second {
				return fmt.Errorf("--heartbeat %s: give 1s or more", beat)
			}
			hostname, err := os.Hostname()
			if err != nil {
				return fmt.Errorf("read the hostname: %w", err)
			}
			if name == "" {
				name = fleet.DefaultName(hostname)
			}
			if err := fleet.ValidName(name); err != nil {
				return fmt.Errorf("--name: %w", err)
			}
			for _, l := range labels {
				if err := fleet.ValidName(l); err != nil {
					return fmt.Errorf("--labels %s: a label is named as an agent is: %w", l, err)
				}
			}
			h, err := resolveHome()
			if err != nil {
				return err
			}
			cleanAfterCrash(cmd, h) // what an agent that was killed left
			st, fl, err := openFleet(cmd)
			if err != nil {
				return err
			}
			st.Close() // each job opens the store as qpslab run does
			defer fl.Close()
			fleet.SetRiverLog(cmd.ErrOrStderr())
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
			builds, configs, err := agentHas(cmd.Context(), h)
			if err != nil {
				return err
			}
			// A second signal (or the first, with --on-term abort) aborts
			// the job in progress; main's context ends at the first.
			abort := make(chan struct{})
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			go func() {
				n := 0
				for range sigs {
					if n++; n == 2 || onTerm == "abort" {
						close(abort)
						return
					}
				}
			}()
			logw := cmd.ErrOrStderr()
			a := &fleet.Agent{
				Fleet: fl,
				Host: fleet.Host{Name: name, Labels: labels, HostID: hc.ID(), Fingerprint: fp, Hostname: hostname,
					Builds: builds, Configs: configs, Interval: beat},
				RescueAfter: rescue,
				Work: func(ctx context.Context, at fleet.Attempt) error {
					return runJob(ctx, cmd, h, name, agent, at)
				},
				Have: func() ([]fleet.Build, []fleet.Config) {
					b, c, err := agentHas(context.Background(), h)
					if err != nil {
						fmt.Fprintf(logw, "agent %s: %v\n", name, err)
					}
					return b, c
				},
				Log: func(line string) { fmt.Fprintf(logw, "%s %s\n", time.Now().UTC().Format("15:04:05"), line) },
			}
			return a.Run(cmd.Context(), abort)
		},
	}
	c.Flags().StringVar(&name, "name", "", "this host's name in the fleet (default: the hostname, in lower case); a name other than the hostname makes it a host of its own")
	c.Flags().StringSliceVar(&labels, "labels", nil, "labels to submit jobs by (qpslab fleet submit --hosts LABEL), e.g. small,amd")
	c.Flags().DurationVar(&beat, "heartbeat", 10*time.Second, "heartbeat interval; a host with no heartbeat for three is lost")
	c.Flags().StringVar(&onTerm, "on-term", "finish", "on SIGTERM or SIGINT: finish the job in progress first (a second signal aborts it), or abort it")
	c.Flags().DurationVar(&rescue, "rescue-after", time.Minute, "River's rescuer, on this agent when it leads: the least time before the job of an agent that vanished is retried (its timeout is the other bound)")
	return c
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

// jobValues are a job's parameters over the suite's and the plan's
// defaults, as the flags of qpslab run would give them.
func jobValues(s suite.Suite, params map[string]string) (suite.Values, error) {
	all := append(append([]suite.Param{}, plan.Common...), s.Params()...)
	v := suite.Defaults(all)
	for k, x := range params {
		if !slices.ContainsFunc(all, func(p suite.Param) bool { return p.Name == k }) {
			return v, fmt.Errorf("the plan names --%s, which suite %s does not take (qpslab run %s --help lists them)", k, s.Name(), s.Name())
		}
		v = v.With(k, x)
	}
	return v, nil
}

// runJob runs one attempt of a fleet job on this agent: the plan, through
// the code qpslab run uses, with its runs stored under the agent's name and
// the job's id and attempt; the runs of its earlier attempts stop counting
// first.
func runJob(ctx context.Context, cmd *cobra.Command, h home.Home, name, agent string, at fleet.Attempt) error {
	// What this host cannot run as it is fails the job at once
	// (fleet.Permanent); what may pass (a fetch, a server's start, a run)
	// is retried.
	s, err := suite.Get(at.Job.Suite)
	if err != nil {
		return fleet.Permanent(err)
	}
	v, err := jobValues(s, at.Job.Params)
	if err != nil {
		return fleet.Permanent(err)
	}
	p, err := plan.Parse(s, v)
	if err != nil {
		return fleet.Permanent(err)
	}
	job := strconv.FormatInt(at.ID, 10)
	st, err := store.Open(ctx, storeDSN(cmd), h.StoreFile())
	if err != nil {
		return err
	}
	lost, superseded, err := st.SupersedeJob(ctx, job, at.Attempt)
	st.Close()
	if err != nil {
		return err
	}
	if lost+superseded > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "job %d, attempt %d: the runs of its earlier attempts stop counting: %d left running by a lost agent and %d finished are marked aborted\n",
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
		fmt.Fprintf(cmd.ErrOrStderr(), "job %d: fetching build %s\n", at.ID, b.Name)
		if _, err := reg.Fetch(ctx, b.Name, build.FetchOptions{Name: b.Name, Log: cmd.ErrOrStderr()}); err != nil {
			return fmt.Errorf("fetch build %s: %w", b.Name, err)
		}
	}
	if err := p.Resolve(ctx, h); err != nil {
		return fleet.Permanent(err)
	}
	if err := p.Check(h); err != nil {
		return fleet.Permanent(err)
	}
	out := filepath.Join(h.Results(), fmt.Sprintf("fleet-job%d-attempt%d-%s.json", at.ID, at.Attempt, time.Now().UTC().Format("20060102-150405")))
	if err := home.Ensure(filepath.Dir(out)); err != nil {
		return err
	}
	_, err = runPlanWith(ctx, cmd, h, p, planRun{out: out, verbose: true, agent: agent,
		meta: store.Meta{Hostname: name, Job: job, JobAttempt: at.Attempt}})
	if err != nil {
		return withLogTail(h, p, err)
	}
	return nil
}

// withLogTail adds to a failed job's error the tail of the server log of
// the last sandbox it started, unless the error carries it already (a
// server that died or failed to start says why from its log).
func withLogTail(h home.Home, p *plan.Plan, err error) error {
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

func newFleetCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "fleet",
		Short: "Queue plans as jobs for benchmark hosts and follow them (docs/fleet.md)",
		Long: `A fleet is benchmark hosts that each run qpslab agent against one shared
PostgreSQL store (--store postgres://…). qpslab fleet submit queues a plan as
one job per host (River jobs in the store); each host's agent runs its jobs
one at a time and stores the runs as they go, under the host's name, so
that qpslab compare can put the hosts side by side (LABEL@HOST, --by-host).`,
	}
	c.AddCommand(newFleetSubmitCmd(), newFleetStatusCmd(), newFleetCancelCmd(), newFleetRetryCmd(), newFleetHostsCmd())
	return c
}

// submitOpts are what fleet submit takes beside the plan.
type submitOpts struct {
	hosts    []string
	timeout  time.Duration
	attempts int
}

func (o *submitOpts) flags(c *cobra.Command) {
	c.Flags().StringSliceVar(&o.hosts, "hosts", nil, "the hosts to run on: agent names and labels (qpslab fleet hosts lists them); one job per host")
	c.Flags().DurationVar(&o.timeout, "timeout", 0, "how long one attempt may run; a job whose agent vanished is retried once it has passed (default: twice the plan's planned time, and 10 minutes per server it starts)")
	c.Flags().IntVar(&o.attempts, "attempts", 3, "how many times a job is tried (after a failure, or when its agent vanished)")
}

const submitLong = `Queue a plan as one job per host: --hosts names agents or labels (every
agent with the label). Each job is the plan qpslab run SUITE would run with the
same flags, run by the host's agent one job at a time, its runs stored as they
go under the host's name. The plan is checked before anything is queued: its
flags, and on every host each build (one the host has, or a registry build
such as mariadb-10.2.11 that its agent fetches) and each config. Without
--seed all hosts and every retry run with one seed chosen here.`

func newFleetSubmitCmd() *cobra.Command {
	var o submitOpts
	var planPath string
	c := &cobra.Command{
		Use:   "submit SUITE [plan flags] --hosts NAME|LABEL,… | submit --plan FILE",
		Short: "Queue a plan (qpslab run's flags) as one job per host",
		Long: submitLong + `

A plan file (--plan) is YAML: the suite, the hosts, and the parameters as
qpslab run's flags name them (a list or a value), e.g.

  suite: sysbench
  hosts: [small, big]
  params:
    build: [mariadb-10.2.11, mariadb-system]
    tests: point-query*
    threads: [1, 4]

--hosts, --timeout and --attempts given on the command line win over the
file's hosts, timeout and attempts.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if planPath == "" {
				if len(args) == 0 {
					return fmt.Errorf("name the suite to run: qpslab fleet submit SUITE … --hosts …, or give a plan file with --plan FILE")
				}
				_, err := suite.Get(args[0]) // a known suite is its own subcommand
				return err
			}
			if len(args) > 0 {
				return fmt.Errorf("--plan %s names the suite and its flags: give no suite %s", planPath, args[0])
			}
			pf, err := readPlanFile(planPath)
			if err != nil {
				return err
			}
			s, err := suite.Get(pf.Suite)
			if err != nil {
				return fmt.Errorf("--plan %s: %w", planPath, err)
			}
			if !cmd.Flags().Changed("hosts") {
				o.hosts = pf.Hosts
			}
			if !cmd.Flags().Changed("timeout") && pf.Timeout != "" {
				if o.timeout, err = time.ParseDuration(pf.Timeout); err != nil {
					return fmt.Errorf("--plan %s: timeout %q: give a duration such as 2h or 90m", planPath, pf.Timeout)
				}
			}
			if !cmd.Flags().Changed("attempts") && pf.Attempts != 0 {
				o.attempts = pf.Attempts
			}
			return submit(cmd, s, pf.Params, o)
		},
	}
	o.flags(c)
	c.Flags().StringVar(&planPath, "plan", "", "a plan file: suite, hosts and parameters (YAML)")
	for _, s := range suite.All() {
		c.AddCommand(newSuiteSubmitCmd(s))
	}
	return c
}

func newSuiteSubmitCmd(s suite.Suite) *cobra.Command {
	var o submitOpts
	c := &cobra.Command{
		Use:   s.Name() + " --build B [--config C] --hosts NAME|LABEL,…",
		Short: "Queue a " + s.Name() + " plan for each host: " + s.Summary(),
		Long:  submitLong,
		Args:  cobra.NoArgs,
	}
	values := addParams(c.Flags(), append(append([]suite.Param{}, plan.Common...), s.Params()...))
	o.flags(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		m, set := values()
		given := map[string]string{}
		for k, ok := range set {
			if ok {
				given[k] = m[k]
			}
		}
		return submit(cmd, s, given, o)
	}
	return c
}

// planFile is what fleet submit --plan reads.
type planFile struct {
	Suite    string                `yaml:"suite"`
	Hosts    []string              `yaml:"hosts"`
	Timeout  string                `yaml:"timeout"`
	Attempts int                   `yaml:"attempts"`
	Params   map[string]listOrText `yaml:"params"`
}

// listOrText is a parameter in a plan file: a value, or a list of them.
type listOrText string

func (l *listOrText) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = listOrText(n.Value)
	case yaml.SequenceNode:
		var parts []string
		for _, x := range n.Content {
			if x.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a list of values, not of %s", x.Line, x.Tag)
			}
			parts = append(parts, x.Value)
		}
		*l = listOrText(strings.Join(parts, ","))
	default:
		return fmt.Errorf("line %d: give a value or a list of values", n.Line)
	}
	return nil
}

type planSpec struct {
	Suite    string
	Hosts    []string
	Timeout  string
	Attempts int
	Params   map[string]string
}

func readPlanFile(path string) (planSpec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return planSpec{}, fmt.Errorf("--plan: %w", err)
	}
	var pf planFile
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&pf); err != nil {
		return planSpec{}, fmt.Errorf("--plan %s: %s: give suite, hosts, params (and timeout, attempts) as the help shows", path, oneLine(err.Error()))
	}
	if pf.Suite == "" {
		return planSpec{}, fmt.Errorf("--plan %s names no suite: add suite: NAME (qpslab suites lists them)", path)
	}
	ps := planSpec{Suite: pf.Suite, Hosts: pf.Hosts, Timeout: pf.Timeout, Attempts: pf.Attempts, Params: map[string]string{}}
	for k, v := range pf.Params {
		ps.Params[k] = string(v)
	}
	return ps, nil
}

// submit checks the plan (given: the parameters that were set) against
// every host it names and queues one job per host, all or none.
func submit(cmd *cobra.Command, s suite.Suite, given map[string]string, o submitOpts) error {
	for _, bad := range []struct{ name, why string }{
		{"sandbox", "runs on a server started on this machine: a fleet job starts its own sandboxes on its host"},
		{"grid", "reads a file on this machine: give the grid's settings with --set NAME=V1,V2"},
	} {
		if given[bad.name] != "" {
			return fmt.Errorf("--%s %s", bad.name, bad.why)
		}
	}
	v, err := jobValues(s, given)
	if err != nil {
		return err
	}
	p, err := plan.Parse(s, v)
	if err != nil {
		return err
	}
	if len(p.Builds) == 0 {
		return fmt.Errorf("name the build(s) to run with --build (a build each host has, or a registry build such as mariadb-10.2.11 that the agents fetch)")
	}
	params := map[string]string{}
	for k, x := range given {
		params[k] = x
	}
	if params["seed"] == "" {
		params["seed"] = strconv.FormatUint(p.Seed, 10) // one seed for every host and retry
	}
	timeout := o.timeout
	if timeout == 0 {
		var planned time.Duration
		for _, it := range p.Items() {
			planned += it.Seconds
		}
		sessions := max(p.Repeat, 1) * len(p.Builds) * len(p.Configs)
		timeout = 2*planned + time.Duration(sessions)*10*time.Minute
	}
	if timeout < time.Second {
		return fmt.Errorf("--timeout %s: give 1s or more", timeout)
	}
	if o.attempts < 1 {
		return fmt.Errorf("--attempts %d: give 1 or more", o.attempts)
	}
	st, fl, err := openFleet(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	defer fl.Close()
	hosts, err := fl.Resolve(cmd.Context(), o.hosts)
	if err != nil {
		return err
	}
	configIDs := map[string]map[string][]string{} // config → id → hosts
	for _, h := range hosts {
		ids, err := checkHost(h, p)
		if err != nil {
			return err
		}
		for name, id := range ids {
			if configIDs[name] == nil {
				configIDs[name] = map[string][]string{}
			}
			configIDs[name][id] = append(configIDs[name][id], h.Name)
		}
	}
	batch := time.Now().UTC().Format("20060102T150405")
	var jobs []fleet.Job
	for _, h := range hosts {
		jobs = append(jobs, fleet.Job{Suite: s.Name(), Params: params, Host: h.Name, Timeout: timeout.Seconds(), Batch: batch})
	}
	ids, err := fl.Submit(cmd.Context(), jobs, o.attempts)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	for i, h := range hosts {
		fmt.Fprintf(w, "job %d: %s on %s (labels %s), %d run(s), timeout %s, %d attempt(s)\n", ids[i], s.Name(), h.Name, strings.Join(h.Labels, ","), len(p.Items()), timeout, o.attempts)
		if h.State == fleet.Lost {
			fmt.Fprintf(cmd.ErrOrStderr(), "host %s is lost (no heartbeat for %s): its job waits until its agent is back\n", h.Name, h.Since.Round(time.Second))
		}
	}
	names := make([]string, 0, len(configIDs))
	for n := range configIDs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if len(configIDs[n]) > 1 {
			var parts []string
			for id, hs := range configIDs[n] {
				parts = append(parts, id+" on "+strings.Join(hs, ","))
			}
			sort.Strings(parts)
			fmt.Fprintf(cmd.ErrOrStderr(), "config %s differs between the hosts (%s): their results compare the hosts with different settings\n", n, strings.Join(parts, "; "))
		}
	}
	fmt.Fprintf(w, "batch %s queued in %s: follow it with qpslab fleet status\n", batch, fl.Where())
	return nil
}

// checkHost refuses a plan host h cannot run: a build it neither has nor
// can fetch, builds of different config families, a config it lacks. It
// returns the id (name@hash) of each config on h.
func checkHost(h fleet.Host, p *plan.Plan) (map[string]string, error) {
	var fam config.Family
	var have []string
	for _, b := range h.Builds {
		have = append(have, b.Name)
	}
	for i, b := range p.Builds {
		var flavor string
		if hb, ok := h.Has(b.Name); ok {
			flavor = hb.Flavor
		} else if a, err := build.ParseArtifact(b.Name); err == nil {
			flavor = string(a.Flavor) // its agent fetches it
		} else {
			return nil, fmt.Errorf("host %s has no build %s (it has %s): add it there (qpslab builds add …) and restart its agent, or name a registry build such as mariadb-10.2.11 that agents fetch",
				h.Name, b.Name, strings.Join(have, ", "))
		}
		f := config.FamilyOf(flavor)
		if i == 0 {
			fam = f
		} else if f != fam {
			return nil, fmt.Errorf("builds %s and %s take configs of different families: submit them in two plans", p.Builds[0].Name, b.Name)
		}
	}
	ids := map[string]string{}
	for _, c := range p.Configs {
		hc, ok := h.HasConfig(c.Name, string(fam))
		if !ok {
			var names []string
			for _, x := range h.Configs {
				if x.Family == string(fam) {
					names = append(names, x.Name)
				}
			}
			return nil, fmt.Errorf("host %s has no %s config %s (it has %s): add it there (qpslab configs add %s FILE) and restart its agent",
				h.Name, fam, c.Name, strings.Join(names, ", "), c.Name)
		}
		ids[c.Name] = hc.ID
	}
	return ids, nil
}

// parseJobIDs reads job ids from the command line.
func parseJobIDs(args []string) ([]int64, error) {
	var ids []int64
	for _, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("%q is not a job id: qpslab fleet status lists them", a)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// jobRuns reads what the store holds of each job's runs.
func jobRuns(cmd *cobra.Command, st *store.Store, jobs []fleet.JobInfo) (map[int64]report.JobRuns, error) {
	var keys []string
	for _, j := range jobs {
		keys = append(keys, strconv.FormatInt(j.ID, 10))
	}
	counts, err := st.JobRuns(cmd.Context(), keys)
	if err != nil {
		return nil, err
	}
	out := map[int64]report.JobRuns{}
	for _, j := range jobs {
		out[j.ID] = counts[strconv.FormatInt(j.ID, 10)]
	}
	return out, nil
}

func newFleetStatusCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "status [JOB…]",
		Short: "The hosts (state, last heartbeat) and the jobs (state, attempts, runs, errors); one job in full",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format %s: use text or json", format)
			}
			ids, err := parseJobIDs(args)
			if err != nil {
				return err
			}
			st, fl, err := openFleet(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			defer fl.Close()
			hosts, err := fl.Hosts(cmd.Context())
			if err != nil {
				return err
			}
			jobs, err := fl.Jobs(cmd.Context(), ids...)
			if err != nil {
				return err
			}
			if len(ids) > 0 && len(jobs) < len(ids) {
				return fmt.Errorf("no job %s in %s: qpslab fleet status lists them", missingIDs(ids, jobs), fl.Where())
			}
			runs, err := jobRuns(cmd, st, jobs)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if format == "json" {
				type jobJSON struct {
					fleet.JobInfo
					Runs      report.JobRuns `json:"runs"`
					LastError string         `json:"last_error"`
				}
				out := struct {
					Hosts []fleet.Host `json:"hosts"`
					Jobs  []jobJSON    `json:"jobs"`
				}{Hosts: hosts}
				for _, j := range jobs {
					out.Jobs = append(out.Jobs, jobJSON{j, runs[j.ID], j.LastError()})
				}
				e := json.NewEncoder(w)
				e.SetIndent("", " ")
				return e.Encode(out)
			}
			if len(ids) > 0 {
				for i, j := range jobs {
					if i > 0 {
						fmt.Fprintln(w)
					}
					if err := report.FleetJob(w, j, runs[j.ID]); err != nil {
						return err
					}
				}
				return nil
			}
			fmt.Fprintf(w, "hosts in %s\n", fl.Where())
			if err := report.FleetHosts(w, hosts); err != nil {
				return err
			}
			fmt.Fprintln(w)
			return report.FleetJobs(w, jobs, runs)
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text or json")
	return c
}

func missingIDs(ids []int64, jobs []fleet.JobInfo) string {
	var out []string
	for _, id := range ids {
		if !slices.ContainsFunc(jobs, func(j fleet.JobInfo) bool { return j.ID == id }) {
			out = append(out, strconv.FormatInt(id, 10))
		}
	}
	return strings.Join(out, ", ")
}

func newFleetCancelCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel JOB…",
		Short: "Cancel jobs: a queued one never runs, a running one is stopped (its run stored aborted) and not retried",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return eachJob(cmd, args, func(fl *fleet.Fleet, id int64) (string, error) {
				j, err := fl.Cancel(cmd.Context(), id)
				if err != nil {
					return "", err
				}
				if j.State == "running" {
					return fmt.Sprintf("job %d: cancelling: its agent %s stops it (its run in progress is stored aborted)", id, j.Job.Host), nil
				}
				return fmt.Sprintf("job %d: %s", id, j.State), nil
			})
		},
	}
}

func newFleetRetryCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "retry JOB…",
		Short: "Run cancelled or failed jobs again, now, as their next attempt (the runs of earlier attempts stop counting)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return eachJob(cmd, args, func(fl *fleet.Fleet, id int64) (string, error) {
				j, err := fl.Retry(cmd.Context(), id)
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("job %d: %s for host %s (attempt %d of %d next)", id, j.State, j.Job.Host, j.Attempt+1, j.MaxAttempts), nil
			})
		},
	}
}

// eachJob does f to each job named, saying what became of each; the first
// failure is the command's error, after the rest were done.
func eachJob(cmd *cobra.Command, args []string, f func(*fleet.Fleet, int64) (string, error)) error {
	ids, err := parseJobIDs(args)
	if err != nil {
		return err
	}
	st, fl, err := openFleet(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	defer fl.Close()
	var errs []error
	for _, id := range ids {
		line, err := f(fl, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintln(cmd.OutOrStdout(), line)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

func newFleetHostsCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "hosts",
		Short: "The hosts whose agents registered: labels, state (idle, working, stopping, stopped, lost), heartbeat, machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format %s: use text or json", format)
			}
			st, fl, err := openFleet(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			defer fl.Close()
			hosts, err := fl.Hosts(cmd.Context())
			if err != nil {
				return err
			}
			if format == "json" {
				e := json.NewEncoder(cmd.OutOrStdout())
				e.SetIndent("", " ")
				return e.Encode(hosts)
			}
			return report.FleetHosts(cmd.OutOrStdout(), hosts)
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text or json")
	return c
}
