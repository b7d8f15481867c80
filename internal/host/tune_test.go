package host

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot reads every file under root.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func TestTuneThenResetRestoresEveryByte(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       machine
		changed []string // files tune must change (suffixes), with their new value
		risks   []string // risks left after tune
		note    string   // a note tune must give
	}{
		{"ryzen acpi-cpufreq boost 1", ryzenACPI("1"), []string{"cpu0/cpufreq/scaling_governor=performance", "cpufreq/boost=0"}, []string{"smt"}, ""},
		{"ryzen amd-pstate-epp active", ryzenEPP, []string{"cpu3/cpufreq/scaling_governor=performance", "cpu3/cpufreq/energy_performance_preference=performance"},
			[]string{"boost", "smt"}, "passive or guided"},
		{"ryzen amd-pstate guided", ryzenPassive("guided"), []string{"cpu1/cpufreq/boost=0", "cpu1/cpufreq/scaling_governor=performance"}, []string{"smt"}, ""},
		{"intel turbo on", intel("0"), []string{"intel_pstate/no_turbo=1"}, nil, ""},
		{"vm", vm, nil, []string{"no-cpufreq", "steal"}, "no cpufreq driver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.m.tree(t)
			statePath := filepath.Join(t.TempDir(), "tune.json")
			before := snapshot(t, r.Sys)
			res, err := Tune(r, statePath)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.changed {
				suffix, val, _ := strings.Cut(want, "=")
				found := false
				for _, ch := range res.Changed {
					if strings.HasSuffix(ch.Path, suffix) {
						found = true
						if b, _ := os.ReadFile(ch.Path); strings.TrimSpace(string(b)) != val {
							t.Errorf("%s is %q after tune, want %q", suffix, b, val)
						}
					}
				}
				if !found {
					t.Errorf("tune did not change %s", suffix)
				}
			}
			if tc.note != "" && !strings.Contains(strings.Join(res.Notes, " "), tc.note) {
				t.Errorf("notes %q lack %q", res.Notes, tc.note)
			}
			c, err := Inspect(r)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(riskNames(c), " "); got != strings.Join(tc.risks, " ") {
				t.Errorf("risks after tune %q, want %q", got, strings.Join(tc.risks, " "))
			}
			// Tuning twice keeps the state from before the first tune.
			if _, err := Tune(r, statePath); err != nil {
				t.Fatal(err)
			}
			if _, err := Reset(statePath); err != nil {
				t.Fatal(err)
			}
			after := snapshot(t, r.Sys)
			for p, b := range before {
				if after[p] != b {
					t.Errorf("%s is %q after reset, was %q", p, after[p], b)
				}
			}
			if _, err := os.Stat(statePath); !os.IsNotExist(err) {
				t.Errorf("reset left its state file: %v", err)
			}
		})
	}
}

func TestResetWithoutTuneChangesNothing(t *testing.T) {
	r := ryzenACPI("1").tree(t)
	before := snapshot(t, r.Sys)
	done, err := Reset(filepath.Join(t.TempDir(), "none.json"))
	if err != nil || len(done) != 0 {
		t.Fatalf("reset without state: %v %v", done, err)
	}
	for p, b := range snapshot(t, r.Sys) {
		if before[p] != b {
			t.Errorf("%s changed", p)
		}
	}
}
