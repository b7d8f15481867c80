package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/qpslab/qpslab/internal/host"
)

// BoostTree is a host's sysfs and procfs as a fixture tree that holds
// acpi-cpufreq's global boost file, boost on, and nothing else: what
// switching boost (host.BoostSwitch) needs, on machines that have no boost
// to switch (a VM, as the project's are). file is the boost file.
func BoostTree(t testing.TB) (r host.Roots, file string) {
	t.Helper()
	root := t.TempDir()
	r = host.Roots{Sys: filepath.Join(root, "sys"), Proc: filepath.Join(root, "proc")}
	file = filepath.Join(r.Sys, "devices/system/cpu/cpufreq/boost")
	for _, d := range []string{filepath.Dir(file), r.Proc} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return r, file
}
