package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/suite"
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
	c = &cobra.Command{Use: s.Name() + use, Short: short, Long: long, Args: cobra.NoArgs,
		Annotations: map[string]string{suiteAnnotation: s.Name()}}
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
