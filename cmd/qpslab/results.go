package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/recorder"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// selFlags offers --threads, --host and --suite (and --by-host) into sel.
func selFlags(c *cobra.Command, sel *selector.Selection, byHost bool) {
	c.Flags().IntVar(&sel.Threads, "threads", 0, "only results at this thread count")
	c.Flags().StringVar(&sel.Host, "host", "", "only results from this host (a hostname, or a host id prefix from qpslab labels)")
	c.Flags().StringVar(&sel.Suite, "suite", "", "only results of this suite (needed when the labels hold runs of several; qpslab suites lists them)")
	if byHost {
		c.Flags().BoolVar(&sel.ByHost, "by-host", false, "each label once per host that ran it (LABEL@HOST), side by side: the same build.config on several hosts (docs/fleet.md)")
	}
}

// withStore runs f on the store of the home (or --store), read only.
func withStore(cmd *cobra.Command, f func(*store.Store) error) error {
	st, err := readStore(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st)
}

// content gives a stored config's text by its id (imports may have none).
func content(cmd *cobra.Command, st *store.Store) func(string) string {
	return func(id string) string { _, c, _ := st.Config(cmd.Context(), id); return c }
}

func newLabelsCmd() *cobra.Command {
	var format string
	c := &cobra.Command{Use: "labels", Short: "List the stored result sets (build.config labels)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := withStore(cmd, func(st *store.Store) error {
				ls, err := st.Labels(cmd.Context())
				if err != nil {
					return err
				} else if format == "json" {
					return report.JSON(cmd.OutOrStdout(), ls)
				}
				return report.Labels(cmd.OutOrStdout(), ls, st.Where())
			})
			if errors.Is(err, store.ErrNoStore) {
				fmt.Fprintf(cmd.OutOrStdout(), "no results yet (%v)\n", err)
				return nil
			}
			return err
		}}
	report.FormatFlag(c.Flags(), &format, "text", "json")
	return c
}

func newCompareCmd() *cobra.Command {
	var sel selector.Selection
	var groups, format, html string
	c := &cobra.Command{
		Use:   "compare BASE OTHER...",
		Short: "Compare builds test by test: the verdict, relative QPS with paired intervals and the noise floor, group statistics",
		Long: `Compare the results of OTHER labels with BASE's, test by test. A label is
build.config, or build.config:ENGINE for a storage engine other than InnoDB
(see qpslab labels). First the verdict: which tests changed beyond the
noise, by how much, with their intervals. Then each test shows BASE's QPS,
each OTHER's, and OTHER / BASE with its interval and a mark: + better and
- worse (significant at 0.05 and beyond the noise floor: this host's from
qpslab run --aa, else ±5 %; coloured), ~ no significant change, = inside the
floor, ? cannot tell. Then, per group of the reference's layout (--groups 5
or 4), the avg, median, min, max and stddev of the relative values, and
their geomean over all tests.

Runs one qpslab run made side by side pair round by round: the relative
value is the geometric mean of the per-round ratios, with a t-interval on
their logs and the Wilcoxon signed-rank test. Unpaired repeats are medians
tested with Mann-Whitney U, as benchstat does; one run a side is judged by
its own seconds (docs/results.md).

A label may name one host's results: build.config@HOST (a hostname, fleet
agent name or host id prefix); --by-host puts each label once per host that
ran it side by side (one label is then enough), with each host's fingerprint.

--format qps.abs and qps.rel write the reference's sum_qps_csv.sh TSV layout.`,
		Args: func(_ *cobra.Command, args []string) error { return sel.CompareArgs(args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(st *store.Store) error {
				cmp, sets, err := sel.Compare(cmd.Context(), st, args, groups, cmd.ErrOrStderr())
				if err == nil {
					err = report.Comparison(cmd.OutOrStdout(), sets, cmp, format)
				}
				if err == nil && html != "" {
					err = htmlReport(cmd, st, sets, cmp, html)
				}
				return err
			})
		},
	}
	selFlags(c, &sel, true)
	c.Flags().StringVar(&groups, "groups", "", "group layout the runs carry (sysbench: 5, the 2023-2024 layout, or 4, the 2025 one; default: the suite's first)")
	report.FormatFlag(c.Flags(), &format, "text", "md", "csv", "tsv", "json", "qps.abs", "qps.rel")
	c.Flags().StringVar(&html, "html", "", "also write the HTML report to this file")
	return c
}

// htmlReport writes the HTML report of sets and their comparison.
func htmlReport(cmd *cobra.Command, st *store.Store, sets []analysis.Set, cmp *analysis.Comparison, file string) error {
	if err := report.HTMLReport(file, sets, cmp, content(cmd, st), time.Now().UTC()); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "report: %s\n", file)
	return nil
}

func newMetricsCmd() *cobra.Command {
	var sel selector.Selection
	var test, format string
	var counters []string
	c := &cobra.Command{
		Use:   "metrics LABEL...",
		Short: "Cost per operation: cpu/o cs/o r/o rKB/o wKB/o o/s relative to the first label, CPU µs/op, and the server's own counters per op",
		Long: `Cost per operation of each test, per label, the first label the base: the
reference's per-op columns (cpu/o cs/o r/o rKB/o wKB/o o/s) and relative to
the base, CPU µs per op of the host, the server and the client, and the
server's own figures side by side: its memory (pss_mb counts shared pages
once, rss_mb sums them per process), its counters per op (NAME/o: the
change of its global status or statistics views over the window, divided
by the window's ops) and its levels (NAME.avg). By default the flavor's
curated counters are shown (those zero in every run left out); --counters
all shows every one the runs recorded (qpslab run --counters all), or name
them. --format csv and tsv give the OS figures, json the server's too.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, func(st *store.Store) error {
				sets, err := sel.Sets(cmd.Context(), st, args)
				if err != nil {
					return err
				}
				tables, err := analysis.MetricsCounters(sets, test, analysis.ParseCounterChoice(counters))
				if err != nil {
					return err
				}
				return report.MetricsOf(cmd.OutOrStdout(), sets, tables, format)
			})
		},
	}
	selFlags(c, &sel, true)
	c.Flags().StringVar(&test, "test", "", "only tests matching this glob (e.g. update-inlist_range=100)")
	report.FormatFlag(c.Flags(), &format, "text", "md", "csv", "tsv", "json")
	c.Flags().StringSliceVar(&counters, "counters", []string{"default"}, "the server counters shown: default (the curated set), all (every one recorded), or names to add")
	return c
}

func newReportCmd() *cobra.Command {
	var sel selector.Selection
	var groups, html string
	c := &cobra.Command{
		Use:   "report BASE OTHER... --html FILE",
		Short: "Write one self-contained HTML report: relative QPS charts, timelines, per-op metrics, hosts, config diff",
		Args:  func(_ *cobra.Command, args []string) error { return sel.CompareArgs(args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			if html == "" {
				return fmt.Errorf("name the report file with --html FILE")
			}
			return withStore(cmd, func(st *store.Store) error {
				cmp, sets, err := sel.Compare(cmd.Context(), st, args, groups, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				return htmlReport(cmd, st, sets, cmp, html)
			})
		},
	}
	selFlags(c, &sel, true)
	c.Flags().StringVar(&groups, "groups", "", "group layout the runs carry (sysbench: 5, the 2023-2024 layout, or 4, the 2025 one; default: the suite's first)")
	c.Flags().StringVar(&html, "html", "", "the report file to write")
	return c
}

// importBuildLong is what the sysbench and mytools imports say of the build.
const importBuildLong = `The build's version orders its results in history (qpslab detect, export):
--version gives it; without it, a build named the reference harness's way
gives its flavor and version (ma100433_rel is MariaDB 10.4.33, ma110401 11.4.1,
my8036 MySQL 8.0.36, my5651 5.6.51, pg1222 PostgreSQL 12.22). A build with no
version is said so, and its results come after the versioned builds' in
history, in name order (ma9 < ma10). --commit and --time record the build's
commit and when the results were measured (otherwise unknown: the files do
not say).`

// importFlags are what an import says of its label and build.
type importFlags struct{ label, version, commit, when string }

func (b *importFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&b.label, "label", "", "the label to file the results under: build.config (build.config:ENGINE for a storage engine other than InnoDB)")
	c.Flags().StringVar(&b.version, "version", "", "the build's version, e.g. 10.6.17 (default: read from a build name such as ma100617_rel)")
	c.Flags().StringVar(&b.commit, "commit", "", "the build's source commit")
	c.Flags().StringVar(&b.when, "time", "", "when the results were measured: 2024-03-01, \"2024-03-01 12:00:00\" (UTC) or RFC 3339")
}

// run reads the import's runs with read (src nil: a results file, which
// names its own labels) and stores them.
func (b *importFlags) run(read func(src *importer.Source, args []string) ([]result.Run, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var src *importer.Source
		if b != nil {
			s, err := selector.Source(b.label, b.version, b.commit, b.when, func(n string) string { return "--" + n + " " })
			if err != nil {
				return err
			}
			src = &s
		}
		runs, err := read(src, args)
		if err != nil {
			return err
		}
		st, err := homeStore(cmd)
		if err != nil {
			return err
		}
		defer st.Close()
		return recorder.Import(cmd.Context(), st, runs, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
}

func newImportCmd() *cobra.Command {
	c := &cobra.Command{Use: "import", Short: "Import existing results: sysbench output, the reference harness's result folders, qpslab results files"}
	var sbf, myf importFlags
	var test string
	sb := &cobra.Command{
		Use:   "sysbench FILE... --label BUILD.CONFIG --test TEST [--version V] [--commit C] [--time T]",
		Short: "Import sysbench 1.0 or 1.1 run output (one file per thread count or repeat)",
		Long:  "Import sysbench 1.0 or 1.1 run output, one file per thread count or repeat.\n\n" + importBuildLong,
		Args:  cobra.MinimumNArgs(1),
		RunE: sbf.run(func(src *importer.Source, files []string) ([]result.Run, error) {
			if test == "" {
				return nil, fmt.Errorf("name the test the output is of with --test (e.g. point-query_range=100; see qpslab run sysbench --list-tests)")
			}
			return importer.SysbenchFiles(files, *src, test)
		}),
	}
	sbf.add(sb)
	sb.Flags().StringVar(&test, "test", "", "the test the output is of, as qpslab names it (point-query_range=100)")
	my := &cobra.Command{
		Use:   "mytools DIR --label BUILD.CONFIG [--version V] [--commit C] [--time T]",
		Short: "Import a result folder of the reference harness: sysbench or the Insert Benchmark",
		Long: `Import a result folder of the reference harness (mdcallag/mytools), told
apart by its files:

  sysbench          bench/sysbench.lua/run.sh's sb.r.qps.<test>.range<R>.pk<P>
                    (and sb.r.trx/rtavg/rt95/rtmax), sb.o.<...>.dop<N>, sb.met.<...>.dop<N>
  Insert Benchmark  bench/ibench/iq.sh's step folders l.i0, l.x, l.i1, l.i2,
                    qr<R>.L<k>, qp<R>.L<k>, each with np.sh's o.res.dop<N> and
                    its clients' o.ib.dop<N>.<n>

The runs are filed under --label as the sysbench or ibench suite's (see
docs/results.md).

` + importBuildLong,
		Args: cobra.ExactArgs(1),
		RunE: myf.run(func(src *importer.Source, dirs []string) ([]result.Run, error) {
			return importer.Mytools(dirs[0], *src)
		}),
	}
	myf.add(my)
	js := &cobra.Command{
		Use:   "results FILE...",
		Short: "Import qpslab results files (the JSON that qpslab run writes with --out)",
		Args:  cobra.MinimumNArgs(1),
		RunE:  (*importFlags)(nil).run(func(_ *importer.Source, files []string) ([]result.Run, error) { return importer.ResultsFiles(files) }),
	}
	c.AddCommand(sb, my, js)
	return c
}
