package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/sandbox"
)

func newServerCmd() *cobra.Command {
	c := &cobra.Command{Use: "server"}
	var spec sandbox.Spec
	var foreground bool
	start := jobCmd("start BUILD CONFIG", cobra.ExactArgs(2),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			return jobs.ServerStart(cmd.Context(), e, args[0], args[1], spec, foreground)
		})
	f := start.Flags()
	f.StringVar(&spec.Name, "name", "", "")
	f.IntVar(&spec.Port, "port", 0, "")
	f.StringVar(&spec.Datadir, "datadir", "", "")
	f.BoolVar(&spec.Reuse, "reuse-datadir", false, "")
	f.Var(duration.Var(&spec.StartTimeout, 3*time.Minute, false), "timeout", "")
	f.BoolVar(&foreground, "foreground", false, "")
	f.StringSliceVar(&spec.AllowFiles, "allow-server-file", nil, "")

	var all bool
	var stopTimeout time.Duration
	stop := jobCmd("stop NAME... | --all", cobra.ArbitraryArgs,
		func(_ *cobra.Command, e jobs.Env, args []string) error {
			say := func(name string, was bool) { sandbox.SayStopped(e.Out, name, was, all) }
			return sandbox.StopNamed(e.Home, args, all, stopTimeout, say)
		})
	stop.Flags().BoolVar(&all, "all", false, "")
	stop.Flags().Var(duration.Var(&stopTimeout, 2*time.Minute, false), "timeout", "")

	status := jobCmd("status [NAME...]", cobra.ArbitraryArgs, func(_ *cobra.Command, e jobs.Env, args []string) error {
		jobs.Clean(e.Home, e.Err)
		sts, err := sandbox.States(e.Home, args...)
		if err != nil {
			return err
		}
		return report.Print(e.Out, sandbox.ListTable(sts), "text")
	})

	var tcp bool
	sql := jobCmd("sql NAME QUERY", cobra.ExactArgs(2),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			cols, rows, err := sandbox.Query(cmd.Context(), e.Home, args[0], tcp, args[1])
			if err != nil {
				return err
			}
			return sandbox.WriteRows(e.Out, cols, rows)
		})
	sql.Flags().BoolVar(&tcp, "tcp", false, "")

	var o sandbox.PruneOptions
	prune := jobCmd("prune [--keep-logs] [--dry-run]", cobra.NoArgs,
		func(_ *cobra.Command, e jobs.Env, _ []string) error {
			if !o.DryRun {
				jobs.Clean(e.Home, e.Err)
			}
			removed, kept, err := sandbox.Prune(e.Home, o)
			sandbox.SayPruned(e.Out, removed, kept, o.DryRun)
			return err
		})
	prune.Flags().BoolVar(&o.KeepLogs, "keep-logs", false, "")
	prune.Flags().BoolVar(&o.DryRun, "dry-run", false, "")
	c.AddCommand(start, stop, status, sql, prune)
	return c
}
