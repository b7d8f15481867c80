package main

import (
	"cmp"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/report"
)

func newHostCmd() *cobra.Command {
	c := &cobra.Command{Use: "host", Short: "Check the host for variance sources (cpufreq, boost, governor, EPP, " +
		"SMT, steal), tune and reset them"}
	var asJSON bool
	var roots host.Roots
	var serverCPUs, clientCPUs, datadir string
	check := jobCmd("check", "Report the host's frequency state and every variance risk, with the command that "+
		"removes it", cobra.NoArgs,
		func(cmd *cobra.Command, e app.Env, _ []string) error {
			c, err := host.CheckFor(roots, serverCPUs, clientCPUs, cmp.Or(datadir, e.Home.Sandboxes()))
			switch {
			case err != nil:
				return err
			case asJSON:
				return report.HostCheckJSON(e.Out, c)
			}
			return app.HostCheck(cmd.Context(), e, c)
		})
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	check.Flags().StringVar(&serverCPUs, "server-cpus", "", "the CPUs a run would pin the server to (e.g. 0-15): "+
		"warn when they overlap --client-cpus")
	check.Flags().StringVar(&clientCPUs, "client-cpus", "", "the CPUs a run would pin the client to (e.g. 16-23)")
	check.Flags().StringVar(&datadir, "datadir", "", "the folder whose storage to report (default: the home's "+
		"sandboxes folder, where datadirs go)")
	tune := jobCmd("tune", "Switch boost off and governors (and EPP) to performance, saving the previous state (root)",
		cobra.NoArgs,
		func(_ *cobra.Command, e app.Env, _ []string) error {
			res, err := host.Tune(roots, e.Home.TuneState())
			report.HostTuned(e.Out, res, err == nil)
			return err
		})
	for _, cmd := range []*cobra.Command{check, tune} {
		cmd.Flags().StringVar(&roots.Sys, "sysfs", host.Real.Sys, "sysfs root (for a copied or fixture tree)")
		cmd.Flags().StringVar(&roots.Proc, "procfs", host.Real.Proc, "procfs root")
	}
	reset := jobCmd("reset", "Put back every file qpslab host tune changed, byte for byte (root)", cobra.NoArgs,
		func(_ *cobra.Command, e app.Env, _ []string) error {
			done, err := host.Reset(e.Home.TuneState())
			report.HostReset(e.Out, done, err == nil)
			return err
		})
	c.AddCommand(check, tune, reset)
	return c
}
