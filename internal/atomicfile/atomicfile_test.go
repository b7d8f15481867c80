package atomicfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/testenv"
)

// temps lists the temporary files left in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, ok := atomicfile.Temporary(e.Name()); ok {
			out = append(out, e.Name())
		}
	}
	return out
}

// A new file, then its replacement: each read whole, with the mode asked
// for, and nothing else left in the folder.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	for i, c := range []struct {
		data string
		perm os.FileMode
	}{{"first", 0o644}, {"second, longer", 0o600}, {"3", 0o640}} {
		if err := atomicfile.Write(p, []byte(c.data), c.perm); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != c.data {
			t.Fatalf("write %d: read %q (%v)", i, b, err)
		}
		fi, _ := os.Stat(p)
		if want := c.perm &^ 0o022; fi.Mode().Perm()&^0o022 != want {
			t.Errorf("write %d: mode %v, want %v", i, fi.Mode().Perm(), c.perm)
		}
	}
	if left := temps(t, dir); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if err := atomicfile.Write(filepath.Join(dir, "no-such-folder", "x"), nil, 0o644); !errors.Is(err, os.ErrNotExist) || !bytes.Contains([]byte(err.Error()), []byte("no-such-folder/x")) {
		t.Errorf("a missing folder: %v", err)
	}
}

// Writers that replace one file at once, as two qpslab runs in one home
// did through one fixed NAME.tmp: every read finds one writer's whole
// content (never a mix, never empty), and no temporary file is left.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	content := func(w int) []byte { return bytes.Repeat([]byte{byte('a' + w)}, 64<<10+w) }
	if err := atomicfile.Write(p, content(0), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 4 {
		wg.Go(func() {
			for range 50 {
				if err := atomicfile.Write(p, content(w), 0o644); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var reads int
	var rg sync.WaitGroup
	rg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(p)
			if err != nil {
				errs <- err
				return
			}
			reads++
			if w := int(b[0] - 'a'); w < 0 || w > 3 || !bytes.Equal(b, content(w)) {
				errs <- fmt.Errorf("read a torn file: %d bytes starting %q", len(b), b[:min(8, len(b))])
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if left := temps(t, dir); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	t.Logf("%d reads, each whole", reads)
}

// A full disk: the write fails with ENOSPC, naming the file; the file
// keeps its old content and no partial file is left.
func TestFullDisk(t *testing.T) {
	dir := testenv.SmallDisk(t, 256<<10)
	p := filepath.Join(dir, "r.json")
	if err := atomicfile.Write(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.Write(p, make([]byte, 1<<20), 0o644)
	var pe *os.PathError
	if !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &pe) || pe.Path != p {
		t.Fatalf("a write beyond the disk: %v", err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "old" {
		t.Errorf("after the failed write the file reads %q (%v)", b, err)
	}
	if left := temps(t, dir); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// Sweep removes the temporary files of writers that are gone, and only
// theirs.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid
	names := map[string]bool{ // name: swept
		".r.json.tmp-" + strconv.Itoa(pid) + "-abc":         true,
		".r.json.tmp-" + strconv.Itoa(os.Getpid()) + "-abc": false, // this process: a write in progress
		"r.json":            false,
		".r.json.tmp-x-abc": false,
		"r.json.tmp":        false, // not ours: the old fixed name, or a user's
	}
	for n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := atomicfile.Sweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 1 || !names[gone[0]] {
		t.Errorf("swept %v", gone)
	}
	for n, swept := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); (err == nil) == swept {
			t.Errorf("%s: swept %v, exists %v", n, swept, err == nil)
		}
	}
	if gone, err := atomicfile.Sweep(filepath.Join(dir, "none")); gone != nil || err != nil {
		t.Errorf("a missing folder: %v %v", gone, err)
	}
}

// TempDir's folders are named for their maker: Sweep removes one whose
// maker is gone, with what it holds, and leaves a live maker's and a
// folder of another's naming.
func TestTempDirSwept(t *testing.T) {
	dir := t.TempDir()
	mine, err := atomicfile.TempDir(dir, "ingest")
	if err != nil {
		t.Fatal(err)
	}
	if pid, ok := atomicfile.Temporary(filepath.Base(mine)); !ok || pid != os.Getpid() {
		t.Fatalf("TempDir's name %s: pid %d %v", mine, pid, ok)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(dir, ".ingest.tmp-"+strconv.Itoa(dead.Process.Pid)+"-abc")
	other := filepath.Join(dir, "ingest-abc") // not of TempDir's naming
	for _, d := range []string{left, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "sub", "results.json"), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := atomicfile.Sweep(dir)
	if err != nil || len(gone) != 1 || gone[0] != filepath.Base(left) {
		t.Fatalf("swept %v %v, want %s", gone, err, filepath.Base(left))
	}
	for d, want := range map[string]bool{mine: true, left: false, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", d, err == nil, want)
		}
	}
}
