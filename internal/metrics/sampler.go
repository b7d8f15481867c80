package metrics

import (
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// Sampler takes a snapshot when the measured window opens, once a second
// while it is open, and when it closes. The engine opens and closes it; the
// warmup, the load and anything after the window are never sampled.
type Sampler struct {
	r     *Reader
	every time.Duration

	mu       sync.Mutex
	opened   bool
	closed   bool
	from, to time.Time
	snaps    []Snapshot
	skipped  int
	errs     []string
	pss      uint64 // KB, read after the last snapshot
	pssErr   error
	stop     chan struct{}
	done     chan struct{}
}

// NewSampler samples what spec names, once a second.
func NewSampler(spec Spec) (*Sampler, error) {
	r, err := NewReader(spec)
	if err != nil {
		return nil, err
	}
	return &Sampler{r: r, every: time.Second}, nil
}

// Open starts sampling. Open after Close, a second Open, or Open on a nil
// Sampler does nothing.
func (s *Sampler) Open() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened || s.closed {
		return
	}
	s.opened = true
	s.from = time.Now()
	s.take(s.from)
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.loop()
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			if !s.closed {
				s.take(now)
			}
			s.mu.Unlock()
		}
	}
}

// take reads one snapshot; s.mu is held.
func (s *Sampler) take(at time.Time) {
	snap, err := s.r.Read(at)
	if err != nil {
		s.skipped++
		if len(s.errs) < 3 {
			s.errs = append(s.errs, err.Error())
		}
		return
	}
	s.snaps = append(s.snaps, snap)
}

// readPSS reads the tree's PSS, after the last snapshot (outside its
// timing, and once: it is slow); s.mu is held.
func (s *Sampler) readPSS() {
	if s.pssErr != nil {
		return
	}
	kb, err := s.r.PSS()
	if err != nil {
		s.pss, s.pssErr = 0, err
		return
	}
	s.pss = max(s.pss, kb)
}

// Close takes the last snapshot and stops sampling. Close without Open (a
// run cancelled in its warmup) does nothing.
func (s *Sampler) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.opened || s.closed {
		s.closed = true
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.to = time.Now()
	s.take(s.to)
	s.readPSS()
	stop, done := s.stop, s.done
	s.mu.Unlock()
	close(stop)
	<-done
}

// Seconds is how long the window was open (0 before it closed).
func (s *Sampler) Seconds() float64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opened || !s.closed || s.to.IsZero() {
		return 0
	}
	return s.to.Sub(s.from).Seconds()
}

// Result summarises the window: o/s is the run's reported figure, op its
// unit, perSecond the measured ops of each second
// (for the drift flag). It is nil when the window never opened.
func (s *Sampler) Result(opsPerSec float64, op string, perSecond []float64, notes []string) *result.HW {
	if s == nil {
		if len(notes) == 0 {
			return nil
		}
		return &result.HW{Op: op, OpsPerSec: opsPerSec, NoDisk: true, Notes: notes}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opened || !s.closed {
		return nil
	}
	for _, e := range s.errs {
		notes = append(notes, "skipped snapshot: "+e)
	}
	if s.pssErr != nil {
		notes = append(notes, "no PSS: "+s.pssErr.Error())
	}
	hw := Summarize(s.snaps, Window{From: s.from, To: s.to, OpsPerSec: opsPerSec, Op: op,
		Disks: s.r.spec.Disks, Skipped: s.skipped, Notes: notes})
	if hw.Samples >= 2 {
		hw.Avg.ServerPSS = s.pss
	}
	Flag(hw, perSecond)
	return hw
}
