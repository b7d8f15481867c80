// Package host owns what the benchmark host contributes to variance: the
// cpufreq driver and its mode, boost, governors, EPP, SMT, transparent huge
// pages, swap, virtualisation and CPU steal. It reads them from a sysfs and a
// procfs root of the caller's choosing (the real /sys and /proc, or a fixture
// tree), says which ones put results at risk and the command that removes
// each. It never starts servers or runs benchmarks.
package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/sysfs"
)

// Roots are where sysfs and procfs are mounted.
type Roots struct{ Sys, Proc string }

// Real is the running system's.
var Real = Roots{Sys: "/sys", Proc: "/proc"}

// Policy is one CPU's frequency settings (CPUs that share a policy repeat it).
type Policy struct {
	CPU          string   `json:"cpu"`
	Driver       string   `json:"driver"`
	Governor     string   `json:"governor"`
	Governors    []string `json:"available_governors,omitempty"`
	EPP          string   `json:"epp,omitempty"`
	EPPs         []string `json:"available_epp,omitempty"`
	Boost        *bool    `json:"boost,omitempty"` // per-policy boost (amd-pstate)
	MinKHz       uint64   `json:"min_khz"`         // scaling_min_freq
	MaxKHz       uint64   `json:"max_khz"`         // scaling_max_freq
	HWMinKHz     uint64   `json:"cpuinfo_min_khz"`
	HWMaxKHz     uint64   `json:"cpuinfo_max_khz"`
	CurKHz       uint64   `json:"cur_khz,omitempty"`
	AvailableKHz []uint64 `json:"available_khz,omitempty"` // scaling_available_frequencies (acpi-cpufreq)
}

// Check is what Inspect found: the facts, and the risks they carry.
type Check struct {
	Kernel     string            `json:"kernel"`
	CPUModel   string            `json:"cpu_model"`
	CPUs       int               `json:"cpus"`
	MemKB      uint64            `json:"mem_kb"`
	Driver     string            `json:"cpufreq_driver"`           // "none" without cpufreq
	AMDPState  string            `json:"amd_pstate,omitempty"`     // active, passive, guided, disable
	Boost      *bool             `json:"boost,omitempty"`          // /sys/devices/system/cpu/cpufreq/boost
	NoTurbo    *bool             `json:"intel_no_turbo,omitempty"` // intel_pstate/no_turbo
	Policies   []Policy          `json:"policies,omitempty"`
	SMTControl string            `json:"smt_control,omitempty"`
	SMTActive  *bool             `json:"smt_active,omitempty"`
	Cmdline    map[string]string `json:"cmdline_flags,omitempty"`
	THP        string            `json:"transparent_hugepage,omitempty"`
	SwapKB     uint64            `json:"swap_kb"`
	Swappiness *int              `json:"swappiness,omitempty"`
	VM         bool              `json:"vm"`
	Hypervisor string            `json:"hypervisor,omitempty"`
	StealPct   float64           `json:"steal_pct_since_boot"`
	Risks      []Risk            `json:"risks"`
	// Storage is the block devices under the datadirs' folder (StorageOf),
	// where the caller looked; Inspect leaves it nil.
	Storage    *Storage `json:"storage,omitempty"`
	Unreadable []string `json:"unreadable,omitempty"` // files that exist but could not be read
	// Limits bound how many connections a client can open (sweeps).
	Limits *Limits `json:"limits,omitempty"`
	// Agent is the fleet agent's name when it is not the machine's
	// hostname (qpslab agent --name): part of the host's identity, so that
	// two agents on one machine count as two hosts (docs/fleet.md).
	Agent string `json:"agent,omitempty"`
}

// Risk is one variance source, with the command that removes it.
type Risk struct {
	Name   string `json:"name"`
	Detail string `json:"detail"`
	Fix    string `json:"fix"`
}

// cmdlineFlags are the kernel parameters that change frequency, SMT or
// scheduling behaviour.
var cmdlineFlags = []string{"amd_pstate", "amd_prefcore", "intel_pstate", "nosmt", "isolcpus", "nohz_full",
	"rcu_nocbs", "idle", "processor.max_cstate", "intel_idle.max_cstate", "mitigations", "transparent_hugepage"}

// Inspect reads the host under r.
func Inspect(r Roots) (*Check, error) {
	pfs, err := procfs.NewFS(r.Proc)
	if err != nil {
		return nil, fmt.Errorf("open procfs at %s: %w", r.Proc, err)
	}
	sfs, err := sysfs.NewFS(r.Sys)
	if err != nil {
		return nil, fmt.Errorf("open sysfs at %s: %w", r.Sys, err)
	}
	c := &Check{Driver: "none", Cmdline: map[string]string{}}
	rd := reader{c: c}

	c.Kernel = rd.str(filepath.Join(r.Proc, "sys/kernel/osrelease"))
	if infos, err := pfs.CPUInfo(); err == nil && len(infos) > 0 {
		c.CPUs = len(infos)
		c.CPUModel = infos[0].ModelName
		for _, f := range infos[0].Flags {
			if f == "hypervisor" {
				c.VM = true
			}
		}
	}
	if mi, err := pfs.Meminfo(); err == nil {
		if mi.MemTotal != nil {
			c.MemKB = *mi.MemTotal
		}
		if mi.SwapTotal != nil {
			c.SwapKB = *mi.SwapTotal
		}
	}
	if st, err := pfs.Stat(); err == nil {
		t := st.CPUTotal
		if total := t.User + t.Nice + t.System + t.Idle + t.Iowait + t.IRQ + t.SoftIRQ + t.Steal; total > 0 {
			c.StealPct = 100 * t.Steal / total
		}
	}
	if args, err := pfs.CmdLine(); err == nil {
		for _, a := range args {
			k, v, _ := strings.Cut(a, "=")
			for _, f := range cmdlineFlags {
				if k == f {
					c.Cmdline[k] = v
				}
			}
		}
	}
	if v := rd.str(filepath.Join(r.Sys, "class/dmi/id/sys_vendor")); v != "" && c.VM {
		c.Hypervisor = v
	}
	if sw := rd.str(filepath.Join(r.Proc, "sys/vm/swappiness")); sw != "" {
		if n, err := strconv.Atoi(sw); err == nil {
			c.Swappiness = &n
		}
	}
	c.THP = bracketed(rd.str(filepath.Join(r.Sys, "kernel/mm/transparent_hugepage/enabled")))

	cpu := filepath.Join(r.Sys, "devices/system/cpu")
	c.AMDPState = rd.str(filepath.Join(cpu, "amd_pstate/status"))
	c.Boost = rd.boolp(filepath.Join(cpu, "cpufreq/boost"))
	c.NoTurbo = rd.boolp(filepath.Join(cpu, "intel_pstate/no_turbo"))
	c.SMTControl = rd.str(filepath.Join(cpu, "smt/control"))
	c.SMTActive = rd.boolp(filepath.Join(cpu, "smt/active"))

	// The generic cpufreq files come through procfs's sysfs reader; EPP and
	// per-policy boost are not in it, and are read here.
	stats, err := sfs.SystemCpufreq()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read cpufreq under %s: %w", cpu, err)
	}
	for _, s := range stats {
		if s.Name == "" || s.Driver == "" {
			continue // a CPU without cpufreq (a VM): nothing to record
		}
		dir := filepath.Join(cpu, "cpu"+s.Name, "cpufreq")
		p := Policy{CPU: "cpu" + s.Name, Driver: s.Driver, Governor: s.Governor, Governors: strings.Fields(s.AvailableGovernors),
			MinKHz: deref(s.ScalingMinimumFrequency), MaxKHz: deref(s.ScalingMaximumFrequency),
			HWMinKHz: deref(s.CpuinfoMinimumFrequency), HWMaxKHz: deref(s.CpuinfoMaximumFrequency),
			CurKHz: deref(s.ScalingCurrentFrequency),
			EPP:    rd.str(filepath.Join(dir, "energy_performance_preference")),
			EPPs:   strings.Fields(rd.str(filepath.Join(dir, "energy_performance_available_preferences"))),
			Boost:  rd.boolp(filepath.Join(dir, "boost")),
		}
		for _, f := range strings.Fields(rd.str(filepath.Join(dir, "scaling_available_frequencies"))) {
			if n, err := strconv.ParseUint(f, 10, 64); err == nil {
				p.AvailableKHz = append(p.AvailableKHz, n)
			}
		}
		c.Policies = append(c.Policies, p)
	}
	sort.Slice(c.Policies, func(i, j int) bool { return cpuNum(c.Policies[i].CPU) < cpuNum(c.Policies[j].CPU) })
	if len(c.Policies) > 0 && c.Policies[0].Driver != "" {
		c.Driver = c.Policies[0].Driver
	}
	c.Risks = risks(c)
	l := ReadLimits(r)
	c.Limits = &l
	return c, nil
}

func cpuNum(s string) int { n, _ := strconv.Atoi(strings.TrimPrefix(s, "cpu")); return n }

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// bracketed picks the selected value of a sysfs choice list: "always [madvise] never".
func bracketed(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// reader reads small sysfs/procfs files, noting those that exist but cannot
// be read (permissions), so a check never passes silently for lack of access.
type reader struct{ c *Check }

func (r reader) str(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.c.Unreadable = append(r.c.Unreadable, p)
		}
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (r reader) boolp(p string) *bool {
	s := r.str(p)
	if s == "" {
		return nil
	}
	v := s == "1" || s == "on" || s == "Y"
	return &v
}
