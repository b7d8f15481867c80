package host

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Difference is one fact of the host's identity (identity: what ID hashes)
// in which two fingerprints differ, each side as host check words it.
type Difference struct {
	Field string `json:"field"` // "boost", "governor", "SMT", "CPU model", "kernel", …
	A     string `json:"a"`
	B     string `json:"b"`
}

func (d Difference) String() string { return d.Field + " " + d.A + " vs " + d.B }

// Differences says where the hosts of two fingerprints (host check's
// JSON, as runs record it) differ: nothing when they are one host (the
// same ID), else at least one Difference, the CPU's speed state first
// (boost, governor, EPP, SMT, the cpufreq driver), then the machine. An
// empty fingerprint (an import's) is no host to compare: the error says
// so, as it does for one that does not parse.
func Differences(a, b json.RawMessage) ([]Difference, error) {
	var ca, cb Check
	for _, x := range []struct {
		fp json.RawMessage
		c  *Check
	}{{a, &ca}, {b, &cb}} {
		if len(x.fp) == 0 {
			return nil, fmt.Errorf("host fingerprint: none recorded")
		}
		if err := json.Unmarshal(x.fp, x.c); err != nil {
			return nil, fmt.Errorf("host fingerprint: %w", err)
		}
	}
	return ca.Differences(cb), nil
}

// Differences says where c's host and o's differ (see the function).
func (c Check) Differences(o Check) []Difference {
	ia, ib := c.identity(), o.identity()
	var out []Difference
	for _, f := range identityFields {
		if va, vb := f.of(ia), f.of(ib); va != vb {
			out = append(out, Difference{Field: f.name, A: orNone(va), B: orNone(vb)})
		}
	}
	if len(out) == 0 && ia != ib { // a fact no field above words: never hidden
		out = append(out, Difference{Field: "host id", A: c.ID(), B: o.ID()})
	}
	return out
}

// identityFields word every fact of identity, in the order a difference is
// told: what sets the CPU's speed first.
var identityFields = []struct {
	name string
	of   func(identity) string
}{
	{"boost", boostWord},
	{"governor", func(i identity) string { return i.Governors }},
	{"EPP", func(i identity) string { return i.EPP }},
	{"SMT", func(i identity) string {
		switch i.SMTActive {
		case "1":
			return strings.TrimSpace(i.SMTControl + " (active)")
		case "0":
			return strings.TrimSpace(i.SMTControl + " (inactive)")
		}
		return i.SMTControl
	}},
	{"cpufreq driver", func(i identity) string {
		if i.AMDPState != "" {
			return i.Driver + " (amd_pstate " + i.AMDPState + ")"
		}
		return i.Driver
	}},
	{"CPU model", func(i identity) string { return i.CPUModel }},
	{"CPU count", func(i identity) string { return fmt.Sprint(i.CPUs) }},
	{"memory", func(i identity) string { return fmt.Sprintf("%g GiB", float64(i.MemMiB)/1024) }},
	{"kernel", func(i identity) string { return i.Kernel }},
	{"virtualisation", func(i identity) string {
		if !i.VM {
			return "bare metal"
		}
		if i.Hypervisor != "" {
			return "VM (" + i.Hypervisor + ")"
		}
		return "VM"
	}},
	{"fleet agent", func(i identity) string { return i.Agent }},
}

// boostWord is a host's boost as on or off: the global cpufreq/boost, else
// intel_pstate's no_turbo (1 is off), with the per-policy files where
// they say something else; "" where there is no boost file.
func boostWord(i identity) string {
	onOff := func(v string) string {
		switch v {
		case "1":
			return "on"
		case "0":
			return "off"
		}
		return v
	}
	w := onOff(i.Boost)
	if w == "" {
		switch i.NoTurbo {
		case "1":
			w = "off"
		case "0":
			w = "on"
		}
	}
	if i.PolicyBoost == "" {
		return w
	}
	var per []string
	for _, g := range strings.Split(i.PolicyBoost, "; ") {
		v, cpus, _ := strings.Cut(g, " on ")
		per = append(per, onOff(v)+" on "+cpus)
	}
	if len(per) == 1 && (w == "" || strings.HasPrefix(per[0], w+" ")) {
		return strings.SplitN(per[0], " ", 2)[0] // one value on every CPU
	}
	if w == "" {
		return "per CPU: " + strings.Join(per, "; ")
	}
	return w + " (per CPU: " + strings.Join(per, "; ") + ")"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
