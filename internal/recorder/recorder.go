// Package recorder owns keeping a run's results as it goes: a row in the
// store from the moment a run starts (its samples each second, its end), and
// the JSON results file after every run, so that an interrupted command
// keeps what was measured. It tells the truth about where results are: a
// result is reported stored, or written, only when it was; when one copy
// fails, the other is kept and the failure is said once.
//
// It does not run, measure or format anything.
package recorder

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

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

	mu       sync.Mutex
	runs     []result.Run
	stored   int
	written  bool // the file holds every run so far
	storeErr error
	fileErr  error
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
	if err != nil {
		// The run still runs and the results file keeps it; Done says the
		// store could not (a full disk is found at the start as often as at
		// the end).
		r.beginErr = err
		return r, nil
	}
	r.w = w
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
// where the result is.
func (r *Run) Done(ctx context.Context, res result.Run) error {
	s := r.s
	s.mu.Lock()
	s.runs = append(s.runs, res)
	var ferr error
	if s.File != "" {
		ferr = result.Write(s.File, s.runs)
		s.written = ferr == nil
		if ferr != nil && s.fileErr == nil {
			s.fileErr = ferr
		}
	}
	s.mu.Unlock()
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
		serr = r.w.Done(context.WithoutCancel(ctx), res)
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
	}
	return nil
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
