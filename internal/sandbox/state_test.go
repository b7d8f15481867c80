package sandbox_test

import (
	"path/filepath"
	"testing"

	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/testenv"
)

// States gives the named sandboxes in the order named, or all of them; a
// name with no sandbox is an error, not a gap.
func TestStates(t *testing.T) {
	h := newHome(t)
	writeSandbox(t, h, "a", sandbox.State{Build: "b1"}, 0)
	writeSandbox(t, h, "b", sandbox.State{Build: "b2"}, 0)
	all, err := sandbox.States(h)
	if err != nil || len(all) != 2 || all[0].Name != "a" || all[1].Name != "b" {
		t.Fatalf("States() = %+v, %v; want a and b", all, err)
	}
	some, err := sandbox.States(h, "b", "a")
	if err != nil || len(some) != 2 || some[0].Name != "b" || some[1].Name != "a" {
		t.Errorf("States(b, a) = %+v, %v; want b then a", some, err)
	}
	_, err = sandbox.States(h, "a", "nosuch")
	testenv.WantErr(t, err, `no sandbox named "nosuch"`, "qpslab server status")
}

// Running returns a running sandbox's state, and for a stopped one says how
// to start it, with the config's name (not its name@hash ID).
func TestRunning(t *testing.T) {
	h := newHome(t)
	dir := writeSandbox(t, h, "up", sandbox.State{Detached: true}, 0)
	srv := fakeServer(t, filepath.Join(dir, "data"))
	writeSandbox(t, h, "up", sandbox.State{Detached: true, PID: srv.Process.Pid}, 0)
	writeSandbox(t, h, "down", sandbox.State{Build: "mariadb-system", Config: "mine@0123456789ab"}, 0)

	if st, err := sandbox.Running(h, "up"); err != nil || st.PID != srv.Process.Pid {
		t.Errorf("Running(up) = pid %d, %v; want pid %d", st.PID, err, srv.Process.Pid)
	}
	_, err := sandbox.Running(h, "down")
	testenv.WantErr(t, err, "sandbox down is not running", "qpslab server start mariadb-system mine")
	_, err = sandbox.Running(h, "nosuch")
	testenv.WantErr(t, err, `no sandbox named "nosuch"`)
}
