package main

// Run and measure (qpslab --help's first group): run, demo, suites, study,
// bisect and host.

import (
	"fmt"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/study"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/spf13/cobra"
)

func newRunCmd() *cobra.Command {
	c := &cobra.Command{Use: "run SUITE", Short: "Run a benchmark suite against sandboxed builds (qpslab suites " +
		"lists them)", Args: cobra.ArbitraryArgs,
		RunE: suiteParent("run", "qpslab run SUITE")}
	for _, s := range suite.All() {
		c.AddCommand(newSuiteRunCmd(s))
	}
	return c
}

// suiteCmd is the command of suite s under qpslab run, study or fleet
// submit, with the plan's flags the suite takes; given reads those set.
// The flags every suite's command has are defined once, by its parent's
// loop (newSuiteRunCmd, newStudyCmd, newFleetSubmitCmd).
func suiteCmd(s suite.Suite, use, short, long string) (c *cobra.Command, given func() map[string]string) {
	c = &cobra.Command{Use: s.Name() + use, Short: short, Long: long, Args: cobra.NoArgs}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return plan.FlagError(s, err) })
	return c, plan.Flags(c.Flags(), s)
}

func newSuiteRunCmd(s suite.Suite) *cobra.Command {
	var o app.RunOptions
	long := s.Summary() + "."
	if h, ok := s.(suite.Helper); ok {
		long = h.Help()
	}
	if plan.Declined(s, "rate") == "" {
		long += "\n\n" + help("run-loop")
	}
	c, given := suiteCmd(s, " --build B [--config C]", s.Summary(), long+"\n\n"+help("run-SUITE"))
	c.Flags().StringVar(&o.Out, "out", "", "results file (default <home>/results/"+s.Name()+"-PLANID.json)")
	c.Flags().BoolVar(&o.ListTests, "list-tests", false, "print the tests the run would execute, their seconds and "+
		"the plan's total time, and exit")
	c.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "print what happens and each run's figures as it ends")
	c.Flags().StringVar(&o.HTML, "html", "", "also write the HTML report of this run's labels (the first build × "+
		"config the base) to this file")
	c.Flags().BoolVar(&o.AA, "aa", false, "an A/A run: the one --build and --config as two labels (CONFIG-aa1, "+
		"CONFIG-aa2), interleaved as any run; the spread of their paired ratios is kept as this host's noise floor "+
		"per test, which compare and the reports show, flagging no change inside it")
	c.Flags().StringSliceVar(&o.Boost, "boost", nil, "off,on (or on,off, the first the base; or one state): each "+
		"config once per state of this host's boost (CONFIG-boost-off, CONFIG-boost-on), taking turns slice by slice "+
		"as configs do, boost switched before each; it is put back as it was when the run ends, even when killed; "+
		"needs root and a cpufreq driver with a boost file (refused on a VM)")
	c.RunE = withEnv(func(cmd *cobra.Command, e app.Env, _ []string) error {
		return app.Run(cmd.Context(), e, s, given(), o)
	})
	return c
}

func newSuitesCmd() *cobra.Command {
	var format string
	c := &cobra.Command{Use: "suites [NAME]", Short: "List the benchmark suites: their tests, conditions, report " +
		"layouts and the figures they report", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ss, err := suite.Named(args...)
			if err != nil {
				return err
			}
			return report.Suites(cmd.OutOrStdout(), ss, format)
		}}
	report.FormatFlag(c.Flags(), &format, "text", "json")
	return c
}

func newDemoCmd() *cobra.Command {
	var o app.DemoOptions
	c := jobCmd("demo", "The seeds' experiment in miniature: MariaDB 10.2.11 against 10.11, all 42 sysbench tests, "+
		"compared", cobra.NoArgs, func(cmd *cobra.Command, e app.Env, _ []string) error {
		return app.Demo(cmd.Context(), e, o)
	})
	c.Flags().IntVar(&o.Rows, "rows", 100_000, "rows in the table")
	c.Flags().Var(duration.SecondsVar(&o.Secs, 3, false), "secs", "each test's measured seconds per build, over all "+
		"its repeats")
	c.Flags().IntVar(&o.Repeat, "repeat", 0, "repeats of every test on both builds, each from the tables as loaded "+
		"(0: auto, at least 6)")
	c.Flags().BoolVar(&o.UntilDecided, "until-decided", true, "after the first repeats, more to the tests still "+
		"undecided, look after look")
	c.Flags().Var(duration.SecondsVar(&o.Budget, 480, false), "budget", "with --until-decided: the run's wall time "+
		"at most, in seconds")
	c.Flags().StringVar(&o.HTML, "html", "", "the report file (default <home>/reports/demo-PLANID.html)")
	c.Flags().StringVar(&o.Tests, "tests", "", "only these tests (globs, as qpslab run sysbench --tests); default "+
		"all 42")
	c.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "print what happens and each run's figures as it ends")
	return c
}

func newStudyCmd() *cobra.Command {
	c := &cobra.Command{Use: "study SUITE", Short: "A version sweep's study: run a suite on a list of builds and " +
		"write its Markdown and HTML", Long: help("study"), Args: cobra.ArbitraryArgs,
		RunE: suiteParent("study", "qpslab study SUITE --build B1,B2,…")}
	for _, s := range suite.All() {
		var o study.RunOptions
		sc, given := suiteCmd(s, " --build B1,B2,… [--base B] [--scale S]",
			"Study "+s.Name()+" across builds", help("study"))
		sc.Flags().StringVar(&o.Base, "base", "", "the build every other is compared with (default the first of "+
			"--build)")
		if sc.Flags().Lookup("scale") == nil { // the script suite's --scale is pgbench's: its studies are small
			sc.Flags().StringVar(&o.Size, "scale", "small", study.ScaleUsage(s))
		}
		sc.Flags().StringVar(&o.Out, "out", "", "the study's directory (default <home>/reports/study-TIME-RANDOM)")
		sc.Flags().BoolVar(&o.FromStore, "from-store", false, "run nothing: assemble the study from the store's runs "+
			"of the builds")
		sc.Flags().StringVar(&o.Summary, "summary", "", "add the seeds' group summaries, a table per build against "+
			"--base: seeds (their layout since July 2024: groups as rows; min, max, avg, median, stddev) or "+
			"seeds-apr2024 (April 2024: average, median, min, max, stddev as rows, groups as columns)")
		sc.RunE = withEnv(func(cmd *cobra.Command, e app.Env, _ []string) error {
			return app.Study(cmd.Context(), e, s, given(), o)
		})
		c.AddCommand(sc)
	}
	return c
}

// suiteParent is the RunE of a command whose suites are its subcommands
// (run, study): reached without one, or with an unknown one.
func suiteParent(verb, usage string) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("name the suite to %s: %s (qpslab suites lists them)", verb, usage)
		}
		_, err := suite.Get(args[0]) // a known suite is its own subcommand: this is an unknown one
		return err
	}
}

func newBisectCmd() *cobra.Command {
	var o bisect.Options
	var threshold, format string
	var set []string
	var rounds int
	c := jobCmd("bisect GOOD BAD --src DIR --suite S --test T", "Find the commit that made a test slower: compile "+
		"and measure the commits between GOOD and BAD", cobra.ExactArgs(2),
		func(cmd *cobra.Command, e app.Env, args []string) (err error) {
			o.Good, o.Bad = args[0], args[1]
			if o.Threshold, o.Set, err = bisect.Flags(threshold, set); err != nil {
				return err
			}
			return bisect.Bisect(cmd.Context(), e.ForBisect(), o)
		})
	f := c.Flags()
	f.StringVar(&o.Src, "src", "", "the source tree: a git checkout (never checked out: commits are compiled in the "+
		"cache)")
	f.StringVar(&o.Suite, "suite", "", "the suite whose test got slower")
	f.StringVar(&o.Test, "test", "", "the test (qpslab run SUITE --list-tests)")
	f.StringVar(&o.Metric, "metric", "qps", "the figure that regressed: qps (the headline) or a metric qpslab "+
		"metrics names")
	f.StringVar(&threshold, "threshold", "", "the smallest regression to bisect, 5% or 0.05 (default: this host's "+
		"noise floor from qpslab run --aa, else 5%)")
	f.StringVar(&o.Config, "config", "", "the config of every build (default: default)")
	f.StringVar(&o.Flavor, "flavor", "", "the source tree's flavor (default: detected from the tree)")
	f.StringVar(&o.CFlags, "cflags", "", "compiler flags (default: the flavor's recipe's)")
	f.IntVar(&o.Rounds, "rounds", 0, "paired rounds of each measurement (default 10)")
	f.BoolVar(&o.AllParents, "all-parents", false, "walk every commit, not only the first parents of merges")
	f.StringVar(&o.PMP, "pmp", "", "capture the server's stacks every N seconds when the first bad commit is "+
		"measured against its parent, and diff them")
	f.BoolVar(&o.Perf, "perf", false, "profile the server with perf when the first bad commit is measured against "+
		"its parent, and diff the profiles")
	f.StringArrayVar(&set, "set", nil, "a suite flag, NAME=VALUE, as qpslab run SUITE takes it (repeat for more)")
	verb := func(use, short string, args cobra.PositionalArgs) *cobra.Command {
		return jobCmd(use, short, args, func(cmd *cobra.Command, e app.Env, args []string) error {
			return bisect.Verb(cmd.Context(), e.ForBisect(), cmd.Name(), args, rounds, format)
		})
	}
	resume := verb("resume ID", "Continue an interrupted or undecided bisection", cobra.ExactArgs(1))
	resume.Flags().IntVar(&rounds, "rounds", 0, "paired rounds of each measurement from now on (a step that could "+
		"not tell pools them with its earlier ones)")
	status := verb("status [ID]", "List the bisections, or one's steps", cobra.MaximumNArgs(1))
	report.FormatFlag(status.Flags(), &format, "text", "json")
	c.AddCommand(resume, status, verb("skip ID [COMMIT]", "Skip a commit of a bisection (default: the step that "+
		"could not tell), as git bisect skip, and continue", cobra.RangeArgs(1, 2)))
	return c
}

func newHostCmd() *cobra.Command {
	c := &cobra.Command{Use: "host", Short: "Check the host for variance sources (cpufreq, boost, governor, EPP, " +
		"SMT, steal), tune and reset them"}
	var o app.HostCheckOptions
	roots := &o.Roots
	check := jobCmd("check", "Report the host's frequency state and every variance risk, with the command that "+
		"removes it", cobra.NoArgs,
		func(cmd *cobra.Command, e app.Env, _ []string) error { return app.HostCheck(cmd.Context(), e, o) })
	check.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	check.Flags().StringVar(&o.ServerCPUs, "server-cpus", "", "the CPUs a run would pin the server to (e.g. 0-15): "+
		"warn when they overlap --client-cpus")
	check.Flags().StringVar(&o.ClientCPUs, "client-cpus", "", "the CPUs a run would pin the client to (e.g. 16-23)")
	check.Flags().StringVar(&o.Datadir, "datadir", "", "the folder whose storage to report (default: the home's "+
		"sandboxes folder, where datadirs go)")
	tune := jobCmd("tune", "Switch boost off and governors (and EPP) to performance, saving the previous state (root)",
		cobra.NoArgs,
		func(_ *cobra.Command, e app.Env, _ []string) error { return app.HostTune(e, *roots) })
	for _, cmd := range []*cobra.Command{check, tune} {
		cmd.Flags().StringVar(&roots.Sys, "sysfs", host.Real.Sys, "sysfs root (for a copied or fixture tree)")
		cmd.Flags().StringVar(&roots.Proc, "procfs", host.Real.Proc, "procfs root")
	}
	reset := jobCmd("reset", "Put back every file qpslab host tune changed, byte for byte (root)", cobra.NoArgs,
		func(_ *cobra.Command, e app.Env, _ []string) error { return app.HostReset(e) })
	c.AddCommand(check, tune, reset)
	return c
}
