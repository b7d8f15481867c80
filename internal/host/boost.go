package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// StateParam is the run parameter that names the state a plan put the
// host in for the run's label ("boost=off": qpslab run --boost), each
// fact by the Difference.Field it changes: a difference between labels
// by design, which a comparison of them does not hold against them.
const StateParam = "host_state"

// Boost switches the host's frequency boost for a run whose labels differ
// in it (qpslab run --boost): boost as a condition of the plan, like a
// config. Each file's content from before its first switch is kept in a
// state file as host tune keeps its own (tune's state and Reset), so
// that Restore puts it back byte for byte; should qpslab die before it
// does, its guard (Guard) restores it, and the next BoostSwitch finds a
// state file no live run holds and restores it first.
type Boost struct {
	statePath string
	files     []string // the boost files, written together
	noTurbo   bool     // intel_pstate's no_turbo: 1 is off
	st        *state
	lock      *os.File // held while the switch is in use
	guard     *os.File // the write end of the guard's pipe (Guard)
	guardDone chan struct{}
	// Restored is what BoostSwitch put back that an earlier qpslab, killed
	// with its guard, left switched (nil: nothing).
	Restored []Change
}

// BoostSwitch is how boost is switched on the host under r: the global
// cpufreq/boost where there is one, else intel_pstate's no_turbo, else
// amd-pstate's per-policy boost files. Where it cannot be switched, the
// error says why and what to do: a VM has no cpufreq driver (the
// hypervisor sets the clock), amd-pstate-epp in active mode has no boost
// file, and the files need root. statePath is where the state before the
// first switch is kept (the home's host/boost-state.json); a state file
// left by a qpslab that died is restored first, and one a live run holds
// is refused.
func BoostSwitch(r Roots, statePath string) (*Boost, error) {
	c, err := Inspect(r)
	if err != nil {
		return nil, err
	}
	cpu := filepath.Join(r.Sys, "devices/system/cpu")
	b := &Boost{statePath: statePath}
	switch {
	case c.Boost != nil:
		b.files = []string{filepath.Join(cpu, "cpufreq/boost")}
	case c.NoTurbo != nil:
		b.files, b.noTurbo = []string{filepath.Join(cpu, "intel_pstate/no_turbo")}, true
	case anyBoostFile(c):
		for _, p := range c.Policies {
			if p.Boost != nil {
				b.files = append(b.files, filepath.Join(cpu, p.CPU, "cpufreq/boost"))
			}
		}
	case c.Driver == "none" && c.VM:
		return nil, fmt.Errorf("boost cannot be switched on this host: it is a VM (%s) with no cpufreq driver, whose CPU clock the hypervisor sets: run --boost on a bare-metal host, as root (qpslab host check says what a host has)", orUnknown(c.Hypervisor))
	case c.Driver == "none":
		return nil, fmt.Errorf("boost cannot be switched on this host: it has no cpufreq driver: load one (acpi-cpufreq, amd-pstate, intel_pstate) or check the BIOS")
	case c.Driver == "amd-pstate-epp":
		return nil, fmt.Errorf("boost cannot be switched on this host: amd-pstate-epp in active mode has no boost file: switch to passive or guided mode (echo passive | sudo tee %s) or boot with amd_pstate=disable to get acpi-cpufreq", filepath.Join(cpu, "amd_pstate/status"))
	default:
		return nil, fmt.Errorf("boost cannot be switched on this host: cpufreq driver %s has no boost file (%s, %s or per-policy boost)", c.Driver,
			filepath.Join(cpu, "cpufreq/boost"), filepath.Join(cpu, "intel_pstate/no_turbo"))
	}
	for _, f := range b.files {
		if err := syscall.Access(f, 2); err != nil { // W_OK
			return nil, fmt.Errorf("boost cannot be switched by this user: %s is not writable (%v): run as root (sudo qpslab run …)", f, err)
		}
	}
	if err := b.take(); err != nil {
		return nil, err
	}
	return b, nil
}

// take locks the state file for this process, restoring what a dead
// qpslab left in it, and loads the (then empty) state.
func (b *Boost) take() error {
	if err := os.MkdirAll(filepath.Dir(b.statePath), 0o755); err != nil {
		return fmt.Errorf("boost state: %w", err)
	}
	f, err := os.OpenFile(b.statePath+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("boost state: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := os.ReadFile(b.statePath + ".lock")
		f.Close()
		return fmt.Errorf("another qpslab run (pid %s) is switching boost on this host: wait for it to end (two runs would switch it under each other)", orUnknownPID(string(pid)))
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
	if b.Restored, err = Reset(b.statePath); err != nil {
		f.Close()
		return fmt.Errorf("restore the boost state an earlier qpslab left: %w", err)
	}
	b.lock, b.st = f, &state{}
	return nil
}

func orUnknownPID(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Set switches boost on or off, keeping each file's content from before
// its first switch.
func (b *Boost) Set(on bool) error {
	v := "0"
	if on != b.noTurbo {
		v = "1"
	}
	for _, f := range b.files {
		if !saved(b.st, f) {
			old, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("read %s: %w", f, err)
			}
			b.st.Changes = append(b.st.Changes, Change{Path: f, Old: string(old), New: v})
			if err := saveState(b.statePath, b.st); err != nil {
				return err
			}
		}
		if err := writeSys(f, v); err != nil {
			return err
		}
	}
	return nil
}

// StatePath is where the state before the first switch is kept.
func (b *Boost) StatePath() string { return b.statePath }

// Restore puts every boost file back as it was before the first Set, and
// lets the switch go: what Reset does with host tune's state.
func (b *Boost) Restore() ([]Change, error) {
	done, err := Reset(b.statePath)
	b.endGuard()
	if b.lock != nil {
		b.lock.Close()
		b.lock = nil
	}
	return done, err
}
