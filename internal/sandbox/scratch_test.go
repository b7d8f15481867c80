package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A rocksdb build has no server: its run gets a scratch folder, which is
// qpslab's while the run uses it (prune and a second run keep off), whose
// programs are tied to qpslab in a group of their own, and which is gone
// afterwards.
func TestScratch(t *testing.T) {
	h := newHome(t)
	prog := filepath.Join(t.TempDir(), "db_bench")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := build.Build{Name: "rx", Flavor: build.RocksDB, Version: "9.7.3", Program: prog}
	c := config.Config{Name: "cra96k", Family: config.RocksDB, Content: []byte("--compaction_readahead_size=96K\n")}
	s, err := sandbox.NewScratch(h, b, c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir != sandbox.Dir(h, "rx.cra96k") || s.Datadir != filepath.Join(s.Dir, "data") || !s.Scratch || s.Program != prog || s.Config != c.ID() {
		t.Errorf("state %+v", s.State)
	}
	if st, err := sandbox.Get(h, "rx.cra96k"); err != nil || st.Status() != "scratch" {
		t.Errorf("listed as %q, %v", st.Status(), err)
	}
	_, err = sandbox.NewScratch(h, b, c)
	testenv.WantErr(t, err, "rx.cra96k", "in use by another qpslab run")
	if _, kept, err := sandbox.Prune(h, sandbox.PruneOptions{}); err != nil || len(kept) != 1 || kept[0].Name != "rx.cra96k" {
		t.Errorf("prune took a scratch folder in use: kept %v, %v", kept, err)
	}
	os.WriteFile(filepath.Join(s.Datadir, "000001.sst"), []byte("data"), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sleep", "300")
	cmd.Dir = s.Datadir
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	wait, err := s.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if pgid, err := syscall.Getpgid(cmd.Process.Pid); err != nil || pgid != cmd.Process.Pid {
		t.Errorf("the program's group is %d (%v), want its own %d", pgid, err, cmd.Process.Pid)
	}
	cancel()
	err = wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
		t.Errorf("a cancelled program ended with %v, want SIGINT", err)
	}
	if err := s.Remove(); err != nil {
		t.Fatal(err)
	}
	if exists(s.Dir) {
		t.Error("the scratch folder outlived Remove")
	}
	if err := s.Remove(); err != nil {
		t.Errorf("a second Remove: %v", err)
	}
	again, err := sandbox.NewScratch(h, b, c) // the name is free again
	if err != nil {
		t.Fatal(err)
	}
	again.Remove()
}

// The scratch folder of a qpslab that died is removed by the next one;
// one whose qpslab lives is left.
func TestRecoverScratch(t *testing.T) {
	h := newHome(t)
	dead := writeSandbox(t, h, "rx.dead", sandbox.State{Scratch: true, Flavor: build.RocksDB, Owner: deadOwner(t), Started: time.Now()}, 1000)
	me := fmt.Sprintf("%s/%d/%d", bootID(t), os.Getpid(), selfStart(t))
	live := writeSandbox(t, h, "rx.live", sandbox.State{Scratch: true, Flavor: build.RocksDB, Owner: me, Started: time.Now()}, 1000)
	cleaned, err := sandbox.Recover(h)
	if err != nil {
		t.Fatal(err)
	}
	if len(cleaned) != 1 || cleaned[0].Sandbox != "rx.dead" || !strings.Contains(cleaned[0].What, "scratch folder") {
		t.Errorf("cleaned %+v", cleaned)
	}
	if exists(dead) || !exists(live) {
		t.Errorf("dead one there: %v, live one there: %v", exists(dead), exists(live))
	}
}
