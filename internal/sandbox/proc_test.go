package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A folder the server's account cannot enter is named with the two ways out:
// a chmod for that folder, or the setting that moves the files elsewhere.
func TestReachableSaysHowToFix(t *testing.T) {
	top, err := os.MkdirTemp("", "qpslab-reach-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(top, "closed")
	home := filepath.Join(closed, "qpslab")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	// An account that owns nothing here and is in no group of it.
	as := &runAs{Name: "postgres", UID: 4242424, GID: 4242424}
	err = reachable(as, home, "QPSLAB_HOME", "/var/lib/qpslab")
	if err == nil {
		t.Fatal("no error for a folder the account cannot enter")
	}
	for _, want := range []string{"user postgres", "cannot enter " + closed + " (mode 0700", "chmod o+x " + closed, "set QPSLAB_HOME", "/var/lib/qpslab"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("not one line: %q", err)
	}
	if err := os.Chmod(closed, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := reachable(as, home, "QPSLAB_HOME", "/var/lib/qpslab"); err != nil {
		t.Errorf("after chmod o+x: %v", err)
	}
	if err := reachable(nil, home, "QPSLAB_HOME", "/var/lib/qpslab"); err != nil {
		t.Errorf("qpslab's own account: %v", err)
	}
}
