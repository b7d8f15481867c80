package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
)

// historyFlags offers the flags that select series into q.
func historyFlags(c *cobra.Command, q *selector.HistoryQuery) {
	selFlags(c, &q.Selection, false)
	c.Flags().StringVar(&q.Test, "test", "", "")
	c.Flags().StringSliceVar(&q.Metrics, "metric", []string{"qps"},
		"metric(s): "+result.MetricNames()+" (KIND is an operation kind, e.g. insert/s)")
	c.Flags().StringVar(&q.Config, "config", "", "")
}

func newDetectCmd() *cobra.Command {
	var q selector.DetectQuery
	var format string
	c := jobCmd("detect", cobra.NoArgs, func(cmd *cobra.Command, e jobs.Env, _ []string) error {
		return jobs.Detect(cmd.Context(), e, q, cmd.Flags().Changed, format)
	})
	historyFlags(c, &q.History)
	def := changepoint.Options{Window: changepoint.DefaultWindow, PValue: changepoint.DefaultPValue,
		MinSegment: changepoint.DefaultMinSegment}
	o := &q.Options
	c.Flags().Float64Var(&o.PValue, "pvalue", def.PValue, "")
	c.Flags().IntVar(&o.Window, "window", def.Window, "")
	c.Flags().Float64Var(&o.MinMagnitude, "min-magnitude", def.MinMagnitude, "")
	c.Flags().IntVar(&o.MinSegment, "min-segment", def.MinSegment, "")
	c.Flags().StringVar(&q.SettingsFile, "settings", "", "")
	c.Flags().StringVar(&q.Method, "method", string(changepoint.Calibrated), "")
	c.Flags().StringVar(&q.FailOn, "fail-on", "", "")
	report.FormatFlag(c.Flags(), &format, "text", "md", "csv", "tsv", "json")
	c.Flags().StringVar(&q.Input, "input", "", "")
	c.Flags().StringVar(&q.TimeColumn, "time-column", "time", "")
	c.Flags().StringSliceVar(&q.Lower, "lower-is-better", nil, "")
	return c
}

func newExportCmd() *cobra.Command {
	var q selector.HistoryQuery
	c := jobCmd("export otava-csv|nyrkio-json DIR", cobra.ExactArgs(2),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			return jobs.Export(cmd.Context(), e, q, args[0], args[1])
		})
	historyFlags(c, &q)
	return c
}
