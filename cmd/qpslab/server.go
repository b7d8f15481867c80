package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/sandbox"
)

// cleanAfterCrash cleans what an earlier qpslab left in the home's sandboxes
// when it died without cleaning up (sandbox.Recover), and says in one line
// what it cleaned. Commands that touch sandboxes call it first; what it
// cannot clean is reported and does not stop the command.
func cleanAfterCrash(cmd *cobra.Command, h home.Home) {
	cleaned, err := sandbox.Recover(h)
	if len(cleaned) > 0 {
		var parts []string
		for _, c := range cleaned {
			parts = append(parts, c.Sandbox+": "+c.What)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "qpslab: cleaned up after an earlier qpslab that died: %s\n", strings.Join(parts, "; "))
	}
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
			ep := srv.Endpoint()
			fmt.Fprintf(cmd.OutOrStdout(), "started %s: %s %s with config %s, pid %d, socket %s, port %d, log %s\n",
				srv.Name, b.Flavor, b.Version, cfg.ID(), srv.PID, ep.Socket, ep.Port, srv.Log)
			if !foreground {
				return nil
			}
			fmt.Fprintln(cmd.OutOrStdout(), "running in the foreground: SIGINT or SIGTERM stops it")
			<-cmd.Context().Done()
			if err := srv.Stop(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stopped %s\n", srv.Name)
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
			if all {
				sts, err := sandbox.List(h)
				if err != nil {
					return err
				}
				for _, st := range sts {
					args = append(args, st.Name)
				}
			}
			for _, name := range args {
				was, err := sandbox.StopByName(h, name, stopTimeout)
				if err != nil {
					return err
				}
				if was {
					fmt.Fprintf(cmd.OutOrStdout(), "stopped %s\n", name)
				} else if !all {
					fmt.Fprintf(cmd.OutOrStdout(), "%s was not running\n", name)
				}
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
			var sts []sandbox.State
			if len(args) == 0 {
				if sts, err = sandbox.List(h); err != nil {
					return err
				}
			}
			for _, name := range args {
				st, err := sandbox.Get(h, name)
				if err != nil {
					return err
				}
				sts = append(sts, st)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tBUILD\tVERSION\tCONFIG\tSTATE\tPID\tPORT\tSOCKET")
			var why []string
			for _, st := range sts {
				state, pid, port, sock := st.Status(), "-", "-", "-"
				if state == "running" {
					pid, port, sock = fmt.Sprint(st.PID), fmt.Sprint(st.Endpoint.Port), st.Endpoint.Socket
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Name, st.Build, st.Version, st.Config, state, pid, port, sock)
				switch state {
				case "failed":
					why = append(why, st.Name+" failed: "+st.Failed)
				case "died":
					why = append(why, st.Name+" died: "+st.Died)
				}
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, l := range why {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			return nil
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
			st, err := sandbox.Get(h, args[0])
			if err != nil {
				return err
			}
			if !st.Running() {
				return fmt.Errorf("sandbox %s is not running: start it with qpslab server start %s %s", st.Name, st.Build, strings.SplitN(st.Config, "@", 2)[0])
			}
			cols, rows, err := client.Query(cmd.Context(), st.Endpoint, tcp, args[1])
			if err != nil {
				return fmt.Errorf("%s: %w", st.Name, err)
			}
			out := cmd.OutOrStdout()
			if len(cols) > 0 {
				fmt.Fprintln(out, strings.Join(cols, "\t"))
			}
			for _, r := range rows {
				fmt.Fprintln(out, strings.Join(r, "\t"))
			}
			return nil
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
			out := cmd.OutOrStdout()
			verb, freed := "removed", "freed"
			if o.DryRun {
				verb, freed = "would remove", "would free"
			}
			var total int64
			for _, p := range removed {
				total += p.Bytes
				line := fmt.Sprintf("%s %s (%s): %s", verb, p.Name, p.Status, humanize.Bytes(uint64(max(p.Bytes, 0))))
				if p.Logs != "" {
					line += ", logs kept in " + p.Logs
				}
				if p.Note != "" {
					line += "; " + p.Note
				}
				fmt.Fprintln(out, line)
			}
			for _, k := range kept {
				fmt.Fprintf(out, "kept %s: %s\n", k.Name, k.Why)
			}
			fmt.Fprintf(out, "%s %s in %d sandbox(es)\n", freed, humanize.Bytes(uint64(max(total, 0))), len(removed))
			return err
		},
	}
	c.Flags().BoolVar(&o.KeepLogs, "keep-logs", false, "keep server.log and init.log under <home>/logs/<sandbox>-<time>/")
	c.Flags().BoolVar(&o.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	return c
}
