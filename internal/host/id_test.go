package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// rewrite replaces one file of a fixture tree.
func rewrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fingerprintID is the id of the fingerprint JSON Inspect gives for r, as
// the store computes it from what it stored.
func fingerprintID(t *testing.T, r Roots) (string, *Check) {
	t.Helper()
	c, err := Inspect(r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	id, err := ID(b)
	if err != nil {
		t.Fatal(err)
	}
	if id != c.ID() {
		t.Fatalf("the id of the stored JSON %s is not the check's %s", id, c.ID())
	}
	return id, c
}

// One machine checked twice, with steal, free memory, MemTotal (a few MB)
// and the current frequency moved in between, is one host.
func TestIDIgnoresVolatileFacts(t *testing.T) {
	for name, m := range map[string]machine{"vm": vm, "ryzen": ryzenACPI("1"), "intel": intel("1")} {
		t.Run(name, func(t *testing.T) {
			r := m.tree(t)
			before, c1 := fingerprintID(t, r)
			rewrite(t, filepath.Join(r.Proc, "stat"), "cpu  700 0 100 0 0 0 0 200 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\nintr 1\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n")
			rewrite(t, filepath.Join(r.Proc, "meminfo"), fmt.Sprintf("MemTotal:       %d kB\nMemFree:        1000 kB\nSwapTotal:      %d kB\nSwapFree:       0 kB\n", 32768000-6*1024, m.swapKB))
			for i := 0; i < m.cpus && m.driver != ""; i++ {
				rewrite(t, filepath.Join(r.Sys, fmt.Sprintf("devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", i)), fmt.Sprint(1600000+i*1000))
			}
			after, c2 := fingerprintID(t, r)
			if c1.StealPct == c2.StealPct || c1.MemKB == c2.MemKB {
				t.Fatalf("the fixture did not change: steal %.1f → %.1f, MemTotal %d → %d", c1.StealPct, c2.StealPct, c1.MemKB, c2.MemKB)
			}
			if m.vm && fmt.Sprint(c1.Risks) == fmt.Sprint(c2.Risks) {
				t.Fatalf("the steal risk's text did not change: %v", c1.Risks)
			}
			if before != after {
				t.Errorf("one machine, two ids: %s and %s", before, after)
			}
		})
	}
}

// What changes the machine or its CPU's speed changes the id.
func TestIDFollowsStableFacts(t *testing.T) {
	base, _ := fingerprintID(t, ryzenACPI("0").tree(t))
	for name, change := range map[string]func(r Roots){
		"kernel": func(r Roots) { rewrite(t, filepath.Join(r.Proc, "sys/kernel/osrelease"), "6.9.0-test\n") },
		"boost":  func(r Roots) { rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/cpufreq/boost"), "1\n") },
		"smt":    func(r Roots) { rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/smt/control"), "off\n") },
		"governor": func(r Roots) {
			rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/cpu2/cpufreq/scaling_governor"), "performance\n")
		},
		"memory": func(r Roots) {
			rewrite(t, filepath.Join(r.Proc, "meminfo"), "MemTotal:       16384000 kB\nMemFree:        30000000 kB\nSwapTotal:      0 kB\nSwapFree:       0 kB\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := ryzenACPI("0").tree(t)
			change(r)
			if id, _ := fingerprintID(t, r); id == base {
				t.Errorf("a different %s, the same id %s", name, id)
			}
		})
	}
	other, _ := fingerprintID(t, intel("1").tree(t))
	if other == base {
		t.Errorf("two machines, one id %s", base)
	}
}

func TestMemMiB(t *testing.T) {
	for kb, want := range map[uint64]uint64{
		0: 0, 24684096: 24 << 10, 24684096 - 50<<10: 24 << 10, 32768000: 32 << 10, 32768000 + 8<<10: 32 << 10,
		65_700_000: 64 << 10, 8_070_000: 8 << 10, 2_015_000: 2 << 10, 1_000: 1,
	} {
		if got := memMiB(kb); got != want {
			t.Errorf("memMiB(%d kB) = %d MiB, want %d", kb, got, want)
		}
	}
}

func TestIDOfBadFingerprint(t *testing.T) {
	if _, err := ID(json.RawMessage(`not json`)); err == nil {
		t.Error("an id for a fingerprint that is not JSON")
	}
}

// A fleet agent named otherwise than its hostname is a host of its own:
// two agents on one machine are two hosts, and the machine checked without
// an agent keeps the id it always had.
func TestIDOfAgent(t *testing.T) {
	base, c := fingerprintID(t, ryzenACPI("0").tree(t))
	a, b := *c, *c
	a.Agent, b.Agent = "alpha", "beta"
	if a.ID() == base || b.ID() == base || a.ID() == b.ID() {
		t.Errorf("ids: machine %s, agent alpha %s, agent beta %s: want three", base, a.ID(), b.ID())
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ID(raw); err != nil || id != a.ID() {
		t.Errorf("the stored fingerprint of agent alpha has id %s (%v), want %s", id, err, a.ID())
	}
}
