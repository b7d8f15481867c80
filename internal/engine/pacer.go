package engine

import (
	"fmt"
	"math/rand/v2"
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
