// Package recorder owns keeping a run's results as it goes: a row in the
// store from the moment a run starts (its samples each second, its end), and
// the JSON results file after every run, so that an interrupted command
// keeps what was measured. It tells the truth about where results are: a
// result is reported stored, or written, only when it was; when one copy
// fails, the other is kept and the failure is said once. A full disk stops
// the command and is said once too, on the runs it cut short: a reserve of
// space on the home's disk (Reserve), freed at the first full-disk error,
// leaves room to write why.
//
// It does not run, measure or format anything.
package recorder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// Sink keeps the runs of one command. Its zero value keeps nothing; set
// Store and File (either may be left out).
type Sink struct {
	Store *store.Store
	File  string // the JSON results file; "" for none
	// Content returns the (effective) content of the config a run names,
	// to store beside it; nil for unknown.
	Content func(configID string) []byte
	// Meta is what every run's row carries beside its config's content:
	// for a fleet agent, its name and the job and attempt (store.Meta).
	Meta store.Meta
	// Home is the folder a full disk's message names when the file that
	// could not be written is under it (the qpslab home); "" names that
	// file's folder. Reserve is the file of space kept on the home's disk
	// (Reserve makes it), freed at the first full-disk error; "" for none.
	Home, Reserve string
	// OnFull is told the first full-disk error, once (a *DiskFull): the
	// command stops there, and every run it cuts short is recorded failed
	// with it.
	OnFull func(error)

	mu       sync.Mutex
	runs     []result.Run
	stored   int
	written  bool // the file holds every run so far
	storeErr error
	fileErr  error
	full     *DiskFull
}

// DiskFull is a full disk: the folder that filled (the home, where the
// file is in it) and the bytes free on its disk when it did.
type DiskFull struct {
	Dir  string
	Free uint64
	Err  error // the write that failed
}

func (e *DiskFull) Error() string {
	return fmt.Sprintf("no space left on device (%s: %d bytes free)", e.Dir, e.Free)
}

func (e *DiskFull) Unwrap() error { return e.Err }

// ReserveSize is the space Reserve keeps: room for the end of the runs a
// full disk cuts short (their rows' status and why, the results file
// written again) once it is freed.
const ReserveSize = 8 << 20

// Reserve makes the reserve file path of size bytes, allocated on its
// disk, unless it is there already: a command that found the disk full
// freed it, and the next one makes it again once there is room. Its error
// says there is not (the reserve is then not kept).
func Reserve(path string, size int64) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() >= size {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("keep a reserve of space: %w", err)
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) { // a file system that cannot allocate: zeros
		_, err = f.WriteAt(make([]byte, size), 0)
		if err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("keep a reserve of %d MiB of space in %s: %w", size>>20, filepath.Dir(path), err)
	}
	return nil
}

// isFull says whether err is a full disk: the store's (store.IsFull) or a
// file's (ENOSPC).
func isFull(err error) bool { return err != nil && store.IsFull(err) }

// noteFull records the first full disk, found writing path: the folder
// it names and what was free then; it frees the reserve and tells OnFull.
// Later calls return the first.
func (s *Sink) noteFull(err error, path string) *DiskFull {
	s.mu.Lock()
	if s.full != nil {
		f := s.full
		s.mu.Unlock()
		return f
	}
	dir := path
	if filepath.IsAbs(path) {
		dir = filepath.Dir(path)
		if rel, rerr := filepath.Rel(s.Home, path); s.Home != "" && rerr == nil && filepath.IsLocal(rel) {
			dir = s.Home
		}
	}
	f := &DiskFull{Dir: dir, Free: freeBytes(dir), Err: err}
	s.full = f
	if s.Reserve != "" {
		os.Remove(s.Reserve)
	}
	on := s.OnFull
	s.mu.Unlock()
	if on != nil {
		on(f)
	}
	return f
}

// freeBytes is what the disk of dir has free for an unprivileged user
// (the database servers run as one).
func freeBytes(dir string) uint64 {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

// Full is the full disk that stopped the command, if one did.
func (s *Sink) Full() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full == nil {
		return nil
	}
	return s.full
}

// Run is one run being kept.
type Run struct {
	s        *Sink
	w        *store.Writer // nil when the store refused the run's start
	beginErr error         // why it refused: Done says so, after the file keeps the run
}

// Begin starts keeping a run: its row goes into the store now (status
// running), so that a crash leaves a trace.
func (s *Sink) Begin(ctx context.Context, start result.Run) (*Run, error) {
	r := &Run{s: s}
	if s.Store == nil {
		return r, nil
	}
	var content []byte
	if s.Content != nil {
		content = s.Content(start.Config)
	}
	m := s.Meta
	m.ConfigContent = content
	w, err := s.Store.Begin(ctx, start, m)
	if isFull(err) { // again, in the reserve's room: the run then says why it ends
		s.noteFull(err, s.Store.Where())
		w, err = s.Store.Begin(ctx, start, m)
	}
	if err != nil {
		// The run still runs and the results file keeps it; Done says the
		// store could not (a full disk is found at the start as often as at
		// the end).
		r.beginErr = err
		return r, nil
	}
	r.w = w
	w.OnError(func(err error) {
		if isFull(err) {
			s.noteFull(err, s.Store.Where())
		}
	})
	return r, nil
}

// Sample passes a second's sample to the store as it is measured.
func (r *Run) Sample(smp result.Sample) {
	if r.w != nil {
		r.w.Sample(smp)
	}
}

// Done keeps the run's result: the results file first (it is the copy if
// the store fails), then the store. Its error says which copy failed and
// where the result is. A run cut short by a full disk (interrupted once
// the command stopped for it, or failed with the disk full under it) is
// recorded failed, saying so; a copy that a full disk refused is written
// again in the reserve's room, and at least the run's status and why if
// its whole end does not fit.
func (r *Run) Done(ctx context.Context, res result.Run) error {
	s := r.s
	fresh := s.Full() == nil
	if fresh && res.Status == result.Failed && s.Home != "" && freeBytes(s.Home) == 0 {
		// The server's own writes failed on the full disk (a table that
		// cannot grow): the disk is why.
		s.noteFull(syscall.ENOSPC, filepath.Join(s.Home, "sandboxes"))
		fresh = false
	}
	if f := s.Full(); f != nil {
		switch res.Status {
		case result.Aborted:
			res.Status, res.Error = result.Failed, f.Error()
		case result.Failed:
			if !strings.HasPrefix(res.Error, f.Error()) {
				res.Error = f.Error() + ": " + res.Error
			}
		}
	}
	ferr := s.write(res, true)
	if isFull(ferr) {
		s.noteFull(ferr, s.File)
		ferr = s.write(res, false)
	}
	var serr error
	if r.beginErr != nil {
		serr = r.beginErr
		s.mu.Lock()
		if s.storeErr == nil {
			s.storeErr = serr
		}
		s.mu.Unlock()
	}
	if r.w != nil {
		// Stored even when the run was interrupted: a fresh context.
		bg := context.WithoutCancel(ctx)
		serr = r.w.Done(bg, res)
		if isFull(serr) {
			f := s.noteFull(serr, s.Store.Where())
			if serr = r.w.Retry(bg, res); serr != nil {
				why := f.Error()
				if res.Status == result.OK {
					why = "its result could not be stored: " + why
				} else if res.Error != "" && !strings.HasPrefix(res.Error, why) {
					why += ": " + res.Error
				}
				r.w.Fail(bg, why) // where even this does not fit, the next open says aborted
				serr = f
			}
		}
		s.mu.Lock()
		if serr == nil {
			s.stored++
		} else if s.storeErr == nil {
			s.storeErr = serr
		}
		s.mu.Unlock()
	}
	switch {
	case serr != nil && ferr != nil:
		return fmt.Errorf("%s: neither the store nor the results file could keep it: %v; %v", res.Test, serr, ferr)
	case serr != nil && s.File != "":
		return fmt.Errorf("%s: %w (the results so far are in %s)", res.Test, serr, s.File)
	case serr != nil:
		return fmt.Errorf("%s: %w", res.Test, serr)
	case ferr != nil && r.w != nil:
		return fmt.Errorf("%s: %w (the results so far are stored in %s)", res.Test, ferr, s.Store.Where())
	case ferr != nil:
		return ferr
	case fresh && s.Full() != nil:
		// Both copies kept in the reserve's room; the command stops here.
		return fmt.Errorf("%s: %w", res.Test, s.Full())
	}
	return nil
}

// write adds res to the runs (add) and writes the results file of them
// all; its error is the file's.
func (s *Sink) write(res result.Run, add bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		s.runs = append(s.runs, res)
	}
	if s.File == "" {
		return nil
	}
	err := result.Write(s.File, s.runs)
	s.written = err == nil
	if err != nil && s.fileErr == nil {
		s.fileErr = err
	}
	if err == nil && s.fileErr != nil && isFull(s.fileErr) {
		s.fileErr = nil // written in the reserve's room after all
	}
	return err
}

// Runs are the runs kept so far, in order.
func (s *Sink) Runs() []result.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]result.Run{}, s.runs...)
}

// Summary says where the runs are, truthfully: how many the store holds
// (and under which labels), whether the file holds them all, and what
// failed. "" when there were none.
func (s *Sink) Summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.runs) == 0 {
		return ""
	}
	var parts []string
	if s.Store != nil {
		if s.stored > 0 {
			parts = append(parts, fmt.Sprintf("%d result(s) stored in %s (%s)", s.stored, s.Store.Where(), Labels(s.runs)))
		}
		if s.stored < len(s.runs) {
			parts = append(parts, fmt.Sprintf("%d result(s) NOT stored (%v)", len(s.runs)-s.stored, oneLine(s.storeErr)))
		}
	}
	if s.File != "" {
		if s.written {
			parts = append(parts, fmt.Sprintf("all %d written to %s", len(s.runs), s.File))
		} else {
			parts = append(parts, fmt.Sprintf("the results file %s is NOT complete (%v)", s.File, oneLine(s.fileErr)))
		}
	}
	return strings.Join(parts, "; ")
}

// Err is the first failure to keep a result, if any.
func (s *Sink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.storeErr, s.fileErr)
}

// Labels lists the build.config labels of runs, in order of appearance.
func Labels(runs []result.Run) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range runs {
		l := r.Label()
		if !seen[l] {
			seen[l] = true
			out = append(out, "label "+l)
		}
	}
	return strings.Join(out, ", ")
}

func oneLine(err error) string {
	if err == nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
