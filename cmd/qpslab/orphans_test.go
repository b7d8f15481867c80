package main_test

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/testenv"
)

// qpslab run killed with SIGKILL in the middle of a test, which runs no
// cleanup of its own, leaves no server behind; the next command that touches
// sandboxes says what the crash left and marks it.
func TestRunKilledLeavesNoServer(t *testing.T) {
	for _, b := range []string{"mariadb-system", "postgres-system"} {
		t.Run(b, func(t *testing.T) {
			h := newHome(t)
			cmd := exec.Command(bin, "run", "sysbench", "--build", b, "--config", "default",
				"--rows", "1000", "--read-secs", "30", "--warmup", "0", "--tests", "point-query.pre")
			cmd.Env = testenv.Env(h)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			defer func() { cmd.Process.Kill(); <-done }()

			// Wait until the sandbox records a live server, then until the
			// 30 s test has measured a second (the load of 1000 rows done).
			var st sandbox.State
			for deadline := time.Now().Add(3 * time.Minute); ; {
				if sts, _ := sandbox.List(h); len(sts) == 1 && sts[0].Running() {
					st = sts[0]
					break
				}
				select {
				case <-done:
					t.Fatalf("qpslab run ended before its server ran: stdout %q stderr %q", out.String(), errb.String())
				case <-time.After(50 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatal("no running server within 3 minutes")
				}
			}
			waitSamples(t, h, "point-query.pre_range=100", 1, done)
			select {
			case <-done:
				t.Fatalf("qpslab run ended before the kill: stdout %q stderr %q", out.String(), errb.String())
			default:
			}
			if len(testenv.Processes(h.Root)) < 2 {
				t.Fatalf("no server process before the kill: %q", testenv.Processes(h.Root))
			}
			cmd.Process.Signal(syscall.SIGKILL)
			<-done

			var left []string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if left = testenv.Processes(h.Root); len(left) == 0 {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("10 s after qpslab run was killed, processes are left: %q", left)
			}

			r := qpslab(t, h, "server", "status")
			if r.code != 0 || !strings.Contains(r.stderr, "cleaned up after an earlier qpslab that died") || !strings.Contains(r.stderr, st.Name) {
				t.Errorf("the next command did not say what it cleaned: %+v", r)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("the cleaning is not told in one line: %q", r.stderr)
			}
			if !strings.Contains(r.stdout, "died") {
				t.Errorf("status does not show the sandbox as died:\n%s", r.stdout)
			}
			if r := qpslab(t, h, "server", "status"); strings.Contains(r.stderr, "cleaned") {
				t.Errorf("a second command cleaned again: %q", r.stderr)
			}
		})
	}
}

// server prune removes what is not running, keeps logs when asked, and says
// how much it freed; a detached server that runs is kept.
func TestServerPrune(t *testing.T) {
	h := newHome(t)
	if r := qpslab(t, h, "server", "start", "mariadb-system", "default", "--name", "keep"); r.code != 0 {
		t.Fatalf("start: %+v", r)
	}
	defer qpslab(t, h, "server", "stop", "keep")
	if r := qpslab(t, h, "server", "start", "mariadb-system", "default", "--name", "old"); r.code != 0 {
		t.Fatalf("start: %+v", r)
	}
	if r := qpslab(t, h, "server", "stop", "old"); r.code != 0 {
		t.Fatalf("stop: %+v", r)
	}
	r := qpslab(t, h, "server", "prune", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "would remove old (stopped)") || !strings.Contains(r.stdout, "kept keep: running") {
		t.Errorf("prune --dry-run: %+v", r)
	}
	r = qpslab(t, h, "server", "prune", "--keep-logs")
	if r.code != 0 || !strings.Contains(r.stdout, "removed old (stopped)") || !strings.Contains(r.stdout, "logs kept in "+h.Logs()) || !strings.Contains(r.stdout, "freed ") {
		t.Errorf("prune --keep-logs: %+v", r)
	}
	sts, _ := sandbox.List(h)
	if len(sts) != 1 || sts[0].Name != "keep" || !sts[0].Running() {
		t.Errorf("after prune the sandboxes are %+v, want keep running", sts)
	}
}
