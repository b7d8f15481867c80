package sysbench

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// newRand is the random source of one worker, or of one load chunk: a PCG
// seeded with the run's seed and a stream number, so that the same seed and
// the same stream always give the same sequence.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

// digits fills b with the sysbench c/pad template: groups of 11 uniformly
// random digits joined by '-' ("###########-###########…", sb_rand_str). 10
// groups make c (119 characters), 5 make pad (59). b must hold 12*groups-1
// bytes. Each draw gives 18 digits, taken lowest first, the groups filled
// from them in order. (Made one at a time, the load's 178 digits a row were
// a third of its client CPU; here four at a time through a table, a
// division per four.)
func digits(r *rand.Rand, b []byte) {
	var d [18]byte
	k := len(d)
	for g := 0; g < len(b); g += 12 {
		if g > 0 {
			b[g-1] = '-'
		}
		for i, end := g, min(g+11, len(b)); i < end; {
			if k == len(d) {
				draw18(&d, r.Uint64N(1e18)) // 18 unbiased digits per draw
				k = 0
			}
			n := copy(b[i:end], d[k:])
			i += n
			k += n
		}
	}
}

// draw18 writes u's 18 digits into d, lowest first.
func draw18(d *[18]byte, u uint64) {
	lo, hi := uint32(u%1e9), uint32(u/1e9)
	binary.LittleEndian.PutUint32(d[0:], digitQuads[lo%10000])
	binary.LittleEndian.PutUint32(d[4:], digitQuads[lo/10000%10000])
	d[8] = byte('0' + lo/100000000)
	binary.LittleEndian.PutUint32(d[9:], digitQuads[hi%10000])
	binary.LittleEndian.PutUint32(d[13:], digitQuads[hi/10000%10000])
	d[17] = byte('0' + hi/100000000)
}

// digitQuads[q] is q's four digits as bytes, lowest first (little-endian).
var digitQuads = func() (t [10000]uint32) {
	for q := range t {
		t[q] = uint32('0'+q%10) | uint32('0'+q/10%10)<<8 | uint32('0'+q/100%10)<<16 | uint32('0'+q/1000)<<24
	}
	return t
}()

const cLen, padLen = 119, 59

// zipf draws ids in [1, n] with P(k) proportional to 1/k^e; id 1 is the
// hottest. update-zipf uses it with sysbench's default exponent 0.8.
//
// Go's math/rand Zipf needs an exponent s > 1, so it cannot give 0.8. This
// is sysbench's own generator (src/sb_rand.c sb_rand_zipfian_int), written
// out by hand: rejection-inversion sampling (Hörmann and Derflinger, "Rejection-
// inversion to generate variates from monotone discrete distributions", 1996,
// as in Apache Commons RNG), which is exact for any exponent > 0. It is not
// Gray et al.'s "Quickly generating billion-record synthetic databases"
// approximation (YCSB's): sysbench has never used that one, and the point is to
// draw the ids sysbench draws.
type zipf struct {
	n, e, s, hX1, hN float64
}

// zipfExp is sysbench's --rand-zipfian-exp default.
const zipfExp = 0.8

func newZipf(n int64, e float64) *zipf {
	z := &zipf{n: float64(n), e: e}
	z.s = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	return z
}

func (z *zipf) next(r *rand.Rand) int64 {
	for {
		// u is uniform in (hX1, hN].
		u := z.hN + r.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		// Accepts k with probability proportional to 1/k^e (see sb_rand.c).
		if k-x <= z.s || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int64(k)
		}
	}
}

// hIntegral is H(x) = (x^(1-e) - 1)/(1-e), or log(x) when e = 1: the
// integral of h.
func (z *zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return helper2((1-z.e)*lx) * lx
}

// h is 1/x^e.
func (z *zipf) h(x float64) float64 { return math.Exp(-z.e * math.Log(x)) }

func (z *zipf) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.e)
	if t < -1 { // numerical error
		t = -1
	}
	return math.Exp(helper1(t) * x)
}

// helper1 is log(1+x)/x, by its Taylor series near 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// helper2 is (exp(x)-1)/x, by its Taylor series near 0.
func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}
