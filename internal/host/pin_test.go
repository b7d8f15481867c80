package host

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestParseCPUs(t *testing.T) {
	c, err := ParseCPUs("4-6,0,2,5", 8)
	if err != nil || c.String() != "0,2,4-6" {
		t.Fatalf("%v %v", c, err)
	}
	if o := c.Overlap(CPUs{1, 2, 6, 7}); o.String() != "2,6" {
		t.Errorf("overlap %v", o)
	}
	for _, bad := range []string{"8", "3-1", "x", "", "1-", "-1"} {
		if _, err := ParseCPUs(bad, 8); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if r, err := PinningRisk("0-3", "3-5", 8); err != nil || r == nil || !strings.Contains(r.Detail, "share 3") {
		t.Errorf("overlap risk %+v %v", r, err)
	}
	if r, err := PinningRisk("0-3", "4-5", 8); err != nil || r != nil {
		t.Errorf("disjoint: %+v %v", r, err)
	}
}

// Pin sets the affinity of every thread of a process tree: here a shell
// and the sleep it forked.
func TestPin(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 5 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Wait for the child to exist.
	var kids string
	for i := 0; i < 100 && kids == ""; i++ {
		out, _ := exec.Command("pgrep", "-P", itoa(cmd.Process.Pid)).Output()
		kids = strings.TrimSpace(string(out))
		if kids == "" {
			exec.Command("sleep", "0.02").Run()
		}
	}
	if kids == "" {
		t.Fatal("the shell forked no child")
	}
	if err := Pin(cmd.Process.Pid, CPUs{0}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []string{itoa(cmd.Process.Pid), kids} {
		a, err := Affinity(atoi(pid))
		if err != nil || a.String() != "0" {
			t.Errorf("process %s runs on %v (%v), want CPU 0", pid, a, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
