package host_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/testenv"
)

// On this machine for real: a VM without cpufreq cannot switch boost, and
// says why in one line, switching nothing.
func TestBoostOnThisHost(t *testing.T) {
	c, err := host.Inspect(host.Real)
	if err != nil {
		t.Fatal(err)
	}
	if c.Driver != "none" || !c.VM {
		testenv.Skip(t, "this host has a cpufreq driver or is no VM: the refusal of a VM is shown over fixture trees only (TestBoostRefusals)")
	}
	statePath := filepath.Join(t.TempDir(), "boost-state.json")
	b, err := host.BoostSwitch(host.Real, statePath)
	if err == nil {
		b.Restore()
		t.Fatal("a VM without cpufreq offered to switch boost")
	}
	if !strings.Contains(err.Error(), "it is a VM") || !strings.Contains(err.Error(), "bare-metal") || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal: %v", err)
	}
}
