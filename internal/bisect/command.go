package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gofrs/flock"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// Env is what the commands and the fleet's job run in, as the
// application layer (internal/app: app.Env.ForBisect) gives it: the
// home, where to write, the store, and how a plan runs. A step's plan
// runs as qpslab run runs one (its host fingerprinted, its designs and
// risks said, its runs stored): app's runner, given here, not a second.
type Env struct {
	Home     home.Home
	Out, Err io.Writer
	// OpenStore opens the store, creating it; WithStore runs f on the
	// existing store (store.ErrNoStore where there is none) and closes it.
	OpenStore func(ctx context.Context) (*store.Store, error)
	WithStore func(ctx context.Context, f func(*store.Store) error) error
	// Clean cleans what an earlier qpslab left in the home's sandboxes
	// (app.Clean), before a step's plan starts its servers.
	Clean func()
	// RunPlan runs plan p, its results file out, saying what it does on
	// Err only; more, for a plan of several looks (plan.Design.Looks), says
	// after each which tests are still undecided.
	RunPlan func(ctx context.Context, p *plan.Runner, out string, more func(ctx context.Context, runs []result.Run, look int) ([]string, error)) ([]result.Run, error)
}

// Options are qpslab bisect's question and how to answer it.
type Options struct {
	Good, Bad  string // revisions of Src
	Src        string // a git tree
	Suite      string
	Test       string
	Metric     string  // "qps" (the headline, the default) or a registered metric
	Threshold  float64 // the smallest regression looked for; 0: the host's noise floor, else analysis.DefaultFloor
	Config     string  // "": default
	Flavor     string  // "": detected from the tree
	CFlags     string
	Rounds     int // paired rounds of each measurement (0: DefaultRounds)
	AllParents bool
	PMP        string            // seconds between stack captures of the final measurement ("": none)
	Perf       bool              // perf profile of the final measurement
	Set        map[string]string // the suite's own flags, as qpslab run takes them
	// Attention is the dashboard's attention entry the bisection was asked
	// from (a fleet job's; "" for none), kept with it so the entry shows it.
	Attention string
	// Builder compiles the commits (nil: the home's registry).
	Builder Builder
}

// Flags reads --threshold (5%, or 0.05; "": the host's noise
// floor) and the --set NAME=VALUE flags.
func Flags(threshold string, set []string) (float64, map[string]string, error) {
	var t float64
	if threshold != "" {
		s, pct := strings.CutSuffix(strings.TrimSpace(threshold), "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if pct {
			v /= 100
		}
		if err != nil || !(v > 0 && v < 1) {
			return 0, nil, fmt.Errorf("--threshold %s: give the smallest regression to bisect as a percentage (5%%) or a fraction (0.05)", threshold)
		}
		t = v
	}
	m := map[string]string{}
	for _, kv := range set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return 0, nil, fmt.Errorf("--set %s: give a suite flag as NAME=VALUE (e.g. --set seconds=30)", kv)
		}
		m[strings.TrimPrefix(k, "--")] = v
	}
	return t, m, nil
}

// Verb runs qpslab bisect resume, status or skip on its command
// line's arguments: a bisection's id (status: none for the list), then
// skip's commit.
func Verb(ctx context.Context, e Env, verb string, args []string, rounds int, format string) error {
	var id int64
	if len(args) > 0 {
		var err error
		if id, err = strconv.ParseInt(args[0], 10, 64); err != nil || id < 0 {
			return fmt.Errorf("%q is not a bisection's id: qpslab bisect status lists them", args[0])
		}
	}
	switch verb {
	case "resume":
		return Resume(ctx, e, id, rounds, nil)
	case "skip":
		return Skip(ctx, e, id, append(args, "", "")[1], nil)
	}
	return Status(ctx, e, id, format)
}

// DefaultRounds are the repeats of a measurement (each the test's slices
// alternating between the two builds): an interval on repeats has 9
// degrees of freedom then, and a midpoint that cannot yet be classified
// gets more, look after look.
const DefaultRounds = 10

// builderOf is the home's compiler of source trees: its registry of builds.
func builderOf(h home.Home) Builder {
	return build.Registry{Dir: h.Builds(), Cache: h.Cache, Logs: h.Logs()}
}

// Bisect runs qpslab bisect GOOD BAD: a new bisection, or the stored one
// of the same question (source tree, GOOD, BAD, suite, test) resumed.
func Bisect(ctx context.Context, e Env, o Options) error {
	_, err := bisectRun(ctx, e, o)
	return err
}

// bisectRun is Bisect, with the id of the bisection it walked (0 when
// none was stored).
func bisectRun(ctx context.Context, e Env, o Options) (int64, error) {
	id := int64(0)
	err := func() error {
		if o.Src == "" {
			return fmt.Errorf("--src: name the source tree (a git checkout) to bisect")
		}
		return bisectIn(ctx, e, o, &id)
	}()
	return id, err
}

func bisectIn(ctx context.Context, e Env, o Options, id *int64) error {
	src, err := filepath.Abs(o.Src)
	if err != nil {
		return err
	}
	o.Src = src
	if o.Metric == "" {
		o.Metric = store.HeadlineMetric
	}
	if !build.IsGitTree(ctx, src) {
		return fmt.Errorf("--src %s is not a git tree: bisect walks a git checkout's commits (git clone …)", src)
	}
	if err := checkOptions(e, o); err != nil {
		return err
	}
	good, cs, err := build.Range(ctx, src, o.Good, o.Bad, !o.AllParents)
	if err != nil {
		return err
	}
	if len(cs) == 0 {
		return fmt.Errorf("no commits between GOOD %s and BAD %s", o.Good, o.Bad)
	}
	st, err := e.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	bad := cs[len(cs)-1]
	q := store.Bisection{Src: src, Good: good.Hash, Bad: bad.Hash, Suite: o.Suite, Test: o.Test, Metric: o.Metric,
		Threshold: o.Threshold, Params: paramsOf(o), State: store.BisectRunning}
	b, found, err := st.FindBisection(ctx, q)
	if err != nil {
		return err
	}
	if found && (b.Metric != o.Metric || o.Threshold != 0 && o.Threshold != b.Threshold || b.Params["all-parents"] != strconv.FormatBool(o.AllParents)) {
		found = false // another question: a bisection of its own
	}
	var steps []store.BisectStep
	if found {
		if err := sameSettings(b, o); err != nil {
			return err
		}
		unlock, err := lockBisection(e.Home, b.ID)
		if err != nil {
			return err
		}
		defer unlock()
		builder := o.Builder
		o = optionsOf(b) // the walk goes on with its own settings
		o.Builder = builder
		*id = b.ID
		if _, steps, err = st.Bisection(ctx, b.ID); err != nil {
			return err
		}
		fmt.Fprintf(e.Err, "resuming bisection %d (%s; %d step(s) stored)\n", b.ID, b.State, len(steps))
	} else {
		b, err = st.StartBisection(ctx, q)
		if err != nil {
			return err
		}
		*id = b.ID
		unlock, err := lockBisection(e.Home, b.ID)
		if err != nil {
			return err
		}
		defer unlock()
	}
	w, err := (&planTester{e: e, st: st, o: o}).walk(b, steps, good, cs)
	if err != nil {
		return err
	}
	return answer(ctx, e, w)
}

// Resume continues bisection id from its stored steps (rounds > 0:
// that many rounds a measurement from now on; a step that could not tell
// pools them with its earlier ones).
func Resume(ctx context.Context, e Env, id int64, rounds int, builder Builder) error {
	return reopen(ctx, e, id, Options{Rounds: rounds, Builder: builder}, func(context.Context, *Walk) (string, error) { return "", nil })
}

// Skip skips commit (a hash or its prefix; "": the step that could
// not tell) of bisection id, as git bisect skip does, and continues it.
func Skip(ctx context.Context, e Env, id int64, commit string, builder Builder) error {
	return reopen(ctx, e, id, Options{Builder: builder}, func(ctx context.Context, w *Walk) (string, error) {
		c, err := w.Skip(ctx, commit)
		if err != nil {
			return "", err
		}
		return "skipped " + Name(c), nil
	})
}

// reopen walks on stored bisection id with its own options but given's
// Rounds (0: its own) and Builder, once before has done its part (its
// line, if any, said first).
func reopen(ctx context.Context, e Env, id int64, given Options, before func(context.Context, *Walk) (string, error)) error {
	st, err := e.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, _, err := st.Bisection(ctx, id); err != nil {
		return err
	}
	unlock, err := lockBisection(e.Home, id)
	if err != nil {
		return err
	}
	defer unlock()
	b, steps, err := st.Bisection(ctx, id) // read again under the lock
	if err != nil {
		return err
	}
	o := optionsOf(b)
	o.Builder = given.Builder
	if rounds := given.Rounds; rounds < 0 || rounds > maxRounds {
		return fmt.Errorf("--rounds %d: give 1 to %d paired rounds a measurement", rounds, maxRounds)
	}
	if given.Rounds > 0 {
		o.Rounds = given.Rounds
		if b.Params == nil {
			b.Params = map[string]string{}
		}
		b.Params["rounds"] = strconv.Itoa(given.Rounds) // stored with its state: kept from now on
	}
	good, cs, err := build.Range(ctx, b.Src, b.Good, b.Bad, !o.AllParents)
	if err != nil {
		return fmt.Errorf("bisection %d: %w", id, err)
	}
	w, err := (&planTester{e: e, st: st, o: o}).walk(b, steps, good, cs)
	if err != nil {
		return err
	}
	line, err := before(ctx, w)
	if err != nil {
		return err
	}
	if line != "" {
		fmt.Fprintln(e.Err, line)
	}
	return answer(ctx, e, w)
}

// lockBisection takes bisection id's lock (HOME/bisect-ID.lock, an
// flock holding the walker's pid), so that two walks of one bisection do
// not run at once; the lock goes with the process.
func lockBisection(h home.Home, id int64) (func(), error) {
	p := filepath.Join(h.Root, fmt.Sprintf("bisect-%d.lock", id))
	l := flock.New(p, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock bisection %d: %w", id, err)
	}
	if !ok {
		pid, _ := os.ReadFile(p)
		return nil, fmt.Errorf("bisection %d is running (pid %s): wait for it, or stop that process", id, strings.TrimSpace(string(pid)))
	}
	os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644) // the same file: the lock holds
	return func() { l.Unlock() }, nil
}

// paramsOf are the options a bisection keeps beside its question.
func paramsOf(o Options) map[string]string {
	p := map[string]string{"config": o.Config, "flavor": o.Flavor, "cflags": o.CFlags, "rounds": strconv.Itoa(o.Rounds),
		"all-parents": strconv.FormatBool(o.AllParents), "pmp": o.PMP, "perf": strconv.FormatBool(o.Perf)}
	for k, v := range o.Set {
		p["set."+k] = v
	}
	if o.Attention != "" {
		p["attention"] = o.Attention
	}
	return p
}

// optionsOf are a stored bisection's options.
func optionsOf(b store.Bisection) Options {
	p := b.Params
	o := Options{Good: b.Good, Bad: b.Bad, Src: b.Src, Suite: b.Suite, Test: b.Test, Metric: b.Metric, Threshold: b.Threshold,
		Config: p["config"], Flavor: p["flavor"], CFlags: p["cflags"], AllParents: p["all-parents"] == "true", PMP: p["pmp"], Perf: p["perf"] == "true",
		Set: map[string]string{}, Attention: p["attention"]}
	o.Rounds, _ = strconv.Atoi(p["rounds"])
	for k, v := range p {
		if n, ok := strings.CutPrefix(k, "set."); ok {
			o.Set[n] = v
		}
	}
	return o
}

// maxRounds are the most paired rounds a measurement takes.
const maxRounds = 1000

// checkOptions checks all a new or re-run bisection is given before
// anything is compiled or stored: the question, --flavor, --rounds,
// --config, control characters in --cflags, --pmp and --set, and the
// suite's plan the --set flags make.
func checkOptions(e Env, o Options) error {
	s, _, err := checkQuestion(o)
	if err != nil {
		return err
	}
	var fam config.Family
	if o.Flavor != "" {
		f, err := build.ParseFlavor(o.Flavor)
		if err != nil {
			return fmt.Errorf("--flavor: %w", err)
		}
		fam = config.Family(f.Describe().Family)
	}
	if o.Rounds < 0 || o.Rounds > maxRounds {
		return fmt.Errorf("--rounds %d: give 1 to %d paired rounds a measurement (default %d)", o.Rounds, maxRounds, DefaultRounds)
	}
	vals := map[string]string{"--cflags": o.CFlags, "--pmp": o.PMP, "--config": o.Config}
	for k, v := range o.Set {
		vals["--set "+k] = v
		vals["--set "+k+" (its name)"] = k
	}
	for flag, v := range vals {
		if strings.ContainsFunc(v, unicode.IsControl) {
			return fmt.Errorf("%s %q: it holds a control character: give it without", flag, v)
		}
	}
	if o.Config != "" {
		cs := config.Store{Dir: e.Home.Configs()}
		fams := config.Families
		if fam != "" {
			fams = []config.Family{fam}
		}
		ok := false
		for _, f := range fams {
			_, err := cs.Get(o.Config, f)
			ok = ok || err == nil
		}
		if !ok {
			return fmt.Errorf("--config %s: no such config%s: qpslab configs list names them, qpslab configs add %s FILE adds one", o.Config, map[bool]string{true: " for flavor " + o.Flavor}[fam != ""], o.Config)
		}
	}
	return (&planTester{e: e, s: s, o: o}).choose()
}

// sameSettings refuses to resume stored bisection b with settings other
// than its own (the walk goes on with b's: the answer is of one build
// recipe and one plan).
func sameSettings(b store.Bisection, o Options) error {
	now := paramsOf(o)
	if o.Rounds == 0 {
		now["rounds"] = b.Params["rounds"] // not given: the stored rounds
	}
	keys := []string{"config", "flavor", "cflags", "rounds"}
	for k := range now {
		if strings.HasPrefix(k, "set.") {
			keys = append(keys, k)
		}
	}
	for k := range b.Params {
		if strings.HasPrefix(k, "set.") && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys[4:])
	for _, k := range keys {
		was, ok := b.Params[k]
		if was == now[k] && (ok || !strings.HasPrefix(k, "set.")) {
			continue
		}
		flag := "--" + k + " " + strconv.Quote(was)
		if n, set := strings.CutPrefix(k, "set."); set {
			flag = "--set " + strconv.Quote(n+"="+was)
			if !ok {
				flag = "no --set " + n
			}
		}
		how := fmt.Sprintf("qpslab bisect resume %d", b.ID)
		if k == "rounds" {
			how += " --rounds " + now[k]
		}
		return fmt.Errorf("bisection %d was started with %s; resume it with its own settings: %s, or start another with different GOOD/BAD", b.ID, flag, how)
	}
	return nil
}

// checkQuestion checks the suite, test and metric, and says which way the
// metric is better.
func checkQuestion(o Options) (suite.Suite, bool, error) {
	s, err := suite.Get(o.Suite)
	if err != nil {
		return nil, false, err
	}
	var names []string
	for _, t := range s.Tests() {
		names = append(names, t.Name)
	}
	if o.Test == "" || !slices.Contains(names, o.Test) {
		return nil, false, fmt.Errorf("--test %q: suite %s has no such test (qpslab run %s --list-tests lists them)", o.Test, o.Suite, o.Suite)
	}
	if o.Metric == "" || o.Metric == store.HeadlineMetric {
		return s, true, nil
	}
	m, ok := result.Lookup(o.Metric)
	if !ok {
		return nil, false, fmt.Errorf("--metric %s: no such metric (qps, the headline, or one qpslab metrics names)", o.Metric)
	}
	return s, m.HigherIsBetter, nil
}

// walk makes the walk of bisection b (its stored steps; the commits cs
// after good) with t, of its env, store and options, as its Tester and
// the home's registry as its Builder.
func (t *planTester) walk(b store.Bisection, steps []store.BisectStep, good build.Commit, cs []build.Commit) (*Walk, error) {
	e := t.e
	s, higher, err := checkQuestion(t.o)
	if err != nil {
		return nil, err
	}
	if t.o.Rounds <= 0 {
		t.o.Rounds = DefaultRounds
	}
	if t.o.Builder == nil {
		t.o.Builder = builderOf(e.Home)
	}
	o := t.o
	reg := build.Registry{Dir: e.Home.Builds(), Cache: e.Home.Cache}
	t.s, t.id = s, b.ID
	if err := t.choose(); err != nil {
		return nil, err
	}
	return &Walk{Good: good, Commits: cs, Builder: o.Builder, Tester: t, Log: t.st, Bisection: b, Steps: steps, Rounds: o.Rounds, Higher: higher,
		Why: o.PMP != "" || o.Perf, Out: e.Err, Lookup: reg.Get,
		Compile: CompileOptions{Src: o.Src, Flavor: build.Flavor(o.Flavor), CFlags: o.CFlags, Progress: e.Err}}, nil
}

// answer walks and prints the answer: the first bad commit, its magnitude
// and interval against its parent, and the stacks or profile diff.
func answer(ctx context.Context, e Env, w *Walk) error {
	res, err := w.Run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(e.Err, "bisection %d stopped: its decided steps are stored; qpslab bisect resume %d (or the same command) goes on\n", w.Bisection.ID, w.Bisection.ID)
		}
		return err
	}
	t := w.Tester.(*planTester)
	fmt.Fprintln(e.Out)
	fmt.Fprintf(e.Out, "bisection %d: %s\n", w.Bisection.ID, res.State)
	fmt.Fprintln(e.Out, res.Line)
	if res.First != nil && res.Final != nil {
		r, lo, hi := Up(res.Final.Verdict, w.Higher)
		fmt.Fprintf(e.Out, "magnitude: %.1f %% of %s %s (rel %s against its parent %s, %d round(s), plan %s); BAD against GOOD: %.1f %%\n",
			100*(1-r), w.Bisection.Test, w.Bisection.Metric, Interval(r, lo, hi), Name(res.Parent), res.Final.Rounds, res.Final.Plan, 100*res.Magnitude)
		if len(t.final) > 0 {
			if err := report.Why(e.Out, analysis.LabelSets(t.final)); err != nil {
				return err
			}
		}
	}
	if res.State == store.BisectNoRegression || res.State == store.BisectFailed || res.State == store.BisectCannotTell {
		return fmt.Errorf("bisection %d: %s", w.Bisection.ID, res.Line)
	}
	return nil
}

// planTester measures a build against a base build as qpslab run does:
// a plan of the two builds interleaved by test, its runs stored, its
// rounds of the test compared.
type planTester struct {
	e     Env
	st    *store.Store
	s     suite.Suite
	o     Options
	id    int64
	tests string // the suite's --tests value that selects the test ("": run them all)
	final []result.Run
}

// choose finds how to run only the test: the suite's --tests set to the
// test's name, or to its first part (db_bench's STEP of STEP.WORKLOAD);
// else the whole suite runs (the walk reads the test's runs). The plan
// the --set flags make that does not parse is its error.
func (t *planTester) choose() error {
	if _, err := t.plan("", "x", "y", 1, false); err != nil {
		return err
	}
	if _, ok := t.o.Set["tests"]; ok {
		return nil
	}
	has := false
	for _, p := range t.s.Params() {
		has = has || p.Name == "tests"
	}
	if !has {
		return nil
	}
	for _, v := range []string{t.o.Test, strings.SplitN(t.o.Test, ".", 2)[0]} {
		if _, err := t.plan(v, "x", "y", 1, false); err == nil {
			t.tests = v
			return nil
		}
	}
	return nil
}

func (t *planTester) plan(tests, base, other string, rounds int, final bool) (*plan.Runner, error) {
	given := map[string]string{}
	for k, v := range t.o.Set {
		given[k] = v
	}
	if tests != "" {
		given["tests"] = tests
	}
	given["build"], given["repeat"], given["interleave"] = base+","+other, strconv.Itoa(rounds), plan.InterleaveTest
	if t.o.Config != "" {
		given["config"] = t.o.Config
	}
	if final && t.o.PMP != "" {
		given["pmp"] = t.o.PMP
	}
	if final && t.o.Perf {
		given["perf"] = "true"
	}
	v, err := plan.ValuesOf(t.s, given)
	if err != nil {
		return nil, err
	}
	return plan.Parse(t.s, v)
}

// measurement is one Measure of other against base, as mo asks, judged by j.
type measurement struct {
	*planTester
	base, other build.Build
	mo          MeasureOptions
	j           analysis.Judging
}

func (t *planTester) Measure(ctx context.Context, base, other build.Build, mo MeasureOptions) (Measure, error) {
	return (&measurement{planTester: t, base: base, other: other, mo: mo, j: analysis.DefaultJudging()}).run(ctx)
}

func (m *measurement) run(ctx context.Context) (Measure, error) {
	t, base, other, mo := m.planTester, m.base, m.other, m.mo
	e, h := t.e, t.e.Home
	p, err := t.plan(t.tests, base.Name, other.Name, mo.Rounds, mo.Final)
	if err != nil {
		return Measure{}, err
	}
	e.Clean()
	if err := p.Resolve(ctx, h); err != nil {
		return Measure{}, err
	}
	if err := p.Check(h); err != nil {
		return Measure{}, err
	}
	out := filepath.Join(h.Results(), fmt.Sprintf("bisect-%d-%s.json", t.id, time.Now().UTC().Format("20060102-150405.000")))
	if err := home.EnsurePrivate(filepath.Dir(out)); err != nil {
		return Measure{}, err
	}
	fmt.Fprintf(e.Err, "measure %s against %s, %d round(s)\n", other.Name, base.Name, mo.Rounds)
	var more func(context.Context, []result.Run, int) ([]string, error)
	if mo.Decided != nil && p.Layout().Mode == plan.InterleaveTest { // looks keep both servers up
		// The step's question decides when it has rounds enough: more
		// repeats of the test, look after look (plan.Runner.More).
		p.Design.Looks, p.Design.Step = plan.DefaultLooks, max(1, mo.Rounds/2)
		m.j.Looks = p.Design.Looks
		more = func(ctx context.Context, runs []result.Run, look int) ([]string, error) {
			v, _, err := m.verdict(ctx, runs)
			if err != nil || mo.Decided(v) {
				return nil, err
			}
			fmt.Fprintf(e.Err, "look %d of %d: %s against %s %s: not yet decided, %d more round(s)\n", look, p.Design.Looks, other.Name, base.Name, Interval(v.Rel, v.Lo, v.Hi), p.Design.Step)
			return []string{t.o.Test}, nil
		}
	}
	runs, err := e.RunPlan(ctx, p, out, more)
	if err != nil {
		return Measure{}, err
	}
	if mo.Final {
		t.final = runs
	}
	v, bs, err := m.verdict(ctx, runs)
	if err != nil {
		return Measure{}, err
	}
	ms := Measure{Plan: p.ID, Rounds: v.N, Verdict: v}
	if noise, err := t.st.NoiseOf(ctx); err == nil {
		ms.Floor, _ = noise(t.o.Test, bs[0].Threads, bs[0].LabelConditions(), bs)
	}
	return ms, nil
}

// verdict is the step's verdict of other against base from runs, pooled
// with the runs of its earlier plans (a retry), judged by j; and base's
// runs.
func (m *measurement) verdict(ctx context.Context, runs []result.Run) (analysis.Verdict, []result.Run, error) {
	t, base, other, mo, j := m.planTester, m.base, m.other, m.mo, m.j
	if len(mo.Earlier) > 0 {
		for _, b := range []string{base.Name, other.Name} {
			old, err := t.st.Runs(ctx, store.Filter{Suite: t.s.Name(), Build: b, Test: t.o.Test})
			if err != nil {
				return analysis.Verdict{}, nil, err
			}
			for _, r := range old {
				if slices.Contains(mo.Earlier, r.Plan) {
					runs = append(runs, r)
				}
			}
		}
	}
	var bs, os []result.Run
	threads := 0 // one thread count: the first the plan ran (rounds pair by plan, repeat and round only)
	for _, r := range runs {
		if r.Test != t.o.Test || r.Status != result.OK || threads != 0 && r.Threads != threads {
			continue
		}
		threads = r.Threads
		switch r.Build {
		case base.Name:
			bs = append(bs, r)
		case other.Name:
			os = append(os, r)
		}
	}
	if len(bs) == 0 || len(os) == 0 {
		return analysis.Verdict{}, nil, fmt.Errorf("the plan stored no run of test %s of both builds (%s, %s): see qpslab runs", t.o.Test, base.Name, other.Name)
	}
	side := analysis.HeadlineSide
	if t.o.Metric != "" && t.o.Metric != store.HeadlineMetric {
		m, _ := result.Lookup(t.o.Metric)
		side = func(runs []result.Run) analysis.Side { return analysis.RunSide(runs, m) }
	}
	j.Looks = max(j.Looks, pooledLooks(append(append([]result.Run{}, bs...), os...)))
	return Test(side(bs), side(os), j), bs, nil
}

// pooledLooks is how many looks runs pooled from several plans had in all:
// each plan's (its runs record them), summed. A retry that pools a step's
// earlier plans looks again at rounds those plans looked at already, so
// its level is the one for all their looks together, not for its own.
func pooledLooks(runs []result.Run) int {
	looks := map[string]int{}
	for _, r := range runs {
		looks[r.Plan] = max(looks[r.Plan], r.Looks())
	}
	n := 0
	for _, k := range looks {
		n += k
	}
	return n
}

// Status prints the stored bisections (id 0), or one's steps. It
// reads the store, creating nothing: with none, there are no bisections
// yet.
func Status(ctx context.Context, e Env, id int64, format string) error {
	err := e.WithStore(ctx, func(st *store.Store) error { return status(ctx, e, st, id, format) })
	if errors.Is(err, store.ErrNoStore) {
		if id != 0 {
			return fmt.Errorf("bisection %d: %w: no bisections yet (qpslab bisect GOOD BAD starts one)", id, store.ErrNoBisection)
		}
		if format == "json" {
			return report.JSON(e.Out, []store.Bisection{})
		}
		fmt.Fprintln(e.Out, "no bisections yet (qpslab bisect GOOD BAD --src DIR --suite S --test T starts one)")
		return nil
	}
	return err
}

func status(ctx context.Context, e Env, st *store.Store, id int64, format string) error {
	if id == 0 {
		bs, err := st.Bisections(ctx)
		if err != nil {
			return err
		}
		if format == "json" {
			return report.JSON(e.Out, append([]store.Bisection{}, bs...))
		}
		return report.Print(e.Out, store.BisectionsTable(bs), "text")
	}
	b, steps, err := st.Bisection(ctx, id)
	if err != nil {
		return err
	}
	if format == "json" {
		return report.JSON(e.Out, struct {
			store.Bisection
			Steps []store.BisectStep `json:"steps"`
		}{b, steps})
	}
	subjects := map[string]string{}
	if good, cs, err := build.Range(ctx, b.Src, b.Good, b.Bad, b.Params["all-parents"] != "true"); err == nil {
		for _, c := range append([]build.Commit{good}, cs...) {
			subjects[c.Hash] = result.Shown(c.Subject)
		}
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Seq < steps[j].Seq })
	return store.WriteBisectSteps(e.Out, b, steps, subjects)
}
