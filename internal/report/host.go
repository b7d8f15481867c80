package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/host"
)

// HostCheck writes what qpslab host check prints: the kernel, CPUs and
// memory; whether this is a VM; the cpufreq driver, boost and one line per
// distinct frequency setting; SMT, THP, swap and the kernel flags that
// matter; the datadirs' storage, where it was looked at; the files it could
// not read; then each variance risk with the command that removes it.
func HostCheck(w io.Writer, c *host.Check) error {
	fmt.Fprintf(w, "kernel %s, %d CPUs (%s), %d MB memory\n", c.Kernel, c.CPUs, c.CPUModel, c.MemKB/1024)
	vm := "no"
	if c.VM {
		vm = fmt.Sprintf("yes (%s), CPU steal %.1f%% since boot", dash(c.Hypervisor), c.StealPct)
	}
	fmt.Fprintf(w, "VM: %s\n", vm)
	fmt.Fprintf(w, "cpufreq driver: %s", c.Driver)
	if c.AMDPState != "" {
		fmt.Fprintf(w, " (amd_pstate %s)", c.AMDPState)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "boost: %s\n", boostLine(c))
	for _, g := range policyLines(c.Policies) {
		fmt.Fprintf(w, "  %s\n", g)
	}
	fmt.Fprintf(w, "SMT: %s; THP: %s; swap: %d MB\n", dash(c.SMTControl), dash(c.THP), c.SwapKB/1024)
	if len(c.Cmdline) > 0 {
		var fl []string
		for k, v := range c.Cmdline {
			fl = append(fl, strings.TrimSuffix(k+"="+v, "="))
		}
		sort.Strings(fl) // a map: the same host prints the same line
		fmt.Fprintf(w, "kernel flags: %s\n", strings.Join(fl, " "))
	}
	if l := c.Limits; l != nil {
		fmt.Fprintf(w, "connection limits: open files %d (hard %d), somaxconn %s, tcp_max_syn_backlog %s, ephemeral ports %s\n",
			l.NoFileSoft, l.NoFileHard, intOrDash(l.Somaxconn), intOrDash(l.SynBacklog), portRange(*l))
	}
	for _, l := range StorageLines(c.Storage) {
		fmt.Fprintln(w, l)
	}
	for _, p := range c.Unreadable {
		fmt.Fprintf(w, "could not read %s (run as root to see it)\n", p)
	}
	if len(c.Risks) == 0 {
		_, err := fmt.Fprintln(w, "\nno variance risk found")
		return err
	}
	fmt.Fprintf(w, "\n%d variance risk(s):\n", len(c.Risks))
	for _, r := range c.Risks {
		fmt.Fprintf(w, "- %s: %s\n    fix: %s\n", r.Name, r.Detail, r.Fix)
	}
	return nil
}

// StorageLines are the block devices under the datadirs' folder, as host
// check prints them: the folder's device, then each device under it.
func StorageLines(s *host.Storage) []string {
	if s == nil {
		return nil
	}
	if s.Device == nil {
		return []string{fmt.Sprintf("storage of %s: unknown (%s)", s.Path, s.Err)}
	}
	dev := func(d host.BlockDevice) string {
		name := d.Name
		if d.Partition != "" {
			name = d.Partition + " on " + d.Name
		}
		rot := "rotational ?"
		if d.Rotational != nil {
			rot = map[bool]string{true: "rotational", false: "not rotational"}[*d.Rotational]
		}
		return fmt.Sprintf("%s: max_sectors_kb %d, max_hw_sectors_kb %d, scheduler %s, %s, read_ahead_kb %d",
			name, d.MaxSectorsKB, d.MaxHWSectorsKB, dash(d.Scheduler), rot, d.ReadAheadKB)
	}
	out := []string{fmt.Sprintf("storage of %s: %s", s.Path, dev(*s.Device))}
	for _, m := range s.Members {
		out = append(out, fmt.Sprintf("  under %s: %s", m.Under, dev(m)))
	}
	return out
}

// HostCheckJSON writes the check as qpslab host check --json prints it:
// host.Check's own JSON, indented.
func HostCheckJSON(w io.Writer, c *host.Check) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// HostSummary is one line about the host and a line per variance risk (the
// short form of HostCheck, which qpslab demo prints).
func HostSummary(w io.Writer, hc *host.Check) {
	vm := "bare metal"
	if hc.VM {
		vm = "a VM"
		if hc.Hypervisor != "" {
			vm += " (" + hc.Hypervisor + ")"
		}
	}
	fmt.Fprintf(w, "%s, %d CPUs, %.1f GB, kernel %s, %s, cpufreq driver %s, steal %.1f%% since boot\n",
		hc.CPUModel, hc.CPUs, float64(hc.MemKB)/1e6, hc.Kernel, vm, hc.Driver, hc.StealPct)
	for _, r := range hc.Risks {
		fmt.Fprintf(w, "  risk: %s\n", riskLine(r))
	}
}

// HostRisks warns of each variance risk in one line, as a run starts.
func HostRisks(w io.Writer, risks []host.Risk) {
	for _, r := range risks {
		fmt.Fprintf(w, "host variance risk: %s\n", riskLine(r))
	}
}

func riskLine(r host.Risk) string { return fmt.Sprintf("%s: %s (fix: %s)", r.Name, r.Detail, r.Fix) }

// HostTuned writes what qpslab host tune did: each file it changed, old ->
// new, and each knob it could not turn; finished (tune returned no error)
// with nothing changed, it says that nothing needed changing.
func HostTuned(w io.Writer, res *host.TuneResult, finished bool) {
	if res == nil {
		return
	}
	hostChanges(w, res.Changed)
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if finished && len(res.Changed) == 0 {
		fmt.Fprintln(w, "nothing to change")
	}
}

// HostReset writes what qpslab host reset put back, file by file; finished
// (reset returned no error) with nothing put back, it says that tune had
// changed nothing.
func HostReset(w io.Writer, done []host.Change, finished bool) {
	hostChanges(w, done)
	if finished && len(done) == 0 {
		fmt.Fprintln(w, "nothing to reset: qpslab host tune has not changed this host")
	}
}

func hostChanges(w io.Writer, chs []host.Change) {
	for _, ch := range chs {
		fmt.Fprintf(w, "%s: %s -> %s\n", ch.Path, strings.TrimSpace(ch.Old), strings.TrimSpace(ch.New))
	}
}

// boostLine says where boost is set: the global boost file, intel_pstate's
// no_turbo, per policy, or nowhere.
func boostLine(c *host.Check) string {
	switch {
	case c.Boost != nil:
		return "cpufreq/boost = " + boolDigit(*c.Boost)
	case c.NoTurbo != nil:
		return "intel_pstate/no_turbo = " + boolDigit(*c.NoTurbo)
	}
	for _, p := range c.Policies {
		if p.Boost != nil {
			return "per policy (cpu*/cpufreq/boost)"
		}
	}
	return "no boost file"
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// policyLines is one line per run of CPUs with the same setting:
// "cpu0,cpu1: governor schedutil, 1600–3800 MHz (hardware 400–4200)".
func policyLines(ps []host.Policy) []string {
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

func intOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func portRange(l host.Limits) string {
	if l.Ports() == 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%d-%d)", l.Ports(), l.PortLo, l.PortHi)
}
