package result

import (
	"os"
	"path/filepath"
	"testing"
)

// A results file is its owner's alone (0600): the store's own comment
// says other users must not read results, and the file holds the same.
func TestWriteIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Write(path, []Run{{Suite: "sysbench", Test: "point-query_range=100"}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, mode %v, want 0600", path, err, fi.Mode())
	}
}
