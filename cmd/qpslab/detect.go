package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
)

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
