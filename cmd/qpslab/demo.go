package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/store"
)

func newDemoCmd() *cobra.Command {
	var o jobs.DemoOptions
	c := jobCmd("demo", "The seeds' experiment in miniature: MariaDB 10.2.11 against 10.11, all 42 sysbench tests, compared",
		cobra.NoArgs, func(cmd *cobra.Command, e jobs.Env, _ []string) error {
			o.Load = func(_ context.Context, st *store.Store, suite string, labels []string) ([]analysis.Set, error) {
				return selection{suite: suite}.load(cmd, st, labels, true)
			}
			return jobs.Demo(cmd.Context(), e, o)
		})
	c.Flags().IntVar(&o.Rows, "rows", 100_000, "rows in the table")
	c.Flags().Float64Var(&o.Secs, "secs", 1, "seconds per test")
	c.Flags().IntVar(&o.Repeat, "repeat", 2, "repeats of every test on both builds (each one's slices alternating)")
	c.Flags().StringVar(&o.HTML, "html", "", "the report file (default <home>/reports/demo-TIME.html)")
	c.Flags().StringVar(&o.Tests, "tests", "", "only these tests (globs, as qpslab run sysbench --tests); default all 42")
	c.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "print what happens and each run's figures as it ends")
	return c
}
