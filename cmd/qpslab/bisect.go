package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/report"
)

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
