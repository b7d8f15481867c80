package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/study"
	"github.com/qpslab/qpslab/internal/suite"
)

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
			run := func(ctx context.Context, v map[string]string, file string, sweep []string) error {
				return app.Run(ctx, e, s, v, app.RunOptions{Out: file, Sweep: sweep})
			}
			env := study.Env{Home: e.Home, Store: e.Store, Out: e.Out, Err: e.Err, RunPlan: run}
			return study.Run(cmd.Context(), env, s, given(), o)
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
