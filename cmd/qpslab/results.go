package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// selFlags offers --threads, --host, --suite (and --by-host) into sel.
func selFlags(c *cobra.Command, sel *selector.Selection, byHost bool) {
	c.Flags().IntVar(&sel.Threads, "threads", 0, "only results at this thread count")
	c.Flags().StringVar(&sel.Host, "host", "", "only results from this host (a hostname, or a host id prefix from "+
		"qpslab labels)")
	c.Flags().StringVar(&sel.Suite, "suite", "", "only results of this suite (qpslab suites lists them; needed when "+
		"labels hold runs of several)")
	if byHost {
		c.Flags().BoolVar(&sel.ByHost, "by-host", false, "each label once per host that ran it (LABEL@HOST), side by "+
			"side: the same build.config on several hosts, or one machine in several states (boost, governor…), "+
			"which are never pooled (docs/host.md)")
	}
}

func newLabelsCmd() *cobra.Command {
	var format string
	c := jobCmd("labels", "List the stored result sets (build.config labels)", cobra.NoArgs,
		func(cmd *cobra.Command, e app.Env, _ []string) error { return app.Labels(cmd.Context(), e, format) })
	report.FormatFlag(c.Flags(), &format, "text", "json")
	return c
}

// comparisonCmd is compare (the tables, and with --html the report) or report (the HTML report only, to --html).
func comparisonCmd(use, short string, tables bool) *cobra.Command {
	o := app.CompareOptions{Sel: selector.Selection{LayoutFiles: true}, Tables: tables}
	sel := &o.Sel
	c := jobCmd(use, short, func(_ *cobra.Command, args []string) error { return sel.CompareArgs(args) },
		func(cmd *cobra.Command, e app.Env, args []string) error {
			return app.Compare(cmd.Context(), e, args, o)
		})
	selFlags(c, sel, true)
	c.Flags().StringVar(&o.Groups, "groups", "",
		"group layout ("+result.LayoutsHelp()+"; default: the suite's first), "+
			"or a YAML layout file's path (docs/results.md)")
	c.Flags().StringVar(&o.HTML, "html", "", "write the HTML report to this file")
	if tables {
		report.FormatFlag(c.Flags(), &o.Format, "text", "md", "csv", "tsv", "json", "qps.abs", "qps.rel")
		report.SummaryFlag(c.Flags(), &o.Summary)
	}
	return c
}

func newMetricsCmd() *cobra.Command {
	var sel selector.Selection
	var test, format string
	var counters []string
	run := func(cmd *cobra.Command, args []string) error {
		return withStore(cmd, func(st *store.Store) error {
			sets, err := sel.Sets(cmd.Context(), st, args)
			if err == nil {
				err = report.MetricsOf(cmd.OutOrStdout(), sets, test, analysis.ParseCounterChoice(counters), format)
			}
			return err
		})
	}
	c := &cobra.Command{Use: "metrics LABEL...", Short: "Cost per operation: cpu/o cs/o r/o rKB/o wKB/o o/s relative " +
		"to the first label, CPU µs/op, and the server's own counters per op", Args: cobra.MinimumNArgs(1), RunE: run}
	selFlags(c, &sel, true)
	c.Flags().StringVar(&test, "test", "", "only tests matching this glob (e.g. update-inlist_range=100)")
	report.FormatFlag(c.Flags(), &format, "text", "md", "csv", "tsv", "json")
	c.Flags().StringSliceVar(&counters, "counters", []string{"default"}, "the server counters shown: default (the "+
		"curated set), all (every one recorded: qpslab run --counters all), or names to add")
	return c
}

// importCmd is an import of files: read gives their runs (src nil for a
// results file, which names its own labels and builds), until ctx ends.
func importCmd(use, short string, args cobra.PositionalArgs, facts bool,
	read func(cmd *cobra.Command, src *importer.Source, args []string) ([]result.Run, error)) *cobra.Command {
	var label, version, commit, when string
	c := jobCmd(use, short, args, func(cmd *cobra.Command, e app.Env, args []string) error {
		var src *importer.Source
		if facts {
			s, err := selector.Source(label, version, commit, when, func(n string) string { return "--" + n + " " })
			if err != nil {
				return err
			}
			src = &s
		}
		runs, err := read(cmd, src, args)
		return app.Import(cmd.Context(), e, runs, err)
	})
	if facts {
		c.Flags().StringVar(&label, "label", "", "the label to file the results under: build.config "+
			"(build.config:ENGINE for a storage engine other than InnoDB)")
		c.Flags().StringVar(&version, "version", "", "the build's version, e.g. 10.6.17 (default: read from a build "+
			"name such as ma100617_rel)")
		c.Flags().StringVar(&commit, "commit", "", "the build's source commit")
		c.Flags().StringVar(&when, "time", "", "when the results were measured: 2024-03-01, \"2024-03-01 12:00:00\" "+
			"(UTC) or RFC 3339 (default: unknown)")
	}
	return c
}

func newImportCmd() *cobra.Command {
	c := &cobra.Command{Use: "import", Short: "Import existing results: sysbench output, the reference harness's " +
		"result folders, qpslab results files"}
	var test string
	sb := importCmd("sysbench FILE... --label BUILD.CONFIG --test TEST [--version V] [--commit C] [--time T]",
		"Import sysbench 1.0 or 1.1 run output (one file per thread count or repeat)",
		cobra.MinimumNArgs(1), true,
		func(c *cobra.Command, src *importer.Source, files []string) ([]result.Run, error) {
			return importer.SysbenchFiles(c.Context(), files, *src, test)
		})
	sb.Flags().StringVar(&test, "test", "", "the test the output is of, as qpslab names it (point-query_range=100)")
	my := importCmd("mytools DIR --label BUILD.CONFIG [--version V] [--commit C] [--time T]", "Import a result "+
		"folder of the reference harness: sysbench or the Insert Benchmark", cobra.ExactArgs(1), true,
		func(c *cobra.Command, src *importer.Source, dirs []string) ([]result.Run, error) {
			return importer.Mytools(c.Context(), dirs[0], *src)
		})
	js := importCmd("results FILE...", "Import qpslab results files (the JSON that qpslab run writes with --out)",
		cobra.MinimumNArgs(1), false,
		func(c *cobra.Command, _ *importer.Source, files []string) ([]result.Run, error) {
			return importer.ResultsFiles(c.Context(), files)
		})
	c.AddCommand(sb, my, js)
	return c
}
