package changepoint

import (
	"math"
	"slices"
)

// windowDetector runs hierarchical E-divisive means inside one window, with
// the t-test as the stopping rule (Otava's ChangePointDetector with
// TTestSignificanceTester and PairDistanceCalculator). It keeps its buffers
// between windows.
type windowDetector struct {
	// within[a*(m+1)+b] = Σ_{a ≤ i < j < b} |z_i − z_j| for a < b ≤ m.
	within []float64
	inv    []float64 // inv[k] = 1/k
	invM1  []float64 // invM1[k] = 1/(k−1); invM1[1] = 0 (its sum is 0 anyway)
	fl     []float64 // fl[k] = k
	ivs    []interval
	cps    []int
	crit   critical // the window's significance level
	// local: the calibrated method's split. A candidate τ is tested
	// between [s, τ) and [τ, κ), κ the end of the second sample q̂ chose,
	// rather than the whole rest of its interval (where a dip and its
	// recovery average out); and an interval whose candidate fails is
	// set aside while the others are still searched, rather than the
	// search stopping at the first failure (Otava's rule).
	local bool
}

// interval is a part of the window between found change points, with its
// best split τ and that split's q̂.
type interval struct {
	s, e  int
	tau   int
	kappa int // the end of the second sample of the best split
	q     float64
	done  bool // its candidate failed (local search only)
}

func (d *windowDetector) grow(m int) {
	if len(d.inv) > m {
		return
	}
	d.inv = make([]float64, m+1)
	d.invM1 = make([]float64, m+1)
	d.fl = make([]float64, m+1)
	for k := 1; k <= m; k++ {
		d.fl[k] = float64(k)
		d.inv[k] = 1 / float64(k)
		if k > 1 {
			d.invM1[k] = 1 / float64(k-1)
		}
	}
}

// table fills within for z in O(m²).
func (d *windowDetector) table(z []float64) {
	m := len(z)
	st := m + 1
	if cap(d.within) < st*st {
		d.within = make([]float64, st*st)
	}
	w := d.within[:st*st]
	for j := 0; j < m; j++ {
		// Sums ending at b = j+1 add the distances from z_j to z_a..z_{j-1}.
		b := j + 1
		w[j*st+b] = 0
		var r float64
		zj := z[j]
		for a := j - 1; a >= 0; a-- {
			r += math.Abs(z[a] - zj)
			w[a*st+b] = w[a*st+j] + r
		}
	}
}

// candidate returns the interval [s, e) with its best split: the τ of the
// pair s < τ < κ ≤ e that maximises
//
//	q̂(τ, κ) = 2/(n+m)·Σ|X−Y| − 2m/((n+m)(n−1))·Σ_{i<k}|X_i−X_k| − 2n/((n+m)(m−1))·Σ_{j<k}|Y_j−Y_k|
//
// with X = z[s:τ] (n points) and Y = z[τ:κ] (m points); the first maximum
// in (τ, κ) order wins, as numpy's argmax does in Otava.
func (d *windowDetector) candidate(m, s, e int) interval {
	iv := interval{s: s, e: e, tau: -1, q: math.Inf(-1)}
	if e-s < 2 {
		return iv
	}
	st := m + 1
	w := d.within
	rowS := w[s*st : s*st+st]
	// q̂/2 is compared (halving is exact, so the order and the ties are
	// those of q̂).
	best := math.Inf(-1)
	for tau := s + 1; tau < e; tau++ {
		n := tau - s
		xx := rowS[tau]
		bx := xx * d.invM1[n]
		fn := float64(n)
		// κ = tau+1 … e, with mm = κ − tau = 1 … e−tau points in Y.
		cnt := e - tau
		rs := rowS[tau+1 : tau+1+cnt]
		rt := w[tau*st+tau+1 : tau*st+tau+1+cnt]
		invTot := d.inv[n+1 : n+1+cnt]
		invM := d.invM1[1 : 1+cnt]
		fm := d.fl[1 : 1+cnt]
		for j := range rs {
			yy := rt[j]
			xy := rs[j] - xx - yy
			q := invTot[j] * (xy - fm[j]*bx - fn*yy*invM[j])
			if q > best {
				best, iv.tau, iv.kappa = q, tau, tau+1+j
			}
		}
	}
	iv.q = 2 * best
	return iv
}

// detect returns the change points of z (indexes into z, ascending) at
// significance level p. The returned slice is reused by the next call.
func (d *windowDetector) detect(z []float64, p float64) []int {
	if d.crit.level != p {
		d.crit = critical{level: p}
	}
	d.cps = d.cps[:0]
	m := len(z)
	if m < 2 {
		return d.cps
	}
	d.grow(m)
	d.table(z)
	d.ivs = append(d.ivs[:0], d.candidate(m, 0, m))
	for {
		bi := -1
		for i := range d.ivs {
			if d.ivs[i].tau >= 0 && !d.ivs[i].done && (bi < 0 || d.ivs[i].q > d.ivs[bi].q) {
				bi = i
			}
		}
		if bi < 0 {
			break
		}
		iv := d.ivs[bi]
		end := iv.e
		if d.local {
			end = iv.kappa
		}
		m1, v1 := meanVar(z[iv.s:iv.tau])
		m2, v2 := meanVar(z[iv.tau:end])
		if !d.crit.atMost(iv.tau-iv.s, m1, v1, end-iv.tau, m2, v2) {
			if d.local {
				d.ivs[bi].done = true
				continue
			}
			break
		}
		d.cps = append(d.cps, iv.tau)
		d.ivs[bi] = d.candidate(m, iv.s, iv.tau)
		d.ivs = slices.Insert(d.ivs, bi+1, d.candidate(m, iv.tau, iv.e))
	}
	slices.Sort(d.cps)
	return d.cps
}
