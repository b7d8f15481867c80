package testenv

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size bytes on a new folder and returns it:
// a disk that fills up for real (ENOSPC, SQLite's "database or disk is
// full"), for the tests of a full disk. Its folder is mode 0755, as Home's,
// so that an unprivileged server user can reach a home put on it.
// Mounting needs root, which the tests' servers need too (make test runs
// as root); elsewhere the test is skipped through Skip, saying so.
func SmallDisk(t testing.TB, size int64) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "qpslab-disk-")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		os.Remove(dir)
		if errors.Is(err, syscall.EPERM) {
			Skip(t, "mounting a small tmpfs needs root: "+err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Unmount(dir, syscall.MNT_DETACH)
		os.Remove(dir)
	})
	return dir
}

// Fill takes every byte left on the file system of dir with one file,
// which it returns: the disk is full from then on, until the file is
// removed.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, "filler-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Fallocate the space left, then write what it could not take (the
	// file system's own blocks for the file, a few pages) until ENOSPC.
	free := int64(st.Bavail) * st.Bsize
	if free > 0 && syscall.Fallocate(int(f.Fd()), 0, 0, free) == nil {
		if _, err := f.Seek(free, 0); err != nil {
			t.Fatal(err)
		}
	}
	page := make([]byte, 4096)
	for {
		if _, err := f.Write(page); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	return f.Name()
}
