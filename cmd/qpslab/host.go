package main

import (
	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/report"
)

func newHostCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "host",
		Short: "Check the host for variance sources (cpufreq, boost, governor, EPP, SMT, steal), tune and reset them",
	}
	var asJSON bool
	var roots host.Roots
	var serverCPUs, clientCPUs string
	var datadir string
	check := &cobra.Command{
		Use:   "check",
		Short: "Report the host's frequency state and every variance risk, with the command that removes it",
		Long: `Report the cpufreq driver (acpi-cpufreq, amd-pstate, amd-pstate-epp,
intel_pstate, intel_cpufreq, none), the amd_pstate mode, boost (cpufreq/boost,
intel_pstate/no_turbo, per-policy boost), each CPU's governor, EPP and
frequencies, SMT, the kernel command-line flags that matter, transparent huge
pages, swap, whether this is a VM, and CPU steal; the limits on how many
connections a client can open (open files, somaxconn, ephemeral ports); the
storage of the folder datadirs go in (--datadir; default the home's
sandboxes folder): its block device's max_sectors_kb and max_hw_sectors_kb,
scheduler, rotational flag and read-ahead, and those of each device under a
RAID or device-mapper device; then each variance risk with the command that
removes it. With --server-cpus and --client-cpus (as qpslab run takes them),
it also warns when the two overlap. Nothing is changed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := host.Inspect(roots)
			if err != nil {
				return err
			}
			if serverCPUs != "" || clientCPUs != "" {
				r, err := host.PinningRisk(serverCPUs, clientCPUs, c.CPUs)
				if err != nil {
					return err
				}
				if r != nil {
					c.Risks = append(c.Risks, *r)
				}
			}
			if datadir == "" {
				h, err := resolveHome()
				if err != nil {
					return err
				}
				datadir = h.Sandboxes()
			}
			c.Storage = host.StorageOf(roots, datadir)
			if asJSON {
				return report.HostCheckJSON(cmd.OutOrStdout(), c)
			}
			return report.HostCheck(cmd.OutOrStdout(), c)
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	check.Flags().StringVar(&serverCPUs, "server-cpus", "", "the CPUs a run would pin the server to (e.g. 0-15): warn when they overlap --client-cpus")
	check.Flags().StringVar(&clientCPUs, "client-cpus", "", "the CPUs a run would pin the client to (e.g. 16-23)")
	check.Flags().StringVar(&datadir, "datadir", "", "the folder whose storage to report (default: the home's sandboxes folder, where datadirs go)")
	rootFlags := func(cmd *cobra.Command) {
		cmd.Flags().StringVar(&roots.Sys, "sysfs", host.Real.Sys, "sysfs root (for a copied or fixture tree)")
		cmd.Flags().StringVar(&roots.Proc, "procfs", host.Real.Proc, "procfs root")
	}
	rootFlags(check)

	tune := &cobra.Command{
		Use:   "tune",
		Short: "Switch boost off and governors (and EPP) to performance, saving the previous state (root)",
		Long: `Switch boost off (cpufreq/boost, intel_pstate/no_turbo, per-policy boost) and
every governor and energy-performance preference to performance. The previous
content of every file changed is saved first (in <home>/host/tune-state.json),
and qpslab host reset puts it back byte for byte. Where a knob does not exist,
it says so and what to do instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := resolveHome()
			if err != nil {
				return err
			}
			res, err := host.Tune(roots, h.TuneState())
			report.HostTuned(cmd.OutOrStdout(), res, err == nil)
			return err
		},
	}
	rootFlags(tune)
	reset := &cobra.Command{
		Use:   "reset",
		Short: "Put back every file qpslab host tune changed, byte for byte (root)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := resolveHome()
			if err != nil {
				return err
			}
			done, err := host.Reset(h.TuneState())
			report.HostReset(cmd.OutOrStdout(), done, err == nil)
			return err
		},
	}
	c.AddCommand(check, tune, reset)
	return c
}
