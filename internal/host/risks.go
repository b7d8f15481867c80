package host

import (
	"fmt"
	"sort"
	"strings"
)

// stealRiskPct is the CPU steal (since boot) above which a VM's neighbours
// are taken to disturb results.
const stealRiskPct = 1.0

// risks lists what in c adds variance, each with the command that removes it.
func risks(c *Check) []Risk {
	var out []Risk
	add := func(name, fix, format string, args ...any) {
		out = append(out, Risk{Name: name, Detail: fmt.Sprintf(format, args...), Fix: fix})
	}
	const cpu = "/sys/devices/system/cpu"

	// Boost: a CPU that runs faster while cool and slower when hot.
	switch {
	case c.Boost != nil && *c.Boost:
		add("boost", "echo 0 | sudo tee "+cpu+"/cpufreq/boost",
			"frequency boost is permitted (%s/cpufreq/boost = 1): the clock rises while the CPU is cool and falls as it heats", cpu)
	case c.NoTurbo != nil && !*c.NoTurbo:
		add("boost", "echo 1 | sudo tee "+cpu+"/intel_pstate/no_turbo",
			"turbo is permitted (intel_pstate/no_turbo = 0): the clock rises while the CPU is cool and falls as it heats")
	}
	var policyBoost []string
	for _, p := range c.Policies {
		if p.Boost != nil && *p.Boost && (c.Boost == nil || !*c.Boost) {
			policyBoost = append(policyBoost, p.CPU)
		}
	}
	if len(policyBoost) > 0 {
		add("boost", "echo 0 | sudo tee "+cpu+"/cpu*/cpufreq/boost",
			"per-policy boost is on for %s", cpuList(policyBoost))
	}
	if c.Driver == "amd-pstate-epp" && c.Boost == nil && len(policyBoost) == 0 && !anyBoostFile(c) {
		add("boost", "echo passive | sudo tee "+cpu+"/amd_pstate/status   (or guided; or boot with amd_pstate=disable to get acpi-cpufreq and its boost file)",
			"amd-pstate-epp in active mode has no boost file: boost cannot be switched off in this mode")
	}

	// Governors other than performance, and EPP other than performance.
	if bad := byValue(c.Policies, func(p Policy) string { return p.Governor }, "performance"); len(bad) > 0 {
		add("governor", "echo performance | sudo tee "+cpu+"/cpufreq/policy*/scaling_governor   (or: sudo cpupower frequency-set -g performance)",
			"governor is not performance: %s (a 2× QPS difference from the governor alone has been measured)", bad)
	}
	if bad := byValue(c.Policies, func(p Policy) string { return p.EPP }, "performance"); len(bad) > 0 {
		add("epp", "echo performance | sudo tee "+cpu+"/cpufreq/policy*/energy_performance_preference   (the performance governor also forces it)",
			"energy-performance preference is not performance: %s", bad)
	}
	if c.Driver == "none" {
		if c.VM {
			add("no-cpufreq", "nothing to tune inside the VM: pin its vCPUs and fix the host's frequency, or use a dedicated host",
				"no cpufreq driver: this is a VM (%s), whose clock the hypervisor sets", orUnknown(c.Hypervisor))
		} else {
			add("no-cpufreq", "load a cpufreq driver (acpi-cpufreq, amd-pstate, intel_pstate) or check the BIOS",
				"no cpufreq driver: the frequency state cannot be seen or set")
		}
	}
	if c.VM && c.StealPct > stealRiskPct {
		add("steal", "run on a host with dedicated CPUs, or pin the VM's vCPUs on the hypervisor",
			"CPU steal is %.1f%% since boot: other guests take this VM's CPU time", c.StealPct)
	}
	if c.SMTControl == "on" || (c.SMTActive != nil && *c.SMTActive) {
		add("smt", "echo off | sudo tee "+cpu+"/smt/control   (or boot with nosmt)",
			"SMT is on: two threads share a core's caches and ports, so placement changes results")
	}
	if c.THP == "always" {
		add("thp", "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled",
			"transparent huge pages are always on: compaction and khugepaged stalls come and go")
	}
	if c.SwapKB > 0 && (c.Swappiness == nil || *c.Swappiness > 10) {
		add("swap", "sudo swapoff -a   (or: sudo sysctl vm.swappiness=1)",
			"swap is on (%d MB, swappiness %s): a server that swaps measures the disk", c.SwapKB/1024, intOr(c.Swappiness, "?"))
	}
	return out
}

func anyBoostFile(c *Check) bool {
	for _, p := range c.Policies {
		if p.Boost != nil {
			return true
		}
	}
	return false
}

// byValue groups CPUs whose field is not want (and not empty): "powersave on cpu0-7".
func byValue(ps []Policy, field func(Policy) string, want string) string {
	groups := map[string][]string{}
	for _, p := range ps {
		if v := field(p); v != "" && v != want {
			groups[v] = append(groups[v], p.CPU)
		}
	}
	var parts []string
	for v, cpus := range groups {
		parts = append(parts, v+" on "+cpuList(cpus))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// cpuList writes cpu0 cpu1 cpu2 cpu5 as cpu0-2,5.
func cpuList(cpus []string) string {
	n := make(CPUs, len(cpus))
	for i, c := range cpus {
		n[i] = cpuNum(c)
	}
	sort.Ints(n)
	return "cpu" + n.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "hypervisor unknown"
	}
	return s
}

func intOr(p *int, def string) string {
	if p == nil {
		return def
	}
	return fmt.Sprint(*p)
}
