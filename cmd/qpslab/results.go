package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// selFlags offers --threads, --host, --suite (and --by-host) into sel.
func selFlags(c *cobra.Command, sel *selector.Selection, byHost bool) {
	c.Flags().IntVar(&sel.Threads, "threads", 0, "")
	c.Flags().StringVar(&sel.Host, "host", "", "")
	c.Flags().StringVar(&sel.Suite, "suite", "", "")
	if byHost {
		c.Flags().BoolVar(&sel.ByHost, "by-host", false, "")
	}
}

func newLabelsCmd() *cobra.Command {
	var format string
	c := jobCmd("labels", cobra.NoArgs,
		func(cmd *cobra.Command, e jobs.Env, _ []string) error { return jobs.Labels(cmd.Context(), e, format) })
	report.FormatFlag(c.Flags(), &format, "text", "json")
	return c
}

// comparisonCmd is compare (the tables, and with --html the report) or report (the HTML report only, to --html).
func comparisonCmd(use string, tables bool) *cobra.Command {
	o := jobs.CompareOptions{Sel: selector.Selection{LayoutFiles: true}, Tables: tables}
	sel := &o.Sel
	c := jobCmd(use, func(_ *cobra.Command, args []string) error { return sel.CompareArgs(args) },
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			return jobs.Compare(cmd.Context(), e, args, o)
		})
	selFlags(c, sel, true)
	c.Flags().StringVar(&o.Groups, "groups", "",
		"group layout ("+result.LayoutsHelp()+"; default: the suite's first), "+
			"or a YAML layout file's path (docs/results.md)")
	c.Flags().StringVar(&o.HTML, "html", "", "")
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
	c := &cobra.Command{Use: "metrics LABEL...", Args: cobra.MinimumNArgs(1), RunE: run}
	selFlags(c, &sel, true)
	c.Flags().StringVar(&test, "test", "", "")
	report.FormatFlag(c.Flags(), &format, "text", "md", "csv", "tsv", "json")
	c.Flags().StringSliceVar(&counters, "counters", []string{"default"}, "")
	return c
}

// importCmd is an import of files: read gives their runs (src nil for a
// results file, which names its own labels and builds).
func importCmd(use string, args cobra.PositionalArgs, facts bool,
	read func(src *importer.Source, args []string) ([]result.Run, error)) *cobra.Command {
	var label, version, commit, when string
	c := jobCmd(use, args, func(cmd *cobra.Command, e jobs.Env, args []string) error {
		var src *importer.Source
		if facts {
			s, err := selector.Source(label, version, commit, when, func(n string) string { return "--" + n + " " })
			if err != nil {
				return err
			}
			src = &s
		}
		runs, err := read(src, args)
		return jobs.Import(cmd.Context(), e, runs, err)
	})
	if facts {
		c.Flags().StringVar(&label, "label", "", "")
		c.Flags().StringVar(&version, "version", "", "")
		c.Flags().StringVar(&commit, "commit", "", "")
		c.Flags().StringVar(&when, "time", "", "")
	}
	return c
}

func newImportCmd() *cobra.Command {
	c := &cobra.Command{Use: "import"}
	var test string
	sb := importCmd("sysbench FILE... --label BUILD.CONFIG --test TEST [--version V] [--commit C] [--time T]",
		cobra.MinimumNArgs(1), true,
		func(src *importer.Source, files []string) ([]result.Run, error) {
			return importer.SysbenchFiles(files, *src, test)
		})
	sb.Flags().StringVar(&test, "test", "", "")
	my := importCmd("mytools DIR --label BUILD.CONFIG [--version V] [--commit C] [--time T]", cobra.ExactArgs(1), true,
		func(src *importer.Source, dirs []string) ([]result.Run, error) {
			return importer.Mytools(dirs[0], *src)
		})
	js := importCmd("results FILE...", cobra.MinimumNArgs(1), false,
		func(_ *importer.Source, files []string) ([]result.Run, error) { return importer.ResultsFiles(files) })
	c.AddCommand(sb, my, js)
	return c
}
