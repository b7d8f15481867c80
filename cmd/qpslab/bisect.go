package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/report"
)

func newBisectCmd() *cobra.Command {
	var o jobs.BisectOptions
	var threshold, format string
	var set []string
	var rounds int
	c := jobCmd("bisect GOOD BAD --src DIR --suite S --test T", cobra.ExactArgs(2),
		func(cmd *cobra.Command, e jobs.Env, args []string) (err error) {
			o.Good, o.Bad = args[0], args[1]
			if o.Threshold, o.Set, err = jobs.BisectFlags(threshold, set); err != nil {
				return err
			}
			return jobs.Bisect(cmd.Context(), e, o)
		})
	f := c.Flags()
	f.StringVar(&o.Src, "src", "", "")
	f.StringVar(&o.Suite, "suite", "", "")
	f.StringVar(&o.Test, "test", "", "")
	f.StringVar(&o.Metric, "metric", "qps", "")
	f.StringVar(&threshold, "threshold", "", "")
	f.StringVar(&o.Config, "config", "", "")
	f.StringVar(&o.Flavor, "flavor", "", "")
	f.StringVar(&o.CFlags, "cflags", "", "")
	f.IntVar(&o.Rounds, "rounds", 0, "")
	f.BoolVar(&o.AllParents, "all-parents", false, "")
	f.StringVar(&o.PMP, "pmp", "", "")
	f.BoolVar(&o.Perf, "perf", false, "")
	f.StringArrayVar(&set, "set", nil, "")
	verb := func(use string, args cobra.PositionalArgs) *cobra.Command {
		return jobCmd(use, args, func(cmd *cobra.Command, e jobs.Env, args []string) error {
			return jobs.BisectVerb(cmd.Context(), e, cmd.Name(), args, rounds, format)
		})
	}
	resume := verb("resume ID", cobra.ExactArgs(1))
	resume.Flags().IntVar(&rounds, "rounds", 0, "")
	status := verb("status [ID]", cobra.MaximumNArgs(1))
	report.FormatFlag(status.Flags(), &format, "text", "json")
	c.AddCommand(resume, status, verb("skip ID [COMMIT]", cobra.RangeArgs(1, 2)))
	return c
}
