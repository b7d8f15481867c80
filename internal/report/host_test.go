package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/host"
)

func boolp(b bool) *bool { return &b }

// The host check's text: one line per run of CPUs that share a setting (a
// setting that comes back later starts a new line), boost from the global
// file before per-policy files, kernel flags in name order, and each risk
// with its fix on the line under it.
func TestHostCheckText(t *testing.T) {
	pol := func(cpu, gov string) host.Policy {
		return host.Policy{CPU: cpu, Governor: gov, MinKHz: 400_000, MaxKHz: 3_800_000, HWMinKHz: 400_000, HWMaxKHz: 4_200_000, Boost: boolp(true)}
	}
	c := &host.Check{
		Kernel: "6.1.0", CPUs: 4, CPUModel: "Test CPU", MemKB: 8 << 20, Driver: "amd-pstate", AMDPState: "passive",
		Boost:    boolp(false),
		Policies: []host.Policy{pol("cpu0", "powersave"), pol("cpu1", "powersave"), pol("cpu2", "performance"), pol("cpu3", "powersave")},
		Cmdline:  map[string]string{"nosmt": "", "mitigations": "off", "amd_pstate": "passive"},
		VM:       true, StealPct: 2.25,
		Risks: []host.Risk{{Name: "governor", Detail: "powersave on cpu0-1,3", Fix: "echo performance"}},
	}
	var b bytes.Buffer
	if err := HostCheck(&b, c); err != nil {
		t.Fatal(err)
	}
	want := `kernel 6.1.0, 4 CPUs (Test CPU), 8192 MB memory
VM: yes (-), CPU steal 2.2% since boot
cpufreq driver: amd-pstate (amd_pstate passive)
boost: cpufreq/boost = 0
  cpu0,cpu1: governor powersave, 400–3800 MHz (hardware 400–4200)
  cpu2: governor performance, 400–3800 MHz (hardware 400–4200)
  cpu3: governor powersave, 400–3800 MHz (hardware 400–4200)
SMT: -; THP: -; swap: 0 MB
kernel flags: amd_pstate=passive mitigations=off nosmt

1 variance risk(s):
- governor: powersave on cpu0-1,3
    fix: echo performance
`
	if b.String() != want {
		t.Errorf("HostCheck:\n%s\nwant:\n%s", b.String(), want)
	}

	c.Boost, c.Risks = nil, nil
	b.Reset()
	HostCheck(&b, c)
	if !strings.Contains(b.String(), "boost: per policy (cpu*/cpufreq/boost)\n") || !strings.HasSuffix(b.String(), "\n\nno variance risk found\n") {
		t.Errorf("HostCheck without a boost file or risks:\n%s", b.String())
	}
}

// Tune and reset say that nothing needed doing only when they finished:
// after an error, the error says what happened.
func TestHostTunedAndReset(t *testing.T) {
	var b bytes.Buffer
	HostTuned(&b, &host.TuneResult{Notes: []string{"no knob"}}, true)
	HostTuned(&b, &host.TuneResult{}, false)
	HostTuned(&b, nil, false)
	HostReset(&b, []host.Change{{Path: "/sys/x", Old: "0\n", New: "1\n"}}, true)
	HostReset(&b, nil, false)
	HostReset(&b, nil, true)
	want := "note: no knob\nnothing to change\n/sys/x: 0 -> 1\nnothing to reset: qpslab host tune has not changed this host\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
