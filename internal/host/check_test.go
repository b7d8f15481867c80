package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// machine describes a fixture host, modelled on the seeds' machines.
type machine struct {
	model    string
	cpus     int
	vm       bool
	driver   string            // "" for no cpufreq
	files    map[string]string // extra sysfs files, relative to /sys/devices/system/cpu
	policy   map[string]string // per-CPU cpufreq files
	cmdline  string
	stealPct int
	swapKB   int
}

// tree writes m as a sysfs and a procfs root.
func (m machine) tree(t *testing.T) Roots {
	t.Helper()
	root := t.TempDir()
	r := Roots{Sys: filepath.Join(root, "sys"), Proc: filepath.Join(root, "proc")}
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ci strings.Builder
	flags := "fpu vme de pse tsc msr pae"
	if m.vm {
		flags += " hypervisor"
	}
	for i := 0; i < m.cpus; i++ {
		fmt.Fprintf(&ci, "processor\t: %d\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 116\nmodel name\t: %s\nstepping\t: 1\ncpu MHz\t\t: 3800.000\ncache size\t: 1024 KB\nphysical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\nflags\t\t: %s\nbogomips\t: 7585.00\n\n",
			i, m.model, m.cpus, i, m.cpus, flags)
	}
	write(filepath.Join(r.Proc, "cpuinfo"), ci.String())
	write(filepath.Join(r.Proc, "meminfo"), fmt.Sprintf("MemTotal:       32768000 kB\nMemFree:        30000000 kB\nSwapTotal:      %d kB\nSwapFree:       %d kB\n", m.swapKB, m.swapKB))
	steal := m.stealPct * 10
	write(filepath.Join(r.Proc, "stat"), fmt.Sprintf("cpu  %d 0 100 %d 0 0 0 %d 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\nintr 1\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n", 900-steal, 0, steal))
	write(filepath.Join(r.Proc, "cmdline"), "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro "+m.cmdline)
	write(filepath.Join(r.Proc, "sys/kernel/osrelease"), "6.8.0-test")
	write(filepath.Join(r.Proc, "sys/vm/swappiness"), "60")
	write(filepath.Join(r.Sys, "kernel/mm/transparent_hugepage/enabled"), "always [madvise] never")
	cpu := filepath.Join(r.Sys, "devices/system/cpu")
	write(filepath.Join(cpu, "offline"), "")
	write(filepath.Join(cpu, "online"), fmt.Sprintf("0-%d", m.cpus-1))
	for name, v := range m.files {
		write(filepath.Join(cpu, name), v)
	}
	for i := 0; i < m.cpus; i++ {
		if m.driver == "" {
			os.MkdirAll(filepath.Join(cpu, fmt.Sprintf("cpu%d", i)), 0o755)
			continue
		}
		dir := filepath.Join(cpu, fmt.Sprintf("cpu%d", i), "cpufreq")
		write(filepath.Join(dir, "scaling_driver"), m.driver)
		write(filepath.Join(dir, "related_cpus"), fmt.Sprint(i))
		write(filepath.Join(dir, "scaling_setspeed"), "<unsupported>")
		for name, v := range m.policy {
			write(filepath.Join(dir, name), v)
		}
	}
	return r
}

// The Ryzen 7 7840HS of the seeds' posts, in its four driver modes, an Intel
// laptop, and a VM like this machine.
var (
	ryzenACPI = func(boost string) machine {
		return machine{model: "AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", cpus: 4, driver: "acpi-cpufreq",
			files: map[string]string{"cpufreq/boost": boost, "smt/control": "on", "smt/active": "1"},
			policy: map[string]string{"scaling_governor": "schedutil", "scaling_available_governors": "conservative ondemand userspace powersave performance schedutil",
				"scaling_available_frequencies": "3800000 2200000 1600000", "scaling_min_freq": "1600000", "scaling_max_freq": "3800000",
				"cpuinfo_min_freq": "1600000", "cpuinfo_max_freq": "3800000", "scaling_cur_freq": "2200000"},
			cmdline: "amd_pstate=disable"}
	}
	ryzenEPP = machine{model: "AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", cpus: 4, driver: "amd-pstate-epp",
		files: map[string]string{"amd_pstate/status": "active", "smt/control": "on"},
		policy: map[string]string{"scaling_governor": "powersave", "scaling_available_governors": "performance powersave",
			"energy_performance_preference": "balance_performance", "energy_performance_available_preferences": "default performance balance_performance balance_power power",
			"scaling_min_freq": "400000", "scaling_max_freq": "5137000", "cpuinfo_min_freq": "400000", "cpuinfo_max_freq": "5137000"}}
	ryzenPassive = func(mode string) machine {
		return machine{model: "AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", cpus: 4, driver: "amd-pstate",
			files: map[string]string{"amd_pstate/status": mode, "smt/control": "on"},
			policy: map[string]string{"scaling_governor": "schedutil", "scaling_available_governors": "conservative ondemand userspace powersave performance schedutil",
				"boost": "1", "scaling_min_freq": "400000", "scaling_max_freq": "5137000", "cpuinfo_min_freq": "400000", "cpuinfo_max_freq": "5137000"},
			cmdline: "amd_pstate=" + mode}
	}
	intel = func(noTurbo string) machine {
		return machine{model: "Intel(R) Core(TM) i7-1165G7 @ 2.80GHz", cpus: 4, driver: "intel_pstate",
			files: map[string]string{"intel_pstate/no_turbo": noTurbo, "intel_pstate/status": "active", "smt/control": "off"},
			policy: map[string]string{"scaling_governor": "performance", "scaling_available_governors": "performance powersave",
				"energy_performance_preference": "performance", "scaling_min_freq": "400000", "scaling_max_freq": "4700000",
				"cpuinfo_min_freq": "400000", "cpuinfo_max_freq": "4700000"}}
	}
	vm = machine{model: "AMD EPYC 9R14", cpus: 2, vm: true, stealPct: 5, swapKB: 0}
)

func riskNames(c *Check) []string {
	var out []string
	for _, r := range c.Risks {
		out = append(out, r.Name)
	}
	return out
}

func TestInspectMachines(t *testing.T) {
	tru, fal := true, false
	for _, tc := range []struct {
		name      string
		m         machine
		driver    string
		amdPState string
		boost     *bool
		noTurbo   *bool
		risks     []string // names, in order
		fixHas    map[string]string
	}{
		{"ryzen acpi-cpufreq boost 1", ryzenACPI("1"), "acpi-cpufreq", "", &tru, nil,
			[]string{"boost", "governor", "smt"}, map[string]string{"boost": "/sys/devices/system/cpu/cpufreq/boost", "governor": "scaling_governor"}},
		{"ryzen acpi-cpufreq boost 0", ryzenACPI("0"), "acpi-cpufreq", "", &fal, nil,
			[]string{"governor", "smt"}, nil},
		{"ryzen amd-pstate-epp active", ryzenEPP, "amd-pstate-epp", "active", nil, nil,
			[]string{"boost", "governor", "epp", "smt"}, map[string]string{"boost": "amd_pstate/status", "epp": "energy_performance_preference"}},
		{"ryzen amd-pstate guided", ryzenPassive("guided"), "amd-pstate", "guided", nil, nil,
			[]string{"boost", "governor", "smt"}, map[string]string{"boost": "cpu*/cpufreq/boost"}},
		{"ryzen amd-pstate passive", ryzenPassive("passive"), "amd-pstate", "passive", nil, nil,
			[]string{"boost", "governor", "smt"}, nil},
		{"intel turbo on", intel("0"), "intel_pstate", "", nil, &fal,
			[]string{"boost"}, map[string]string{"boost": "intel_pstate/no_turbo"}},
		{"intel turbo off", intel("1"), "intel_pstate", "", nil, &tru, nil, nil},
		{"vm without cpufreq", vm, "none", "", nil, nil,
			[]string{"no-cpufreq", "steal"}, map[string]string{"no-cpufreq": "pin its vCPUs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Inspect(tc.m.tree(t))
			if err != nil {
				t.Fatal(err)
			}
			if c.Driver != tc.driver || c.AMDPState != tc.amdPState {
				t.Errorf("driver %q amd_pstate %q, want %q %q", c.Driver, c.AMDPState, tc.driver, tc.amdPState)
			}
			if fmt.Sprint(deref8(c.Boost)) != fmt.Sprint(deref8(tc.boost)) || fmt.Sprint(deref8(c.NoTurbo)) != fmt.Sprint(deref8(tc.noTurbo)) {
				t.Errorf("boost %v no_turbo %v, want %v %v", deref8(c.Boost), deref8(c.NoTurbo), deref8(tc.boost), deref8(tc.noTurbo))
			}
			if got := strings.Join(riskNames(c), " "); got != strings.Join(tc.risks, " ") {
				t.Errorf("risks %q, want %q", got, strings.Join(tc.risks, " "))
			}
			for name, sub := range tc.fixHas {
				for _, r := range c.Risks {
					if r.Name == name && !strings.Contains(r.Fix, sub) {
						t.Errorf("the fix for %s is %q, want it to mention %q", name, r.Fix, sub)
					}
				}
			}
			if c.CPUs != tc.m.cpus || c.CPUModel != tc.m.model || c.Kernel != "6.8.0-test" || c.MemKB != 32768000 {
				t.Errorf("fingerprint: %d cpus %q kernel %q mem %d", c.CPUs, c.CPUModel, c.Kernel, c.MemKB)
			}
			if tc.m.driver != "" && len(c.Policies) != tc.m.cpus {
				t.Errorf("%d policies for %d cpus", len(c.Policies), tc.m.cpus)
			}
		})
	}
}

// deref8 makes an optional bool printable: "-" when absent.
func deref8(b *bool) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprint(*b)
}

func TestInspectDetails(t *testing.T) {
	c, err := Inspect(ryzenACPI("1").tree(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Policies) == 0 {
		t.Fatal("no cpufreq policies read from the acpi-cpufreq fixture")
	}
	p := c.Policies[0]
	if fmt.Sprint(p.AvailableKHz) != "[3800000 2200000 1600000]" || p.CurKHz != 2200000 || p.HWMaxKHz != 3800000 {
		t.Errorf("policy %+v", p)
	}
	if c.Cmdline["amd_pstate"] != "disable" || c.THP != "madvise" || c.VM {
		t.Errorf("cmdline %v thp %q vm %v", c.Cmdline, c.THP, c.VM)
	}
	v, err := Inspect(vm.tree(t))
	if err != nil {
		t.Fatal(err)
	}
	if !v.VM || v.StealPct < 4.9 || v.StealPct > 5.1 {
		t.Errorf("vm %v steal %.2f%%, want a VM with 5%% steal", v.VM, v.StealPct)
	}
}

func TestCPUList(t *testing.T) {
	for in, want := range map[string]string{"cpu0 cpu1 cpu2 cpu5": "cpu0-2,5", "cpu3": "cpu3", "cpu7 cpu6": "cpu6-7"} {
		if got := cpuList(strings.Fields(in)); got != want {
			t.Errorf("cpuList(%s) = %s, want %s", in, got, want)
		}
	}
}
