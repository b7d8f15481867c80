package main

import (
	"cmp"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/report"
)

func newHostCmd() *cobra.Command {
	c := &cobra.Command{Use: "host"}
	var asJSON bool
	var roots host.Roots
	var serverCPUs, clientCPUs, datadir string
	check := jobCmd("check", cobra.NoArgs,
		func(cmd *cobra.Command, e jobs.Env, _ []string) error {
			c, err := host.CheckFor(roots, serverCPUs, clientCPUs, cmp.Or(datadir, e.Home.Sandboxes()))
			switch {
			case err != nil:
				return err
			case asJSON:
				return report.HostCheckJSON(e.Out, c)
			}
			return jobs.HostCheck(cmd.Context(), e, c)
		})
	check.Flags().BoolVar(&asJSON, "json", false, "")
	check.Flags().StringVar(&serverCPUs, "server-cpus", "", "")
	check.Flags().StringVar(&clientCPUs, "client-cpus", "", "")
	check.Flags().StringVar(&datadir, "datadir", "", "")
	tune := jobCmd("tune", cobra.NoArgs,
		func(_ *cobra.Command, e jobs.Env, _ []string) error {
			res, err := host.Tune(roots, e.Home.TuneState())
			report.HostTuned(e.Out, res, err == nil)
			return err
		})
	for _, cmd := range []*cobra.Command{check, tune} {
		cmd.Flags().StringVar(&roots.Sys, "sysfs", host.Real.Sys, "")
		cmd.Flags().StringVar(&roots.Proc, "procfs", host.Real.Proc, "")
	}
	reset := jobCmd("reset", cobra.NoArgs,
		func(_ *cobra.Command, e jobs.Env, _ []string) error {
			done, err := host.Reset(e.Home.TuneState())
			report.HostReset(e.Out, done, err == nil)
			return err
		})
	c.AddCommand(check, tune, reset)
	return c
}
