package main

// Results and analysis: labels, compare, report, metrics, import, detect,
// export, stacks, runs and store.

import (
	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/curate"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/spf13/cobra"
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
	c := jobCmd("metrics LABEL...", "Cost per operation: cpu/o cs/o r/o rKB/o wKB/o o/s relative to the first label, "+
		"CPU µs/op, and the server's own counters per op", cobra.MinimumNArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			return e.WithSets(cmd.Context(), sel, args, func(sets []analysis.Set) error {
				return report.MetricsOf(e.Out, sets, test, analysis.ParseCounterChoice(counters), format)
			})
		})
	selFlags(c, &sel, true)
	c.Flags().StringVar(&test, "test", "", "only tests matching this glob (e.g. update-inlist_range=100)")
	report.FormatFlag(c.Flags(), &format, "text", "md", "csv", "tsv", "json")
	c.Flags().StringSliceVar(&counters, "counters", []string{"default"}, "the server counters shown: default (the "+
		"curated set), all (every one recorded: qpslab run --counters all), or names to add")
	return c
}

// factsFlags offers the facts an import is told into f.
func factsFlags(c *cobra.Command, f *app.ImportFacts) {
	c.Flags().StringVar(&f.Label, "label", "", "the label to file the results under: build.config "+
		"(build.config:ENGINE for a storage engine other than InnoDB)")
	c.Flags().StringVar(&f.Version, "version", "", "the build's version, e.g. 10.6.17 (default: read from a build "+
		"name such as ma100617_rel)")
	c.Flags().StringVar(&f.Commit, "commit", "", "the build's source commit")
	c.Flags().StringVar(&f.Time, "time", "", "when the results were measured: 2024-03-01, \"2024-03-01 12:00:00\" "+
		"(UTC) or RFC 3339 (default: unknown)")
}

func newImportCmd() *cobra.Command {
	c := &cobra.Command{Use: "import", Short: "Import existing results: sysbench output, the reference harness's " +
		"result folders, qpslab results files"}
	var sf, mf app.ImportFacts
	var test string
	sb := jobCmd("sysbench FILE... --label BUILD.CONFIG --test TEST [--version V] [--commit C] [--time T]",
		"Import sysbench 1.0 or 1.1 run output (one file per thread count or repeat)", cobra.MinimumNArgs(1),
		func(cmd *cobra.Command, e app.Env, files []string) error {
			return app.ImportSysbench(cmd.Context(), e, files, sf, test)
		})
	factsFlags(sb, &sf)
	sb.Flags().StringVar(&test, "test", "", "the test the output is of, as qpslab names it (point-query_range=100)")
	my := jobCmd("mytools DIR --label BUILD.CONFIG [--version V] [--commit C] [--time T]", "Import a result "+
		"folder of the reference harness: sysbench or the Insert Benchmark", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, dirs []string) error {
			return app.ImportMytools(cmd.Context(), e, dirs[0], mf)
		})
	factsFlags(my, &mf)
	js := jobCmd("results FILE...", "Import qpslab results files (the JSON that qpslab run writes with --out)",
		cobra.MinimumNArgs(1), func(cmd *cobra.Command, e app.Env, files []string) error {
			return app.ImportResults(cmd.Context(), e, files)
		})
	c.AddCommand(sb, my, js)
	return c
}

// historyFlags offers the flags that select series into q.
func historyFlags(c *cobra.Command, q *selector.HistoryQuery) {
	selFlags(c, &q.Selection, false)
	c.Flags().StringVar(&q.Test, "test", "", "only tests whose label matches this glob (e.g. 'update-*')")
	c.Flags().StringSliceVar(&q.Metrics, "metric", []string{"qps"},
		"metric(s): "+result.MetricNames()+" (KIND is an operation kind, e.g. insert/s)")
	c.Flags().StringVar(&q.Config, "config", "", "only results of this config name")
}

func newDetectCmd() *cobra.Command {
	var q selector.DetectQuery
	var format string
	c := jobCmd("detect", "Find change points over the stored history: where each regression or improvement arrived",
		cobra.NoArgs, func(cmd *cobra.Command, e app.Env, _ []string) error {
			return app.Detect(cmd.Context(), e, q, cmd.Flags().Changed, format)
		})
	historyFlags(c, &q.History)
	def := changepoint.Options{Window: changepoint.DefaultWindow, PValue: changepoint.DefaultPValue,
		MinSegment: changepoint.DefaultMinSegment}
	o := &q.Options
	c.Flags().Float64Var(&o.PValue, "pvalue", def.PValue, "significance of a change point (Student t-test)")
	c.Flags().IntVar(&o.Window, "window", def.Window, "points per sliding window")
	c.Flags().Float64Var(&o.MinMagnitude, "min-magnitude", def.MinMagnitude, "smallest relative change reported "+
		"(0.05 = 5 %)")
	c.Flags().IntVar(&o.MinSegment, "min-segment", def.MinSegment, "fewest points on each side of a change point (a "+
		"spike is shorter)")
	c.Flags().StringVar(&q.SettingsFile, "settings", "", "settings file with per-test overrides (default "+
		"<home>/detect.yaml, if present)")
	c.Flags().StringVar(&q.Method, "method", string(changepoint.Calibrated), "how a change point's significance is "+
		"judged: calibrated, or otava (Otava 0.8's t-test: hundreds of times the false alarms on noise, "+
		"docs/changepoint.md)")
	c.Flags().StringVar(&q.FailOn, "fail-on", "", "CI gate: exit with status 3 when the newest build brings a "+
		"regression (of N % or more): regression or regression:N%")
	report.FormatFlag(c.Flags(), &format, "text", "md", "csv", "tsv", "json")
	c.Flags().StringVar(&q.Input, "input", "", "read this history file instead of the store: .csv (Otava) or .json "+
		"(Nyrkiö)")
	c.Flags().StringVar(&q.TimeColumn, "time-column", "time", "with --input .csv: the time column")
	c.Flags().StringSliceVar(&q.Lower, "lower-is-better", nil, "with --input: the metrics where lower is better "+
		"(default: guessed from names such as latency, p99, cpu)")
	return c
}

func newExportCmd() *cobra.Command {
	var q selector.HistoryQuery
	c := jobCmd("export otava-csv|nyrkio-json DIR", "Export the stored history as Otava CSV files (with otava.yaml) "+
		"or Nyrkiö JSON uploads", cobra.ExactArgs(2),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			return app.Export(cmd.Context(), e, q, args[0], args[1])
		})
	historyFlags(c, &q)
	return c
}

// stacksCmd is stacks or stacks diff: the labels' runs with their stacks,
// selected by the flags into q, handed to show.
func stacksCmd(use, short string, args cobra.PositionalArgs, q *report.StackQuery,
	show func(*cobra.Command, []analysis.Set, []string) error, formats ...string) *cobra.Command {
	sel := selector.Selection{Stacks: true}
	c := jobCmd(use, short, args, func(cmd *cobra.Command, e app.Env, args []string) error {
		return e.WithSets(cmd.Context(), sel, args, func(sets []analysis.Set) error { return show(cmd, sets, args) })
	})
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

// newRunsCmd is qpslab runs hide|unhide|delete RUN-ID...: internal/curate,
// as the API's admin endpoints do it.
func newRunsCmd() *cobra.Command {
	c := &cobra.Command{Use: "runs", Short: "Hide, unhide or delete stored runs by id, with an audit line of who and " +
		"when"}
	for _, a := range curate.Actions {
		c.AddCommand(jobCmd(a.Name+" RUN-ID...", a.Short, cobra.MinimumNArgs(1),
			func(cmd *cobra.Command, e app.Env, ids []string) error {
				return e.WithStore(cmd.Context(), func(st *store.Store) error {
					return curate.Command(cmd.Context(), st, a.Name, ids, e.Out)
				})
			}))
	}
	return c
}

// newStoreCmd is qpslab store check.
func newStoreCmd() *cobra.Command {
	var o app.StoreCheckOptions
	check := jobCmd("check", "Check the results store for damage (SQLite's quick check; PostgreSQL's page "+
		"checksums), and say the way back", cobra.NoArgs, func(cmd *cobra.Command, e app.Env, _ []string) error {
		return app.StoreCheck(cmd.Context(), e, o)
	})
	check.Flags().BoolVar(&o.Reindex, "reindex", false, "rebuild the damaged indexes from the tables, where only "+
		"indexes are damaged (nothing is lost), and check again")
	check.Flags().StringVar(&o.Salvage, "salvage", "", "copy what still reads of a damaged SQLite store into a new "+
		"store at this file (the damaged one is only read)")
	c := &cobra.Command{Use: "store", Short: "Look after the results store: check it for damage"}
	c.AddCommand(check)
	return c
}
