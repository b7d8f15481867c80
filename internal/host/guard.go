package host

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// The guard of a switched host state: the boost files a run switches
// (Boost) go back as they were even when qpslab is killed with SIGKILL and
// runs no cleanup of its own. As the sandboxes' reaper does for servers
// (internal/sandbox/guard.go), the guard is this very binary run again
// (/proc/self/exe) with QPSLAB_HOST_RESTORE naming the state file, in a
// session of its own, ignoring terminal signals, reading a pipe whose only
// writer is qpslab. When qpslab ends, however it ends, the kernel closes
// the pipe: the guard reads EOF and restores the state (Reset), which is
// nothing when qpslab restored it already (Reset removes the file).
const restoreEnv = "QPSLAB_HOST_RESTORE"

func init() {
	if p := os.Getenv(restoreEnv); p != "" {
		guardMain(os.Stdin, p)
		os.Exit(0)
	}
}

func guardMain(in io.Reader, statePath string) {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	io.Copy(io.Discard, in) // until EOF: the owner is gone
	Reset(statePath)
}

// Guard starts the guard of b's state: until this process ends, nothing;
// when it ends, whatever b has not restored is put back.
func (b *Boost) Guard() error {
	r, w, err := os.Pipe() // close-on-exec: no other child holds the write end
	if err != nil {
		return fmt.Errorf("start the boost state's guard: %w", err)
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"qpslab-host-guard"}
	cmd.Env = []string{restoreEnv + "=" + b.statePath}
	cmd.Stdin = r
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return fmt.Errorf("start the boost state's guard (%s): %w", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	b.guard, b.guardDone = w, done // w is never written: its close is the message
	return nil
}

// endGuard tells the guard that the state is restored (it restores what
// is left, nothing where Reset removed the state) and waits for it to
// end, a little while at most: a guard that hangs must not hang qpslab.
func (b *Boost) endGuard() {
	if b.guard == nil {
		return
	}
	b.guard.Close()
	select {
	case <-b.guardDone:
	case <-time.After(10 * time.Second):
	}
	b.guard, b.guardDone = nil, nil
}
