// Package atomicfile owns replacing a file whole: the results file after
// each run, a sandbox's state, the record of what host tune changed, a
// build's, a config's or a target's file. A reader, a second writer, a
// kill, a full disk or a power loss finds the file as it was or as it was
// written, never a mix of the two, never empty, and never a temporary
// file in its place. It also makes the scratch folders of a write (a post
// the dashboard unpacks) that a kill must not leave behind.
//
// It is written by hand, not with github.com/google/renameio: renameio
// syncs the file but not the folder after the rename (so a power loss can
// lose the new name), and names its temporary files so that a later look
// cannot tell the leftover of a killed writer from the file of one still
// writing (Sweep does, from the pid in the name).
//
// It knows no format and no path of qpslab's: its callers name the file.
package atomicfile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Write replaces path with data. The data goes to a file of its own in
// path's folder (a name no other writer uses: two processes writing path
// at once never share one), which is synced, renamed over path, and the
// folder synced, so that the new name survives a power loss. On any
// failure the new file is removed and path is left as it was. perm is the
// mode of the new file, less the umask, as os.WriteFile's (a file that
// replaces another has the mode its writer names, not the old one's).
//
// Its error is an *os.PathError naming path (not the temporary file), so
// errors.Is(err, syscall.ENOSPC) and the callers' messages see the cause.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := create(dir, base, perm)
	if err != nil {
		return fail("create", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fail("write", path, err)
	}
	// Without this sync a crash after the rename can leave path empty:
	// the rename reaches the disk before the data does.
	if err := f.Sync(); err != nil {
		return fail("sync", path, err)
	}
	if err := f.Close(); err != nil {
		return fail("close", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fail("rename", path, err)
	}
	return syncDir(dir, path)
}

// syncDir makes a rename in dir durable. A file system that cannot sync a
// folder (EINVAL) has nothing to make durable that way.
func syncDir(dir, path string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fail("sync folder", path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fail("sync folder", path, err)
	}
	return nil
}

// fail is an error naming path, whose cause is err's errno where it has
// one (not the temporary file's *PathError).
func fail(op, path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// marker is what every temporary file's name holds between the name of
// the file it replaces and its writer's pid: ".NAME.tmp-PID-RANDOM".
const marker = ".tmp-"

// create makes the temporary file for base in dir, exclusively.
func create(dir, base string, perm os.FileMode) (*os.File, error) {
	prefix := filepath.Join(dir, "."+base+marker+strconv.Itoa(os.Getpid())+"-")
	for range 100 {
		f, err := os.OpenFile(prefix+strconv.FormatUint(rand.Uint64(), 36), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("100 temporary names in %s were taken", dir)
}

// TempDir makes a folder of its own in dir for a write's scratch (an
// upload unpacked before it is stored), named as Write's temporary files
// are (".BASE.tmp-PID-RANDOM"), so that Sweep removes it once its maker is
// gone: the caller removes it when done, and a SIGKILL or a power loss
// leaves it to the next Sweep.
func TempDir(dir, base string) (string, error) {
	prefix := filepath.Join(dir, "."+base+marker+strconv.Itoa(os.Getpid())+"-")
	for range 100 {
		name := prefix + strconv.FormatUint(rand.Uint64(), 36)
		err := os.Mkdir(name, 0o700)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("100 temporary names in %s were taken", dir)
}

// Temporary says whether name (a file's base name) is one of Write's
// temporary files, and the pid of the process that wrote it.
func Temporary(name string) (pid int, ok bool) {
	if !strings.HasPrefix(name, ".") {
		return 0, false
	}
	i := strings.LastIndex(name, marker)
	if i < 0 {
		return 0, false
	}
	p, _, ok := strings.Cut(name[i+len(marker):], "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// Sweep removes from dir the temporary files and folders (TempDir's)
// whose writer is gone (a process killed while it wrote: a SIGKILL, a
// power loss), and returns their names. One whose writer still runs is
// left to it. A dir that does not exist holds none.
func Sweep(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var gone []string
	var errs []error
	for _, e := range ents {
		pid, ok := Temporary(e.Name())
		if !ok || !(e.Type().IsRegular() || e.IsDir()) || alive(pid) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		gone = append(gone, e.Name())
	}
	return gone, errors.Join(errs...)
}

// alive says whether process pid exists. A pid taken since by another
// process counts as alive: its file is kept, which costs only its space.
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
