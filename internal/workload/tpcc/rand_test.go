package tpcc

import (
	"math"
	"testing"
	"time"
)

// NURand's constants: the run's C for C_LAST differs from the load's as
// clause 2.1.6.1 requires, for any seed; values stay in their ranges and
// are non-uniform (the hot customers come up far more than 1 in 3000).
func TestNURand(t *testing.T) {
	for seed := uint64(0); seed < 2000; seed++ {
		load := loadConsts(seed * 7919) // the load's seed is not the run's
		run := runConsts(seed, load)
		d := run.last - load.last
		if d < 0 {
			d = -d
		}
		if d < 65 || d > 119 || d == 96 || d == 112 {
			t.Fatalf("seed %d: C_LAST load %d, run %d", seed, load.last, run.last)
		}
	}
	c := runConsts(7, loadConsts(3))
	r := newRand(7, 1)
	counts := map[int64]int{}
	for range 300000 {
		id := c.customerID(r)
		if id < 1 || id > CustomersPerDistrict {
			t.Fatalf("customer %d", id)
		}
		counts[id]++
		if i := c.itemID(r); i < 1 || i > Items {
			t.Fatalf("item %d", i)
		}
		if n := c.lastNameNum(r); n < 0 || n > 999 {
			t.Fatalf("last name %d", n)
		}
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	if uniform := 300000 / CustomersPerDistrict; top < 3*uniform {
		t.Errorf("the most drawn customer came %d times, uniform is %d: not NURand's skew", top, uniform)
	}
	if got := string(appendLastName(nil, 371)); got != "PRICALLYOUGHT" {
		t.Errorf("C_LAST of 371: %s", got)
	}
}

// --wait's think times: negative exponential with each transaction's
// mean, never beyond 10 times it.
func TestThinkTime(t *testing.T) {
	r := newRand(7, 2)
	for tx := range nTx {
		var sum time.Duration
		const n = 20000
		for range n {
			d := thinkTime(r, tx)
			if d < 0 || d > seconds(10*thinkMean[tx]) {
				t.Fatalf("%s: think time %v", Kinds[tx], d)
			}
			sum += d
		}
		if mean := sum.Seconds() / n; math.Abs(mean-thinkMean[tx]) > 0.05*thinkMean[tx] {
			t.Errorf("%s: mean think time %.2f s, want %.0f s", Kinds[tx], mean, thinkMean[tx])
		}
	}
}
