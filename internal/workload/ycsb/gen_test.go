package ycsb

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"testing"
)

// YCSB's key names: the first key its load writes is user6284781860667377211
// (key number 0, FNV-1a hashed, as every YCSB load log shows), and the hash
// is FNV-1a over the number's 8 bytes, lowest first, made non-negative.
func TestKeyNames(t *testing.T) {
	if got := string(AppendKey(nil, 0)); got != "user6284781860667377211" {
		t.Errorf("key 0 is %s, want user6284781860667377211", got)
	}
	for _, n := range []int64{0, 1, 2, 999, 1 << 31, 123456789012} {
		h := fnv.New64a()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
		want := int64(h.Sum64())
		if want < 0 {
			want = -want
		}
		if got := FNV64(n); got != want {
			t.Errorf("FNV64(%d) = %d, want %d", n, got, want)
		}
	}
}

// The zipfian generator at 0.99 over n items gives item 0 a share of
// 1/zeta(n) and item 1 a share of 0.5^0.99/zeta(n), as Gray's method
// (YCSB's ZipfianGenerator) does.
func TestZipfianSkew(t *testing.T) {
	const n, draws = 1000, 400_000
	z := newZipfian(0, n-1, Zipfian, zeta(0, n, Zipfian, 0))
	r := newRand(1, 2)
	counts := make([]int, n+1)
	for range draws {
		k := z.next(r, n)
		if k < 0 || k > n {
			t.Fatalf("draw %d out of 0 … %d", k, n)
		}
		counts[k]++
	}
	zn := zeta(0, n, Zipfian, 0)
	for i, want := range []float64{1 / zn, math.Pow(0.5, Zipfian) / zn} {
		got := float64(counts[i]) / draws
		if math.Abs(got-want) > 0.01*want+0.002 {
			t.Errorf("item %d's share %.4f, want %.4f (1/zeta(%d, 0.99) = %.4f)", i, got, want, n, 1/zn)
		}
	}
	for i := 2; i < 50; i++ {
		if counts[i] > counts[1] {
			t.Errorf("item %d drawn %d times, more than item 1 (%d)", i, counts[i], counts[1])
		}
	}
}

// The scrambled zipfian's most popular key has YCSB's share, 1/ZETAN of its
// 10^16 items (3.8%, and a little more from the ranks hashed onto it),
// and it is not key 0: the popular keys are scattered.
func TestScrambledSkew(t *testing.T) {
	const n, draws = 1000, 400_000
	s := newScrambled(0, n-1)
	r := newRand(3, 4)
	counts := make([]int, n)
	for range draws {
		k := s.next(r)
		if k < 0 || k >= n {
			t.Fatalf("draw %d out of 0 … %d", k, n-1)
		}
		counts[k]++
	}
	top := 0
	for k := range counts {
		if counts[k] > counts[top] {
			top = k
		}
	}
	share := float64(counts[top]) / draws
	if want := 1 / scrambledZetan; share < want*0.95 || share > want+0.005 {
		t.Errorf("the top key's share %.4f, want about %.4f", share, want)
	}
	if want := FNV64(0) % n; int64(top) != want {
		t.Errorf("the top key is %d, want the hash of rank 0, %d", top, want)
	}
}

// Latest favours the newest keys, and follows the inserts.
func TestLatest(t *testing.T) {
	const n, draws = 1000, 100_000
	ins := newCounter(n)
	c := newChooser(DistLatest, newRand(5, 6), ins, n, n)
	count := func() map[int64]int {
		m := map[int64]int{}
		for range draws {
			k := c.next()
			if k < 0 || k > ins.last() {
				t.Fatalf("draw %d out of 0 … %d", k, ins.last())
			}
			m[k]++
		}
		return m
	}
	m := count()
	if share := float64(m[n-1]) / draws; share < 0.1 {
		t.Errorf("the newest key's share %.3f, want about 1/zeta(999) = %.3f", share, 1/zeta(0, n-1, Zipfian, 0))
	}
	old := 0
	for k, v := range m {
		if k < n/2 {
			old += v
		}
	}
	if float64(old)/draws > 0.1 {
		t.Errorf("the older half of the keys took %.3f of the draws", float64(old)/draws)
	}
	for range 10 {
		if err := ins.ack(ins.take()); err != nil {
			t.Fatal(err)
		}
	}
	if m = count(); m[n+9] <= m[n-1] {
		t.Errorf("after 10 inserts the newest key %d was drawn %d times, key %d %d times", n+9, m[n+9], n-1, m[n-1])
	}
	if got, want := zetaOf(n+9), zeta(0, n+9, Zipfian, 0); math.Abs(got-want) > 1e-9 {
		t.Errorf("zeta(%d) extended from the cache %v, computed %v", n+9, got, want)
	}
}

// Uniform draws cover the loaded keys only, evenly.
func TestUniform(t *testing.T) {
	const n, draws = 100, 200_000
	ins := newCounter(n + 50) // inserts since the load are not drawn, as YCSB's UniformLongGenerator over insertcount
	c := newChooser(DistUniform, newRand(7, 8), ins, n, n)
	counts := make([]int, n)
	for range draws {
		k := c.next()
		if k < 0 || k >= n {
			t.Fatalf("draw %d out of 0 … %d", k, n-1)
		}
		counts[k]++
	}
	for k, v := range counts {
		if math.Abs(float64(v)-draws/n) > 0.15*draws/n {
			t.Errorf("key %d drawn %d times, want about %d", k, v, draws/n)
		}
	}
}

// The same seed draws the same keys; another seed others.
func TestDeterministic(t *testing.T) {
	for _, d := range []string{DistZipfian, DistUniform, DistLatest} {
		seq := func(seed uint64) []int64 {
			c := newChooser(d, newRand(seed, 0), newCounter(1000), 1000, 1100)
			var out []int64
			for range 100 {
				out = append(out, c.next())
			}
			return out
		}
		a, b, other := seq(42), seq(42), seq(43)
		same, diff := true, false
		for i := range a {
			same = same && a[i] == b[i]
			diff = diff || a[i] != other[i]
		}
		if !same || !diff {
			t.Errorf("%s: seed 42 twice the same %v, seed 43 different %v", d, same, diff)
		}
	}
}

// The insert counter's last key moves only over keys acknowledged in
// order, as YCSB's AcknowledgedCounterGenerator.
func TestCounter(t *testing.T) {
	c := newCounter(10)
	a, b, d := c.take(), c.take(), c.take()
	if a != 10 || b != 11 || d != 12 || c.last() != 9 {
		t.Fatalf("took %d %d %d, last %d", a, b, d, c.last())
	}
	c.ack(b)
	if c.last() != 9 {
		t.Errorf("after acknowledging 11 before 10, last %d, want 9", c.last())
	}
	c.ack(a)
	if c.last() != 11 {
		t.Errorf("after acknowledging 10, last %d, want 11", c.last())
	}
	c.ack(d)
	if c.last() != 12 {
		t.Errorf("last %d, want 12", c.last())
	}
}
