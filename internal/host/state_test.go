package host

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Two fingerprints differ where their ids do, and the difference names
// the fact: what sets the CPU's speed first, then the machine; one host
// checked twice differs in nothing.
func TestDifferences(t *testing.T) {
	check := func(r Roots) json.RawMessage {
		t.Helper()
		c, err := Inspect(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c)
		return b
	}
	base := check(ryzenACPI("1").tree(t))
	for _, tc := range []struct {
		name   string
		change func(r Roots)
		want   []string // Difference.String()s, in order
	}{
		{"same", func(Roots) {}, nil},
		{"boost", func(r Roots) { rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/cpufreq/boost"), "0\n") }, []string{"boost on vs off"}},
		{"governor", func(r Roots) {
			rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/cpu2/cpufreq/scaling_governor"), "performance\n")
		}, []string{"governor performance on cpu2; schedutil on cpu0-1,3 vs schedutil on cpu0-3"}},
		{"smt", func(r Roots) {
			rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/smt/control"), "off\n")
			rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/smt/active"), "0\n")
		}, []string{"SMT off (inactive) vs on (active)"}},
		{"kernel and boost", func(r Roots) {
			rewrite(t, filepath.Join(r.Proc, "sys/kernel/osrelease"), "6.9.0-test\n")
			rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/cpufreq/boost"), "0\n")
		}, []string{"boost off vs on", "kernel 6.9.0-test vs 6.8.0-test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ryzenACPI("1").tree(t)
			tc.change(r)
			other := check(r)
			a, b := base, other
			if strings.HasPrefix(tc.name, "kernel") || tc.name == "smt" || tc.name == "governor" {
				a, b = other, base // the changed host first
			}
			ds, err := Differences(a, b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range ds {
				got = append(got, d.String())
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("differences %q, want %q", got, tc.want)
			}
			idA, _ := ID(a)
			idB, _ := ID(b)
			if (idA != idB) != (len(ds) > 0) {
				t.Errorf("ids %s and %s, differences %q: they must agree", idA, idB, got)
			}
		})
	}
	// Two machines: the speed state first, then the machine's facts.
	ds, err := Differences(base, check(intel("1").tree(t)))
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, d := range ds {
		fields = append(fields, d.Field)
	}
	if got := strings.Join(fields, ","); got != "boost,governor,EPP,SMT,cpufreq driver,CPU model" {
		t.Errorf("a Ryzen against an Intel laptop differ in %s", got)
	}
	// Per-policy boost (amd-pstate) reads as one word where the CPUs agree.
	pb := check(ryzenPassive("guided").tree(t))
	r := ryzenPassive("guided").tree(t)
	rewrite(t, filepath.Join(r.Sys, "devices/system/cpu/cpu1/cpufreq/boost"), "0\n")
	ds, _ = Differences(pb, check(r))
	if len(ds) != 1 || ds[0].String() != "boost on vs per CPU: off on cpu1; on on cpu0,2-3" {
		t.Errorf("per-policy boost: %v", ds)
	}
	if _, err := Differences(nil, base); err == nil || !strings.Contains(err.Error(), "none recorded") {
		t.Errorf("no fingerprint: %v", err)
	}
}
