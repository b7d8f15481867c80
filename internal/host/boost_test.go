package host

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// boostChildEnv makes this test binary a qpslab that switches boost off
// on the fixture tree it names and waits to be killed
// (TestBoostRestoredAfterKill).
const boostChildEnv = "QPSLAB_TEST_BOOST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(boostChildEnv); spec != "" {
		sys, statePath, _ := strings.Cut(spec, "|")
		b, err := BoostSwitch(Roots{Sys: sys, Proc: filepath.Join(filepath.Dir(sys), "proc")}, statePath)
		if err == nil {
			err = b.Guard()
		}
		if err == nil {
			err = b.Set(false)
		}
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("switched\n")
		select {} // until killed
	}
	os.Exit(m.Run())
}

// boostOf is what the host under r says of its boost.
func boostOf(t *testing.T, r Roots) string {
	t.Helper()
	c, err := Inspect(r)
	if err != nil {
		t.Fatal(err)
	}
	return boostWord(c.identity())
}

// Boost switched off and on through whichever file the driver has, each
// state another host id that differs in boost alone; Restore puts every
// byte back and leaves no state.
func TestBoostSwitchAndRestore(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    machine
		was  string
	}{
		{"acpi-cpufreq cpufreq/boost", ryzenACPI("1"), "on"},
		{"acpi-cpufreq boost off before", ryzenACPI("0"), "off"},
		{"intel_pstate no_turbo", intel("0"), "on"},
		{"amd-pstate per-policy boost", ryzenPassive("guided"), "on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.m.tree(t)
			statePath := filepath.Join(t.TempDir(), "boost-state.json")
			before := snapshot(t, r.Sys)
			b, err := BoostSwitch(r, statePath)
			if err != nil {
				t.Fatal(err)
			}
			if got := boostOf(t, r); got != tc.was {
				t.Fatalf("boost %q before any switch, want %q", got, tc.was)
			}
			ids := map[bool]string{}
			for _, on := range []bool{false, true, false} {
				if err := b.Set(on); err != nil {
					t.Fatal(err)
				}
				want := map[bool]string{true: "on", false: "off"}[on]
				if got := boostOf(t, r); got != want {
					t.Errorf("after Set(%v) boost is %q", on, got)
				}
				id, _ := fingerprintID(t, r)
				if ids[on] != "" && ids[on] != id {
					t.Errorf("boost %s twice, two ids %s %s", want, ids[on], id)
				}
				ids[on] = id
			}
			if ids[true] == ids[false] {
				t.Errorf("boost on and off, one id %s", ids[true])
			}
			if _, err := os.Stat(statePath); err != nil {
				t.Errorf("no state kept while switched: %v", err)
			}
			if _, err := b.Restore(); err != nil {
				t.Fatal(err)
			}
			for p, was := range before {
				if now := snapshot(t, r.Sys)[p]; now != was {
					t.Errorf("%s is %q after restore, was %q", p, now, was)
				}
			}
			if _, err := os.Stat(statePath); !os.IsNotExist(err) {
				t.Errorf("restore left its state: %v", err)
			}
		})
	}
}

// Where boost cannot be switched, one line says why and what to do.
func TestBoostRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    machine
		want string
	}{
		{"vm", vm, "it is a VM"},
		{"amd-pstate-epp active", ryzenEPP, "amd-pstate-epp in active mode has no boost file"},
		{"no boost file", machine{model: "x", cpus: 2, driver: "cppc_cpufreq", policy: map[string]string{"scaling_governor": "performance",
			"scaling_available_governors": "performance powersave", "scaling_min_freq": "400000", "scaling_max_freq": "3000000",
			"cpuinfo_min_freq": "400000", "cpuinfo_max_freq": "3000000"}},
			"cpufreq driver cppc_cpufreq has no boost file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BoostSwitch(tc.m.tree(t), filepath.Join(t.TempDir(), "s.json"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("refusal %v, want one line with %q", err, tc.want)
			}
		})
	}
}

// One switch at a time on a host; a state that a dead qpslab left (its
// guard killed too) is restored by the next switch, which says so.
func TestBoostStateHeldAndLeftover(t *testing.T) {
	r := ryzenACPI("1").tree(t)
	statePath := filepath.Join(t.TempDir(), "boost-state.json")
	b, err := BoostSwitch(r, statePath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BoostSwitch(r, statePath); err == nil || !strings.Contains(err.Error(), "another qpslab run") {
		t.Errorf("a second switch while the first holds: %v", err)
	}
	if err := b.Set(false); err != nil {
		t.Fatal(err)
	}
	b.lock.Close() // as if its process died, guard and all
	b2, err := BoostSwitch(r, statePath)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Restore()
	if len(b2.Restored) != 1 || boostOf(t, r) != "on" {
		t.Errorf("the leftover state: restored %v, boost now %s", b2.Restored, boostOf(t, r))
	}
}

// A qpslab killed with SIGKILL while boost is switched: its guard puts
// the host back as it was.
func TestBoostRestoredAfterKill(t *testing.T) {
	r := ryzenACPI("1").tree(t)
	statePath := filepath.Join(t.TempDir(), "boost-state.json")
	before := snapshot(t, r.Sys)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), boostChildEnv+"="+r.Sys+"|"+statePath)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "switched\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child did not switch boost: %q", line)
	}
	if got := boostOf(t, r); got != "off" {
		t.Fatalf("the child switched boost to %q", got)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The guard restores once it sees its pipe closed: wait for the state
	// file to go (Reset removes it last).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(statePath); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the kill the guard has not restored the boost state")
		}
	}
	for p, was := range before {
		if now := snapshot(t, r.Sys)[p]; now != was {
			t.Errorf("%s is %q after the guard, was %q", p, now, was)
		}
	}
	var st state
	if b, err := os.ReadFile(statePath); err == nil {
		json.Unmarshal(b, &st)
		t.Errorf("state left: %+v", st)
	}
}
