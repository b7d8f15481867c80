package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/atomicfile"
)

// Change is one file tune or reset wrote.
type Change struct {
	Path string `json:"path"`
	Old  string `json:"old"` // the file's bytes before, as read
	New  string `json:"new"`
}

// state is what tune saves so that reset can put every file back byte for
// byte, in the order the files were first changed.
type state struct {
	Changes []Change `json:"changes"`
}

// TuneResult says what Tune changed and what it could not.
type TuneResult struct {
	Changed []Change
	Notes   []string // knobs that do not exist here, and what to do instead
}

// Tune switches boost off and every governor (and EPP) to performance under
// r, saving each file's previous content in statePath first. Tuning twice
// keeps the state from before the first tune, so reset always goes back to
// the host as it was.
func Tune(r Roots, statePath string) (*TuneResult, error) {
	c, err := Inspect(r)
	if err != nil {
		return nil, err
	}
	st, err := loadState(statePath)
	if err != nil {
		return nil, err
	}
	res := &TuneResult{}
	cpu := filepath.Join(r.Sys, "devices/system/cpu")
	var plan []Change // path and new value, in order
	// Governors first: setting one resets intel_pstate's no_turbo.
	for _, p := range c.Policies {
		dir := filepath.Join(cpu, p.CPU, "cpufreq")
		if p.Governor != "" && p.Governor != "performance" {
			if !slices.Contains(p.Governors, "performance") {
				res.Notes = append(res.Notes, fmt.Sprintf("%s has no performance governor (available: %s)", p.CPU, strings.Join(p.Governors, " ")))
			} else {
				plan = append(plan, Change{Path: filepath.Join(dir, "scaling_governor"), New: "performance"})
			}
		}
		if p.EPP != "" && p.EPP != "performance" && slices.Contains(p.EPPs, "performance") {
			plan = append(plan, Change{Path: filepath.Join(dir, "energy_performance_preference"), New: "performance"})
		}
		if p.Boost != nil && *p.Boost {
			plan = append(plan, Change{Path: filepath.Join(dir, "boost"), New: "0"})
		}
	}
	switch {
	case c.Boost != nil:
		if *c.Boost {
			plan = append(plan, Change{Path: filepath.Join(cpu, "cpufreq/boost"), New: "0"})
		}
	case c.NoTurbo != nil:
		if !*c.NoTurbo {
			plan = append(plan, Change{Path: filepath.Join(cpu, "intel_pstate/no_turbo"), New: "1"})
		}
	case c.Driver == "amd-pstate-epp" && !anyBoostFile(c):
		res.Notes = append(res.Notes, "amd-pstate-epp in active mode has no boost file, so boost stays on: switch to passive or guided mode (echo passive | sudo tee "+filepath.Join(cpu, "amd_pstate/status")+") and tune again, or boot with amd_pstate=disable to get acpi-cpufreq")
	case c.Driver == "none":
		res.Notes = append(res.Notes, "no cpufreq driver: there is no frequency knob here (in a VM, fix the host's)")
	}
	for _, ch := range plan {
		old, err := os.ReadFile(ch.Path)
		if err != nil {
			return res, fmt.Errorf("read %s: %w", ch.Path, err)
		}
		ch.Old = string(old)
		if !saved(st, ch.Path) {
			st.Changes = append(st.Changes, ch)
			if err := saveState(statePath, st); err != nil {
				return res, err
			}
		}
		if err := writeSys(ch.Path, ch.New); err != nil {
			return res, err
		}
		res.Changed = append(res.Changed, ch)
	}
	return res, nil
}

// Reset writes back every file Tune changed, in reverse order, byte for
// byte, and forgets the saved state. Without saved state it changes nothing.
func Reset(statePath string) ([]Change, error) {
	st, err := loadState(statePath)
	if err != nil {
		return nil, err
	}
	var done []Change
	for i := len(st.Changes) - 1; i >= 0; i-- {
		ch := st.Changes[i]
		cur, _ := os.ReadFile(ch.Path)
		if err := writeSys(ch.Path, ch.Old); err != nil {
			return done, err
		}
		done = append(done, Change{Path: ch.Path, Old: string(cur), New: ch.Old})
	}
	if err := os.Remove(statePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return done, fmt.Errorf("remove %s: %w", statePath, err)
	}
	return done, nil
}

// writeSys writes a sysfs value the way `echo value > file` does.
func writeSys(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("cannot write %s: permission denied: run as root (sudo qpslab host tune)", path)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", strings.TrimSpace(value), path, err)
	}
	return nil
}

func loadState(path string) (*state, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &state{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read tune state: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("tune state %s is damaged (%v): check the files it lists by hand, then remove it", path, err)
	}
	return &st, nil
}

func saveState(path string, st *state) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save tune state: %w", err)
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	// Whole or not at all: this file is what undoes host tune.
	if err := atomicfile.Write(path, b, 0o644); err != nil {
		return fmt.Errorf("save tune state: %w", err)
	}
	return nil
}

func saved(st *state, path string) bool {
	for _, c := range st.Changes {
		if c.Path == path {
			return true
		}
	}
	return false
}
