package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/host"
)

func newHostCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "host",
		Short: "Check the host for variance sources (cpufreq, boost, governor, EPP, SMT, steal), tune and reset them",
	}
	var asJSON bool
	var roots host.Roots
	check := &cobra.Command{
		Use:   "check",
		Short: "Report the host's frequency state and every variance risk, with the command that removes it",
		Long: `Report the cpufreq driver (acpi-cpufreq, amd-pstate, amd-pstate-epp,
intel_pstate, intel_cpufreq, none), the amd_pstate mode, boost (cpufreq/boost,
intel_pstate/no_turbo, per-policy boost), each CPU's governor, EPP and
frequencies, SMT, the kernel command-line flags that matter, transparent huge
pages, swap, whether this is a VM, and CPU steal; then each variance risk with
the command that removes it. Nothing is changed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := host.Inspect(roots)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(c)
			}
			fmt.Fprintf(w, "kernel %s, %d CPUs (%s), %d MB memory\n", c.Kernel, c.CPUs, c.CPUModel, c.MemKB/1024)
			vm := "no"
			if c.VM {
				vm = fmt.Sprintf("yes (%s), CPU steal %.1f%% since boot", orDash(c.Hypervisor), c.StealPct)
			}
			fmt.Fprintf(w, "VM: %s\n", vm)
			fmt.Fprintf(w, "cpufreq driver: %s", c.Driver)
			if c.AMDPState != "" {
				fmt.Fprintf(w, " (amd_pstate %s)", c.AMDPState)
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "boost: %s\n", boostLine(c))
			for _, g := range summarizePolicies(c.Policies) {
				fmt.Fprintf(w, "  %s\n", g)
			}
			fmt.Fprintf(w, "SMT: %s; THP: %s; swap: %d MB\n", orDash(c.SMTControl), orDash(c.THP), c.SwapKB/1024)
			if len(c.Cmdline) > 0 {
				var fl []string
				for k, v := range c.Cmdline {
					fl = append(fl, strings.TrimSuffix(k+"="+v, "="))
				}
				fmt.Fprintf(w, "kernel flags: %s\n", strings.Join(fl, " "))
			}
			for _, p := range c.Unreadable {
				fmt.Fprintf(w, "could not read %s (run as root to see it)\n", p)
			}
			if len(c.Risks) == 0 {
				fmt.Fprintln(w, "\nno variance risk found")
				return nil
			}
			fmt.Fprintf(w, "\n%d variance risk(s):\n", len(c.Risks))
			for _, r := range c.Risks {
				fmt.Fprintf(w, "- %s: %s\n    fix: %s\n", r.Name, r.Detail, r.Fix)
			}
			return nil
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
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
			res, err := host.Tune(roots, filepath.Join(h.Root, "host", "tune-state.json"))
			w := cmd.OutOrStdout()
			if res != nil {
				for _, ch := range res.Changed {
					fmt.Fprintf(w, "%s: %s -> %s\n", ch.Path, strings.TrimSpace(ch.Old), ch.New)
				}
				for _, n := range res.Notes {
					fmt.Fprintf(w, "note: %s\n", n)
				}
				if err == nil && len(res.Changed) == 0 {
					fmt.Fprintln(w, "nothing to change")
				}
			}
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
			done, err := host.Reset(filepath.Join(h.Root, "host", "tune-state.json"))
			for _, ch := range done {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s -> %s\n", ch.Path, strings.TrimSpace(ch.Old), strings.TrimSpace(ch.New))
			}
			if err == nil && len(done) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing to reset: qpslab host tune has not changed this host")
			}
			return err
		},
	}
	c.AddCommand(check, tune, reset)
	return c
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func boostLine(c *host.Check) string {
	switch {
	case c.Boost != nil:
		return fmt.Sprintf("cpufreq/boost = %v", map[bool]int{false: 0, true: 1}[*c.Boost])
	case c.NoTurbo != nil:
		return fmt.Sprintf("intel_pstate/no_turbo = %v", map[bool]int{false: 0, true: 1}[*c.NoTurbo])
	}
	for _, p := range c.Policies {
		if p.Boost != nil {
			return "per policy (cpu*/cpufreq/boost)"
		}
	}
	return "no boost file"
}

// summarizePolicies prints one line per distinct setting: "cpu0-7: schedutil, 1600–3800 MHz".
func summarizePolicies(ps []host.Policy) []string {
	var out []string
	var last string
	var cpus []string
	flush := func() {
		if last != "" {
			out = append(out, fmt.Sprintf("%s: %s", strings.Join(cpus, ","), last))
		}
	}
	for _, p := range ps {
		desc := fmt.Sprintf("governor %s, %d–%d MHz (hardware %d–%d)", p.Governor, p.MinKHz/1000, p.MaxKHz/1000, p.HWMinKHz/1000, p.HWMaxKHz/1000)
		if p.EPP != "" {
			desc += ", EPP " + p.EPP
		}
		if desc != last {
			flush()
			last, cpus = desc, nil
		}
		cpus = append(cpus, p.CPU)
	}
	flush()
	return out
}
