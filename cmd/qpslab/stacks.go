package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// stacksCmd is stacks or stacks diff: the labels' runs with their stacks,
// selected by the flags into q, handed to show.
func stacksCmd(use, short string, args cobra.PositionalArgs, q *report.StackQuery,
	show func(*cobra.Command, []analysis.Set, []string) error, formats ...string) *cobra.Command {
	sel := selector.Selection{Stacks: true}
	c := &cobra.Command{Use: use, Short: short, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(st *store.Store) error {
				sets, err := sel.Sets(cmd.Context(), st, args)
				if err != nil {
					return err
				}
				return show(cmd, sets, args)
			})
		}}
	selFlags(c, &sel, false)
	c.Flags().StringVar(&q.Test, "test", "", "only tests matching this glob (e.g. update-index_range=100)")
	c.Flags().StringVar(&q.Source, "source", "pmp", "pmp (thread stacks, qpslab run --pmp) or perf (on-CPU samples, "+
		"qpslab run --perf)")
	c.Flags().IntVar(&q.Top, "top", 10, "stacks shown per list (0: all)")
	report.FormatFlag(c.Flags(), &q.Format, formats...)
	return c
}

func newStacksCmd() *cobra.Command {
	var q, dq report.StackQuery
	c := stacksCmd("stacks LABEL... [--test T]", "Where the server's threads were: the top stacks of runs made with "+
		"--pmp or --perf, their diff, folded and pprof exports", cobra.MinimumNArgs(1), &q,
		func(cmd *cobra.Command, sets []analysis.Set, labels []string) error {
			return q.Show(cmd.OutOrStdout(), cmd.ErrOrStderr(), sets, labels)
		}, "text", "json", "folded", "pprof")
	c.Flags().StringVar(&q.Out, "out", "", "write the folded or pprof export to this file (default for folded: "+
		"standard output)")
	diff := stacksCmd("diff A B [--test T]", "Compare two labels' stacks: what grew or shrank most, what is present "+
		"in one and absent in the other", cobra.ExactArgs(2), &dq,
		func(cmd *cobra.Command, sets []analysis.Set, labels []string) error {
			return dq.Diff(cmd.OutOrStdout(), sets, labels[0], labels[1])
		}, "text", "json")
	diff.Flags().Float64Var(&dq.Threshold, "threshold", 100*report.DiffThreshold, "percent of the samples below "+
		"which a stack is noise (in both labels)")
	c.AddCommand(diff)
	return c
}
