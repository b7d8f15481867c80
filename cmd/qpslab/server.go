package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/sandbox"
)

// cleanAfterCrash cleans what an earlier qpslab left in the home's sandboxes
// when it died without cleaning up (sandbox.Recover), and says in one line
// what it cleaned. Commands that touch sandboxes call it first; what it
// cannot clean is reported and does not stop the command.
func cleanAfterCrash(cmd *cobra.Command, h home.Home) {
	cleaned, err := sandbox.Recover(h)
	report.Cleaned(cmd.ErrOrStderr(), cleaned)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "qpslab: %s\n", oneLine(err.Error()))
	}
}

func newServerCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "server",
		Short: "Start, stop and inspect sandboxed servers (for debugging; benchmarks manage their own)",
	}
	var spec sandbox.Spec
	var foreground bool
	start := &cobra.Command{
		Use:   "start BUILD CONFIG",
		Short: "Start BUILD with CONFIG in its sandbox (named BUILD.CONFIG unless --name)",
		Long: `Start BUILD with CONFIG in a sandbox: initialise a new datadir (unless
--reuse-datadir), start the server on a private unix socket and a free loopback
port, wait until it answers, and create the qpslab database. The server keeps
running after this command returns (it is detached: nothing stops it but
qpslab server stop NAME); if this command is killed before the server
answers, the half-started server is killed too. With --foreground the
command waits instead and stops the server on SIGINT or SIGTERM; such a
server dies with the command even when the command is killed with SIGKILL.

Before starting, what an earlier qpslab left when it died (a sandbox.yaml
that says running with a dead pid, a server of a run that outlived its qpslab)
is cleaned, and one line says what.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := resolveHome()
			if err != nil {
				return err
			}
			cleanAfterCrash(cmd, h)
			b, err := build.Registry{Dir: h.Builds(), Cache: h.Cache}.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			cfg, err := config.Store{Dir: h.Configs()}.Get(args[1], config.FamilyOf(string(b.Flavor)))
			if err != nil {
				return err
			}
			spec.Build, spec.Config, spec.Detach = b, cfg, !foreground
			srv, err := sandbox.Start(cmd.Context(), h, spec)
			if err != nil {
				return err
			}
			report.Started(cmd.OutOrStdout(), srv.State, foreground)
			if !foreground {
				return nil
			}
			<-cmd.Context().Done()
			if err := srv.Stop(); err != nil {
				return err
			}
			report.Stopped(cmd.OutOrStdout(), srv.Name, true, false)
			return nil
		},
	}
	f := start.Flags()
	f.StringVar(&spec.Name, "name", "", "sandbox name (default BUILD.CONFIG)")
	f.IntVar(&spec.Port, "port", 0, "loopback TCP port (default: a free one)")
	f.StringVar(&spec.Datadir, "datadir", "", "put the datadir here, e.g. on the device under test (must be empty or qpslab's)")
	f.BoolVar(&spec.Reuse, "reuse-datadir", false, "keep the sandbox's existing datadir instead of making a new one")
	f.DurationVar(&spec.StartTimeout, "timeout", 3*time.Minute, "how long to wait for the server to answer")
	f.BoolVar(&foreground, "foreground", false, "wait, and stop the server on SIGINT or SIGTERM")
	c.AddCommand(start)

	var all bool
	var stopTimeout time.Duration
	stop := &cobra.Command{
		Use:   "stop NAME... | --all",
		Short: "Stop sandboxed servers (SIGKILL after --timeout)",
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := resolveHome()
			if err != nil {
				return err
			}
			if all == (len(args) > 0) {
				return fmt.Errorf("name the sandboxes to stop, or pass --all")
			}
			sts, err := sandbox.States(h, args...) // none named: --all
			if err != nil {
				return err
			}
			for _, st := range sts {
				was, err := sandbox.StopByName(h, st.Name, stopTimeout)
				if err != nil {
					return err
				}
				report.Stopped(cmd.OutOrStdout(), st.Name, was, all)
			}
			return nil
		},
	}
	stop.Flags().BoolVar(&all, "all", false, "stop every sandbox in the home")
	stop.Flags().DurationVar(&stopTimeout, "timeout", 2*time.Minute, "graceful shutdown time before SIGKILL")
	c.AddCommand(stop)

	c.AddCommand(&cobra.Command{
		Use:   "status [NAME...]",
		Short: "Show sandboxes: build, config, state (running, stopped, failed, died), pid, port, socket",
		Long: `Show the sandboxes of the home: build, version, config, and state: running,
stopped, failed (the last start failed) or died (the server ended without
being stopped; the line under it says how: the exit status or signal and the
server-log lines that explain it). What an earlier qpslab left when it died is
cleaned first, and one line says what.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := resolveHome()
			if err != nil {
				return err
			}
			cleanAfterCrash(cmd, h)
			sts, err := sandbox.States(h, args...)
			if err != nil {
				return err
			}
			return report.Sandboxes(cmd.OutOrStdout(), sts)
		},
	})

	var tcp bool
	sqlCmd := &cobra.Command{
		Use:   "sql NAME QUERY",
		Short: "Run one SQL statement on a running sandbox and print the rows, tab-separated",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := resolveHome()
			if err != nil {
				return err
			}
			st, err := sandbox.Running(h, args[0])
			if err != nil {
				return err
			}
			cols, rows, err := client.Query(cmd.Context(), st.Endpoint, tcp, args[1])
			if err != nil {
				return fmt.Errorf("%s: %w", st.Name, err)
			}
			return report.Rows(cmd.OutOrStdout(), cols, rows)
		},
	}
	sqlCmd.Flags().BoolVar(&tcp, "tcp", false, "connect over loopback TCP instead of the unix socket")
	c.AddCommand(sqlCmd)
	c.AddCommand(newServerPruneCmd())
	return c
}

func newServerPruneCmd() *cobra.Command {
	var o sandbox.PruneOptions
	c := &cobra.Command{
		Use:   "prune [--keep-logs] [--dry-run]",
		Short: "Remove the sandboxes whose server is not running (stopped, failed, died) and say how much space that freed",
		Long: `Remove every sandbox folder under the home whose server is not running:
stopped, failed (a start that failed) or died. A running sandbox is never
removed, nor one another qpslab is starting or stopping, nor any folder qpslab
did not make (one without sandbox.yaml). A datadir given with --datadir
outside the sandbox folder is left in place and named.

With --keep-logs, server.log and init.log are moved to
<home>/logs/<sandbox>-<time>/ first. With --dry-run nothing is removed and
the output says what would be. What an earlier qpslab left when it died is
cleaned first, so a sandbox.yaml that says running with a dead pid is pruned
too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := resolveHome()
			if err != nil {
				return err
			}
			if !o.DryRun {
				cleanAfterCrash(cmd, h)
			}
			removed, kept, err := sandbox.Prune(h, o)
			report.Pruned(cmd.OutOrStdout(), removed, kept, o.DryRun)
			return err
		},
	}
	c.Flags().BoolVar(&o.KeepLogs, "keep-logs", false, "keep server.log and init.log under <home>/logs/<sandbox>-<time>/")
	c.Flags().BoolVar(&o.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	return c
}
