package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/suite"
)

// DemoOptions are what qpslab demo takes.
type DemoOptions struct {
	Rows   int
	Repeat int     // 0: auto (plan.Spec.Repeat)
	Secs   float64 // each test's measured seconds per build, over all repeats
	// UntilDecided adds repeats to the undecided tests, look after look,
	// within Budget seconds of the plan's wall time (0: the plan's
	// default).
	UntilDecided bool
	Budget       float64
	HTML         string // the report file ("": <home>/reports/demo-TIME.html)
	Tests        string // globs, as run sysbench --tests ("": all)
	Verbose      bool
}

// Demo runs the seeds' experiment in miniature: the host check, the
// registry build mariadb-10.2.11 against mariadb-system on sysbench's 42
// tests, interleaved, and their comparison with its HTML report.
func Demo(ctx context.Context, e Env, o DemoOptions) error {
	if o.Rows < 1 || !(o.Secs > 0 && o.Secs <= 3600) || o.Repeat < 0 || !(o.Budget >= 0 && o.Budget <= 86400) { // !(>): NaN too
		return fmt.Errorf("qpslab demo needs --rows ≥ 1, --secs > 0 (at most 3600), --repeat ≥ 1 (or 0 for auto) and --budget from 0 to 86400 seconds")
	}
	h, out, errw := e.Home, e.Out, e.Err
	step := func(s string) { fmt.Fprintf(errw, "\n== %s\n", s) }

	step("host check (qpslab host check shows it all)")
	hc, err := host.Inspect(host.Real)
	if err != nil {
		return err
	}
	report.HostSummary(out, hc)

	step("the builds: mariadb-10.2.11 from the registry (once), mariadb-system from Debian's packages")
	reg := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	if _, err := reg.Fetch(ctx, "mariadb-10.2.11", build.FetchOptions{Log: errw}); err != nil {
		return err
	}
	// The demo's config is the shipped default under its own name (a
	// config based on default with nothing of its own), so its labels
	// never mix with other runs of the default config.
	cs := config.Store{Dir: h.Configs()}
	if _, err := cs.Ensure("demo", []byte("# qpslab: base=default\n# The demo's config: default's settings, under a name of its own.\n"), config.MySQL); err != nil {
		return err
	}

	step("qpslab run sysbench --build mariadb-10.2.11,mariadb-system --config demo (builds interleaved)")
	s, err := suite.Get("sysbench")
	if err != nil {
		return err
	}
	sec := strconv.FormatFloat(o.Secs, 'f', -1, 64)
	repeat := "auto"
	if o.Repeat > 0 {
		repeat = strconv.Itoa(o.Repeat)
	}
	v := suite.Defaults(plan.Common, s.Params())
	for _, kv := range [][2]string{
		{"build", "mariadb-10.2.11,mariadb-system"}, {"config", "demo"}, {"tables", "1"}, {"rows", strconv.Itoa(o.Rows)},
		{"threads", "1"}, {"repeat", repeat}, {"read-secs", sec}, {"write-secs", sec}, {"insert-secs", sec},
		{"warmup", "0"}, {"postwrite-scale", "0"}, {"report-interval", "60"}, {"tests", o.Tests},
		{"until-decided", strconv.FormatBool(o.UntilDecided)},
	} {
		v = v.With(kv[0], kv[1])
	}
	if o.UntilDecided {
		v = v.With("budget", strconv.FormatFloat(o.Budget, 'f', -1, 64))
	}
	p, err := plan.New(ctx, h, s, v)
	if err != nil {
		return err
	}
	p.ID = plan.NewID()
	outFile := filepath.Join(h.Results(), "demo-"+p.ID+".json")
	if err := home.EnsurePrivate(h.Results()); err != nil {
		return err
	}
	runs, err := runPlan(ctx, e, p, planRun{out: outFile, verbose: o.Verbose})
	if err != nil {
		return err
	}
	if err := keepComponents(ctx, e, p, runs, false); err != nil {
		return err
	}

	// The comparison of this demo's runs, judged as every look of
	// --until-decided judged them (qpslab compare of the two labels pools
	// every demo run stored).
	step("the comparison of this run (qpslab compare mariadb-10.2.11.demo mariadb-system.demo pools every demo's runs)")
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	sets := analysis.LabelSets(runs)
	if len(sets) != 2 {
		return fmt.Errorf("the demo stored %d label(s), not 2: see qpslab labels", len(sets))
	}
	cmp, err := analysis.Compare(sets[0], sets[1:], selector.Options(ctx, st, sets, "", errw))
	if err != nil {
		return err
	}
	if err := report.Comparison(out, sets, cmp, "text"); err != nil {
		return err
	}
	html := o.HTML
	if html == "" {
		html = filepath.Join(h.Reports(), "demo-"+p.ID+".html")
	}
	if err := home.EnsurePrivate(filepath.Dir(html)); err != nil {
		return err
	}
	if err := report.HTMLReport(errw, html, sets, cmp, selector.Content(ctx, st)); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe HTML report: %s\n", html)
	return nil
}
