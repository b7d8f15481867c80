package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/testenv"
)

// These tests write sandbox folders by hand: what Prune and Recover decide
// depends only on sandbox.yaml and the process table, and a real server would
// only make them slow. A "server" here is a sleep whose command line names the
// datadir, which is what qpslab checks before it believes a recorded pid.

// writeSandbox makes <home>/sandboxes/name with sandbox.yaml st (Dir and Name
// filled in), a datadir of size bytes and the two logs.
func writeSandbox(t *testing.T, h home.Home, name string, st sandbox.State, size int) string {
	t.Helper()
	dir := sandbox.Dir(h, name)
	st.Name, st.Dir = name, dir
	if st.Datadir == "" {
		st.Datadir = filepath.Join(dir, "data")
	}
	st.Log = filepath.Join(dir, "server.log")
	if err := os.MkdirAll(st.Datadir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.Datadir, "ibdata1"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(st.Log, []byte("server log of "+name+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "init.log"), []byte("init log of "+name+"\n"), 0o644)
	b, err := yaml.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sandbox.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeServer starts a process whose command line holds datadir and that ends
// with the test.
func fakeServer(t *testing.T, datadir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 300; exit 0", datadir) // not exec: sh keeps datadir in its command line
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		// The sleep dies a moment after its shell: wait until the group has
		// no live member.
		for deadline := time.Now().Add(5 * time.Second); groupLives(cmd.Process.Pid) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	})
	return cmd
}

func bootID(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		testenv.Skip(t, "no boot id, by which qpslab names its processes: "+err.Error())
	}
	return strings.TrimSpace(string(b))
}

// deadOwner names a qpslab process that is gone.
func deadOwner(t *testing.T) string {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s/%d/1", bootID(t), cmd.Process.Pid)
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestPrune(t *testing.T) {
	h := newHome(t)
	runDir := writeSandbox(t, h, "running", sandbox.State{Detached: true}, 1000)
	srv := fakeServer(t, filepath.Join(runDir, "data"))
	// Record the live pid as the running server.
	writeSandbox(t, h, "running", sandbox.State{Detached: true, PID: srv.Process.Pid}, 1000)

	stopped := writeSandbox(t, h, "stopped", sandbox.State{Stopped: time.Now()}, 300_000)
	failed := writeSandbox(t, h, "failed", sandbox.State{Failed: "mariadb-install-db failed"}, 200_000)
	outside := filepath.Join(t.TempDir(), "mydata")
	withOutside := writeSandbox(t, h, "outside", sandbox.State{Datadir: outside}, 100_000)

	foreign := sandbox.Dir(h, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)

	elsewhere := t.TempDir() // a sandbox-looking folder outside the home, reached by a symlink
	os.WriteFile(filepath.Join(elsewhere, "sandbox.yaml"), []byte("name: link\n"), 0o644)
	if err := os.Symlink(elsewhere, sandbox.Dir(h, "link")); err != nil {
		t.Fatal(err)
	}

	// A dry run removes nothing and says what would go.
	removed, kept, err := sandbox.Prune(h, sandbox.PruneOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(removed); got != "failed outside stopped" {
		t.Errorf("dry run would remove %q, want failed outside stopped", got)
	}
	for _, d := range []string{runDir, stopped, failed, withOutside, foreign} {
		if !exists(d) {
			t.Errorf("a dry run removed %s", d)
		}
	}

	removed, kept, err = sandbox.Prune(h, sandbox.PruneOptions{KeepLogs: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(removed); got != "failed outside stopped" {
		t.Errorf("removed %q, want failed outside stopped", got)
	}
	why := map[string]string{}
	for _, k := range kept {
		why[k.Name] = k.Why
	}
	if !strings.Contains(why["running"], "running") || !strings.Contains(why["foreign"], "not made by qpslab") || why["link"] == "" {
		t.Errorf("kept %+v, want running, foreign and link kept with their reasons", kept)
	}
	for _, p := range removed {
		switch p.Name {
		case "stopped":
			if p.Status != "stopped" || p.Bytes < 300_000 {
				t.Errorf("stopped: %+v, want status stopped and at least 300 kB freed", p)
			}
		case "failed":
			if p.Status != "failed" {
				t.Errorf("failed: status %s", p.Status)
			}
		case "outside":
			if !strings.Contains(p.Note, outside) {
				t.Errorf("outside: note %q does not name the datadir left in place", p.Note)
			}
		}
		if b, err := os.ReadFile(filepath.Join(p.Logs, "server.log")); err != nil || string(b) != "server log of "+p.Name+"\n" {
			t.Errorf("%s: server.log not kept in %s: %q %v", p.Name, p.Logs, b, err)
		}
		if !exists(filepath.Join(p.Logs, "init.log")) {
			t.Errorf("%s: init.log not kept in %s", p.Name, p.Logs)
		}
		if !strings.HasPrefix(p.Logs, h.Logs()) {
			t.Errorf("logs kept in %s, not under %s", p.Logs, h.Logs())
		}
	}
	for _, d := range []string{stopped, failed, withOutside} {
		if exists(d) {
			t.Errorf("%s is still there", d)
		}
	}
	if !exists(filepath.Join(outside, "ibdata1")) {
		t.Errorf("the datadir outside the sandbox folder was removed")
	}
	if !exists(filepath.Join(runDir, "data", "ibdata1")) || !alive(srv.Process.Pid) {
		t.Errorf("the running sandbox was touched")
	}
	if b, err := os.ReadFile(filepath.Join(foreign, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("a folder qpslab did not make was touched: %q %v", b, err)
	}
	if !exists(sandbox.Dir(h, "link")) || !exists(filepath.Join(elsewhere, "sandbox.yaml")) {
		t.Errorf("the symlinked folder or its target was touched")
	}
}

// A sandbox another qpslab holds (starting or stopping it) is never pruned.
func TestPruneSkipsLocked(t *testing.T) {
	h := newHome(t)
	dir := writeSandbox(t, h, "busy", sandbox.State{}, 1000)
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	removed, kept, err := sandbox.Prune(h, sandbox.PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 0 || len(kept) != 1 || !strings.Contains(kept[0].Why, "another qpslab") || !exists(dir) {
		t.Errorf("removed %+v kept %+v; want the locked sandbox kept", removed, kept)
	}
}

func TestRecover(t *testing.T) {
	h := newHome(t)
	dead := deadOwner(t)
	me := fmt.Sprintf("%s/%d/%d", bootID(t), os.Getpid(), selfStart(t))

	// A run's server whose qpslab is gone but which still runs: stopped.
	orphanDir := sandbox.Dir(h, "orphan")
	orphan := fakeServer(t, filepath.Join(orphanDir, "data"))
	writeSandbox(t, h, "orphan", sandbox.State{PID: orphan.Process.Pid, Owner: dead, Started: time.Now()}, 10)
	// The same, detached (qpslab server start): left running.
	detDir := sandbox.Dir(h, "detached")
	det := fakeServer(t, filepath.Join(detDir, "data"))
	writeSandbox(t, h, "detached", sandbox.State{PID: det.Process.Pid, Owner: dead, Detached: true, Started: time.Now()}, 10)
	// A run's server whose qpslab lives: left running.
	mineDir := sandbox.Dir(h, "mine")
	mine := fakeServer(t, filepath.Join(mineDir, "data"))
	writeSandbox(t, h, "mine", sandbox.State{PID: mine.Process.Pid, Owner: me, Started: time.Now()}, 10)
	// A recorded pid that is gone: marked stopped.
	writeSandbox(t, h, "gone", sandbox.State{PID: deadPID(t), Owner: dead, Started: time.Now()}, 10)
	// A start that never finished: marked failed.
	writeSandbox(t, h, "half", sandbox.State{Owner: dead}, 10)
	// Stopped as it should be: nothing to do.
	writeSandbox(t, h, "fine", sandbox.State{Owner: dead, Started: time.Now(), Stopped: time.Now()}, 10)
	// A plan's snapshots of the datadirs (its restore between repeats):
	// removed with the dead qpslab's servers, kept with a living one's.
	snaps := map[string]bool{"orphan": false, "gone": false, "mine": true}
	for name := range snaps {
		if err := os.MkdirAll(filepath.Join(sandbox.Dir(h, name), "data"+sandbox.SnapshotSuffix), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	cleaned, err := sandbox.Recover(h)
	if err != nil {
		t.Fatal(err)
	}
	what := map[string]string{}
	for _, c := range cleaned {
		what[c.Sandbox] = c.What
	}
	if len(what) != 3 || !strings.Contains(what["orphan"], "stopped it") || !strings.Contains(what["gone"], "marked stopped") || !strings.Contains(what["half"], "marked failed") {
		t.Errorf("Recover cleaned %+v; want orphan stopped, gone marked stopped, half marked failed", cleaned)
	}
	if alive(orphan.Process.Pid) {
		t.Errorf("the orphaned server still runs")
	}
	if !alive(det.Process.Pid) || !alive(mine.Process.Pid) {
		t.Errorf("a detached server or one whose qpslab lives was stopped")
	}
	for name, want := range map[string]string{"orphan": "died", "gone": "died", "half": "failed", "fine": "stopped", "detached": "running", "mine": "running"} {
		st, err := sandbox.Get(h, name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status() != want {
			t.Errorf("%s is %s after Recover, want %s", name, st.Status(), want)
		}
	}
	for name, kept := range snaps {
		_, err := os.Stat(filepath.Join(sandbox.Dir(h, name), "data"+sandbox.SnapshotSuffix))
		if kept != (err == nil) {
			t.Errorf("%s's snapshot kept: %v, want %v", name, err == nil, kept)
		}
	}
	// Nothing more to clean the second time.
	if cleaned, err := sandbox.Recover(h); err != nil || len(cleaned) != 0 {
		t.Errorf("a second Recover cleaned %+v (%v)", cleaned, err)
	}
}

func names(ps []sandbox.Pruned) string {
	var n []string
	for _, p := range ps {
		n = append(n, p.Name)
	}
	return strings.Join(n, " ")
}

func alive(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	return err == nil && st.State != "Z"
}

func groupLives(pgid int) bool {
	procs, _ := procfs.AllProcs()
	for _, p := range procs {
		if st, err := p.Stat(); err == nil && st.PGRP == pgid && st.State != "Z" {
			return true
		}
	}
	return false
}

func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func selfStart(t *testing.T) uint64 {
	p, err := procfs.Self()
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.Starttime
}
