package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/recorder"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

const runLong = `Closed loop by default (--threads workers, each issuing its next event when
the last returns). With --rate, open loop: events arrive at that rate whatever
the server does; response time counts from each event's intended start,
service time from the actual send.

Builds × configs × engines (MySQL family) × thread counts × repeats: each
build × config × engine is a label. By default (--interleave test) every
label's server is started once and stays up for the whole run, and each test
runs on all of them before the next: as slices alternating between them in a
counterbalanced order (A B B A …; --slices per repeat, writes bounded by the
same event count on every label), or whole on each in turn for tests whose
point is sustained state; so that every round is a paired observation made
under the same host conditions. Where the servers' buffer pools do not fit in
memory together, each label runs beside the first in turn, or each label's
whole pass in turn (--interleave pass: a fresh server per label and repeat),
and the run says so. An engine other than InnoDB must be in the server
(MyRocks: --config myrocks); one that is not ends the run before anything is
measured. --aa measures this host's noise floor (docs/results.md).

It shows a progress bar, then a table of the results; -v prints what happens
and every run's figures and hardware cost as it ends. Every run goes to the
store as it runs (--store; label build.config, build.config:ENGINE for an
engine other than InnoDB, for qpslab compare), and to a JSON file (--out)
after every run, so an interrupted run keeps what was measured.

Every run reads the server's own counters over its measured window
(--counters; qpslab metrics shows them per op). --pmp N captures every
server thread's stack every N seconds of each window (eu-stack, or gdb),
--perf profiles its CPU with perf; after such a run each test's counters
side by side, each build's top stacks and their diff are printed (qpslab
stacks, qpslab stacks diff), and --html draws their flame graphs.`

func newRunCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "run SUITE",
		Short: "Run a benchmark suite against sandboxed builds (qpslab suites lists them)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("name the suite to run: qpslab run SUITE (qpslab suites lists them)")
			}
			_, err := suite.Get(args[0]) // a known suite is its own subcommand: this is an unknown one
			return err
		},
	}
	for _, s := range suite.All() {
		c.AddCommand(newSuiteRunCmd(s))
	}
	return c
}

// addParams offers params as flags of c, and returns how to read them back.
func addParams(f *pflag.FlagSet, params []suite.Param) func() (map[string]string, map[string]bool) {
	get := map[string]func() string{}
	for _, p := range params {
		switch p.Kind {
		case suite.Bool:
			b := f.Bool(p.Name, p.Default == "true", p.Usage)
			get[p.Name] = func() string { return strconv.FormatBool(*b) }
		case suite.List:
			var def []string
			if p.Default != "" {
				def = strings.Split(p.Default, ",")
			}
			l := f.StringSlice(p.Name, def, p.Usage)
			get[p.Name] = func() string { return strings.Join(*l, ",") }
		default:
			v := &paramValue{s: p.Default, kind: p.Kind.String()}
			f.Var(v, p.Name, p.Usage)
			get[p.Name] = func() string { return v.s }
		}
	}
	return func() (map[string]string, map[string]bool) {
		m, set := map[string]string{}, map[string]bool{}
		for name, g := range get {
			m[name], set[name] = g(), f.Changed(name)
		}
		return m, set
	}
}

// paramValue is a parameter's flag: its text as given (the suite and the
// plan check it, every problem at once), shown in help with its kind.
type paramValue struct{ s, kind string }

func (v *paramValue) String() string     { return v.s }
func (v *paramValue) Set(s string) error { v.s = s; return nil }
func (v *paramValue) Type() string       { return v.kind }

func newSuiteRunCmd(s suite.Suite) *cobra.Command {
	var out, html string
	var listTests, verbose, aa bool
	long := s.Summary() + "."
	if h, ok := s.(suite.Helper); ok {
		long = h.Help()
	}
	c := &cobra.Command{
		Use:   s.Name() + " --build B [--config C]",
		Short: s.Summary(),
		Long:  long + "\n\n" + runLong,
		Args:  cobra.NoArgs,
	}
	values := addParams(c.Flags(), append(append([]suite.Param{}, plan.Common...), s.Params()...))
	c.Flags().StringVar(&out, "out", "", "results file (default <home>/results/"+s.Name()+"-TIME.json)")
	c.Flags().BoolVar(&listTests, "list-tests", false, "print the tests the run would execute, their seconds and the plan's total time, and exit")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "print what happens and each run's figures as it ends")
	c.Flags().StringVar(&html, "html", "", "also write the HTML report of this run's labels (the first build × config the base) to this file")
	c.Flags().BoolVar(&aa, "aa", false, "an A/A run: the one --build and --config as two labels (CONFIG-aa1, CONFIG-aa2), interleaved as any run; the spread of their paired ratios is kept as this host's noise floor per test, which compare and the reports show, flagging no change inside it")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		h, err := resolveHome()
		if err != nil {
			return err
		}
		m, set := values()
		if aa {
			if err := aaConfigs(cmd.Context(), h, m, set); err != nil {
				return err
			}
		}
		v := suite.NewValues(m, set)
		p, err := plan.Parse(s, v)
		if err != nil {
			return err
		}
		if listTests { // needs no build: the names are enough
			return report.PlanTests(cmd.OutOrStdout(), p)
		}
		cleanAfterCrash(cmd, h) // what an earlier qpslab that was killed left
		if err := p.Resolve(cmd.Context(), h); err != nil {
			return err
		}
		if err := p.Check(h); err != nil {
			return err
		}
		if out == "" {
			out = filepath.Join(h.Results(), s.Name()+"-"+time.Now().UTC().Format("20060102-150405")+".json")
		}
		if err := home.Ensure(filepath.Dir(out)); err != nil {
			return err
		}
		if html != "" {
			if err := home.Ensure(filepath.Dir(html)); err != nil {
				return err
			}
		}
		runs, err := runPlan(cmd, h, p, out, verbose)
		if rerr := runReport(cmd, h, p, runs, html); rerr != nil && err == nil {
			err = rerr
		}
		if aa && err == nil {
			err = keepNoise(cmd, h, p, runs)
		}
		return err
	}
	return c
}

// aaConfigs makes the two labels of an A/A run: the one config named,
// under two names of its own (CONFIG-aa1, CONFIG-aa2) with its settings
// and nothing else, so the same server is measured against itself.
func aaConfigs(ctx context.Context, h home.Home, m map[string]string, set map[string]bool) error {
	c := suite.NewValues(m, set).Check()
	builds, configs := c.List("build"), c.List("config")
	if len(builds) != 1 || len(configs) != 1 || m["sandbox"] != "" || m["set"] != "" || m["grid"] != "" {
		return fmt.Errorf("--aa measures one build and config against itself: give exactly one --build and one --config (no --sandbox, --set or --grid)")
	}
	if len(c.List("engine")) > 1 {
		return fmt.Errorf("--aa measures one build and config against itself: give at most one --engine")
	}
	b, err := (build.Registry{Dir: h.Builds(), Cache: h.Cache}).Get(ctx, builds[0])
	if err != nil {
		return err
	}
	cs := config.Store{Dir: h.Configs()}
	base, err := cs.Get(configs[0], config.FamilyOf(string(b.Flavor)))
	if err != nil {
		return err
	}
	var names []string
	for _, n := range []string{"aa1", "aa2"} {
		name := base.Name + "-" + n
		content := fmt.Sprintf("# qpslab: base=%s\n# An A/A label of qpslab run --aa: %s's settings under a name of its own.\n", base.Name, base.Name)
		if _, err := cs.AddContent(name, []byte(content), base.Family, true); err != nil {
			return err
		}
		names = append(names, name)
	}
	m["config"], set["config"] = strings.Join(names, ","), true
	return nil
}

// keepNoise keeps what an A/A run measured as its host's noise floor, per
// test, and prints it.
func keepNoise(cmd *cobra.Command, h home.Home, p *plan.Plan, runs []result.Run) error {
	sets := labelSets(runs)
	if len(sets) != 2 {
		return fmt.Errorf("the A/A run stored %d label(s), not 2: no noise floor kept", len(sets))
	}
	cmp, err := analysis.Compare(sets[0], sets[1:], analysis.Options{})
	if err != nil {
		return fmt.Errorf("the A/A run's comparison: %w", err)
	}
	floors := analysis.AAFloors(cmp)
	if len(floors) == 0 {
		return fmt.Errorf("the A/A run has no paired test to measure a noise floor from (it needs --interleave test and tests that run on both labels)")
	}
	hostID := ""
	for _, r := range runs {
		if id, err := store.HostID(r.Host); err == nil && len(r.Host) > 0 {
			hostID = id
			break
		}
	}
	if hostID == "" {
		return fmt.Errorf("the A/A run's runs record no host: no noise floor kept")
	}
	budget := map[string]string{"repeat": strconv.Itoa(max(p.Repeat, 1)), "slices": strconv.Itoa(p.Slices), "interleave": p.Layout().Mode}
	for k, v := range p.Steps.Params {
		budget[k] = v
	}
	var keep []store.NoiseFloor
	now := time.Now().UTC()
	for _, f := range floors {
		keep = append(keep, store.NoiseFloor{HostID: hostID, Suite: cmp.Suite, Test: f.Test, Threads: f.Threads, Conditions: f.Conditions, Metric: store.HeadlineMetric,
			Floor: f.Floor, Rel: f.Rel, Lo: f.Lo, Hi: f.Hi, Rounds: f.Rounds, Pairing: f.Pairing, Plan: p.ID, Build: p.Builds[0].Name,
			Config: strings.TrimSuffix(p.Configs[0].Name, "-aa1"), Budget: budget, Measured: now})
	}
	st, err := openStore(cmd, h)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SaveNoise(cmd.Context(), keep); err != nil {
		return err
	}
	report.Floors(cmd.OutOrStdout(), cmp, floors, hostID)
	return nil
}

// labelSets groups runs by label, in the order the labels first appear.
func labelSets(runs []result.Run) []analysis.Set {
	var sets []analysis.Set
	at := map[string]int{}
	for _, r := range runs {
		l := r.Label()
		i, ok := at[l]
		if !ok {
			i = len(sets)
			at[l] = i
			sets = append(sets, analysis.Set{Label: l})
		}
		sets[i].Runs = append(sets[i].Runs, r)
	}
	return sets
}

// runReport prints what the run's table does not show: for a suite run in
// steps, the reference's step tables; for a run of several labels (builds,
// configs, engines), the comparison of each with the first (as qpslab
// compare); and then the hardware cost per operation of this run's labels
// (the first the base). It writes the HTML report of them when html is
// set.
func runReport(cmd *cobra.Command, h home.Home, p *plan.Plan, runs []result.Run, html string) error {
	steps := len(p.Suite.Layouts()) > 0 && p.Suite.Layouts()[0].Steps
	why := p.PMP > 0 || p.Perf
	if len(runs) == 0 {
		return nil
	}
	sets := labelSets(runs)
	if !steps && !why && len(sets) < 2 && html == "" {
		return nil
	}
	st, err := openStore(cmd, h)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := selector.Options(cmd.Context(), st, sets, "", cmd.ErrOrStderr())
	labels := make([]string, len(sets))
	for i, s := range sets {
		labels[i] = s.Label
	}
	w := cmd.OutOrStdout()
	per := "per test"
	switch {
	case steps:
		if err := report.Steps(cmd.OutOrStdout(), sets, p.Suite.Name(), "text"); err != nil {
			return err
		}
		per = "per step"
	case len(sets) > 1:
		cmp, err := analysis.Compare(sets[0], sets[1:], opts)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "no comparison: %v\n", err)
			break
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Comparison with "+labels[0]+" (qpslab compare "+strings.Join(labels, " ")+")")
		fmt.Fprintln(w)
		if err := report.Compare(w, cmp, "text", report.IsTTY(w)); err != nil {
			return err
		}
	}
	if steps || len(sets) > 1 {
		if tables, err := analysis.Metrics(sets, ""); err == nil {
			if !steps {
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w, "Hardware cost per operation, "+per+" (qpslab metrics "+strings.Join(labels, " ")+")")
			fmt.Fprintln(w)
			if err := report.Metrics(w, tables, "text"); err != nil {
				return err
			}
		}
	}
	if why {
		if err := report.Why(w, sets); err != nil {
			return err
		}
	}
	if html == "" {
		return nil
	}
	cmp, err := analysis.Compare(sets[0], sets[1:], opts)
	if err != nil {
		return fmt.Errorf("the HTML report: %w", err)
	}
	return report.HTMLReport(cmd.ErrOrStderr(), html, sets, cmp, selector.Content(cmd.Context(), st))
}

// planRun is where runPlan keeps a plan's runs and what it prints.
type planRun struct {
	out     string // the results file
	verbose bool
	// For a fleet agent's job (docs/fleet.md): the agent's name when it
	// is not the hostname (part of the host's identity), and the name,
	// job and attempt its runs are stored with.
	agent string
	meta  store.Meta
}

// runPlan runs p, keeping every run in the store and in out, with a
// progress bar (or, verbose, every line), then prints the results' table.
func runPlan(cmd *cobra.Command, h home.Home, p *plan.Plan, out string, verbose bool) ([]result.Run, error) {
	return runPlanWith(cmd.Context(), cmd, h, p, planRun{out: out, verbose: verbose})
}

// runPlanWith is runPlan under ctx, with what a fleet agent's job adds:
// qpslab run and the agent run plans through it alike.
func runPlanWith(ctx context.Context, cmd *cobra.Command, h home.Home, p *plan.Plan, o planRun) ([]result.Run, error) {
	out, verbose := o.out, o.verbose
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	hc, err := host.Inspect(host.Real)
	if err != nil {
		return nil, fmt.Errorf("record the host fingerprint: %w", err)
	}
	hc.Storage = host.StorageOf(host.Real, h.Sandboxes()) // the datadirs' disks, in the run's fingerprint
	hc.Agent = o.agent
	if p.Host, err = json.Marshal(hc); err != nil {
		return nil, err
	}
	report.HostRisks(stderr, hc.Risks)
	st, err := store.Open(ctx, storeDSN(cmd), h.StoreFile())
	if err != nil {
		return nil, err
	}
	defer st.Close()
	contents := map[string][]byte{}
	for _, c := range p.Configs {
		if c.Content != nil {
			contents[c.ID()] = c.Content
		}
	}
	sink := &recorder.Sink{Store: st, File: out, Content: func(id string) []byte { return contents[id] }, Meta: o.meta}
	engines := ""
	if len(p.Engines) > 1 {
		engines = fmt.Sprintf(" × %d engines", len(p.Engines))
	}
	fmt.Fprintf(stderr, "%s: %d build(s) × %d config(s)%s × %d repeat(s), %d run(s); seed %d; results go to %s and %s\n",
		p.Suite.Name(), len(p.Builds), len(p.Configs), engines, max(p.Repeat, 1), len(p.Items()), p.Seed, st.Where(), out)
	if why := p.Layout().Why; why != "" && len(p.Labels()) > 1 {
		fmt.Fprintln(stderr, why)
	}
	p.Record = func(start result.Run) (plan.Recorder, error) {
		r, err := sink.Begin(ctx, start)
		if err != nil {
			return nil, err
		}
		return doneCtx{r, ctx}, nil
	}
	p.Watch.Warn = func(line string) { fmt.Fprintln(stderr, "warning: "+line) }
	var bar *report.Progress
	if verbose {
		header := false
		p.Watch.Log = func(line string) { fmt.Fprintln(stderr, line) }
		p.Watch.Done = func(_, _ int, r result.Run) {
			if !header {
				report.RunHeader(stdout)
				header = true
			}
			report.RunLine(stdout, r)
		}
	} else {
		bar = report.NewProgress(stderr, len(p.Items()))
		p.Watch.Start = func(i, _ int, it plan.Item) {
			bar.Start(i, fmt.Sprintf("%s %s thr=%d", it.Test, it.Label(), it.Threads))
		}
		p.Watch.Done = func(i, _ int, _ result.Run) { bar.Done(i) }
		p.Watch.Progress = bar.Step
	}
	err = p.Run(ctx, h)
	if bar != nil {
		bar.Finish()
	}
	runs := sink.Runs()
	if !verbose {
		report.Summary(stdout, runs)
	}
	for _, l := range report.HostWarnings(runs) {
		fmt.Fprintln(stderr, l)
	}
	if s := sink.Summary(); s != "" {
		fmt.Fprintln(stderr, s)
	}
	return runs, err
}

// doneCtx gives a recorder.Run the plan's context at Done.
type doneCtx struct {
	r   *recorder.Run
	ctx context.Context
}

func (d doneCtx) Sample(s result.Sample)  { d.r.Sample(s) }
func (d doneCtx) Done(r result.Run) error { return d.r.Done(d.ctx, r) }

func newSuitesCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "suites [NAME]",
		Short: "List the benchmark suites: their tests, report layouts and the figures they report",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			all := suite.All()
			if len(args) == 1 {
				s, err := suite.Get(args[0])
				if err != nil {
					return err
				}
				all = []suite.Suite{s}
			}
			return report.Suites(cmd.OutOrStdout(), all, format)
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text or json")
	return c
}
