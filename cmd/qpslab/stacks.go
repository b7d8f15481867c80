package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// stackFlags are what qpslab stacks and stacks diff select by.
type stackFlags struct {
	sel                  selector.Selection
	test, source, format string
	top                  int
}

func (f *stackFlags) add(c *cobra.Command, formats ...string) {
	selFlags(c, &f.sel, false)
	c.Flags().StringVar(&f.test, "test", "", "only tests matching this glob (e.g. update-index_range=100)")
	c.Flags().StringVar(&f.source, "source", "pmp", "pmp (thread stacks, qpslab run --pmp) or perf (on-CPU samples, qpslab run --perf)")
	c.Flags().IntVar(&f.top, "top", 10, "stacks shown per list (0: all)")
	report.FormatFlag(c.Flags(), &f.format, formats...)
}

// sections loads the labels' runs with their stacks and gathers the
// selected ones.
func (f *stackFlags) sections(cmd *cobra.Command, labels []string) (secs []report.StackSection, err error) {
	if f.top < 0 {
		return nil, fmt.Errorf("--top %d: give 0 (all) or more", f.top)
	}
	f.sel.Stacks = true
	err = withStore(cmd, func(st *store.Store) error {
		sets, err := f.sel.Sets(cmd.Context(), st, labels)
		if err == nil {
			secs, err = report.Stacks(sets, labels, f.test, f.source)
		}
		return err
	})
	return secs, err
}

func newStacksCmd() *cobra.Command {
	var f stackFlags
	var out string
	c := &cobra.Command{
		Use:   "stacks LABEL... [--test T]",
		Short: "Where the server's threads were: the top stacks of runs made with --pmp or --perf, their diff, folded and pprof exports",
		Long: `Show the server's thread stacks captured during the measured windows of runs
made with qpslab run … --pmp N (every thread's stack every N seconds: where
threads run and where they wait) or --perf (on-CPU samples). Stacks are
collapsed as pt-pmp does (function names, argument lists dropped, identical
stacks counted) and merged over a label's runs of a test: the top stacks
with their count, share of the samples and thread state (R running, S
sleeping, D waiting for I/O), innermost frame first.

--format folded writes one test's stacks as folded lines (flamegraph.pl,
speedscope); --format pprof writes a pprof profile to --out (go tool pprof).
qpslab stacks diff compares two labels.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			secs, err := f.sections(cmd, args)
			if err != nil {
				return err
			}
			return report.StacksOut(cmd.OutOrStdout(), cmd.ErrOrStderr(), secs, f.top, f.format, out)
		},
	}
	f.add(c, "text", "json", "folded", "pprof")
	c.Flags().StringVar(&out, "out", "", "write the folded or pprof export to this file (default for folded: standard output)")

	var df stackFlags
	var threshold float64
	diff := &cobra.Command{
		Use:   "diff A B [--test T]",
		Short: "Compare two labels' stacks: what grew or shrank most, what is present in one and absent in the other",
		Long: `Compare the stacks of label A (the base) and label B, test by test: the
stacks whose share of the samples grew and shrank most, and the stacks
present in one and absent in the other. Thread states are merged: a stack is
its frames. Stacks below --threshold percent of the samples in both are left
out as noise.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if threshold < 0 || threshold >= 100 {
				return fmt.Errorf("--threshold %g: give a percentage of the samples from 0 to below 100", threshold)
			}
			secs, err := df.sections(cmd, args)
			if err != nil {
				return err
			}
			diffs, err := report.StackDiffsOf(secs, args[0], args[1], df.source, threshold, df.top)
			if err != nil {
				return err
			}
			return report.StackDiffs(cmd.OutOrStdout(), diffs, df.format)
		},
	}
	df.add(diff, "text", "json")
	diff.Flags().Float64Var(&threshold, "threshold", 100*report.DiffThreshold, "percent of the samples below which a stack is noise (in both labels)")
	c.AddCommand(diff)
	return c
}
