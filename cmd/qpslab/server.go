package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/sandbox"
)

func newServerCmd() *cobra.Command {
	c := &cobra.Command{Use: "server", Short: "Start, stop and inspect sandboxed servers (for debugging; benchmarks " +
		"manage their own)"}
	var spec sandbox.Spec
	var foreground bool
	start := jobCmd("start BUILD CONFIG", "Start BUILD with CONFIG in its sandbox (named BUILD.CONFIG unless --name)",
		cobra.ExactArgs(2),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			spec.Detach = !foreground
			return app.ServerStart(cmd.Context(), e, args[0], args[1], spec)
		})
	f := start.Flags()
	f.StringVar(&spec.Name, "name", "", "sandbox name (default BUILD.CONFIG)")
	f.IntVar(&spec.Port, "port", 0, "loopback TCP port (default: a free one)")
	f.StringVar(&spec.Datadir, "datadir", "", "put the datadir here, e.g. on the device under test (must be empty or "+
		"qpslab's)")
	f.BoolVar(&spec.Reuse, "reuse-datadir", false, "keep the sandbox's existing datadir instead of making a new one")
	f.Var(duration.Var(&spec.StartTimeout, 3*time.Minute, false), "timeout", "how long to wait for the server to "+
		"answer")
	f.BoolVar(&foreground, "foreground", false, "wait, and stop the server on SIGINT or SIGTERM")
	f.StringSliceVar(&spec.AllowFiles, "allow-server-file", nil, "let the server read, write or run this file, "+
		"folder or command outside its sandbox, which CONFIG names (init_file, ssl keys, plugin folders, includes "+
		"…); refused otherwise (repeat for more)")

	var all bool
	var stopTimeout time.Duration
	stop := jobCmd("stop NAME... | --all", "Stop sandboxed servers (SIGKILL after --timeout)", cobra.ArbitraryArgs,
		func(_ *cobra.Command, e app.Env, args []string) error {
			say := func(name string, was bool) { sandbox.SayStopped(e.Out, name, was, all) }
			return sandbox.StopNamed(e.Home, args, all, stopTimeout, say)
		})
	stop.Flags().BoolVar(&all, "all", false, "stop every sandbox in the home")
	stop.Flags().Var(duration.Var(&stopTimeout, 2*time.Minute, false), "timeout",
		"graceful shutdown time before SIGKILL")

	status := jobCmd("status [NAME...]", "Show sandboxes: build, config, state (running, stopped, failed, died), "+
		"pid, port, socket", cobra.ArbitraryArgs, func(_ *cobra.Command, e app.Env, args []string) error {
		app.Clean(e.Home, e.Err)
		sts, err := sandbox.States(e.Home, args...)
		if err != nil {
			return err
		}
		return report.Print(e.Out, sandbox.ListTable(sts), "text")
	})

	var tcp bool
	sql := jobCmd("sql NAME QUERY", "Run one SQL statement on a running sandbox and print the rows, tab-separated",
		cobra.ExactArgs(2),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			cols, rows, err := sandbox.Query(cmd.Context(), e.Home, args[0], tcp, args[1])
			if err != nil {
				return err
			}
			return sandbox.WriteRows(e.Out, cols, rows)
		})
	sql.Flags().BoolVar(&tcp, "tcp", false, "connect over loopback TCP instead of the unix socket")

	var o sandbox.PruneOptions
	prune := jobCmd("prune [--keep-logs] [--dry-run]", "Remove the sandboxes whose server is not running (stopped, "+
		"failed, died) and say how much space that freed", cobra.NoArgs,
		func(_ *cobra.Command, e app.Env, _ []string) error {
			if !o.DryRun {
				app.Clean(e.Home, e.Err)
			}
			removed, kept, err := sandbox.Prune(e.Home, o)
			sandbox.SayPruned(e.Out, removed, kept, o.DryRun)
			return err
		})
	prune.Flags().BoolVar(&o.KeepLogs, "keep-logs", false, "keep server.log and init.log under "+
		"<home>/logs/<sandbox>-<time>/")
	prune.Flags().BoolVar(&o.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	c.AddCommand(start, stop, status, sql, prune)
	return c
}
