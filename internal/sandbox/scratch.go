package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/names"
)

// Scratch is a sandbox folder for a build that is no server (rocksdb): a
// program the suite runs itself keeps its data in Datadir. Like a server's
// sandbox it is qpslab's (its sandbox.yaml says so, and which qpslab uses
// it), and the programs started in it die with qpslab however qpslab ends
// (Start: the orphan guard of guard.go). Unlike one it holds nothing worth
// keeping: Remove deletes it when the run is done, and Recover deletes one
// whose qpslab died. It holds the folder's lock while it lives, so prune
// and another qpslab leave it alone.
type Scratch struct {
	State
	unlock func()
	once   sync.Once
}

// NewScratch makes the scratch folder of build b with config c (named as
// their sandbox would be, BUILD.CONFIG) and an empty datadir in it.
func NewScratch(h home.Home, b build.Build, c config.Config) (*Scratch, error) {
	name := DefaultName(b, c)
	if err := names.Sandbox(name); err != nil {
		return nil, err
	}
	layout, err := b.Layout()
	if err != nil {
		return nil, err
	}
	if err := ensureSandboxes(h); err != nil {
		return nil, err
	}
	dir := Dir(h, name)
	prev, err := claimDir(dir)
	if err != nil {
		return nil, err
	}
	if err := privateFolder(dir, nil); err != nil { // the program runs as qpslab does
		return nil, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s is in use by another qpslab run: wait for it to end", name)
	}
	fail := func(err error) (*Scratch, error) { unlock(); return nil, err }
	if prev != nil {
		if prev, err = readState(dir); err != nil {
			return fail(err)
		}
		if !prev.Scratch && prev.Flavor != "" {
			return fail(fmt.Errorf("sandbox %s holds a %s server's datadir: remove it with qpslab server prune, or rename build %s", name, prev.Flavor, b.Name))
		}
	}
	if err := startReaper(); err != nil {
		return fail(err)
	}
	datadir := filepath.Join(dir, "data")
	if err := os.RemoveAll(datadir); err != nil { // a scratch folder's data is qpslab's, and nothing to keep
		return fail(fmt.Errorf("empty %s: %w", datadir, unwrap(err)))
	}
	if err := os.MkdirAll(datadir, 0o700); err != nil {
		return fail(fmt.Errorf("datadir %s is not writable (%v): set QPSLAB_HOME to a writable folder", datadir, unwrap(err)))
	}
	st := State{
		Name: name, Build: b.Name, Flavor: b.Flavor, Version: b.Version, Basedir: b.Basedir,
		Config: c.ID(), ConfigHash: c.Hash(), Dir: dir, Datadir: datadir, Program: layout.Server,
		Owner: ownerToken(), Started: time.Now().UTC(), Scratch: true,
	}
	if err := writeState(dir, st); err != nil {
		return fail(err)
	}
	return &Scratch{State: st, unlock: unlock}, nil
}

// Start starts cmd in a process group of its own, tied to this qpslab:
// killed with it however it ends (a death signal, and the reaper for the
// whole group). The returned wait reaps it and releases the guard. A
// terminal's Ctrl-C does not reach the group: cancel cmd's context (its
// Cancel) to stop it.
func (s *Scratch) Start(cmd *exec.Cmd) (func() error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := startTied(cmd); err != nil {
		return nil, err
	}
	pgid := cmd.Process.Pid
	guardGroup(pgid, "", cmd.Path, s.Datadir)
	return func() error {
		err := cmd.Wait()
		releaseGroup(pgid)
		return err
	}, nil
}

// Remove deletes the scratch folder and what is in it. It is safe to call
// more than once.
func (s *Scratch) Remove() error {
	var err error
	s.once.Do(func() {
		if rerr := os.RemoveAll(s.Dir); rerr != nil {
			err = fmt.Errorf("remove the scratch sandbox %s: %w", s.Dir, unwrap(rerr))
		}
		s.unlock()
	})
	return err
}
