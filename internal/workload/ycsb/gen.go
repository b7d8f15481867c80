package ycsb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
)

// The generators of YCSB's core package (site.ycsb.generator), as
// CoreWorkload uses them: key numbers drawn zipfian (scrambled), uniform or
// skewed towards the latest insert, key names hashed from them, and the
// insert counter that says which keys exist. Each worker has its own
// random source (newRand: the run's seed and the worker id), so every
// label draws the same sequence.

// Zipfian is YCSB's zipfian constant (ZipfianGenerator.ZIPFIAN_CONSTANT).
const Zipfian = 0.99

// scrambledItems and scrambledZetan are ScrambledZipfianGenerator's
// ITEM_COUNT and its precomputed ZETAN: the scrambled generator draws
// from a zipfian over 10^16 items and hashes the draw into the key space.
const (
	scrambledItems = 10_000_000_000_000_000
	scrambledZetan = 26.46902820178302
)

// newRand is a worker's random source: a PCG seeded with the run's seed and
// a stream number.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

// FNV64 is YCSB's Utils.fnvhash64: FNV-1a over the value's 8 bytes, lowest
// first, made non-negative as Java's Math.abs does (but for the one value
// Math.abs leaves negative, which this maps to MaxInt64).
func FNV64(v int64) int64 {
	const (
		offset = 0xCBF29CE484222325
		prime  = 1099511628211
	)
	h := uint64(offset)
	for range 8 {
		h ^= uint64(v) & 0xff
		h *= prime
		v >>= 8
	}
	s := int64(h)
	if s < 0 {
		s = -s
	}
	if s < 0 {
		s = math.MaxInt64
	}
	return s
}

// AppendKey appends the key name of key number n as CoreWorkload's
// buildKeyName makes it with insertorder=hashed and zeropadding=1:
// "user" and the decimal FNV hash of n.
func AppendKey(b []byte, n int64) []byte {
	return strconv.AppendInt(append(b, "user"...), FNV64(n), 10)
}

// zeta is ZipfianGenerator.zetastatic: sum over i in [st, n) of
// 1/(i+1)^theta, added to initial.
func zeta(st, n int64, theta, initial float64) float64 {
	sum := initial
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// zipfian is YCSB's ZipfianGenerator (Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases", SIGMOD 1994): items base …
// base+items-1, the first the most popular. Its zeta grows incrementally
// when asked for more items than it was made for (next), as YCSB's does;
// eta keeps the item count it was made with, as YCSB's does.
type zipfian struct {
	items, base  int64
	theta, alpha float64
	zetan, eta   float64
	zeta2theta   float64
	countForZeta int64
	halfPowTheta float64
}

// newZipfian is ZipfianGenerator(min, max, theta, zetan): zetan is
// zeta(max-min+1, theta), given when known (it takes max-min+1 powers).
func newZipfian(min, max int64, theta, zetan float64) *zipfian {
	z := &zipfian{items: max - min + 1, base: min, theta: theta}
	z.zeta2theta = zeta(0, 2, theta, 0)
	z.alpha = 1 / (1 - theta)
	z.zetan = zetan
	z.countForZeta = z.items
	z.halfPowTheta = math.Pow(0.5, theta)
	z.eta = z.etaOf()
	return z
}

func (z *zipfian) etaOf() float64 {
	return (1 - math.Pow(2/float64(z.items), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
}

// next is nextLong(itemcount): a draw among itemcount items.
func (z *zipfian) next(r *rand.Rand, itemcount int64) int64 {
	if itemcount > z.countForZeta {
		z.zetan = zeta(z.countForZeta, itemcount, z.theta, z.zetan)
		z.countForZeta = itemcount
		z.eta = z.etaOf()
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+z.halfPowTheta {
		return z.base + 1
	}
	return z.base + int64(float64(itemcount)*math.Pow(z.eta*u-z.eta+1, z.alpha))
}

// scrambled is YCSB's ScrambledZipfianGenerator(min, max) at the
// constant 0.99: a zipfian draw over 10^16 items, FNV-hashed into min …
// max, so that the popular keys lie scattered over the key space.
type scrambled struct {
	gen       *zipfian
	min, span int64
}

func newScrambled(min, max int64) *scrambled {
	return &scrambled{gen: newZipfian(0, scrambledItems, Zipfian, scrambledZetan), min: min, span: max - min + 1}
}

func (s *scrambled) next(r *rand.Rand) int64 {
	return s.min + FNV64(s.gen.next(r, s.gen.items))%s.span
}

// counter is YCSB's AcknowledgedCounterGenerator: the key numbers of
// inserts, handed out in order (take) and acknowledged when their insert
// is done (ack); last is the highest number below which every insert was
// acknowledged, the newest key the requests may ask for.
type counter struct {
	next  atomic.Int64
	limit atomic.Int64
	mu    sync.Mutex
	acked []bool // a window of numbers above limit, by number modulo its length
}

// ackWindow bounds the inserts in flight ahead of the oldest one not yet
// acknowledged (YCSB's WINDOW_SIZE).
const ackWindow = 1 << 20

// newCounter starts handing out key numbers at start (the keys below
// exist).
func newCounter(start int64) *counter {
	c := &counter{acked: make([]bool, ackWindow)}
	c.next.Store(start)
	c.limit.Store(start - 1)
	return c
}

func (c *counter) take() int64 { return c.next.Add(1) - 1 }

func (c *counter) last() int64 { return c.limit.Load() }

// ack marks number n done and moves last over every number done in order.
func (c *counter) ack(n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.limit.Load()
	if n-limit >= ackWindow {
		return fmt.Errorf("more than %d inserts in flight ahead of key number %d", ackWindow, limit+1)
	}
	if n <= limit {
		return nil
	}
	c.acked[n%ackWindow] = true
	for c.acked[(limit+1)%ackWindow] {
		c.acked[(limit+1)%ackWindow] = false
		limit++
	}
	c.limit.Store(limit)
	return nil
}

// Distributions: how requests pick the key they read, update or scan from.
const (
	DistZipfian = "zipfian" // ScrambledZipfianGenerator over the loaded keys and the inserts expected
	DistUniform = "uniform" // UniformLongGenerator over the loaded keys
	DistLatest  = "latest"  // SkewedLatestGenerator over the insert counter
)

// chooser is one worker's key chooser (CoreWorkload's keychooser with
// nextKeynum): draws above the newest acknowledged insert are drawn again
// (zipfian, uniform); latest counts back from it.
type chooser struct {
	dist    string
	r       *rand.Rand
	ins     *counter
	zipf    *scrambled // zipfian
	records int64      // uniform: 0 … records-1
	latest  *zipfian   // latest: a zipfian over the keys up to the newest
}

// next is the key number of the next request.
func (c *chooser) next() int64 {
	switch c.dist {
	case DistLatest:
		for {
			max := c.ins.last()
			if k := max - c.latest.next(c.r, max); k >= 0 { // below 0 only with a table of one row
				return k
			}
		}
	case DistUniform:
		for {
			if k := c.r.Int64N(c.records); k <= c.ins.last() {
				return k
			}
		}
	default:
		for {
			if k := c.zipf.next(c.r); k <= c.ins.last() {
				return k
			}
		}
	}
}

// zetas caches the zeta of the latest distribution's zipfian at 0.99 for
// the item counts asked (it takes n powers for n items): every worker of
// every run starts from it, a larger count extended from the largest
// smaller one known, as the inserts grow the table from run to run.
var zetas = struct {
	sync.Mutex
	m map[int64]float64
}{m: map[int64]float64{}}

func zetaOf(n int64) float64 {
	zetas.Lock()
	defer zetas.Unlock()
	if z, ok := zetas.m[n]; ok {
		return z
	}
	var from int64
	var z float64
	for k, v := range zetas.m {
		if k < n && k > from {
			from, z = k, v
		}
	}
	z = zeta(from, n, Zipfian, z)
	zetas.m[n] = z
	return z
}

// newChooser makes a worker's chooser. records are the keys loaded,
// keyspace the scrambled zipfian's span (the keys at the start and the
// inserts expected, as CoreWorkload sizes it).
func newChooser(dist string, r *rand.Rand, ins *counter, records, keyspace int64) *chooser {
	c := &chooser{dist: dist, r: r, ins: ins, records: records}
	switch dist {
	case DistLatest:
		// SkewedLatestGenerator: ZipfianGenerator(basis.lastValue()), that is
		// items 0 … last-1.
		n := max(ins.last(), 1)
		c.latest = newZipfian(0, n-1, Zipfian, zetaOf(n))
	case DistUniform:
	default:
		c.zipf = newScrambled(0, keyspace-1)
	}
	return c
}
