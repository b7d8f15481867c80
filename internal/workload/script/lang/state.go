package lang

import (
	"maps"
	"math/bits"
	"math/rand"
)

// State is one client's variables and random generator: one per client,
// not safe for use by several goroutines at once.
type State struct {
	vars map[string]Value
	rng  rng
	// zipfs are random_zipfian's generators by parameter and range (each
	// precomputes its constants): a script uses one or two.
	zipfs map[zipfKey]*rand.Zipf
	rand  *rand.Rand // math/rand over rng, for the Zipf generators
}

type zipfKey struct {
	s    float64
	imax uint64
}

// zipf returns the generator of k in [0, imax] with probability ∝
// (k+1)^−s.
func (s *State) zipf(exp float64, imax uint64) *rand.Zipf {
	k := zipfKey{exp, imax}
	if z, ok := s.zipfs[k]; ok {
		return z
	}
	if s.zipfs == nil || len(s.zipfs) > 64 {
		s.zipfs = map[zipfKey]*rand.Zipf{}
	}
	if s.rand == nil {
		s.rand = rand.New(&s.rng)
	}
	z := rand.NewZipf(s.rand, exp, 1, imax)
	s.zipfs[k] = z
	return z
}

// NewState makes client clientID's state. seed is the run's seed (the same
// for every label, so paired runs issue the same statements); clientID is
// :client_id (0-based, as pgbench); vars hold the predefined ones (scale,
// and any -D-like ones), which win over the built-in ones of the same name.
// Predefined as pgbench: :client_id, :random_seed (the seed) and
// :default_seed (the seed hash and permute use when given none, derived
// from the run's seed: the same in every client).
func NewState(seed uint64, clientID int, vars map[string]Value) *State {
	s := &State{vars: map[string]Value{}}
	k := seed
	def := splitmix64(&k)
	s.vars["client_id"] = int64(clientID)
	s.vars["random_seed"] = int64(seed)
	s.vars["default_seed"] = int64(def)
	for n, v := range vars {
		s.vars[n] = v
	}
	// The client's generator: from the seed and the client's number, so
	// that the same seed gives each client the same draws in every run.
	c := seed ^ 0x9e3779b97f4a7c15*uint64(clientID+1)
	for i := range s.rng.s {
		s.rng.s[i] = splitmix64(&c)
	}
	return s
}

// Mark is a client's state as a transaction starts: Rewind returns to it,
// so that a retried transaction draws the same random values from the same
// variables, as pgbench's retries do (--max-tries).
type Mark struct {
	vars map[string]Value
	rng  rng
}

// Mark saves the state (its variables and its generator's position).
func (s *State) Mark() Mark { return Mark{vars: maps.Clone(s.vars), rng: s.rng} }

// Rewind returns the state to m. The Zipf generators keep only constants:
// the draws they make come from the restored generator.
func (s *State) Rewind(m Mark) {
	s.vars = maps.Clone(m.vars)
	s.rng = m.rng
}

// Set sets variable name.
func (s *State) Set(name string, v Value) { s.vars[name] = v }

// Get returns variable name's value.
func (s *State) Get(name string) (Value, bool) {
	v, ok := s.vars[name]
	return v, ok
}

// Pick chooses one of several scripts by weight (pgbench -f a.sql@5) with
// st's random generator: script i with probability weights[i]/Σweights. A
// weight of zero is never chosen; with no positive weight, script 0.
func Pick(scripts []*Script, weights []int, st *State) int {
	var total uint64
	for i := range scripts {
		if i < len(weights) && weights[i] > 0 {
			total += uint64(weights[i])
		}
	}
	if total == 0 {
		return 0
	}
	w := st.rng.below(total)
	for i := range scripts {
		if i >= len(weights) || weights[i] <= 0 {
			continue
		}
		if w < uint64(weights[i]) {
			return i
		}
		w -= uint64(weights[i])
	}
	return len(scripts) - 1
}

func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// rng is xoshiro256**.
type rng struct{ s [4]uint64 }

func (r *rng) next() uint64 {
	s := &r.s
	out := bits.RotateLeft64(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = bits.RotateLeft64(s[3], 45)
	return out
}

// Int63, Uint64 and Seed make rng a math/rand Source64 (Seed is not used:
// a client's generator is seeded by NewState).
func (r *rng) Int63() int64   { return int64(r.next() >> 1) }
func (r *rng) Uint64() uint64 { return r.next() }
func (r *rng) Seed(int64)     {}

// float is uniform in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }

// below is uniform in [0, n), n > 0 (Lemire's method, unbiased).
func (r *rng) below(n uint64) uint64 {
	if n == 0 {
		return r.next()
	}
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}
