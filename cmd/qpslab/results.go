package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// storeDSN is the --store flag (all commands).
var storeDSN string

func addStoreFlag(root *cobra.Command) {
	root.PersistentFlags().StringVar(&storeDSN, "store", os.Getenv("QPSLAB_STORE"),
		"results store: a SQLite file (default <home>/qpslab.db) or postgres://user@host/db (the password is never stored); $QPSLAB_STORE")
}

func openStore(cmd *cobra.Command, h home.Home) (*store.Store, error) {
	return store.Open(cmd.Context(), storeDSN, filepath.Join(h.Root, "qpslab.db"))
}

// homeStore opens the store of the qpslab home (or --store).
func homeStore(cmd *cobra.Command) (*store.Store, error) {
	h, err := resolveHome()
	if err != nil {
		return nil, err
	}
	return openStore(cmd, h)
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// selection is how labels are narrowed: --threads and --host.
type selection struct {
	threads int
	host    string
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
}

// load reads the results of each label.
func (s selection) load(cmd *cobra.Command, st *store.Store, labels []string, samples bool) ([]analysis.Set, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	var sets []analysis.Set
	for _, l := range labels {
		lb, err := analysis.ParseLabel(l)
		if err != nil {
			return nil, err
		}
		runs, err := st.Runs(cmd.Context(), store.Filter{Build: lb.Build, Config: lb.Config, Threads: s.threads, Host: s.host, Samples: samples})
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			narrowed := ""
			if s.threads > 0 || s.host != "" {
				narrowed = " with these --threads/--host"
			}
			return nil, fmt.Errorf("no results for %s%s in %s: see qpslab labels", l, narrowed, st.Where())
		}
		sets = append(sets, analysis.Set{Label: l, Runs: runs})
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
			st, err := homeStore(cmd)
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
			if len(ls) == 0 {
				fmt.Fprintf(w, "no results in %s yet: run qpslab run sysbench, or qpslab import\n", st.Where())
				return nil
			}
			fmt.Fprintf(w, "%-40s %5s %5s %-12s %-24s %-20s %s\n", "LABEL", "RUNS", "TESTS", "THREADS", "STATUS", "LAST", "HOSTS / SOURCES")
			for _, l := range ls {
				thr := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(l.Threads)), ","), "[]")
				last := l.Last
				if len(last) > 19 {
					last = last[:19]
				}
				fmt.Fprintf(w, "%-40s %5d %5d %-12s %-24s %-20s %s / %s\n", l.Label, l.Runs, l.Tests, thr, l.Status, last, strings.Join(l.Hosts, " "), strings.Join(l.Sources, " "))
			}
			return nil
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
		Short: "Compare builds test by test: absolute and relative QPS, group statistics, significance over repeats",
		Long: `Compare the results of OTHER labels with BASE's, test by test. A label is
build.config (see qpslab labels). Each test shows BASE's QPS, each OTHER's,
and OTHER / BASE with two decimals: ≤ 0.95 is red, ≥ 1.05 green. Then, per
group of the reference's layout (--groups 5 or 4), the avg, median, min, max
and stddev of the relative values, and their geomean over all tests.

With repeats (qpslab run --repeat K), values are medians with a 95 %
interval, and "~" marks a change that a Mann-Whitney U test does not find
significant (p ≥ 0.05), as benchstat does.

--format qps.abs and qps.rel write the reference's sum_qps_csv.sh TSV layout.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := report.CheckFormat(format); err != nil {
				return err
			}
			st, err := homeStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			sets, err := sel.load(cmd, st, args, html != "")
			if err != nil {
				return err
			}
			cmp, err := analysis.Compare(sets[0], sets[1:], analysis.Options{Layout: groups})
			if err != nil {
				return err
			}
			if err := report.Compare(cmd.OutOrStdout(), cmp, format, isTTY(cmd.OutOrStdout())); err != nil {
				return err
			}
			if html != "" {
				return writeHTML(cmd, st, sets, cmp, html)
			}
			return nil
		},
	}
	sel.flags(c)
	c.Flags().StringVar(&groups, "groups", "5", "group layout: 5 (2023-2024) or 4 (2025)")
	c.Flags().StringVar(&format, "format", "text", "text, md, csv, tsv, json, qps.abs or qps.rel")
	c.Flags().StringVar(&html, "html", "", "also write the HTML report to this file")
	return c
}

func newMetricsCmd() *cobra.Command {
	var sel selection
	var test, format string
	c := &cobra.Command{
		Use:   "metrics LABEL...",
		Short: "Hardware cost per operation: cpu/o cs/o r/o rKB/o wKB/o o/s, relative to the first label, and CPU µs/op",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := homeStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			sets, err := sel.load(cmd, st, args, false)
			if err != nil {
				return err
			}
			tables, err := analysis.Metrics(sets, test)
			if err != nil {
				return err
			}
			return report.Metrics(cmd.OutOrStdout(), tables, format)
		},
	}
	sel.flags(c)
	c.Flags().StringVar(&test, "test", "", "only tests matching this glob (e.g. update-inlist_range=100)")
	c.Flags().StringVar(&format, "format", "text", "text, md, csv, tsv or json")
	return c
}

func newReportCmd() *cobra.Command {
	var sel selection
	var groups, html string
	c := &cobra.Command{
		Use:   "report BASE OTHER... --html FILE",
		Short: "Write one self-contained HTML report: relative QPS charts, timelines, per-op metrics, hosts, config diff",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if html == "" {
				return fmt.Errorf("name the report file with --html FILE")
			}
			st, err := homeStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			sets, err := sel.load(cmd, st, args, true)
			if err != nil {
				return err
			}
			cmp, err := analysis.Compare(sets[0], sets[1:], analysis.Options{Layout: groups})
			if err != nil {
				return err
			}
			return writeHTML(cmd, st, sets, cmp, html)
		},
	}
	sel.flags(c)
	c.Flags().StringVar(&groups, "groups", "5", "group layout: 5 (2023-2024) or 4 (2025)")
	c.Flags().StringVar(&html, "html", "", "the report file to write")
	return c
}

// writeHTML gathers the report's model from the sets (loaded with samples)
// and the store, and writes it.
func writeHTML(cmd *cobra.Command, st *store.Store, sets []analysis.Set, cmp *analysis.Comparison, path string) error {
	m := report.Model{Title: "qpslab: " + strings.Join(cmp.Others, ", ") + " against " + cmp.Base, Generated: time.Now().UTC(), Comparison: cmp}
	m.Metrics, _ = analysis.Metrics(sets, "") // no metrics (imports without sb.met) is not an error here
	latest := make([]map[string]result.Run, len(sets))
	hosts := map[string]*report.Host{}
	var hostOrder []string
	for i, s := range sets {
		latest[i] = map[string]result.Run{}
		for _, r := range s.Runs {
			latest[i][fmt.Sprintf("%s/%d", r.Test, r.Threads)] = r // runs come oldest first
			if len(r.Host) == 0 {
				continue
			}
			id, err := store.HostID(r.Host)
			if err != nil {
				continue
			}
			if _, ok := hosts[id]; !ok {
				hosts[id] = &report.Host{Fingerprint: r.Host}
				hostOrder = append(hostOrder, id)
			}
			if hs := hosts[id]; len(hs.Labels) == 0 || hs.Labels[len(hs.Labels)-1] != s.Label {
				hs.Labels = append(hs.Labels, s.Label)
			}
		}
		last := s.Runs[len(s.Runs)-1]
		_, content, _ := st.Config(cmd.Context(), last.Config) // imports may have no content
		m.Configs = append(m.Configs, report.Config{Label: s.Label, Name: last.Config, Content: content})
	}
	for _, id := range hostOrder {
		m.Hosts = append(m.Hosts, *hosts[id])
	}
	for _, row := range cmp.Rows {
		tl := report.Timeline{Test: row.Test, Threads: row.Threads}
		for i, s := range sets {
			r, ok := latest[i][fmt.Sprintf("%s/%d", row.Test, row.Threads)]
			if !ok || len(r.Samples) == 0 {
				continue
			}
			tl.Series = append(tl.Series, series(s.Label, r))
		}
		if len(tl.Series) > 0 {
			m.Timelines = append(m.Timelines, tl)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if err := report.HTML(f, m); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "report: %s\n", path)
	return nil
}

// series is a run's per-second throughput and p99 response time.
func series(label string, r result.Run) report.Series {
	s := report.Series{Label: label, Unit: "statements/s"}
	if r.Totals.ReportedUnit != "qps" {
		s.Unit = "events/s" // see result.Sample.Ops
	}
	n := r.Samples[len(r.Samples)-1].Second + 1
	s.Rate, s.P99Ms = make([]float64, n), make([]float64, n)
	for i := range s.Rate {
		s.Rate[i], s.P99Ms[i] = math.NaN(), math.NaN()
	}
	for _, smp := range r.Samples {
		if smp.Second < 0 || smp.Second >= n {
			continue
		}
		s.Rate[smp.Second] = smp.Ops(r.Totals.ReportedUnit)
		s.P99Ms[smp.Second] = smp.Response.P99 / 1000
	}
	return s
}

func newImportCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "import",
		Short: "Import existing results: sysbench output, the reference harness's result folders, qpslab results files",
	}
	var label, test string
	sb := &cobra.Command{
		Use:   "sysbench FILE... --label BUILD.CONFIG --test TEST",
		Short: "Import sysbench 1.0 or 1.1 run output (one file per thread count or repeat)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := importSource(label)
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
	sb.Flags().StringVar(&label, "label", "", "the label to file the results under: build.config")
	sb.Flags().StringVar(&test, "test", "", "the test the output is of, as qpslab names it (point-query_range=100)")
	var mlabel string
	my := &cobra.Command{
		Use:   "mytools DIR --label BUILD.CONFIG",
		Short: "Import a result folder of the reference harness (sb.r.qps.*, sb.met.*, sb.o.*)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := importSource(mlabel)
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
	my.Flags().StringVar(&mlabel, "label", "", "the label to file the results under: build.config")
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

func importSource(label string) (importer.Source, error) {
	if label == "" {
		return importer.Source{}, fmt.Errorf("name the label to file the results under with --label build.config (e.g. ma100244_rel.cz11a_bee)")
	}
	l, err := analysis.ParseLabel(label)
	if err != nil {
		return importer.Source{}, err
	}
	return importer.Source{Build: l.Build, Config: l.Config}, nil
}

// storeImport stores every run of an import in one transaction.
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
	fmt.Fprintf(cmd.OutOrStdout(), "imported %d result(s) into %s as %s\n", len(runs)-skipped, st.Where(), labelsOf(runs))
	if skipped > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "%d result(s) were already stored and were skipped\n", skipped)
	}
	return nil
}
