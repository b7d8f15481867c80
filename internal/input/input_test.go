package input_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/qpslab/qpslab/internal/input"
	"github.com/qpslab/qpslab/internal/testenv"
)

var lim = input.Limits{Line: 16, File: 64}

// A folder with a regular file, a FIFO, a symbolic link inside the folder
// and two out of it (relative and absolute), a folder, and a link to a
// folder outside.
func folder(t *testing.T) (dir, outside string) {
	t.Helper()
	dir, outside = t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "ok"), []byte("one\ntwo\n"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	must(os.Symlink("ok", filepath.Join(dir, "inside")))
	rel, err := filepath.Rel(dir, filepath.Join(outside, "secret"))
	must(err)
	must(os.Symlink(rel, filepath.Join(dir, "out")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "abs")))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(os.Symlink(outside, filepath.Join(dir, "outdir")))
	return dir, outside
}

// Each refusal names the file and what it is, and comes before anything
// opens it for reading: the FIFO never has a reader (a writer's
// non-blocking open of it fails with ENXIO while none has it open).
func TestDirRefuses(t *testing.T) {
	dir, _ := folder(t)
	d, err := input.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		name string
		want []string
	}{
		{"fifo", []string{filepath.Join(dir, "fifo") + " is a named pipe (FIFO)", "regular files only"}},
		{"sub", []string{filepath.Join(dir, "sub") + " is a folder"}},
		{"out", []string{filepath.Join(dir, "out") + " is a symbolic link to ../", "which leads out of " + dir}},
		{"abs", []string{filepath.Join(dir, "abs") + " is a symbolic link to /", "leads out of"}},
		{"outdir/secret", []string{filepath.Join(dir, "outdir") + " is a symbolic link", "leads out of"}},
		{"nothere", []string{"no such file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := d.Open(context.Background(), c.name, lim)
			if err == nil {
				f.Close()
			}
			testenv.WantErr(t, err, c.want...)
		})
	}
	if w, err := os.OpenFile(filepath.Join(dir, "fifo"), os.O_WRONLY|syscall.O_NONBLOCK, 0); !errors.Is(err, syscall.ENXIO) {
		if w != nil {
			w.Close()
		}
		t.Errorf("the FIFO was opened for reading: a writer's open says %v", err)
	}
	if _, err := d.ReadDir("outdir"); err == nil || !strings.Contains(err.Error(), "leads out of") {
		t.Errorf("listing a linked folder outside: %v", err)
	}
	f, err := d.Open(context.Background(), "inside", lim)
	if err != nil {
		t.Fatalf("a link inside the folder: %v", err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "one\ntwo\n" {
		t.Fatalf("read %q, %v", b, err)
	}
}

// A file named on its own: the same refusals, a device included; a link
// named so is the user's own and is followed.
func TestOpenRefuses(t *testing.T) {
	dir, _ := folder(t)
	for _, c := range []struct {
		path string
		want []string
	}{
		{filepath.Join(dir, "fifo"), []string{"is a named pipe (FIFO)"}},
		{"/dev/zero", []string{"/dev/zero is a device"}},
		{dir, []string{"is a folder"}},
	} {
		_, err := input.Open(context.Background(), c.path, lim)
		testenv.WantErr(t, err, c.want...)
	}
	if b, err := input.ReadFile(context.Background(), filepath.Join(dir, "out"), lim); err != nil || string(b) != "secret\n" {
		t.Errorf("a link named on its own: %q, %v", b, err)
	}
}

// The size and line bounds, and a context that ends.
func TestBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("x", 65)), 0o644)
	_, err := input.ReadFile(context.Background(), big, lim)
	testenv.WantErr(t, err, big+" is 65 bytes, more than the 64 bytes qpslab reads")
	exact := filepath.Join(dir, "exact")
	os.WriteFile(exact, []byte(strings.Repeat("x", 64)), 0o644)
	if b, err := input.ReadFile(context.Background(), exact, lim); err != nil || len(b) != 64 {
		t.Errorf("a file of the bound: %d bytes, %v", len(b), err)
	}

	long := filepath.Join(dir, "long")
	os.WriteFile(long, []byte("short\n"+strings.Repeat("y", 17)+"\n"), 0o644)
	f, err := input.Open(context.Background(), long, lim)
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Lines()
	n := 0
	for sc.Scan() {
		n++
	}
	f.Close()
	if n != 1 {
		t.Errorf("%d lines read before the long one", n)
	}
	testenv.WantErr(t, sc.Err(), "a line longer than 16 bytes")

	ctx, cancel := context.WithCancel(context.Background())
	f, err = input.Open(ctx, exact, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cancel()
	if _, err := io.ReadAll(f); !errors.Is(err, context.Canceled) {
		t.Errorf("a read after the context ended: %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 256 << 20: "256 MiB", 1 << 30: "1 GiB", 1500: "1500 bytes", 64 << 10: "64 KiB"} {
		if got := input.Size(n); got != want {
			t.Errorf("Size(%d) = %s, want %s", n, got, want)
		}
	}
}
