package app

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/suite"
)

// SubmitOptions are what fleet submit takes beside the plan.
type SubmitOptions struct {
	Hosts    []string      // agent names and labels
	Timeout  time.Duration // of one attempt (0: from the plan)
	Attempts int
	// AttemptsGiven says --attempts was given.
	AttemptsGiven bool
	// LoadHosts, if set, makes the plan a spread run: its load on its
	// --target from that many of the hosts at once (submitSpread), each
	// to claim its part within StartWithin (0: DefaultStartWithin).
	LoadHosts   int
	StartWithin time.Duration
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

// SubmitFile queues the plan of the file at path (fleet submit --plan):
// its suite, hosts, timeout, attempts and parameters; the options the
// command line gave (given says which) win over the file's. args are the
// command's arguments, which name no suite (each known one is a command
// of its own).
func SubmitFile(ctx context.Context, e Env, path string, args []string, o SubmitOptions, given func(flag string) bool) error {
	switch {
	case path == "" && len(args) == 0:
		return fmt.Errorf("name the suite to run: qpslab fleet submit SUITE … --hosts …, or give a plan file with --plan FILE")
	case path == "":
		_, err := suite.Get(args[0]) // a known suite is its own subcommand: this is an unknown one
		return err
	case len(args) > 0:
		return fmt.Errorf("--plan %s names the suite and its flags: give no suite %s", path, args[0])
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--plan: %w", err)
	}
	var pf planFile
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&pf); err != nil {
		return fmt.Errorf("--plan %s: %s: give suite, hosts, params (and timeout, attempts) as the help shows", path, oneLine(err.Error()))
	}
	if pf.Suite == "" {
		return fmt.Errorf("--plan %s names no suite: add suite: NAME (qpslab suites lists them)", path)
	}
	s, err := suite.Get(pf.Suite)
	if err != nil {
		return fmt.Errorf("--plan %s: %w", path, err)
	}
	if !given("hosts") {
		o.Hosts = pf.Hosts
	}
	if !given("timeout") && pf.Timeout != "" {
		if o.Timeout, err = time.ParseDuration(pf.Timeout); err != nil {
			return fmt.Errorf("--plan %s: timeout %q: give a duration such as 2h or 90m", path, pf.Timeout)
		}
	}
	if !given("attempts") && pf.Attempts != 0 {
		o.Attempts = pf.Attempts
	}
	params := map[string]string{}
	for k, v := range pf.Params {
		params[k] = string(v)
	}
	return Submit(ctx, e, s, params, o)
}

// Submit checks the plan (given: the parameters that were set) against
// every host it names and queues one job per host, all or none.
func Submit(ctx context.Context, e Env, s suite.Suite, given map[string]string, o SubmitOptions) error {
	if o.LoadHosts != 0 {
		return submitSpread(ctx, e, s, given, o)
	}
	if o.StartWithin != 0 {
		return fmt.Errorf("--start-within bounds when a spread run's parts start: give --load-hosts too")
	}
	v, p, err := submitted(s, given, []refusal{
		{"sandbox", "runs on a server started on this machine: a fleet job starts its own sandboxes on its host"},
		{"grid", "reads a file on this machine: give the grid's settings with --set NAME=V1,V2"},
		{"target", "runs on a server from one host: spread its load over hosts with --load-hosts K, or run it with qpslab run"},
	})
	if err != nil {
		return err
	}
	if len(p.Builds) == 0 {
		return fmt.Errorf("name the build(s) to run with --build (a build each host has, or a registry build such as mariadb-10.2.11 that the agents fetch)")
	}
	params := jobParams(given, p)
	timeout := o.Timeout
	if _, hostID, err := thisHost(); err == nil {
		design(ctx, e, p, hostID) // --repeat auto's repeats, for the timeout (each agent plans its own)
	}
	if timeout == 0 {
		var planned time.Duration
		for _, it := range p.Items() {
			planned += it.Seconds
		}
		sessions := max(p.Design.Repeat, 1) * len(p.Builds) * len(p.Configs)
		timeout = 2*planned + time.Duration(sessions)*10*time.Minute
	}
	if timeout < time.Second {
		return fmt.Errorf("--timeout %s: give 1s or more", timeout)
	}
	if o.Attempts < 1 {
		return fmt.Errorf("--attempts %d: give 1 or more", o.Attempts)
	}
	st, fl, err := e.openFleet(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer fl.Close()
	hosts, err := fl.Resolve(ctx, o.Hosts)
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
	files, err := jobFiles(v)
	if err != nil {
		return err
	}
	spec, err := plan.JobSpec(s, params, files)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		jobs = append(jobs, fleet.Job{Suite: s.Name(), Params: params, Spec: spec, Files: files, Host: h.Name, Timeout: timeout.Seconds(), Batch: batch})
	}
	ids, err := fl.Submit(ctx, jobs, o.Attempts)
	if err != nil {
		return err
	}
	for i, h := range hosts {
		fmt.Fprintf(e.Out, "job %d: %s on %s (labels %s), %d run(s), timeout %s, %d attempt(s)\n", ids[i], s.Name(), h.Name, strings.Join(h.Labels, ","), len(p.Items()), timeout, o.Attempts)
		if h.State == fleet.Lost {
			fmt.Fprintf(e.Err, "host %s is lost (no heartbeat for %s): its job waits until its agent is back\n", h.Name, h.Since.Round(time.Second))
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
			fmt.Fprintf(e.Err, "config %s differs between the hosts (%s): their results compare the hosts with different settings\n", n, strings.Join(parts, "; "))
		}
	}
	fmt.Fprintf(e.Out, "batch %s queued in %s: follow it with qpslab fleet status\n", batch, fl.Where())
	return nil
}

// checkHost refuses a plan host h cannot run: a build it neither has nor
// can fetch, builds of different config families, a config it lacks. It
// returns the id (name@hash) of each config on h.
func checkHost(h fleet.Host, p *plan.Runner) (map[string]string, error) {
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
		fl, err := build.ParseFlavor(flavor)
		if err != nil {
			return nil, fmt.Errorf("host %s: build %s: %w (the host's agent is of another qpslab: run the same version on both)", h.Name, b.Name, err)
		}
		f := config.Family(fl.Describe().Family)
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

// MaxJobFiles is the most a fleet job carries of the files its plan reads
// (scripts, an init file): they travel in the job's row of the queue.
const MaxJobFiles = 1 << 20

// jobFiles are the files the plan read on this machine (a script suite's
// --file and --init), which the job carries to its hosts.
func jobFiles(v suite.Values) (map[string][]byte, error) {
	files := v.FilesRead()
	total := 0
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if total += len(files[p]); total > MaxJobFiles {
			return nil, fmt.Errorf("%s: the plan's files come to more than %d KiB, which a fleet job carries at most: load the data with a smaller --init (or with --builtin), and keep scripts to their statements", p, MaxJobFiles>>10)
		}
	}
	return files, nil
}

// refusal is a flag a fleet plan may not have, and why.
type refusal struct{ name, why string }

// submitted parses a submitted plan (given: the parameters that were set),
// refusing first any flag of refused that was given.
func submitted(s suite.Suite, given map[string]string, refused []refusal) (suite.Values, *plan.Runner, error) {
	for _, bad := range refused {
		if given[bad.name] != "" {
			return suite.Values{}, nil, fmt.Errorf("--%s %s", bad.name, bad.why)
		}
	}
	v, err := plan.ValuesOf(s, given)
	if err != nil {
		return v, nil, err
	}
	p, err := plan.Parse(s, v)
	return v, p, err
}

// jobParams are a job's parameters: those given, with one seed for every
// host and retry (p's, where none was given).
func jobParams(given map[string]string, p *plan.Runner) map[string]string {
	params := map[string]string{}
	for k, x := range given {
		params[k] = x
	}
	if params["seed"] == "" {
		params["seed"] = strconv.FormatUint(p.Seed, 10)
	}
	return params
}
