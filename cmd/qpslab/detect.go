package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// exitGate is detect's exit status when --fail-on finds a regression: not
// 1 (an error) nor 2 (usage, by convention), so that a CI job can tell a
// regression from a broken command.
const exitGate = 3

// exitError ends qpslab with its code after printing its message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// historyFlags select series from the store.
type historyFlags struct {
	sel     selection
	test    string
	metrics []string
	config  string
}

func (f *historyFlags) add(c *cobra.Command) {
	f.sel.flags(c)
	c.Flags().StringVar(&f.test, "test", "", "only tests whose label matches this glob (e.g. 'update-*')")
	c.Flags().StringSliceVar(&f.metrics, "metric", []string{"qps"}, "metric(s): "+result.MetricNames()+" (KIND is an operation kind, e.g. insert/s)")
	c.Flags().StringVar(&f.config, "config", "", "only results of this config name")
}

// series reads the store's ok runs and makes the series they hold.
func (f historyFlags) series(cmd *cobra.Command, st *store.Store) ([]history.Series, error) {
	if err := f.sel.check(); err != nil {
		return nil, err
	}
	runs, err := st.Runs(cmd.Context(), store.Filter{Suite: f.sel.suite, Config: f.config, Threads: f.sel.threads, Host: f.sel.host})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no results in %s match: see qpslab labels", st.Where())
	}
	return analysis.Series(runs, f.test, f.metrics, func(r result.Run) string {
		id, _ := store.HostID(r.Host)
		return id
	})
}

func newDetectCmd() *cobra.Command {
	var hf historyFlags
	var o changepoint.Options
	var settingsFile, format, input, timeColumn, failOn, method string
	var lower []string
	def := changepoint.Options{Window: changepoint.DefaultWindow, PValue: changepoint.DefaultPValue, MinSegment: changepoint.DefaultMinSegment}
	c := &cobra.Command{
		Use:   "detect",
		Short: "Find change points over the stored history: where each regression or improvement arrived",
		Long: `Detect change points in benchmark history, per test, metric, host, config and
thread count. Points are builds in natural version order (10.2.44 < 10.11.7 <
11.4.1), each the median of its runs; a series of one build's runs, or of
builds without a version whose runs all have a time, is runs in time order.
Builds with neither (an import without --version whose name does not give
one, nor --time) come after any versioned ones in natural name order
(ma9 < ma10), and detect says so in a line starting "order:". Each change point is a
regression or an improvement given the metric's direction (QPS: higher is
better; latency and per-op costs: lower), with its magnitude, the means
before and after, its p-value, the build where it arrived and the builds
between which it arrived at 95 % confidence.

The detector (docs/changepoint.md) is E-divisive means as Apache Otava 0.8
uses it, with a minimum segment so one spike is never a change point, and
a calibrated test (--method calibrated, the default): outliers replaced,
the noise's autocorrelation accounted for, and the p-value corrected for the
number of positions a change could be at, for about 0.01 false change
points per 1,000 points of noise at --pvalue 0.001 (Otava's t-test,
--method otava: about 1 on white noise, 25 on autocorrelated noise as a
shared host's runs have). Settings come from the built-in defaults, then the
top level of the settings file (--settings, default <home>/detect.yaml),
then the flags; the file's per-test entries win for the tests they match:

  pvalue: 0.001
  tests:
    - match: "scan*"
      min_magnitude: 0.10

A series of 2 to 5 builds (fewer than 2 × --min-segment) has no change
points; detect compares each build with the next by their repeats instead,
as compare does (Mann-Whitney U, α 0.05), and prints "regression between X
and Y" with the change of the medians and the confidence, or says it cannot
tell (one run per build, or too few runs).

--fail-on regression[:N%] is a CI gate: it exits with status 3, after one
line per regression on standard error, when the newest build brings a
regression (of N % or more): between the two newest builds of a few, or as
the last change point of a longer history, once the newest build makes it
certain. --format markdown gives a summary a CI job can post. Exit status:
0 (the gate passed, or no gate), 1 (an error), 3 (the gate failed).

--input reads a history file instead of the store: Otava's CSV layout (rows
in the file's order, as Otava reads them) or Nyrkiö's JSON upload shape
(results in time order); see qpslab export.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := resolveHome()
			if err != nil {
				return err
			}
			if settingsFile == "" {
				settingsFile = h.DetectSettings()
			}
			settings, err := analysis.LoadDetectSettings(settingsFile, cmd.Flags().Changed("settings"))
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			var given analysis.Given
			if fl.Changed("pvalue") {
				given.PValue = &o.PValue
			}
			if fl.Changed("window") {
				given.Window = &o.Window
			}
			if fl.Changed("min-magnitude") {
				given.MinMagnitude = &o.MinMagnitude
			}
			if fl.Changed("min-segment") {
				given.MinSegment = &o.MinSegment
			}
			if fl.Changed("method") {
				given.Method = &method
			}
			if format == "markdown" {
				format = "md"
			}
			var gate *analysis.Gate
			if fl.Changed("fail-on") {
				g, err := analysis.ParseGate(failOn)
				if err != nil {
					return err
				}
				gate = &g
			}
			base, err := settings.Resolve(given, settingsFile)
			if err != nil {
				return err
			}
			var series []history.Series
			if input != "" {
				for _, name := range []string{"test", "threads", "host", "config", "suite"} {
					if fl.Changed(name) {
						return fmt.Errorf("--%s selects results in the store; with --input it would do nothing: leave it out", name)
					}
				}
				var lo []string
				if fl.Changed("lower-is-better") {
					lo = lower
				}
				if series, err = history.Read(input, timeColumn, lo); err != nil {
					return err
				}
				if fl.Changed("metric") {
					keep := history.OfMetrics(series, hf.metrics)
					if len(keep) == 0 {
						return fmt.Errorf("--metric %s: %s has %s", strings.Join(hf.metrics, ","), input, strings.Join(history.Metrics(series), ", "))
					}
					series = keep
				}
			} else {
				for _, name := range []string{"time-column", "lower-is-better"} {
					if fl.Changed(name) {
						return fmt.Errorf("--%s is for --input files; the store knows its metrics", name)
					}
				}
				if err := hf.sel.check(); err != nil {
					return err
				}
				st, err := readStore(cmd)
				if err != nil {
					return err
				}
				defer st.Close()
				if series, err = hf.series(cmd, st); err != nil {
					return err
				}
				// The noise floor of a calibrated host is a headline
				// series' minimum magnitude unless one is given.
				if settings.Floors, err = st.Floors(cmd.Context()); err != nil {
					return err
				}
				settings.MagnitudeGiven = fl.Changed("min-magnitude")
			}
			changes, err := analysis.Detect(series, settings, base)
			if err != nil {
				return err
			}
			d := report.Detection{Series: len(series), Changes: changes, Builds: analysis.Builds(series, settings, base)}
			if n, need := analysis.TooShort(series, settings, base); n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d of %d series have fewer than the %d points a change point needs (--min-segment %d on each side) and no builds to compare: run more builds, or lower --min-segment\n",
					n, len(series), need, need/2)
			}
			if gate != nil {
				d.Gate = report.NewGateResult(*gate, d)
			}
			if err := report.Detect(cmd.OutOrStdout(), d, format, report.IsTTY(cmd.OutOrStdout())); err != nil {
				return err
			}
			note := cmd.OutOrStdout()
			if format != "text" && format != "md" && format != "markdown" {
				note = cmd.ErrOrStderr() // keeps the JSON, CSV or TSV whole
			}
			if err := report.OrderNote(note, series); err != nil {
				return err
			}
			if d.Gate != nil {
				report.GateLines(cmd.ErrOrStderr(), d.Gate)
				if d.Gate.Failed {
					return exitError{code: exitGate, msg: report.GateSummary(d.Gate)}
				}
				fmt.Fprintln(cmd.ErrOrStderr(), report.GateSummary(d.Gate))
			}
			return nil
		},
	}
	hf.add(c)
	c.Flags().Float64Var(&o.PValue, "pvalue", def.PValue, "significance of a change point (Student t-test)")
	c.Flags().IntVar(&o.Window, "window", def.Window, "points per sliding window")
	c.Flags().Float64Var(&o.MinMagnitude, "min-magnitude", def.MinMagnitude, "smallest relative change reported (0.05 = 5 %)")
	c.Flags().IntVar(&o.MinSegment, "min-segment", def.MinSegment, "fewest points on each side of a change point (a spike is shorter)")
	c.Flags().StringVar(&settingsFile, "settings", "", "settings file with per-test overrides (default <home>/detect.yaml, if present)")
	c.Flags().StringVar(&method, "method", string(changepoint.Calibrated), "how a change point's significance is judged: calibrated, or otava (Otava 0.8's t-test: hundreds of times the false alarms on noise, docs/changepoint.md)")
	c.Flags().StringVar(&failOn, "fail-on", "", "CI gate: exit with status 3 when the newest build brings a regression (of N % or more): regression or regression:N%")
	c.Flags().StringVar(&format, "format", "text", "text, md (or markdown: a summary for a CI job), csv, tsv or json")
	c.Flags().StringVar(&input, "input", "", "read this history file instead of the store: .csv (Otava) or .json (Nyrkiö)")
	c.Flags().StringVar(&timeColumn, "time-column", "time", "with --input .csv: the time column")
	c.Flags().StringSliceVar(&lower, "lower-is-better", nil, "with --input: the metrics where lower is better (default: guessed from names such as latency, p99, cpu)")
	return c
}

func newExportCmd() *cobra.Command {
	var hf historyFlags
	c := &cobra.Command{
		Use:   "export otava-csv|nyrkio-json DIR",
		Short: "Export the stored history as Otava CSV files (with otava.yaml) or Nyrkiö JSON uploads",
		Long: `Export the stored history, in the order qpslab detect uses (see its help),
as Otava CSV files with an otava.yaml (Otava reads rows in the file's order),
or as Nyrkiö JSON upload arrays. A row's time is its runs' own, or empty when
they have none (results imported without --time): no time is made up. Otava
needs a time in every row, and Nyrkiö orders results by theirs, so
nyrkio-json refuses, in one line, a history whose rows lack a time or whose
times do not follow its order (builds run out of version order): use
otava-csv there.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, dir := args[0], args[1]
			if format != "otava-csv" && format != "nyrkio-json" {
				return fmt.Errorf("export %s: use otava-csv or nyrkio-json", format)
			}
			if err := hf.sel.check(); err != nil {
				return err
			}
			st, err := readStore(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			series, err := hf.series(cmd, st)
			if err != nil {
				return err
			}
			var files []string
			if format == "otava-csv" {
				files, err = history.WriteOtavaCSV(dir, series)
			} else {
				files, err = history.WriteNyrkioJSON(dir, series)
			}
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d series in %d file(s) under %s\n", len(series), len(files), dir)
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(files, "\n"))
			return nil
		},
	}
	hf.add(c)
	return c
}
