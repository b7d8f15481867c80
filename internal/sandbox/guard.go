package sandbox

// The orphan guard: a server started for a run (and any init program, with
// the bootstrap server it forks) dies with the qpslab process that started it,
// even when that process is killed with SIGKILL and runs no cleanup of its
// own. Two mechanisms, because neither alone covers every case:
//
//  1. A reaper process. It is this very binary run again (/proc/self/exe, so a
//     binary replaced on disk meanwhile does not matter) with
//     QPSLAB_SANDBOX_REAPER=1 in an otherwise empty environment; the init
//     function below turns such a process into the reaper before main or
//     TestMain runs, so every binary that links this package, test binaries
//     included, can be its own reaper. It runs in a session of its own,
//     ignores terminal signals, and reads a pipe whose only writer is the
//     qpslab process: one JSON line per process group to guard or release.
//     When qpslab dies, however it dies, the kernel closes the pipe; the
//     reaper reads EOF and SIGKILLs every guarded process group until it is
//     empty. Process groups are what matter: the install scripts fork a
//     bootstrap server and initdb a backend, in their group, and a signal to
//     the direct child alone would leave those behind. A PostgreSQL server's
//     children leave the postmaster's group (each calls setsid), so the
//     reaper also kills what runs the server's program with its working
//     directory in the datadir (strays). The reaper runs as qpslab's
//     own user, so it can signal a PostgreSQL that a root qpslab runs as the
//     postgres user (or whichever account the server runs as).
//  2. PR_SET_PDEATHSIG (SIGKILL) on the direct child, for the instant between
//     the fork and the registration with the reaper, and for a reaper that
//     could not start or was killed. The kernel sends it when the *thread*
//     that forked the child exits, not the process, and Go does end threads
//     (a goroutine that locked its thread and returns takes the thread with
//     it). So these children are forked by one goroutine locked to its thread
//     for the life of the process (the spawner). Go's fork sets the death
//     signal after the credential change to the server's account (which would
//     clear it otherwise), and kills the child at once if the parent died
//     before that point.
//
// Not chosen: a supervising process per server would have to relay the
// server's exit status and signals and would put its own pid where the
// metrics want the server's; a child subreaper or a pidfd serve only a parent
// that is still alive.
//
// A detached server (qpslab server start) is guarded only while it starts:
// it is released once it answers, and it gets no death signal.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

const reaperEnv = "QPSLAB_SANDBOX_REAPER"

func init() {
	if os.Getenv(reaperEnv) == "1" {
		reaperMain(os.Stdin, os.Getppid())
		os.Exit(0)
	}
}

// guardMsg is one line to the reaper.
type guardMsg struct {
	Op      string `json:"op"` // "+" guard, "-" release
	PGID    int    `json:"pgid"`
	Start   uint64 `json:"start,omitempty"`   // the leader's start time, to tell a reused pid
	Log     string `json:"log,omitempty"`     // where to note what the reaper did
	Program string `json:"program,omitempty"` // the server's program and datadir, for strays
	Datadir string `json:"datadir,omitempty"`
}

// reaperMain is the reaper's whole life: read the owner's pipe until EOF, then
// kill what is still guarded.
func reaperMain(in io.Reader, owner int) {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	groups := map[int]guardMsg{}
	dec := json.NewDecoder(in)
	for {
		var m guardMsg
		if err := dec.Decode(&m); err != nil {
			break // EOF: the owner is gone (a normal exit releases everything first)
		}
		switch {
		case m.Op == "+" && m.PGID > 1:
			groups[m.PGID] = m
		case m.Op == "-":
			delete(groups, m.PGID)
		}
	}
	for _, g := range groups {
		reapGroup(g, owner)
	}
}

// reapGroup kills process group g.PGID unless its leader's pid now belongs to
// another process (while any member of a group lives, the kernel does not give
// its id to a new process, so a group with members is still ours), and the
// server's strays.
func reapGroup(g guardMsg, owner int) {
	if st := startTime(g.PGID); st != 0 && g.Start != 0 && st != g.Start {
		return
	}
	live := groupHasLive(g.PGID)
	stray := strays(g.Program, g.Datadir)
	if !live && len(stray) == 0 {
		return
	}
	killTree(g.PGID)
	killGroupWait(g.PGID, 30*time.Second)
	killStrays(g.Program, g.Datadir)
	if g.Log != "" {
		if f, err := os.OpenFile(g.Log, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0); err == nil {
			fmt.Fprintf(f, "---- qpslab: process %d, which started this server, died without stopping it; its reaper killed the server's process group %d (SIGKILL) at %s\n",
				owner, g.PGID, time.Now().UTC().Format(time.RFC3339))
			f.Close()
		}
	}
}

// killTree SIGKILLs the members of group pgid and all their descendants.
// PostgreSQL's postmaster puts each child in a process group of its own;
// they end by themselves when they see the postmaster gone, but a backend
// busy with a query sees it late.
func killTree(pgid int) {
	procs, err := procfs.AllProcs()
	if err != nil {
		return
	}
	children := map[int][]int{}
	var todo []int
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil || st.State == "Z" {
			continue
		}
		children[st.PPID] = append(children[st.PPID], st.PID)
		if st.PGRP == pgid {
			todo = append(todo, st.PID)
		}
	}
	seen := map[int]bool{}
	for len(todo) > 0 {
		pid := todo[0]
		todo = todo[1:]
		if seen[pid] || pid <= 1 {
			continue
		}
		seen[pid] = true
		syscall.Kill(pid, syscall.SIGKILL)
		todo = append(todo, children[pid]...)
	}
}

// reaper is this process's side of the pipe to its reaper.
var reaper struct {
	sync.Mutex
	started bool
	w       *os.File // nil: no reaper
	err     error
}

// startReaper starts the reaper once per process.
func startReaper() error {
	reaper.Lock()
	defer reaper.Unlock()
	if reaper.started {
		return reaper.err
	}
	reaper.started = true
	r, w, err := os.Pipe() // close-on-exec: no other child inherits the write end
	if err != nil {
		reaper.err = fmt.Errorf("start the orphan guard: %w", err)
		return reaper.err
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"qpslab-sandbox-reaper"}
	// Nothing of qpslab's environment: the reaper must not look like a
	// process of the home it guards (the tests find leftovers by the home's
	// path in the environment).
	cmd.Env = []string{reaperEnv + "=1"}
	cmd.Stdin = r
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		reaper.err = fmt.Errorf("start the orphan guard (%s): %w", cmd.Path, err)
		return reaper.err
	}
	go cmd.Wait() // reap it, should it ever end before this process
	reaper.w = w
	return nil
}

// guardGroup asks the reaper to kill process group pgid if this process dies
// before releaseGroup. log, if not "", is where the reaper notes it; program
// and datadir, if not "", name the server's strays.
func guardGroup(pgid int, log, program, datadir string) {
	b, _ := json.Marshal(guardMsg{Op: "+", PGID: pgid, Start: startTime(pgid), Log: log, Program: program, Datadir: datadir})
	tell(string(b) + "\n")
}

// releaseGroup tells the reaper that pgid is no longer its business.
func releaseGroup(pgid int) {
	b, _ := json.Marshal(guardMsg{Op: "-", PGID: pgid})
	tell(string(b) + "\n")
}

func tell(line string) {
	reaper.Lock()
	defer reaper.Unlock()
	if reaper.w == nil {
		return
	}
	// A line shorter than PIPE_BUF is one atomic pipe write. A failed write means the
	// reaper is gone; the death signal still guards the direct children.
	if _, err := reaper.w.WriteString(line); err != nil {
		reaper.w.Close()
		reaper.w = nil
	}
}

// spawner forks every child that must die with this process, from one
// goroutine locked to its thread for good (see the top of this file).
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startTied starts cmd with PR_SET_PDEATHSIG SIGKILL from the spawner thread.
func startTied(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	r := spawnReq{cmd: cmd, done: make(chan error, 1)}
	spawner.reqs <- r
	return <-r.done
}

// testHook, when a test sets it, is called at known points of a start:
// "init" with the init program's pid once it runs, "launch" with the
// server's pid once it is recorded.
var testHook func(phase string, pid int)

func hook(phase string, pid int) {
	if testHook != nil {
		testHook(phase, pid)
	}
}
