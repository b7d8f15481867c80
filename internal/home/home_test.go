package home

import (
	"os"
	"path/filepath"
	"testing"
)

// Results and reports folders are made 0700 (the folders above them as
// Ensure makes them, so that a server account still reaches the
// sandboxes); one that exists keeps its mode.
func TestEnsurePrivate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	dir := filepath.Join(root, "results")
	if err := EnsurePrivate(dir); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{root: 0o755, dir: 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, mode %v, want %04o", p, err, fi.Mode(), want)
		}
	}
	mine := filepath.Join(root, "mine")
	if err := os.Mkdir(mine, 0o750); err != nil {
		t.Fatal(err)
	}
	os.Chmod(mine, 0o750)
	if err := EnsurePrivate(mine); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(mine); fi.Mode().Perm() != 0o750 {
		t.Errorf("an existing folder's mode was changed: %v", fi.Mode())
	}
	if err := EnsurePrivate(filepath.Join(dir, "x\x00")); err == nil {
		t.Error("no error for a path the system refuses")
	}
}
