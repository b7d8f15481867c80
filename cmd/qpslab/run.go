package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/suite"
)

func newRunCmd() *cobra.Command {
	c := &cobra.Command{Use: "run SUITE", Args: cobra.ArbitraryArgs,
		RunE: suiteParent("run", "qpslab run SUITE")}
	for _, s := range suite.All() {
		c.AddCommand(newSuiteRunCmd(s))
	}
	return c
}

// suiteCmd is the command of suite s under qpslab run, study or fleet
// submit, with the plan's flags the suite takes; given reads those set.
// The usage of its other flags is the one every suite shares (usageOf).
func suiteCmd(s suite.Suite, use, short, long string) (c *cobra.Command, given func() map[string]string) {
	c = &cobra.Command{Use: s.Name() + use, Short: short, Long: long, Args: cobra.NoArgs,
		Annotations: map[string]string{suiteAnnotation: s.Name()}}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return plan.FlagError(s, err) })
	return c, plan.Flags(c.Flags(), s)
}

func newSuiteRunCmd(s suite.Suite) *cobra.Command {
	var o jobs.RunOptions
	long := s.Summary() + "."
	if h, ok := s.(suite.Helper); ok {
		long = h.Help()
	}
	if plan.Declined(s, "rate") == "" {
		long += "\n\n" + help("run-loop")
	}
	c, given := suiteCmd(s, " --build B [--config C]", s.Summary(), long+"\n\n"+help("run-SUITE"))
	c.Flags().StringVar(&o.Out, "out", "", "results file (default <home>/results/"+s.Name()+"-PLANID.json)")
	c.Flags().BoolVar(&o.ListTests, "list-tests", false, "")
	c.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "")
	c.Flags().StringVar(&o.HTML, "html", "", "")
	c.Flags().BoolVar(&o.AA, "aa", false, "")
	c.Flags().StringSliceVar(&o.Boost, "boost", nil, "")
	c.RunE = withEnv(func(cmd *cobra.Command, e jobs.Env, _ []string) error {
		return jobs.Run(cmd.Context(), e, s, given(), o)
	})
	return c
}

func newSuitesCmd() *cobra.Command {
	var format string
	c := &cobra.Command{Use: "suites [NAME]", Args: cobra.MaximumNArgs(1),
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
	var o jobs.DemoOptions
	c := jobCmd("demo", cobra.NoArgs, func(cmd *cobra.Command, e jobs.Env, _ []string) error {
		return jobs.Demo(cmd.Context(), e, o)
	})
	c.Flags().IntVar(&o.Rows, "rows", 100_000, "")
	c.Flags().Var(duration.SecondsVar(&o.Secs, 3, false), "secs", "")
	c.Flags().IntVar(&o.Repeat, "repeat", 0, "")
	c.Flags().BoolVar(&o.UntilDecided, "until-decided", true, "")
	c.Flags().Var(duration.SecondsVar(&o.Budget, 480, false), "budget", "")
	c.Flags().StringVar(&o.HTML, "html", "", "")
	c.Flags().StringVar(&o.Tests, "tests", "", "")
	c.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "")
	return c
}
