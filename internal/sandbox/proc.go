package sandbox

import (
	"bytes"
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
)

// runAs is the OS account a server runs as when it is not qpslab's own.
type runAs struct {
	Name     string
	UID, GID uint32
}

var createUserMu sync.Mutex

// serverUser returns the account PostgreSQL runs as when qpslab runs as root
// (PostgreSQL refuses root): the Debian postgres user if there is one, else a
// system user qpslab creates, called qpslab. For qpslab's own user, and for the
// MySQL family (which runs as root when told --user=root), it returns nil.
func serverUser(postgres bool) (*runAs, error) {
	if os.Geteuid() != 0 || !postgres {
		return nil, nil
	}
	createUserMu.Lock()
	defer createUserMu.Unlock()
	for _, name := range []string{"postgres", "qpslab"} {
		if u, err := user.Lookup(name); err == nil {
			return toRunAs(u)
		}
	}
	out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home",
		"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", "qpslab").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL refuses to run as root and there is no postgres user; creating user qpslab failed: %s", strings.TrimSpace(string(out)))
	}
	u, err := user.Lookup("qpslab")
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
// whole tree can be signalled by its process group, and sets the account.
func sysProcAttr(as *runAs) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true}
	if as != nil {
		a.Credential = &syscall.Credential{Uid: as.UID, Gid: as.GID, NoSetGroups: true}
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
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return marker == "" || bytes.Contains(cmdline, []byte(marker))
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
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		// Fields after the command: state ppid pgrp ...
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
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
