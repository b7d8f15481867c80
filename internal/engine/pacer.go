package engine

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"
)

// Arrivals names an open-loop arrival process.
type Arrivals string

const (
	// Poisson arrivals: inter-arrival gaps are exponential with mean 1/rate,
	// gap = -ln(U)/rate for U uniform in (0,1].
	Poisson Arrivals = "poisson"
	// Uniform arrivals: one event every 1/rate seconds, t_k = k/rate.
	Uniform Arrivals = "uniform"
)

// ParseArrivals checks an --arrivals value.
func ParseArrivals(s string) (Arrivals, error) {
	switch Arrivals(s) {
	case Poisson, Uniform:
		return Arrivals(s), nil
	}
	return "", fmt.Errorf("unknown arrival process %q: use poisson or uniform", s)
}

// pacer yields the intended start time of each open-loop event, as an offset
// from the start of the run.
type pacer interface {
	next() time.Duration
}

var (
	_ pacer = (*uniformPacer)(nil)
	_ pacer = (*poissonPacer)(nil)
)

type uniformPacer struct {
	rate float64
	k    int64
}

func (p *uniformPacer) next() time.Duration {
	t := time.Duration(float64(p.k) / p.rate * float64(time.Second))
	p.k++
	return t
}

type poissonPacer struct {
	rate float64
	rnd  *rand.Rand
	t    float64 // seconds
}

func (p *poissonPacer) next() time.Duration {
	p.t += p.rnd.ExpFloat64() / p.rate
	return time.Duration(p.t * float64(time.Second))
}

func newPacer(a Arrivals, rate float64, seed uint64) pacer {
	if a == Uniform {
		return &uniformPacer{rate: rate}
	}
	return &poissonPacer{rate: rate, rnd: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// schedule hands the open loop's arrivals out, in order, to the workers as
// they become free: a free worker claims the next intended start and waits
// for it itself. This is the queue a pacer goroutine would fill and the
// workers drain (the first free worker takes the oldest arrival), without
// the goroutine and the hand-off: each arrival cost a timer wake-up, a
// channel send and a worker's wake-up through Go's scheduler (futex calls,
// an idle thread spinning to steal the worker), twice closed loop's client
// CPU per statement. Arrivals are generated as they are claimed or fall
// due, so the backlog (due and not yet claimed) is known at every claim.
type schedule struct {
	mu   sync.Mutex
	p    pacer
	q    []time.Duration // generated, from the run's start; q[head:] not yet claimed, in order
	head int
}

func newSchedule(p pacer) *schedule { return &schedule{p: p} }

// claim takes the next arrival and returns it, and the backlog at now (the
// arrivals due that no worker has taken), counted up to limit+1.
func (s *schedule) claim(now time.Duration, limit int) (at time.Duration, backlog int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head == len(s.q) {
		s.q, s.head = append(s.q[:0], s.p.next()), 0
	}
	at = s.q[s.head]
	s.head++
	return at, s.due(now, limit)
}

// backlog is the arrivals due at now that no worker has taken, counted up
// to limit+1.
func (s *schedule) backlog(now time.Duration, limit int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.due(now, limit)
}

// due generates the arrivals up to now (and one past it) and counts the
// unclaimed ones due; s.mu is held.
func (s *schedule) due(now time.Duration, limit int) int {
	for s.head == len(s.q) || s.q[len(s.q)-1] <= now {
		if len(s.q)-s.head > limit {
			break
		}
		s.q = append(s.q, s.p.next())
	}
	if s.head > 1024 && s.head > len(s.q)/2 {
		s.q = s.q[:copy(s.q, s.q[s.head:])]
		s.head = 0
	}
	pending := s.q[s.head:]
	return sort.Search(len(pending), func(i int) bool { return pending[i] > now })
}
