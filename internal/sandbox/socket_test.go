package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wantErr fails unless err is one line holding each of subs (testenv's
// WantErr, which this package's own tests cannot import).
func wantErr(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %q: want one line mentioning %q", err, s)
		}
	}
}

// A long sandbox path puts the socket in a /tmp/qpslab-<hash> folder,
// whose name anyone can take first. qpslab makes it 0700, takes back its
// own (a socket folder an older qpslab made 0755), and refuses one that is
// a symlink or another user's, in one line naming it, without changing
// it.
func TestSocketFolderIsPrivate(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("a-long-sandbox-path-", 5))
	run, own, err := makeRunDir(long, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	if !own || !strings.HasPrefix(run, filepath.Join(os.TempDir(), "qpslab-")) {
		t.Fatalf("the socket folder of a long path is %s (own %v), want a /tmp/qpslab- folder", run, own)
	}
	mode := func(p string) os.FileMode {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode()
	}
	if m := mode(run); m.Perm() != 0o700 || !m.IsDir() {
		t.Errorf("%s: mode %v, want a folder 0700", run, m)
	}
	os.Chmod(run, 0o755)
	if _, _, err := makeRunDir(long, nil); err != nil || mode(run).Perm() != 0o700 {
		t.Errorf("qpslab's own folder left 0755: %v, mode %v", err, mode(run))
	}

	// A symlink in its place, to a folder of someone's: refused, and
	// neither chowned nor chmodded through.
	os.RemoveAll(run)
	target := t.TempDir()
	os.Chmod(target, 0o755)
	if err := os.Symlink(target, run); err != nil {
		t.Fatal(err)
	}
	_, _, err = makeRunDir(long, &runAs{Name: "nobody-here", UID: 4242424, GID: 4242424})
	wantErr(t, err, run, "symlink", "QPSLAB_HOME")
	if m := mode(target); m.Perm() != 0o755 {
		t.Errorf("the symlink's target was changed: mode %v", m)
	}
	os.Remove(run)

	// Another user's folder: refused.
	other := os.TempDir() // root's, for a test that does not run as root
	if os.Geteuid() == 0 {
		if err := os.Mkdir(run, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(run, 0o777)
		if err := os.Chown(run, 4242424, 4242424); err != nil {
			t.Fatal(err)
		}
		other = run
	}
	err = serverFolder(other, nil)
	wantErr(t, err, other, "belongs to uid", "not to qpslab's user")
	if os.Geteuid() == 0 && mode(run).Perm() != 0o777 {
		t.Errorf("another user's folder was changed: mode %v", mode(run))
	}
	// It is the server account's: taken.
	if os.Geteuid() == 0 {
		as := &runAs{Name: "server", UID: 4242424, GID: 4242424}
		if err := serverFolder(run, as); err != nil || mode(run).Perm() != 0o700 {
			t.Errorf("the server account's own folder: %v, mode %v", err, mode(run))
		}
	}
	os.RemoveAll(run)

	// At stop the folder is removed when it is still the one qpslab made;
	// a symlink or another user's folder in its place is left.
	if _, _, err := makeRunDir(long, nil); err != nil {
		t.Fatal(err)
	}
	st := State{RunDir: run, OwnRunDir: true}
	removeRunDir(st)
	if _, err := os.Lstat(run); !os.IsNotExist(err) {
		t.Errorf("qpslab's socket folder is left at stop: %v", err)
	}
	os.Symlink(target, run)
	removeRunDir(st)
	if _, err := os.Lstat(run); err != nil {
		t.Errorf("a symlink in its place was removed: %v", err)
	}
	os.Remove(run)
	if os.Geteuid() == 0 {
		os.Mkdir(run, 0o700)
		os.Chown(run, 4242424, 4242424)
		removeRunDir(st)
		if _, err := os.Lstat(run); err != nil {
			t.Errorf("another user's folder in its place was removed: %v", err)
		}
	}
}
