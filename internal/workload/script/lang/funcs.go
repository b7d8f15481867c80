package lang

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// function is one of pgbench's built-in functions.
type function struct {
	name     string
	min, max int // arguments; max -1: any number
	eval     func(s *State, args []Value) (Value, error)
}

func (f *function) arity() string {
	switch {
	case f.min == f.max && f.min == 0:
		return "no argument"
	case f.min == f.max && f.min == 1:
		return "1 argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	case f.max < 0:
		return fmt.Sprintf("%d or more arguments", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

var functions = map[string]*function{}

func init() {
	for _, f := range []*function{
		{"abs", 1, 1, fnAbs},
		{"debug", 1, 1, func(_ *State, a []Value) (Value, error) { return a[0], nil }},
		{"double", 1, 1, func(_ *State, a []Value) (Value, error) { return toDouble(a[0]) }},
		{"exp", 1, 1, math1(math.Exp)},
		{"greatest", 1, -1, func(_ *State, a []Value) (Value, error) { return extreme(a, 1) }},
		{"hash", 1, 2, hashFn(hashMurmur2)},
		{"hash_fnv1a", 1, 2, hashFn(hashFNV1a)},
		{"hash_murmur2", 1, 2, hashFn(hashMurmur2)},
		{"int", 1, 1, func(_ *State, a []Value) (Value, error) { return toInt(a[0]) }},
		{"least", 1, -1, func(_ *State, a []Value) (Value, error) { return extreme(a, -1) }},
		{"ln", 1, 1, math1(math.Log)},
		{"mod", 2, 2, func(_ *State, a []Value) (Value, error) { return arith("%", a[0], a[1]) }},
		{"permute", 2, 3, fnPermute},
		{"pi", 0, 0, func(*State, []Value) (Value, error) { return math.Pi, nil }},
		{"pow", 2, 2, math2(math.Pow)},
		{"power", 2, 2, math2(math.Pow)},
		{"random", 2, 2, fnRandom},
		{"random_exponential", 3, 3, fnRandomExponential},
		{"random_gaussian", 3, 3, fnRandomGaussian},
		{"random_zipfian", 3, 3, fnRandomZipfian},
		{"sqrt", 1, 1, math1(math.Sqrt)},
	} {
		functions[f.name] = f
	}
}

// FunctionNames lists the expression functions, sorted (for the docs' test).
func FunctionNames() []string {
	var out []string
	for n := range functions {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func math1(f func(float64) float64) func(*State, []Value) (Value, error) {
	return func(_ *State, a []Value) (Value, error) {
		x, err := toDouble(a[0])
		if err != nil {
			return nil, err
		}
		return f(x), nil
	}
}

func math2(f func(float64, float64) float64) func(*State, []Value) (Value, error) {
	return func(_ *State, a []Value) (Value, error) {
		x, err := toDouble(a[0])
		if err != nil {
			return nil, err
		}
		y, err := toDouble(a[1])
		if err != nil {
			return nil, err
		}
		return f(x, y), nil
	}
}

func fnAbs(_ *State, a []Value) (Value, error) {
	switch x := a[0].(type) {
	case int64:
		if x < 0 {
			return -x, nil // abs(-2^63) stays -2^63, as pgbench
		}
		return x, nil
	case float64:
		return math.Abs(x), nil
	}
	return nil, fmt.Errorf("cannot coerce %s to a number", typeName(a[0]))
}

// extreme is greatest (sign 1) and least (-1): a double if any argument
// is one, else an integer.
func extreme(a []Value, sign int) (Value, error) {
	anyDouble := false
	for _, v := range a {
		switch v.(type) {
		case float64:
			anyDouble = true
		case int64:
		default:
			return nil, fmt.Errorf("cannot coerce %s to a number", typeName(v))
		}
	}
	if anyDouble {
		best, _ := toDouble(a[0])
		for _, v := range a[1:] {
			d, _ := toDouble(v)
			if sign > 0 && d > best || sign < 0 && d < best {
				best = d
			}
		}
		return best, nil
	}
	best := a[0].(int64)
	for _, v := range a[1:] {
		d := v.(int64)
		if sign > 0 && d > best || sign < 0 && d < best {
			best = d
		}
	}
	return best, nil
}

// seedArg is a hash or permute seed: the argument given, else
// :default_seed.
func (s *State) seedArg(a []Value, i int) (uint64, error) {
	var v Value
	if i < len(a) {
		v = a[i]
	} else {
		dv, ok := s.vars["default_seed"]
		if !ok {
			return 0, fmt.Errorf("undefined variable default_seed")
		}
		nv, err := normalize(dv)
		if err != nil {
			return 0, fmt.Errorf("variable default_seed: %w", err)
		}
		v = nv
	}
	n, err := toInt(v)
	return uint64(n), err
}

func hashFn(h func(v, seed uint64) uint64) func(*State, []Value) (Value, error) {
	return func(s *State, a []Value) (Value, error) {
		v, err := toInt(a[0])
		if err != nil {
			return nil, err
		}
		seed, err := s.seedArg(a, 1)
		if err != nil {
			return nil, err
		}
		return int64(h(uint64(v), seed)), nil
	}
}

// hashFNV1a is 64-bit FNV-1a over the value's 8 bytes, least significant
// first, starting from the offset basis xor the seed.
func hashFNV1a(v, seed uint64) uint64 {
	const offset, prime = 0xcbf29ce484222325, 0x100000001b3
	h := offset ^ seed
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= prime
		v >>= 8
	}
	return h
}

// hashMurmur2 is MurmurHash64A of the value as one 8-byte block.
func hashMurmur2(v, seed uint64) uint64 {
	const m, r = 0xc6a4a7935bd1e995, 47
	var mm uint64 = m
	h := seed ^ (8 * mm)
	k := v * m
	k ^= k >> r
	k *= m
	h ^= k
	h *= m
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// fnPermute is permute(i, size[, seed]): i's place (i modulo size) in a
// pseudorandom permutation of [0, size) chosen by seed. A bijection as the
// manual requires; not pgbench's own permutation (the manual does not
// define it), so the values differ from pgbench's.
func fnPermute(s *State, a []Value) (Value, error) {
	i, err := toInt(a[0])
	if err != nil {
		return nil, err
	}
	size, err := toInt(a[1])
	if err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, fmt.Errorf("permute size parameter must be greater than zero")
	}
	seed, err := s.seedArg(a, 2)
	if err != nil {
		return nil, err
	}
	return permute(i, size, seed), nil
}

func permute(i, size int64, seed uint64) int64 {
	v := uint64(i % size)
	if i%size < 0 {
		v = uint64(i%size + size)
	}
	n := uint64(size)
	if n == 1 {
		return 0
	}
	nb := bits.Len64(n - 1) // the power of two 2^nb ≥ n
	mask := uint64(1)<<nb - 1
	var keys [6]uint64
	k := seed
	for j := range keys {
		keys[j] = splitmix64(&k)
	}
	shift := nb/2 + 1
	// Each round is a bijection of [0, 2^nb): an odd multiplier, an added
	// key, a xor with its own high bits; walking the cycle until the value
	// falls inside [0, n) makes a bijection of [0, n).
	for {
		for r := 0; r < 3; r++ {
			v = (v*(keys[2*r]|1) + keys[2*r+1]) & mask
			v ^= v >> shift
		}
		if v < n {
			return int64(v)
		}
	}
}

func ints2(a []Value) (int64, int64, error) {
	lb, err := toInt(a[0])
	if err != nil {
		return 0, 0, err
	}
	ub, err := toInt(a[1])
	if err != nil {
		return 0, 0, err
	}
	if lb > ub {
		return 0, 0, fmt.Errorf("empty range given to random")
	}
	if ub-lb < 0 || ub-lb == math.MaxInt64 { // more than 2^63-1 values
		return 0, 0, fmt.Errorf("random range is too large")
	}
	return lb, ub, nil
}

func fnRandom(s *State, a []Value) (Value, error) {
	lb, ub, err := ints2(a)
	if err != nil {
		return nil, err
	}
	return lb + int64(s.rng.below(uint64(ub-lb)+1)), nil
}

// fnRandomExponential draws from an exponential distribution truncated at
// parameter and projected onto [lb, ub]: i has the probability f(i) −
// f(i+1), f(x) = exp(−parameter·(x−lb)/(ub−lb+1)) / (1−exp(−parameter)).
func fnRandomExponential(s *State, a []Value) (Value, error) {
	lb, ub, p, err := randArgs(a, func(p float64) bool { return p > 0 }, "exponential parameter must be greater than zero")
	if err != nil {
		return nil, err
	}
	cut := math.Exp(-p)
	u := 1 - s.rng.float()            // (0, 1]
	x := -math.Log(cut+(1-cut)*u) / p // [0, 1)
	return lb + clampIndex(x, ub-lb), nil
}

// fnRandomGaussian draws from a standard normal distribution truncated at
// ±parameter (at least 2) and projected onto [lb, ub], centred on the
// middle of the range.
func fnRandomGaussian(s *State, a []Value) (Value, error) {
	lb, ub, p, err := randArgs(a, func(p float64) bool { return p >= 2 }, "gaussian parameter must be at least 2.000000")
	if err != nil {
		return nil, err
	}
	var z float64
	for {
		// Box-Muller: two uniforms, one normal deviate.
		u1 := 1 - s.rng.float()
		u2 := s.rng.float()
		z = math.Sqrt(-2*math.Log(u1)) * math.Sin(2*math.Pi*u2)
		if z >= -p && z < p {
			break
		}
	}
	x := (z + p) / (2 * p) // [0, 1)
	return lb + clampIndex(x, ub-lb), nil
}

// fnRandomZipfian draws from a bounded Zipfian distribution: i in [lb, ub]
// with probability proportional to 1/(i−lb+1)^parameter, parameter in
// [1.001, 1000] (pgbench 13 and later). Hörmann and Derflinger's
// rejection-inversion (math/rand's Zipf, on the client's generator): a
// draw or two whatever the parameter and the range.
func fnRandomZipfian(s *State, a []Value) (Value, error) {
	lb, ub, p, err := randArgs(a, func(p float64) bool { return p >= 1.001 && p <= 1000 }, "zipfian parameter must be in range [1.001, 1000]")
	if err != nil {
		return nil, err
	}
	return lb + int64(s.zipf(p, uint64(ub-lb)).Uint64()), nil
}

// randArgs reads a random_* function's bounds and parameter; ok says
// whether the parameter is in range, else the error is refusal (NaN never is).
func randArgs(a []Value, ok func(float64) bool, refusal string) (int64, int64, float64, error) {
	lb, ub, err := ints2(a)
	if err != nil {
		return 0, 0, 0, err
	}
	p, err := toDouble(a[2])
	if err != nil {
		return 0, 0, 0, err
	}
	if !ok(p) {
		return 0, 0, 0, fmt.Errorf("%s (not %f)", refusal, p)
	}
	return lb, ub, p, nil
}

// clampIndex maps x in [0, 1) onto [0, span].
func clampIndex(x float64, span int64) int64 {
	i := int64(x * (float64(span) + 1))
	if i > span {
		i = span
	}
	if i < 0 {
		i = 0
	}
	return i
}
