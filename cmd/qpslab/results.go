package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/recorder"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// selection is how labels are narrowed: --suite, --threads and --host;
// LABEL@HOST and --by-host put one label's hosts side by side.
type selection struct {
	suite   string
	threads int
	host    string
	stacks  bool // load the runs' stacks too (qpslab stacks)
	byHost  bool
}

// check refuses a --threads below 0 (0 means any).
func (s selection) check() error {
	if s.threads < 0 {
		return fmt.Errorf("--threads %d: give a thread count of 1 or more, or leave it out for all", s.threads)
	}
	return nil
}

func (s *selection) flags(c *cobra.Command) {
	c.Flags().IntVar(&s.threads, "threads", 0, "only results at this thread count")
	c.Flags().StringVar(&s.host, "host", "", "only results from this host (a hostname, or a host id prefix from qpslab labels)")
	c.Flags().StringVar(&s.suite, "suite", "", "only results of this suite (needed when the labels hold runs of several; qpslab suites lists them)")
}

// twoSets checks the labels of a comparison: BASE and OTHER…, or one
// label with --by-host.
func (s *selection) twoSets(_ *cobra.Command, args []string) error {
	if len(args) >= 2 || s.byHost && len(args) == 1 {
		return nil
	}
	return fmt.Errorf("give a BASE label and at least one OTHER (qpslab labels lists them), or one label with --by-host to put its hosts side by side")
}

// twoSetsFound refuses a comparison of one set (a label --by-host found on
// one host only).
func twoSetsFound(sets []analysis.Set) error {
	if len(sets) < 2 {
		return fmt.Errorf("only %s has results: a comparison needs two; see qpslab labels for the hosts of each label", sets[0].Label)
	}
	return nil
}

// byHostFlag offers --by-host (compare, metrics, report).
func (s *selection) byHostFlag(c *cobra.Command) {
	c.Flags().BoolVar(&s.byHost, "by-host", false, "each label once per host that ran it (LABEL@HOST), side by side: the same build.config on several hosts (docs/fleet.md)")
}

// load reads the results of each label: build.config, or
// build.config@HOST for one host's (a hostname or fleet agent name, or a
// host id prefix), and with --by-host each label once per host.
func (s selection) load(cmd *cobra.Command, st *store.Store, labels []string, samples bool) ([]analysis.Set, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	var sets []analysis.Set
	for _, l := range labels {
		name, hostSel := l, s.host
		if i := strings.LastIndex(l, "@"); i >= 0 {
			name, hostSel = l[:i], l[i+1:]
			if hostSel == "" {
				return nil, fmt.Errorf("label %q names no host after @: give build.config@HOST (a hostname, fleet agent name or host id prefix; qpslab labels lists them)", l)
			}
		}
		lb, err := analysis.ParseLabel(name)
		if err != nil {
			return nil, err
		}
		if s.byHost && name == l {
			hs, err := s.hostSets(cmd, st, lb, samples)
			if err != nil {
				return nil, err
			}
			sets = append(sets, hs...)
			continue
		}
		runs, err := st.Runs(cmd.Context(), store.Filter{Suite: s.suite, Build: lb.Build, Config: lb.Config, Threads: s.threads, Host: hostSel, Samples: samples, Stacks: samples || s.stacks, Engine: lb.EngineFilter()})
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			narrowed := ""
			if s.threads > 0 || s.host != "" || s.suite != "" {
				narrowed = " with these --suite/--threads/--host"
			}
			return nil, fmt.Errorf("no results for %s%s in %s: see qpslab labels", l, narrowed, st.Where())
		}
		// As runs are labelled (mariadb-system.myrocks, not …:innodb), with
		// the @HOST the label named.
		sets = append(sets, analysis.Set{Label: lb.String() + l[len(name):], Runs: runs})
	}
	return sets, nil
}

// hostSets is one set of label lb per host that ran it (narrowed by
// --host), named LABEL@HOST, in host name order: the hostname (a fleet
// agent's name), with its host id when two hosts share the name.
func (s selection) hostSets(cmd *cobra.Command, st *store.Store, lb analysis.Label, samples bool) ([]analysis.Set, error) {
	infos, err := st.Labels(cmd.Context())
	if err != nil {
		return nil, err
	}
	type hostOf struct{ name, id string }
	var hosts []hostOf
	names := map[string]int{}
	for _, li := range infos {
		if li.Label != lb.String() || (s.suite != "" && li.Suite != s.suite) {
			continue
		}
		for _, x := range li.Hosts {
			name, id, _ := strings.Cut(x, "/")
			if s.host != "" && name != s.host && !strings.HasPrefix(id, s.host) {
				continue
			}
			if !slices.Contains(hosts, hostOf{name, id}) {
				hosts = append(hosts, hostOf{name, id})
				names[name]++
			}
		}
	}
	sort.Slice(hosts, func(i, j int) bool {
		if hosts[i].name != hosts[j].name {
			return hosts[i].name < hosts[j].name
		}
		return hosts[i].id < hosts[j].id
	})
	var sets []analysis.Set
	for _, h := range hosts {
		sel, show := h.id, h.name
		if sel == "" || h.name == "" {
			sel, show = h.name+h.id, h.name+h.id
		} else if names[h.name] > 1 {
			show = h.name + "/" + h.id
		}
		runs, err := st.Runs(cmd.Context(), store.Filter{Suite: s.suite, Build: lb.Build, Config: lb.Config, Threads: s.threads, Host: sel, Samples: samples, Stacks: samples || s.stacks, Engine: lb.EngineFilter()})
		if err != nil {
			return nil, err
		}
		if len(runs) > 0 {
			sets = append(sets, analysis.Set{Label: lb.String() + "@" + show, Runs: runs})
		}
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("no results for %s on any host%s in %s: see qpslab labels", lb, map[bool]string{true: " with these --suite/--threads/--host", false: ""}[s.threads > 0 || s.host != "" || s.suite != ""], st.Where())
	}
	return sets, nil
}

func newLabelsCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "labels",
		Short: "List the stored result sets (build.config labels)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := readStore(cmd)
			if errors.Is(err, store.ErrNoStore) {
				fmt.Fprintf(cmd.OutOrStdout(), "no results yet (%v)\n", err)
				return nil
			}
			if err != nil {
				return err
			}
			defer st.Close()
			ls, err := st.Labels(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if format == "json" {
				e := json.NewEncoder(w)
				e.SetIndent("", " ")
				return e.Encode(ls)
			}
			if format != "text" {
				return fmt.Errorf("--format %s: use text or json", format)
			}
			return report.Labels(w, ls, st.Where())
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text or json")
	return c
}

func newCompareCmd() *cobra.Command {
	var sel selection
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
		Args: sel.twoSets,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(format); err != nil {
				return err
			}
			if err := sel.check(); err != nil {
				return err
			}
			st, err := readStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			// With the runs' seconds: a single run a side is judged by them.
			sets, err := sel.load(cmd, st, args, true)
			if err != nil {
				return err
			}
			if err := twoSetsFound(sets); err != nil {
				return err
			}
			cmp, err := analysis.Compare(sets[0], sets[1:], compareOptions(cmd, st, sets, groups))
			if err != nil {
				return err
			}
			if err := report.Compare(cmd.OutOrStdout(), cmp, format, report.IsTTY(cmd.OutOrStdout())); err != nil {
				return err
			}
			if format == "text" || format == "md" {
				report.SetHosts(cmd.OutOrStdout(), sets, store.HostID)
			}
			if err := stepTables(cmd, sets, cmp.Suite, format); err != nil {
				return err
			}
			if format == "text" || format == "md" {
				report.Effects(cmd.OutOrStdout(), analysis.Effects(sets), report.IsTTY(cmd.OutOrStdout()))
				if sw := analysis.Sweeps(sets); len(sw) > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
					report.Sweeps(cmd.OutOrStdout(), sw, format == "md")
				}
			}
			if html != "" {
				return writeHTML(cmd, st, sets, cmp, html)
			}
			return nil
		},
	}
	sel.flags(c)
	sel.byHostFlag(c)
	c.Flags().StringVar(&groups, "groups", "", "group layout the runs carry (sysbench: 5, the 2023-2024 layout, or 4, the 2025 one; default: the suite's first)")
	c.Flags().StringVar(&format, "format", "text", strings.Join(report.Formats, ", "))
	c.Flags().StringVar(&html, "html", "", "also write the HTML report to this file")
	return c
}

func newMetricsCmd() *cobra.Command {
	var sel selection
	var test, format string
	var counterList []string
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
them.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sel.check(); err != nil {
				return err
			}
			st, err := readStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			sets, err := sel.load(cmd, st, args, false)
			if err != nil {
				return err
			}
			choice := analysis.CounterChoice{}
			for _, n := range counterList {
				switch n = strings.ToLower(strings.TrimSpace(n)); n {
				case "", "default":
				case "all":
					choice.All = true
				default:
					choice.Names = append(choice.Names, n)
				}
			}
			tables, err := analysis.MetricsCounters(sets, test, choice)
			if err != nil {
				return err
			}
			if err := report.Metrics(cmd.OutOrStdout(), tables, format); err != nil {
				return err
			}
			if format == "text" || format == "md" {
				report.SetHosts(cmd.OutOrStdout(), sets, store.HostID)
			}
			return nil
		},
	}
	sel.flags(c)
	sel.byHostFlag(c)
	c.Flags().StringVar(&test, "test", "", "only tests matching this glob (e.g. update-inlist_range=100)")
	c.Flags().StringVar(&format, "format", "text", "text, md, csv, tsv or json (csv and tsv: the OS figures; json: the server's too)")
	c.Flags().StringSliceVar(&counterList, "counters", []string{"default"}, "the server counters shown: default (the curated set), all (every one recorded), or names to add")
	return c
}

func newReportCmd() *cobra.Command {
	var sel selection
	var groups, html string
	c := &cobra.Command{
		Use:   "report BASE OTHER... --html FILE",
		Short: "Write one self-contained HTML report: relative QPS charts, timelines, per-op metrics, hosts, config diff",
		Args:  sel.twoSets,
		RunE: func(cmd *cobra.Command, args []string) error {
			if html == "" {
				return fmt.Errorf("name the report file with --html FILE")
			}
			if err := sel.check(); err != nil {
				return err
			}
			st, err := readStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			sets, err := sel.load(cmd, st, args, true)
			if err != nil {
				return err
			}
			if err := twoSetsFound(sets); err != nil {
				return err
			}
			cmp, err := analysis.Compare(sets[0], sets[1:], compareOptions(cmd, st, sets, groups))
			if err != nil {
				return err
			}
			return writeHTML(cmd, st, sets, cmp, html)
		},
	}
	sel.flags(c)
	sel.byHostFlag(c)
	c.Flags().StringVar(&groups, "groups", "", "group layout the runs carry (sysbench: 5, the 2023-2024 layout, or 4, the 2025 one; default: the suite's first)")
	c.Flags().StringVar(&html, "html", "", "the report file to write")
	return c
}

// compareOptions are a comparison's options (report.CompareOptions).
func compareOptions(cmd *cobra.Command, st *store.Store, sets []analysis.Set, groups string) analysis.Options {
	return report.CompareOptions(cmd.Context(), st, sets, groups, cmd.ErrOrStderr())
}

// writeHTML writes the report of sets and their comparison (report.HTMLFile).
func writeHTML(cmd *cobra.Command, st *store.Store, sets []analysis.Set, cmp *analysis.Comparison, path string) error {
	return report.HTMLFile(cmd.Context(), st, sets, cmp, path, cmd.ErrOrStderr())
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

// buildFacts are what an import may say of its build.
type buildFacts struct{ version, commit, when string }

func (b *buildFacts) flags(c *cobra.Command) {
	c.Flags().StringVar(&b.version, "version", "", "the build's version, e.g. 10.6.17 (default: read from a build name such as ma100617_rel)")
	c.Flags().StringVar(&b.commit, "commit", "", "the build's source commit")
	c.Flags().StringVar(&b.when, "time", "", "when the results were measured: 2024-03-01, \"2024-03-01 12:00:00\" (UTC) or RFC 3339")
}

// versionRE is what --version accepts: a version as servers print theirs.
var versionRE = regexp.MustCompile(`^[0-9][0-9A-Za-z.+~_-]*$`)

func newImportCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "import",
		Short: "Import existing results: sysbench output, the reference harness's result folders, qpslab results files",
	}
	var label, test string
	var sbFacts, myFacts buildFacts
	sb := &cobra.Command{
		Use:   "sysbench FILE... --label BUILD.CONFIG --test TEST [--version V] [--commit C] [--time T]",
		Short: "Import sysbench 1.0 or 1.1 run output (one file per thread count or repeat)",
		Long:  "Import sysbench 1.0 or 1.1 run output, one file per thread count or repeat.\n\n" + importBuildLong,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := importSource(label, sbFacts)
			if err != nil {
				return err
			}
			if test == "" {
				return fmt.Errorf("name the test the output is of with --test (e.g. point-query_range=100; see qpslab run sysbench --list-tests)")
			}
			var runs []result.Run
			for _, f := range args {
				r, err := importer.Sysbench(f, src, test)
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
			return storeImport(cmd, runs)
		},
	}
	sb.Flags().StringVar(&label, "label", "", "the label to file the results under: build.config (build.config:ENGINE for a storage engine other than InnoDB)")
	sb.Flags().StringVar(&test, "test", "", "the test the output is of, as qpslab names it (point-query_range=100)")
	sbFacts.flags(sb)
	var mlabel string
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
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := importSource(mlabel, myFacts)
			if err != nil {
				return err
			}
			runs, err := importer.Mytools(args[0], src)
			if err != nil {
				return err
			}
			return storeImport(cmd, runs)
		},
	}
	my.Flags().StringVar(&mlabel, "label", "", "the label to file the results under: build.config (build.config:ENGINE for a storage engine other than InnoDB)")
	myFacts.flags(my)
	js := &cobra.Command{
		Use:   "results FILE...",
		Short: "Import qpslab results files (the JSON that qpslab run writes with --out)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var runs []result.Run
			for _, f := range args {
				rf, err := result.Read(f)
				if err != nil {
					return err
				}
				runs = append(runs, rf.Runs...)
			}
			if len(runs) == 0 {
				return fmt.Errorf("%s hold no runs", strings.Join(args, ", "))
			}
			return storeImport(cmd, runs)
		},
	}
	c.AddCommand(sb, my, js)
	return c
}

// importSource is where an import goes (--label) and what is known of its
// build (--version, --commit, --time; else what its name says).
func importSource(label string, b buildFacts) (importer.Source, error) {
	if label == "" {
		return importer.Source{}, fmt.Errorf("name the label to file the results under with --label build.config (e.g. ma100244_rel.cz11a_bee)")
	}
	l, err := analysis.ParseLabel(label)
	if err != nil {
		return importer.Source{}, err
	}
	src := importer.Source{Build: l.Build, Config: l.Config, Engine: l.Engine, Version: b.version, Commit: strings.TrimSpace(b.commit)}
	if b.version != "" && !versionRE.MatchString(b.version) {
		return importer.Source{}, fmt.Errorf("--version %q: give the build's version as its server prints it, e.g. 10.6.17 or 8.0.36", b.version)
	}
	if b.when != "" {
		if src.Time, err = history.ParseTime(b.when); err != nil {
			return importer.Source{}, fmt.Errorf("--time %q: give when the results were measured: 2024-03-01, \"2024-03-01 12:00:00\" (UTC), RFC 3339 or unix seconds", b.when)
		}
	}
	return src, nil
}

// storeImport stores every run of an import in one transaction, then says
// what version the build has, or that it has none.
func storeImport(cmd *cobra.Command, runs []result.Run) error {
	st, err := homeStore(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	src := "import:results" // qpslab's own results files
	if len(runs) > 0 && runs[0].Params["source"] != "" {
		src = runs[0].Params["source"]
	}
	skipped, err := st.Import(cmd.Context(), runs, store.Meta{Source: src})
	if err != nil {
		return err
	}
	build := ""
	if len(runs) > 0 && src != "import:results" {
		r := runs[0]
		if r.Version != "" {
			build = fmt.Sprintf(" (build %s: %s)", r.Build, strings.TrimSpace(r.Flavor+" "+r.Version))
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "imported %d result(s) into %s as %s%s\n", len(runs)-skipped, st.Where(), recorder.Labels(runs), build)
	if skipped > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "%d result(s) were already stored and were skipped\n", skipped)
	}
	if len(runs) > 0 && src != "import:results" && runs[0].Version == "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "build %s has no version (no --version, and its name is not the reference's, such as ma100244 or my8036): "+
			"its results come after the versioned builds' in history, in name order; import again with --version to place them\n", runs[0].Build)
	}
	return nil
}

// stepTables prints the step tables and buckets (report.StepReport).
func stepTables(cmd *cobra.Command, sets []analysis.Set, suiteName, format string) error {
	return report.StepReport(cmd.OutOrStdout(), sets, suiteName, format)
}
