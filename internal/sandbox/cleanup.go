package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/qpslab/qpslab/internal/home"
)

// Cleaned is one thing Recover put right in a sandbox.
type Cleaned struct {
	Sandbox string
	What    string // e.g. "server pid 123 was gone: marked stopped"
}

// Recover cleans what an earlier qpslab process left when it died without
// cleaning up (killed with SIGKILL, the machine lost power …): a sandbox.yaml
// that says running while its pid is dead or now another program's is marked
// stopped (or failed, for a start that never finished); a sandbox of a run
// (not detached) whose qpslab is gone but whose server somehow still runs is
// stopped. Sandboxes another qpslab is starting or stopping are left alone,
// and so are detached servers that run.
func Recover(h home.Home) ([]Cleaned, error) {
	ents, err := os.ReadDir(h.Sandboxes())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for sandboxes left by a crash: %w", err)
	}
	var out []Cleaned
	var errs []error
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(h.Sandboxes(), e.Name())
		st, err := readState(dir)
		if err != nil || !stale(st) {
			// Not qpslab's, unreadable, or in order. The lock is taken only
			// for what looks stale, so that another qpslab starting a
			// sandbox never finds it held by this look.
			continue
		}
		what, err := recoverOne(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("clean sandbox %s: %w", e.Name(), err))
		}
		if what != "" {
			out = append(out, Cleaned{Sandbox: e.Name(), What: what})
		}
	}
	return out, errors.Join(errs...)
}

// stale reports whether st looks like what a dead qpslab left: a start that
// never finished, a recorded server that is gone, or a run's server whose
// qpslab is gone.
func stale(st *State) bool {
	_, gone := ownerGone(st.Owner)
	switch {
	case st.Scratch:
		return gone
	case st.PID == 0:
		return st.Started.IsZero() && st.Stopped.IsZero() && st.Failed == "" && st.Owner != "" && gone
	case !st.Running():
		return true
	}
	return !st.Detached && st.Owner != "" && gone
}

func recoverOne(dir string) (string, error) {
	unlock, err := lock(dir)
	if err != nil {
		return "", nil // another qpslab is at work on it
	}
	defer unlock()
	st, err := readState(dir)
	if err != nil {
		return "", nil
	}
	ownerPID, gone := ownerGone(st.Owner)
	switch {
	case st.Scratch && gone:
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("remove it: %w", unwrap(err))
		}
		return fmt.Sprintf("the scratch folder of qpslab pid %d, which ended without removing it: removed", ownerPID), nil
	case st.Scratch:
		return "", nil
	case st.PID == 0 && st.Started.IsZero() && st.Stopped.IsZero() && st.Failed == "" && st.Owner != "" && gone:
		st.Failed = fmt.Sprintf("the start was interrupted: qpslab (pid %d) ended before the server ran", ownerPID)
		writeState(dir, *st)
		return fmt.Sprintf("its start by qpslab pid %d never finished: marked failed", ownerPID), nil
	case st.PID == 0:
		return "", nil
	case !st.Running():
		withOwner := !st.Detached && st.Owner != "" && gone
		st.Died = deathFromLog(*st, withOwner, ownerPID)
		markStopped(*st)
		if withOwner {
			// A plan's snapshot of the datadir (plan's restore between
			// repeats), which its qpslab would have removed.
			os.RemoveAll(st.Datadir + SnapshotSuffix)
		}
		if withOwner {
			return fmt.Sprintf("server pid %d had ended with its qpslab (pid %d), which died without stopping it: marked stopped", st.PID, ownerPID), nil
		}
		return fmt.Sprintf("server pid %d was gone: marked stopped", st.PID), nil
	case !st.Detached && st.Owner != "" && gone:
		pid := st.PID
		st.Died = fmt.Sprintf("stopped by a later qpslab: the qpslab (pid %d) that started it for a run had ended", ownerPID)
		if err := stopState(*st, 30*time.Second); err != nil {
			return fmt.Sprintf("server pid %d outlived its qpslab (pid %d): stopped it", pid, ownerPID), err
		}
		os.RemoveAll(st.Datadir + SnapshotSuffix)
		return fmt.Sprintf("server pid %d outlived its qpslab (pid %d): stopped it", pid, ownerPID), nil
	}
	return "", nil
}

// deathFromLog says how a server ended with no qpslab watching: the reaper's
// note if it killed the server, else that it went with its qpslab (withOwner:
// the kernel's death signal), else the log lines that explain the end, from
// the server's last start on.
func deathFromLog(st State, withOwner bool, ownerPID int) string {
	lines := readLog(st.Log, 0)
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "---- qpslab: starting") {
			lines = lines[i+1:]
			break
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "---- qpslab: process") {
			return strings.TrimPrefix(lines[i], "---- qpslab: ")
		}
	}
	s := "ended while no qpslab watched it (found by a later qpslab)"
	if withOwner {
		s = fmt.Sprintf("ended with the qpslab (pid %d) that started it for a run, which died without stopping it", ownerPID)
	}
	if why := explain(lines, 3, false); why != "" {
		s += "; log: " + why
	}
	return s + " (full log: " + st.Log + ")"
}

// PruneOptions tune Prune.
type PruneOptions struct {
	KeepLogs bool // keep server.log and init.log under <home>/logs/<sandbox>-<time>/
	DryRun   bool // say what would go, remove nothing
}

// Pruned is a sandbox Prune removed (or, with DryRun, would remove).
type Pruned struct {
	Name   string
	Status string // stopped, failed or died
	Bytes  int64  // disk space freed
	Logs   string // where its logs were kept (KeepLogs)
	Note   string // what was left on purpose, e.g. a datadir outside the folder
}

// Kept is a folder under the sandboxes that Prune left, and why.
type Kept struct {
	Name, Why string
}

// Prune removes the sandboxes under the home whose server is not running
// (stopped, failed or died). It only ever removes folders qpslab made (they
// hold sandbox.yaml), never one whose server runs or that another qpslab is
// starting or stopping, and never follows a symlink out of the home. A
// datadir given with --datadir outside the sandbox folder is left in place:
// qpslab may not have made that folder.
func Prune(h home.Home, o PruneOptions) ([]Pruned, []Kept, error) {
	ents, err := os.ReadDir(h.Sandboxes())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list sandboxes: %w", err)
	}
	var removed []Pruned
	var kept []Kept
	var errs []error
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for _, e := range ents {
		if !e.IsDir() { // a symlink or a file: not a folder qpslab made
			kept = append(kept, Kept{e.Name(), "not a sandbox folder qpslab made"})
			continue
		}
		dir := filepath.Join(h.Sandboxes(), e.Name())
		p, why, err := pruneOne(h, dir, o, stamp)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("prune sandbox %s: %w", e.Name(), err))
		case why != "":
			kept = append(kept, Kept{e.Name(), why})
		default:
			removed = append(removed, p)
		}
	}
	return removed, kept, errors.Join(errs...)
}

func pruneOne(h home.Home, dir string, o PruneOptions, stamp string) (Pruned, string, error) {
	name := filepath.Base(dir)
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err != nil {
		return Pruned{}, "not made by qpslab (no " + stateFile + ")", nil
	}
	if st, err := readState(dir); err == nil && st.Running() { // no lock needed to leave it
		return Pruned{}, fmt.Sprintf("running (pid %d)", st.PID), nil
	}
	unlock, err := lock(dir)
	if err != nil {
		return Pruned{}, "being started or stopped by another qpslab", nil
	}
	defer unlock()
	st, err := readState(dir)
	if err != nil {
		return Pruned{}, "its " + stateFile + " cannot be read: " + oneLine(err.Error()), nil
	}
	status := st.Status()
	if status == "running" {
		return Pruned{}, fmt.Sprintf("running (pid %d)", st.PID), nil
	}
	p := Pruned{Name: name, Status: status}
	logs := []string{filepath.Join(dir, "server.log"), filepath.Join(dir, "init.log")}
	if o.KeepLogs {
		p.Logs = filepath.Join(h.Logs(), name+"-"+stamp)
	}
	if st.Datadir != "" && !within(dir, st.Datadir) {
		p.Note = "its datadir " + st.Datadir + " is outside the sandbox folder and was left in place"
	}
	if o.DryRun {
		p.Bytes = diskUsage(dir)
		if o.KeepLogs {
			for _, l := range logs {
				p.Bytes -= diskUsage(l)
			}
		}
		return p, "", nil
	}
	if o.KeepLogs {
		if err := keptLogs(h, p.Logs); err != nil {
			return p, "", err
		}
		for _, l := range logs {
			to := filepath.Join(p.Logs, filepath.Base(l))
			if err := moveFile(l, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return p, "", fmt.Errorf("keep %s: %w", l, err)
			}
			os.Chmod(to, 0o600) // a log an older qpslab wrote 0644
		}
	}
	p.Bytes = diskUsage(dir)
	if st.OwnRunDir && st.RunDir != "" {
		removeRunDir(*st)
	}
	if err := os.RemoveAll(dir); err != nil {
		return p, "", fmt.Errorf("remove %s: %w", dir, unwrap(err))
	}
	return p, "", nil
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}

// diskUsage is the space the files under path take on disk (as du counts
// it), not following symlinks.
func diskUsage(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}

// moveFile renames from to to, copying when they are on different file
// systems.
func moveFile(from, to string) error {
	err := os.Rename(from, to)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Remove(from)
}
