// Package input owns reading the files a user gives qpslab to read: the
// results an import reads, a config to add, a grid. Such a file
//
//   - is a regular file: a FIFO, a device, a socket or a folder is refused,
//     by name, before anything opens it for reading (its type is read with
//     lstat, and read again with fstat on a descriptor opened O_NONBLOCK,
//     which a FIFO's open never waits on): a FIFO with no writer would keep
//     the reader waiting for ever, a device would never end;
//   - is under the folder given, when a folder was given (an import's
//     results folder): a symbolic link that leads out of it is refused by
//     name (os.Root resolves every name inside the folder, and refuses one
//     that leaves it);
//   - is at most its reader's stated size, each line at most its stated
//     length (Limits: each reader states one of each, in one place), so a
//     file of the wrong kind ends in one clear error, not in memory
//     exhausted;
//   - is read under a context: a read returns the context's error once it
//     ends, so SIGINT and SIGTERM stop an import halfway through a file.
//
// It knows no format: the callers parse what they read.
package input

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Limits bound what one reader reads of a file: its longest line (0 for a
// reader that reads no lines, such as a JSON decoder's), and the file's
// size.
type Limits struct {
	Line int
	File int64
}

// File is a regular file open for reading under a context and its limits.
type File struct {
	f    *os.File
	ctx  context.Context
	name string // as the messages name it
	lim  Limits
	read int64
}

// Open opens path, a file named to qpslab (a command's argument): a regular
// file of at most lim.File bytes, else an error naming it. A symbolic link
// named so is followed: it is the user's own choice.
func Open(ctx context.Context, path string, lim Limits) (*File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	return newFile(ctx, f, path, lim)
}

// ReadFile reads the whole of path, which Open opens.
func ReadFile(ctx context.Context, path string, lim Limits) ([]byte, error) {
	f, err := Open(ctx, path, lim)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// newFile checks, on the open descriptor, what the name's stat said: the
// file's type may have changed in between.
func newFile(ctx context.Context, f *os.File, name string, lim Limits) (*File, error) {
	fi, err := f.Stat()
	if err == nil {
		err = regular(name, fi)
	}
	if err == nil && lim.File > 0 && fi.Size() > lim.File {
		err = fmt.Errorf("%s is %s, more than the %s qpslab reads of such a file: it is not one (or split it)", name, Size(fi.Size()), Size(lim.File))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, ctx: ctx, name: name, lim: lim}, nil
}

// regular refuses anything but a regular file, naming what it is.
func regular(name string, fi fs.FileInfo) error {
	m := fi.Mode()
	var what string
	switch {
	case m.IsRegular():
		return nil
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), which could keep qpslab waiting for ever"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m.IsDir():
		what = "a folder"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link"
	default:
		what = "not a regular file (" + m.Type().String() + ")"
	}
	return fmt.Errorf("%s is %s: qpslab reads regular files only; save what it holds to a file and name that", name, what)
}

// Read reads from the file, until the context ends or the file grows past
// its bound.
func (f *File) Read(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	if f.lim.File > 0 {
		if f.read > f.lim.File {
			return 0, f.grew()
		}
		// One byte past the bound tells a file that grew from one that
		// ends there.
		if left := f.lim.File - f.read + 1; int64(len(p)) > left {
			p = p[:left]
		}
	}
	n, err := f.f.Read(p)
	f.read += int64(n)
	if f.lim.File > 0 && f.read > f.lim.File {
		return n, f.grew()
	}
	return n, err
}

func (f *File) grew() error {
	return fmt.Errorf("%s grew past the %s qpslab reads of such a file while it was read", f.name, Size(f.lim.File))
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Name is the file as messages name it.
func (f *File) Name() string { return f.name }

// Lines is a line scanner over the file whose lines are at most the
// file's line limit: a longer one ends the scan, and Err says so.
func (f *File) Lines() *Scanner { return NewScanner(f, f.lim.Line) }

// NewScanner is a line scanner over r whose lines are at most line bytes.
func NewScanner(r io.Reader, line int) *Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, line)), line)
	return &Scanner{Scanner: sc, limit: line}
}

// Scanner is a bufio.Scanner whose Err names a line over the limit.
type Scanner struct {
	*bufio.Scanner
	limit int
}

// Err is the scan's error: a line over the limit, the context's end, a
// read's failure; nil at the end of the file.
func (s *Scanner) Err() error {
	err := s.Scanner.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("a line longer than %s, the longest this reader takes: the file is not of this kind", Size(int64(s.limit)))
	}
	return err
}

// Dir is a folder given to read (an import's results folder): its files
// are opened by names relative to it, and no name leads out of it.
type Dir struct {
	path string
	root *os.Root
}

// OpenDir opens the folder path.
func OpenDir(path string) (*Dir, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder: name the results folder", path)
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{path: path, root: r}, nil
}

// Close closes the folder.
func (d *Dir) Close() error { return d.root.Close() }

// Path is the folder as it was named.
func (d *Dir) Path() string { return d.path }

// Join is name (relative to the folder) as messages name it.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// ReadDir lists the folder name (relative to d; "." for d itself), sorted
// by name.
func (d *Dir) ReadDir(name string) ([]fs.DirEntry, error) {
	if _, err := d.Stat(name); err != nil {
		return nil, err
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, d.escaped(name, err)
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// Stat is name's file info, a symbolic link followed while it stays
// inside the folder; one that leads out is an error naming it.
func (d *Dir) Stat(name string) (fs.FileInfo, error) {
	fi, err := d.root.Stat(name)
	if err != nil {
		return nil, d.escaped(name, err)
	}
	return fi, nil
}

// Open opens the regular file name (relative to d) under ctx and lim.
func (d *Dir) Open(ctx context.Context, name string, lim Limits) (*File, error) {
	fi, err := d.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := regular(d.Join(name), fi); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, d.escaped(name, err)
	}
	return newFile(ctx, f, d.Join(name), lim)
}

// escaped says which name's symbolic link leads out of the folder, where
// that is why err happened; other errors are returned as they are.
func (d *Dir) escaped(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// The first symbolic link on the way, from the folder down.
	parts := strings.Split(filepath.Clean(name), string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		fi, lerr := d.root.Lstat(p)
		if lerr != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		to, _ := d.root.Readlink(p)
		return fmt.Errorf("%s is a symbolic link to %s, which leads out of %s: qpslab reads only the files under the folder it is given; copy the file into it", d.Join(p), to, d.path)
	}
	return err
}

// Size is n bytes in the largest binary unit it fills: 1 MiB, 256 MiB.
func Size(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
