package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
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

// RunOptions are what qpslab run SUITE takes beside the plan's values.
type RunOptions struct {
	Out       string // the results file ("": <home>/results/SUITE-TIME.json)
	HTML      string // also write the HTML report of the run's labels here
	ListTests bool   // print the tests the run would execute and stop
	Verbose   bool   // every line and every run's figures, no progress bar
	AA        bool   // an A/A run: keep the host's noise floor
	// Boost, if set, makes each config a label per boost state, on or
	// off, the first the base (--boost: boost.go); Roots are the host's
	// sysfs and procfs it switches boost under (zero: host.Real; tests
	// give a fixture tree).
	Boost []string
	Roots host.Roots
	// Sweep, if set, is the builds in a version sweep's order (a study,
	// whose --build lists the base first): where the servers do not fit in
	// memory together the labels run in pairs of neighbours in this order
	// (plan.Runner.Sweep), and --until-decided adds repeats to a test while
	// a neighbour comparison of it is undecided, as well as one against
	// the base.
	Sweep []string
}

// Run runs suite s with the parameters given (plan.ValuesOf) as qpslab
// run does: the plan checked, run with its progress, its table and the
// reports after it.
func Run(ctx context.Context, e Env, s suite.Suite, given map[string]string, o RunOptions) (err error) {
	h := e.Home
	v, err := plan.ValuesOf(s, given)
	if err != nil {
		return err
	}
	var br *boostRun
	if len(o.Boost) > 0 && !o.ListTests {
		if o.Roots.Sys == "" {
			o.Roots = host.Real
		}
		if v, br, err = boostConfigs(ctx, h, v, o); err != nil {
			return err
		}
		defer func() {
			if rerr := br.restore(e.Err); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	if o.AA {
		if v, err = aaConfigs(ctx, h, v); err != nil {
			return err
		}
	}
	p, err := plan.Parse(s, v)
	if err != nil {
		return err
	}
	if o.ListTests { // needs no build: the names are enough
		_, hostID, err := thisHost()
		if err != nil {
			return err
		}
		l := p.Listed()
		return report.PlanTests(e.Out, l, design(ctx, e, l, hostID))
	}
	Clean(h, e.Err) // what an earlier qpslab that was killed left
	if err := p.Resolve(ctx, h); err != nil {
		return err
	}
	if len(o.Sweep) > 0 { // after Resolve: a --grid or --set gives the labels their configs
		p.Sweep = sweepOrder(p.Labels(), o.Sweep)
	}
	if err := p.Check(h); err != nil {
		return err
	}
	if br != nil {
		if err := br.states(p, func() (json.RawMessage, error) {
			_, fp, err := fingerprint(e, o.Roots, "")
			return fp, err
		}); err != nil {
			return err
		}
	}
	p.ID = plan.NewID()
	if o.Out == "" {
		// By the plan's id, its start time and random bits: two runs
		// started in the same second in one home write two files.
		o.Out = filepath.Join(h.Results(), s.Name()+"-"+p.ID+".json")
	}
	if err := home.EnsurePrivate(filepath.Dir(o.Out)); err != nil {
		return err
	}
	if o.HTML != "" {
		if err := home.EnsurePrivate(filepath.Dir(o.HTML)); err != nil {
			return err
		}
	}
	runs, err := runPlan(ctx, e, p, planRun{out: o.Out, verbose: o.Verbose})
	if rerr := runReport(ctx, e, p, runs, o.HTML); rerr != nil && err == nil {
		err = rerr
	}
	if o.AA && err == nil {
		err = keepNoise(ctx, e, p, runs)
	}
	if err == nil {
		err = keepComponents(ctx, e, p, runs, o.AA)
	}
	return err
}

// runReport prints what the run's table does not show: for a suite run in
// steps, the reference's step tables; for a run of several labels (builds,
// configs, engines), the comparison of each with the first (as qpslab
// compare); and then the hardware cost per operation of this run's labels
// (the first the base). It writes the HTML report of them when html is
// set.
func runReport(ctx context.Context, e Env, p *plan.Runner, runs []result.Run, html string) error {
	steps := len(p.Suite.Layouts()) > 0 && p.Suite.Layouts()[0].Steps
	why := p.PMP > 0 || p.Perf
	if len(runs) == 0 {
		return nil
	}
	sets := planSets(p, runs)
	if !steps && !why && len(sets) < 2 && html == "" {
		return nil
	}
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := selector.Options(ctx, st, sets, "", e.Err)
	labels := make([]string, len(sets))
	for i, s := range sets {
		labels[i] = s.Label
	}
	// One comparison for the printed table and the HTML report.
	var cmp *analysis.Comparison
	var cmpErr error
	if len(sets) > 1 || html != "" {
		cmp, cmpErr = analysis.Compare(sets[0], sets[1:], opts)
	}
	w := e.Out
	per := "per test"
	switch {
	case steps:
		if err := report.Steps(w, sets, p.Suite.Name(), "text"); err != nil {
			return err
		}
		per = "per step"
	case len(sets) > 1:
		if cmpErr != nil {
			fmt.Fprintf(e.Err, "no comparison: %v\n", cmpErr)
			break
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Comparison with "+labels[0]+", of this run's runs (qpslab compare "+strings.Join(labels, " ")+" judges every stored run of these labels)")
		fmt.Fprintln(w)
		if err := report.FindingsOut(w, analysis.FindingsFor(cmp, sets), "text"); err != nil {
			return err
		}
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
	if cmpErr != nil {
		return fmt.Errorf("the HTML report: %w", cmpErr)
	}
	return report.HTMLReport(e.Err, html, sets, cmp, selector.Content(ctx, st))
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
	// more, for a plan of several looks (plan.Design.Looks), says after each
	// which tests are still undecided from the plan's runs so far (nil:
	// the comparison's verdicts, undecided).
	more func(ctx context.Context, runs []result.Run, look int) ([]string, error)
	// part, for a part of a spread run (runSpread), keeps each of its runs
	// of a shared item (plan.ItemParam) for the merge, in place of the
	// store.
	part func(ctx context.Context, r result.Run) error
}

// runPlan runs p under ctx, keeping every run in the store and in o.out,
// with a progress bar (or, verbose, every line), then prints the results'
// table. qpslab run, the demo and a fleet agent's jobs run plans through
// it alike.
func runPlan(ctx context.Context, e Env, p *plan.Runner, o planRun) ([]result.Run, error) {
	out, verbose := o.out, o.verbose
	stdout, stderr := e.Out, e.Err
	hc, fp, err := fingerprint(e, host.Real, o.agent)
	if err != nil {
		return nil, err
	}
	p.Host = fp
	// --repeat auto and --until-decided, from this host's components
	// (every plan that runs: qpslab run, the demo, a fleet agent's job,
	// a bisect step).
	hostID, _ := store.HostID(p.Host)
	report.Designs(stderr, p, design(ctx, e, p, hostID))
	report.HostRisks(stderr, hc.Risks)
	st, err := e.openStore(ctx)
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
	// A full disk stops the plan at once (OnFull), its cut runs saying so
	// in the room the reserve leaves; the reserve is made again by the
	// next run once there is space.
	if rerr := recorder.Reserve(e.Home.Reserve(), recorder.ReserveSize); rerr != nil {
		fmt.Fprintf(stderr, "warning: %v: a full disk will stop the run with less said\n", rerr)
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sink := &recorder.Sink{Store: st, File: out, Content: func(id string) []byte { return contents[id] }, Meta: o.meta,
		Home: e.Home.Root, Reserve: e.Home.Reserve(), OnFull: cancel}
	engines := ""
	if len(p.StorageEngines) > 1 {
		engines = fmt.Sprintf(" × %d engines", len(p.StorageEngines))
	}
	configs := fmt.Sprintf(" × %d config(s)", len(p.Configs))
	if len(p.PerBuild) > 0 {
		var each []string
		for _, b := range p.Builds {
			each = append(each, b.Name+" with "+p.ConfigsOf(b)[0].Name)
		}
		configs = ", each with its config (--config-for: " + strings.Join(each, ", ") + ")"
	}
	fmt.Fprintf(stderr, "%s: %d build(s)%s%s × %d repeat(s), %d run(s); seed %d; results go to %s and %s\n",
		p.Suite.Name(), len(p.Builds), configs, engines, max(p.Design.Repeat, 1), len(p.Items()), p.Seed, st.Where(), out)
	if why := p.Layout().Why; why != "" && len(p.Labels()) > 1 {
		fmt.Fprintln(stderr, why)
	}
	p.Record = func(start result.Run) (plan.Recorder, error) {
		if o.part != nil && start.Params[plan.ItemParam] != "" {
			return partRecorder{ctx, o.part}, nil
		}
		// Its row even when a full disk has stopped the plan (a run whose
		// turn never came is kept as cut short).
		r, err := sink.Begin(parent, start)
		if err != nil {
			return nil, err
		}
		return doneCtx{r, ctx}, nil
	}
	p.Watch.Warn = func(line string) { fmt.Fprintln(stderr, "warning: "+line) }
	if p.Design.Looks > 1 {
		more := o.more
		if more == nil {
			var names, sweep []string
			for _, l := range p.Labels() {
				names = append(names, l.Label())
			}
			for _, i := range p.Sweep {
				sweep = append(sweep, names[i])
			}
			more = func(ctx context.Context, runs []result.Run, look int) ([]string, error) {
				return undecided(ctx, st, runs, look, p.Design.Looks, stderr, names, sweep)
			}
		}
		p.More = func(ctx context.Context, look int, plan string) ([]string, error) {
			// The group asked about: its own runs (a pair's, where the
			// labels run in pairs).
			var runs []result.Run
			for _, r := range sink.Runs() {
				if r.Plan == plan {
					runs = append(runs, r)
				}
			}
			return more(ctx, runs, look)
		}
	}
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
		p.Watch.Start = func(i, n int, it plan.Item) {
			bar.Grow(n) // --until-decided's looks add runs
			bar.Start(i, fmt.Sprintf("%s %s thr=%d", it.Test, it.Label(), it.Threads))
		}
		p.Watch.Done = func(i, _ int, _ result.Run) { bar.Done(i) }
		p.Watch.Progress = bar.Step
	}
	err = p.Run(ctx, e.Home)
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
	if full := sink.Full(); full != nil {
		err = fmt.Errorf("%w: free space on it and run again (what was kept is said above)", full)
	}
	return runs, err
}

// fingerprint is the host under roots as every run records it: host
// check's facts, the datadirs' disks, and the fleet agent's name (agent:
// "" outside the fleet, or where it is the hostname).
func fingerprint(e Env, roots host.Roots, agent string) (*host.Check, json.RawMessage, error) {
	hc, err := host.Inspect(roots)
	if err != nil {
		return nil, nil, fmt.Errorf("record the host fingerprint: %w", err)
	}
	hc.Storage = host.StorageOf(roots, e.Home.Sandboxes()) // the datadirs' disks, in the run's fingerprint
	hc.Agent = agent
	fp, err := json.Marshal(hc)
	return hc, fp, err
}

// doneCtx gives a recorder.Run the plan's context at Done.
type doneCtx struct {
	r   *recorder.Run
	ctx context.Context
}

// partRecorder keeps a spread part's run of a shared item for the merge.
type partRecorder struct {
	ctx  context.Context
	keep func(context.Context, result.Run) error
}

func (partRecorder) Sample(result.Sample)      {}
func (p partRecorder) Done(r result.Run) error { return p.keep(p.ctx, r) }

func (d doneCtx) Sample(s result.Sample)  { d.r.Sample(s) }
func (d doneCtx) Done(r result.Run) error { return d.r.Done(d.ctx, r) }

// undecided judges the runs of a plan so far as qpslab compare judges them
// (the first of the plan's labels, names, the base; this host's noise
// floors) and returns the tests still undecided against some other label
// (neither changed nor the same within the floor), after saying what look
// look of looks decided. In a sweep (sweep: the labels in its order) a
// test is also undecided while a comparison of neighbours in the sweep
// is: the study places each change by them.
func undecided(ctx context.Context, st *store.Store, runs []result.Run, look, looks int, w io.Writer, names, sweep []string) ([]string, error) {
	sets := orderSets(analysis.LabelSets(runs), names)
	if len(sets) < 2 {
		return nil, nil
	}
	opts := selector.Options(ctx, st, sets, "", w)
	cmp, err := analysis.Compare(sets[0], sets[1:], opts)
	if err != nil {
		return nil, fmt.Errorf("judge look %d: %w", look, err)
	}
	open := map[string]bool{}
	mark := func(c *analysis.Comparison) {
		for _, r := range c.Rows {
			if r.Group == "load" {
				continue
			}
			for _, o := range r.Others {
				if !o.Missing && o.Verdict.Method == analysis.MethodPaired && !o.Verdict.Decided() {
					open[r.Test] = true
				}
			}
		}
	}
	mark(cmp)
	if len(sets) > 2 {
		byLabel := map[string]analysis.Set{}
		for _, s := range sets {
			byLabel[s.Label] = s
		}
		for i := 1; i < len(sweep); i++ {
			a, okA := byLabel[sweep[i-1]]
			b, okB := byLabel[sweep[i]]
			if !okA || !okB {
				continue
			}
			n, err := analysis.Compare(a, []analysis.Set{b}, opts)
			if err != nil {
				return nil, fmt.Errorf("judge look %d, %s against %s: %w", look, b.Label, a.Label, err)
			}
			mark(n)
		}
	}
	var out []string
	for _, r := range cmp.Rows {
		if r.Group != "load" && open[r.Test] && !slices.Contains(out, r.Test) {
			out = append(out, r.Test)
		}
	}
	report.Look(w, cmp, look, looks, out)
	return out, nil
}

// sweepOrder is the indexes of labels in the sweep's order of their
// builds (builds), labels of one build in their own order; a label whose
// build the sweep does not name comes last.
func sweepOrder(labels []plan.LabelSpec, builds []string) []int {
	at := func(l plan.LabelSpec) int {
		if i := slices.Index(builds, l.Build.Name); i >= 0 {
			return i
		}
		return len(builds)
	}
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return at(labels[a]) - at(labels[b]) })
	return order
}
