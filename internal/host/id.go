package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// identity is what names a host in stored history: the machine (kernel
// release, CPU model, CPU count, memory, virtualisation) and the CPU state
// that sets its speed (cpufreq driver and mode, boost, governors, EPP, SMT),
// and the fleet agent's name when it names the host otherwise than its
// hostname (two agents on one machine are two hosts).
// Nothing that moves while the machine stays the same is in it: not steal,
// not current frequencies, not the scaling limits firmware and thermal
// drivers lower at run time, not the risks' text, not unreadable files.
// THP, swap and the kernel command line stay in the fingerprint (reports
// show them) without naming a different host.
//
// Only fields that fingerprints already stored carry are used, so that old
// and new runs of one machine share an id.
type identity struct {
	Kernel      string `json:"kernel"`
	CPUModel    string `json:"cpu_model"`
	CPUs        int    `json:"cpus"`
	MemMiB      uint64 `json:"mem_mib"`
	VM          bool   `json:"vm"`
	Hypervisor  string `json:"hypervisor"`
	Driver      string `json:"driver"`
	AMDPState   string `json:"amd_pstate"`
	Boost       string `json:"boost"`
	NoTurbo     string `json:"no_turbo"`
	PolicyBoost string `json:"policy_boost"`
	Governors   string `json:"governors"`
	EPP         string `json:"epp"`
	SMTControl  string `json:"smt_control"`
	SMTActive   string `json:"smt_active"`
	// Agent is a fleet agent's name other than the hostname; left out
	// when empty, so that every other host keeps its id.
	Agent string `json:"agent,omitempty"`
}

// ID is the host's identity: 12 hex digits of a hash of its stable facts
// (see identity). Two checks of one machine in one state give one ID
// however much steal, free memory or clock moved between them.
func (c Check) ID() string {
	b, err := json.Marshal(c.identity())
	if err != nil {
		panic(err) // strings, integers and a bool always encode
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:6])
}

// identity is the facts of c that name its host.
func (c Check) identity() identity {
	driver := c.Driver
	if driver == "" {
		driver = "none"
	}
	return identity{
		Kernel: c.Kernel, CPUModel: strings.Join(strings.Fields(c.CPUModel), " "), CPUs: c.CPUs, MemMiB: memMiB(c.MemKB),
		VM: c.VM, Hypervisor: c.Hypervisor, Driver: driver, AMDPState: c.AMDPState,
		Boost: optBool(c.Boost), NoTurbo: optBool(c.NoTurbo),
		PolicyBoost: perCPU(c.Policies, func(p Policy) string { return optBool(p.Boost) }),
		Governors:   perCPU(c.Policies, func(p Policy) string { return p.Governor }),
		EPP:         perCPU(c.Policies, func(p Policy) string { return p.EPP }),
		SMTControl:  c.SMTControl, SMTActive: optBool(c.SMTActive), Agent: c.Agent,
	}
}

// ID is the identity of a stored fingerprint (host check's JSON; see
// Check.ID).
func ID(fingerprint json.RawMessage) (string, error) {
	var c Check
	if err := json.Unmarshal(fingerprint, &c); err != nil {
		return "", fmt.Errorf("host fingerprint: %w", err)
	}
	return c.ID(), nil
}

// memMiB is MemTotal (kB) rounded up to a sixteenth of the power of two at
// or above it, in MiB: 23.5 GiB → 24 GiB, 31.3 GiB → 32 GiB, 62.7 GiB → 64
// GiB, 7.7 GiB → 8 GiB. MemTotal is the installed memory less what firmware
// and the kernel keep (1–3 %), and it moves by a few MB between kernels and
// boots (crash-kernel and firmware reservations, the kernel's own size);
// rounding up to steps of 3–6 % puts the step's edge at the installed size,
// well away from where MemTotal sits, so those moves never change the id
// (rounding to the nearest GiB would: 23.5 GiB sits on an edge).
func memMiB(kb uint64) uint64 {
	if kb == 0 {
		return 0
	}
	p := uint64(1)
	for p < kb {
		p <<= 1
	}
	step := max(p/16, 1024)
	return (kb + step - 1) / step * step / 1024
}

func optBool(b *bool) string {
	if b == nil {
		return ""
	}
	if *b {
		return "1"
	}
	return "0"
}

// perCPU writes a per-policy setting as "performance on cpu0-7" (groups
// sorted, joined with "; "), "" when no policy has it.
func perCPU(ps []Policy, field func(Policy) string) string {
	groups := map[string][]string{}
	for _, p := range ps {
		if v := field(p); v != "" {
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
