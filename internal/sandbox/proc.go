package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// runAs is the OS account a server runs as when it is not qpslab's own.
type runAs struct {
	Name     string
	UID, GID uint32
}

var createUserMu sync.Mutex

// serverAccount is the system user qpslab creates to run servers as when
// the host has none of a flavor's own accounts.
const serverAccount = "qpslab"

// serverUser returns the account a server runs as when qpslab runs as
// root, for no server runs as root (a server reads and writes what its
// config names, and a root one could read any file of the host): the
// first of accounts (the flavor's own: postgres, mysql) the host has,
// else a system user qpslab creates, called qpslab. For qpslab's own
// user it returns nil: the server runs as that user, as qpslab does.
func serverUser(accounts []string) (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	createUserMu.Lock()
	defer createUserMu.Unlock()
	for _, name := range accounts {
		if u, err := user.Lookup(name); err == nil {
			return toRunAs(u)
		}
	}
	out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home",
		"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", serverAccount).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("qpslab runs no server as root, the host has no user %s, and creating user %s failed: %s", strings.Join(accounts, " or "), serverAccount, strings.TrimSpace(string(out)))
	}
	u, err := user.Lookup(serverAccount)
	if err != nil {
		return nil, err
	}
	return toRunAs(u)
}

func toRunAs(u *user.User) (*runAs, error) {
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s has a non-numeric uid or gid", u.Username)
	}
	return &runAs{Name: u.Username, UID: uint32(uid), GID: uint32(gid)}, nil
}

// sysProcAttr puts a child in a session of its own, so that a terminal's
// Ctrl-C reaches qpslab alone (which then stops the server in order) and the
// whole tree can be signalled by its process group, and sets the account:
// its user and group, and no supplementary group (root's would stay with
// the server otherwise).
func sysProcAttr(as *runAs) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true}
	if as != nil {
		a.Credential = &syscall.Credential{Uid: as.UID, Gid: as.GID, Groups: []uint32{}}
	}
	return a
}

// canReach reports the first folder on the way to dir that user as cannot
// enter, or "" if it can reach dir.
func canReach(as *runAs, dir string) string {
	if as == nil {
		return ""
	}
	for p := dir; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			sys := st.Sys().(*syscall.Stat_t)
			m := st.Mode().Perm()
			ok := m&0o001 != 0 || (sys.Uid == as.UID && m&0o100 != 0) || (sys.Gid == as.GID && m&0o010 != 0)
			if !ok {
				return p
			}
		}
		if p == "/" || p == "." {
			return ""
		}
	}
}

// reachable checks that user as can reach path, and otherwise says which
// folder stops it and the two ways out: let the user through that folder, or
// move what lives there with knob (QPSLAB_HOME, --datadir, QPSLAB_CACHE …) to
// a folder like example.
func reachable(as *runAs, path, knob, example string) error {
	bad := canReach(as, path)
	if bad == "" {
		return nil
	}
	owner := "?"
	var mode os.FileMode
	if st, err := os.Stat(bad); err == nil {
		mode = st.Mode().Perm()
		uid := st.Sys().(*syscall.Stat_t).Uid
		owner = strconv.FormatUint(uint64(uid), 10)
		if u, err := user.LookupId(owner); err == nil {
			owner = u.Username
		}
	}
	return fmt.Errorf("qpslab runs no server as root: it runs this one as user %s, which cannot enter %s (mode %04o, owner %s): let it through with chmod o+x %s, or set %s to a folder it can reach (e.g. %s)",
		as.Name, bad, mode, owner, bad, knob, example)
}

// ownerToken names this process for ever: boot id/pid/start time.
func ownerToken() string { return processToken(os.Getpid()) }

func processToken(pid int) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	st := startTime(pid)
	if err != nil || st == 0 {
		return ""
	}
	return fmt.Sprintf("%s/%d/%d", strings.TrimSpace(string(boot)), pid, st)
}

// ownerGone reports whether the process named by token has ended, and its
// pid. An empty or unreadable token is never judged gone.
func ownerGone(token string) (int, bool) {
	f := strings.Split(token, "/")
	if len(f) != 3 {
		return 0, false
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, false
	}
	now := processToken(pid)
	return pid, now != token
}

// chownTree gives dir and everything under it to as.
func chownTree(as *runAs, dir string) error {
	if as == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(as.UID), int(as.GID))
	})
}

// alive reports whether pid is a live (not zombie) process whose command line
// mentions marker: the check that keeps qpslab from signalling a stranger that
// reused a recorded pid.
func alive(pid int, marker string) bool {
	if pid <= 0 {
		return false
	}
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	if err != nil || st.State == "Z" || st.State == "X" {
		return false
	}
	if marker == "" {
		return true
	}
	args, err := p.CmdLine()
	return err == nil && strings.Contains(strings.Join(args, " "), marker)
}

// startTime is pid's start time in clock ticks after boot (0 if it is gone):
// with the pid and the boot, it names a process for ever.
func startTime(pid int) uint64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return st.Starttime
}

// killGroup sends sig to the process group pgid, ignoring "no such group".
func killGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return nil
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// killGroupWait kills process group pgid and repeats until the group is
// empty: a process forked while the first SIGKILL was being delivered (the
// install scripts fork cat, sed and a bootstrap server) would escape one kill.
// It gives up after timeout.
func killGroupWait(pgid int, timeout time.Duration) {
	if pgid <= 0 {
		return
	}
	deadline := time.Now().Add(timeout)
	for {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil { // ESRCH: the group is empty
			return
		}
		if !groupHasLive(pgid) || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupHasLive reports whether any non-zombie process is in group pgid
// (zombies still count for kill(2) until their parent reaps them).
func groupHasLive(pgid int) bool {
	procs, err := procfs.AllProcs()
	if err != nil {
		return false
	}
	for _, p := range procs {
		st, err := p.Stat()
		if err == nil && st.PGRP == pgid && st.State != "Z" && st.State != "X" {
			return true
		}
	}
	return false
}

// strays returns the live processes that run program (a path) with their
// working directory in dir: the children of a PostgreSQL server, which each
// leave the postmaster's process group, found after the postmaster is gone.
// Both must match, so a shell that sits in the datadir is never one.
func strays(program, dir string) []int {
	if program == "" || dir == "" {
		return nil
	}
	program = resolved(program)
	dir = resolved(dir)
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	var out []int
	for _, p := range procs {
		exe, err := p.Executable()
		if err != nil || exe != program {
			continue
		}
		cwd, err := p.Cwd()
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		if st, err := p.Stat(); err == nil && st.State != "Z" && st.State != "X" {
			out = append(out, p.PID)
		}
	}
	return out
}

// killStrays SIGKILLs the strays of program in dir, and waits (a little)
// until they are gone.
func killStrays(program, dir string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := strays(program, dir)
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// resolved is path with its symlinks resolved, or path itself.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// waitGone polls until pid is no longer alive or the timeout passes.
func waitGone(pid int, marker string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for alive(pid, marker) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
