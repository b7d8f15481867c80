package tpcc

import (
	"math/rand/v2"
)

// newRand is the random source of one terminal or one warehouse's load: a
// PCG seeded with the run's seed and a stream, so that the same seed gives
// every label the same inputs.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x5851f42d4c957f2d))
}

// between is a uniform integer in [lo, hi] (the specification's
// random(x .. y), clause 2.1.4).
func between(r *rand.Rand, lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }

// The run-time constants C of NURand (clause 2.1.6): one set for the load
// (cLoad) and one for the measurement (cRun), whose C for C_LAST differs
// from the load's as clause 2.1.6.1 requires (65 <= delta <= 119, delta
// != 96 and != 112).
type consts struct{ last, id, item int64 }

// loadConsts are the load's constants, from its seed; the load keeps them
// in tpcc_loaded, where each run reads them.
func loadConsts(seed uint64) consts {
	r := newRand(seed, 1<<40)
	return consts{last: between(r, 0, 255), id: between(r, 0, 1023), item: between(r, 0, 8191)}
}

// runConsts are a run's constants, from its seed and the load's: its C for
// C_LAST differs from the load's by 65 to 119, but not 96 or 112 (clause
// 2.1.6.1).
func runConsts(seed uint64, load consts) consts {
	r := newRand(seed, 1<<41)
	for {
		c := between(r, 0, 255)
		if cLastDeltaOK(c, load.last) {
			return consts{last: c, id: between(r, 0, 1023), item: between(r, 0, 8191)}
		}
	}
}

func cLastDeltaOK(run, load int64) bool {
	d := run - load
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// nurand is NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func nurand(r *rand.Rand, a, c, x, y int64) int64 {
	return ((between(r, 0, a)|between(r, x, y))+c)%(y-x+1) + x
}

// customerID is NURand(1023, 1, 3000); itemID NURand(8191, 1, 100000);
// lastNameNum NURand(255, 0, 999) (clause 2.1.6).
func (c consts) customerID(r *rand.Rand) int64  { return nurand(r, 1023, c.id, 1, CustomersPerDistrict) }
func (c consts) itemID(r *rand.Rand) int64      { return nurand(r, 8191, c.item, 1, Items) }
func (c consts) lastNameNum(r *rand.Rand) int64 { return nurand(r, 255, c.last, 0, 999) }

var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// appendLastName appends C_LAST for n in 0..999: the syllables of its three
// digits (clause 4.3.2.3).
func appendLastName(b []byte, n int64) []byte {
	return append(append(append(b, syllables[n/100]...), syllables[n/10%10]...), syllables[n%10]...)
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// appendAString appends a random a-string of lo to hi characters (clause
// 4.3.2.2: alphanumeric here, which the specification allows as a subset).
func appendAString(b []byte, r *rand.Rand, lo, hi int64) []byte {
	n := between(r, lo, hi)
	for i := int64(0); i < n; {
		u := r.Uint64()
		for k := 0; k < 10 && i < n; k++ {
			b = append(b, alnum[u%62])
			u /= 62
			i++
		}
	}
	return b
}

// appendNString appends a random numeric string of lo to hi digits.
func appendNString(b []byte, r *rand.Rand, lo, hi int64) []byte {
	n := between(r, lo, hi)
	for range n {
		b = append(b, byte('0'+r.IntN(10)))
	}
	return b
}

// appendData appends I_DATA or S_DATA: an a-string of 26 to 50 characters,
// in 10% of rows with "ORIGINAL" at a random place (clause 4.3.3.1).
func appendData(b []byte, r *rand.Rand) []byte {
	start := len(b)
	b = appendAString(b, r, 26, 50)
	if r.IntN(10) == 0 {
		at := start + r.IntN(len(b)-start-8+1)
		copy(b[at:], "ORIGINAL")
	}
	return b
}

// appendZip appends a zip code: 4 random digits and "11111".
func appendZip(b []byte, r *rand.Rand) []byte {
	return append(appendNString(b, r, 4, 4), "11111"...)
}

// appendMoney appends cents as a decimal with two places (1234 → 12.34).
func appendMoney(b []byte, cents int64) []byte {
	if cents < 0 {
		b = append(b, '-')
		cents = -cents
	}
	b = appendInt(b, cents/100)
	b = append(b, '.', byte('0'+cents/10%10), byte('0'+cents%10))
	return b
}

// appendRate appends a rate in ten-thousandths with four places (1234 → 0.1234).
func appendRate(b []byte, x int64) []byte {
	b = appendInt(b, x/10000)
	b = append(b, '.')
	return append(b, byte('0'+x/1000%10), byte('0'+x/100%10), byte('0'+x/10%10), byte('0'+x%10))
}

func appendInt(b []byte, v int64) []byte {
	if v < 10 && v >= 0 {
		return append(b, byte('0'+v))
	}
	var d [20]byte
	i := len(d)
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		b = append(b, '-')
	}
	return append(b, d[i:]...)
}
