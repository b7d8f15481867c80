package main_test

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/testenv"
)

// qpslab run of two labels keeps both servers up for the whole plan
// (test-level interleaving); interrupted with SIGINT, or killed with
// SIGKILL, which runs no cleanup of its own, it leaves neither behind.
func TestInterleavedServersLeaveNothing(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			h := newHome(t)
			if r := qpslab(t, h, "configs", "add", "twin", "--family", "mysql", emptyFile(t)); r.code != 0 {
				t.Fatalf("configs add: %+v", r)
			}
			cmd := exec.Command(bin, "run", "sysbench", "--build", "mariadb-system", "--config", "default,twin",
				"--rows", "1000", "--read-secs", "60", "--warmup", "0", "--tests", "point-query.pre*", "-v")
			cmd.Env = testenv.Env(h)
			var out, errb lockedBuf // serve_test.go's
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			defer func() { cmd.Process.Kill(); <-done }()

			// Both servers up, and the sliced test under way on them.
			testenv.WaitFor(t, 3*time.Minute, "both servers up and the test sliced", func() bool {
				select {
				case <-done:
					t.Fatalf("qpslab run ended early: stdout %q stderr %q", out.String(), errb.String())
				default:
				}
				sts, _ := sandbox.List(h)
				running := 0
				for _, st := range sts {
					if st.Running() {
						running++
					}
				}
				return running == 2 && strings.Contains(errb.String(), "point-query.pre_range=100, 1 thread(s), 20 slice(s)")
			})
			if !strings.Contains(errb.String(), "test-level interleaving: the 2 labels' servers up together") {
				t.Errorf("the run did not say how it interleaves: %q", errb.String())
			}
			cmd.Process.Signal(sig)
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				t.Fatalf("qpslab run did not end on %s", sig)
			}
			testenv.WaitFor(t, 30*time.Second, "no server left after "+sig.String(), func() bool { return len(testenv.Processes(h.Root)) == 0 })
			if sig == syscall.SIGINT {
				// Interrupted cleanly: the test's runs are kept as aborted
				// (both labels'), and the servers were stopped by qpslab.
				r := qpslab(t, h, "labels")
				if r.code != 0 || !strings.Contains(r.stdout, "mariadb-system.default") || !strings.Contains(r.stdout, "mariadb-system.twin") {
					t.Errorf("labels after SIGINT: %+v", r)
				}
				sts, _ := sandbox.List(h)
				for _, st := range sts {
					if st.Running() {
						t.Errorf("sandbox %s still running after SIGINT", st.Name)
					}
				}
			}
		})
	}
}
