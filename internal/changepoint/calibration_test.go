package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The calibration at a small scale (bench/changepoint-calibrate.sh runs it
// at full scale against Apache Otava; docs/changepoint.md, "Calibration"):
// the same noise models, fixed seeds, and the bounds the calibrated method
// promises.

// Noise models, as bench/changepoint_calibrate.py makes them: level ×
// (1 + cv·e) with e of standard deviation 1:
//   - white: e i.i.d. N(0, 1);
//   - ar: AR(1), e_i = φ·e_{i−1} + √(1−φ²)·N(0, 1) with φ = 0.6, the
//     lag-1 autocorrelation of qpslab's per-run QPS series on a shared
//     host (docs/changepoint.md);
//   - outliers: white, and 5 % of the points are slow runs, 5 to 15
//     standard deviations below the level;
//   - ar+outliers: both.
var noiseKinds = []string{"white", "ar", "outliers", "ar+outliers"}

const (
	arPhi       = 0.6
	outlierRate = 0.05
)

// noise returns n points of noise of the given kind around 1.
func noise(r *rand.Rand, n int, kind string, cv float64) []float64 {
	phi := 0.0
	if kind == "ar" || kind == "ar+outliers" {
		phi = arPhi
	}
	out := kind == "outliers" || kind == "ar+outliers"
	v := make([]float64, n)
	e := r.NormFloat64()
	for i := range v {
		e = phi*e + math.Sqrt(1-phi*phi)*r.NormFloat64()
		v[i] = 1 + cv*e
		if out && r.Float64() < outlierRate {
			v[i] -= cv * (5 + 10*r.Float64())
		}
	}
	return v
}

// steps returns a 1,000-point series of the given noise with a step of
// ±step (at random) every 100 points, and the steps' indexes.
func steps(r *rand.Rand, kind string, cv, step float64) ([]float64, []int) {
	v := noise(r, 1000, kind, cv)
	level := 100.0
	var truth []int
	for i := range v {
		if i > 0 && i%100 == 0 {
			truth = append(truth, i)
			if r.IntN(2) == 0 {
				level *= 1 + step
			} else {
				level *= 1 - step
			}
		}
		v[i] *= level
	}
	return v, truth
}

// TestCalibrationFalseAlarms: at most 0.1 false change points per 1,000
// points of each kind of noise with the default (calibrated) method, while
// Otava's t-test finds many more in the same series (so the count can
// tell them apart).
func TestCalibrationFalseAlarms(t *testing.T) {
	const series, n = 30, 1000
	for k, kind := range noiseKinds {
		r := rand.New(rand.NewPCG(19, uint64(k)))
		cal, otava := 0, 0
		for range series {
			v := noise(r, n, kind, 0.02)
			cal += len(mustDetect(t, v, Options{}, HigherIsBetter))
			otava += len(mustDetect(t, v, Options{Method: OtavaTTest}, HigherIsBetter))
		}
		per := func(c int) float64 { return float64(c) / (series * n) * 1000 }
		if per(cal) > 0.1 {
			t.Errorf("%s noise: %.3f false change points per 1,000 points (%d in %d points), want ≤ 0.1", kind, per(cal), cal, series*n)
		}
		if kind == "white" && per(otava) < 0.3 {
			t.Errorf("%s noise: Otava's t-test: %.3f per 1,000 points, want about 1 (docs/changepoint.md)", kind, per(otava))
		}
		t.Logf("%s noise: calibrated %.3f, Otava's t-test %.2f false change points per 1,000 points", kind, per(cal), per(otava))
	}
}

// TestCalibrationRecall: at least 99 % of 5 % steps at 2 % noise found
// within ±2 points, each step's interval holds it at least 95 % of the
// time, and few change points are far from every step.
func TestCalibrationRecall(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 100))
	found, covered, total, false_ := 0, 0, 0, 0
	for range 150 {
		v, truth := steps(r, "white", 0.02, 0.05)
		cps := mustDetect(t, v, Options{}, HigherIsBetter)
		for _, s := range truth {
			total++
			if near(cps, s, 2) {
				found++
			}
			if slices.ContainsFunc(cps, func(c ChangePoint) bool { return c.Lo <= s && s <= c.Hi }) {
				covered++
			}
		}
		for _, c := range cps {
			if !(c.Lo <= c.Index && c.Index <= c.Hi) {
				t.Errorf("change point %d outside its interval [%d, %d]", c.Index, c.Lo, c.Hi)
			}
			if !slices.ContainsFunc(truth, func(s int) bool { return abs(c.Index-s) <= 5 }) {
				false_++
			}
		}
	}
	if recall := float64(found) / float64(total); recall < 0.99 {
		t.Errorf("5 %% steps at 2 %% noise: %d of %d (%.2f %%) found within ±2 points, want ≥ 99 %%", found, total, 100*recall)
	}
	if cover := float64(covered) / float64(total); cover < 0.95 {
		t.Errorf("5 %% steps at 2 %% noise: %d of %d in a change point's interval, want ≥ 95 %%", covered, total)
	}
	// A step placed more than 5 points away counts as a false change point
	// too.
	if rate := float64(false_) / (150 * 1000) * 1000; rate > 0.1 {
		t.Errorf("%d change points more than 5 points from every step: %.3f per 1,000 points", false_, rate)
	}
	t.Logf("%d of %d steps within ±2 points, %d in an interval, %d false", found, total, covered, false_)
}

// TestCalibrationSpikes: spikes of one or two points, of any size, in any
// of the noises, are never change points.
func TestCalibrationSpikes(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 200))
	for k := range 60 {
		kind := noiseKinds[k%len(noiseKinds)]
		v := noise(r, 400, kind, 0.02)
		var spikes []int
		for i := 20; i < 380; i += 40 + r.IntN(20) {
			f := []float64{0.5, 0.8, 1.2, 2}[r.IntN(4)]
			for j := range 1 + r.IntN(2) {
				v[i+j] *= f
			}
			spikes = append(spikes, i)
		}
		for _, c := range mustDetect(t, v, Options{}, HigherIsBetter) {
			t.Errorf("series %d (%s noise, spikes at %v): change point at %d", k, kind, spikes, c.Index)
		}
	}
}

// TestAutocorrelationEstimate: the lag-1 autocorrelation comes out near
// the noise's, steps and outliers notwithstanding.
func TestAutocorrelationEstimate(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 300))
	for _, kind := range noiseKinds {
		want := 0.0
		if kind == "ar" || kind == "ar+outliers" {
			want = arPhi
		}
		var sum float64
		const k = 20
		for range k {
			v, _ := steps(r, kind, 0.02, 0.05)
			var rb robust
			rb.update(v)
			rb.autocorrelation()
			sum += rb.phi
		}
		// Differences across a step inflate the variogram at varioLag, so
		// steps raise the estimate (by about 0.1 with a 5 % step every 100
		// points): more variance, fewer change points, never more.
		if got := sum / k; got < want-0.1 || got > want+0.15 {
			t.Errorf("%s noise with steps: mean φ %.2f, want %.1f (−0.1, +0.15)", kind, got, want)
		}
	}
	var rb robust
	rb.update(noise(r, minAutoN-1, "ar", 0.02))
	rb.autocorrelation()
	if rb.phi != 0 || rb.inflate != 1 {
		t.Errorf("%d points: φ %g, inflation %g; want none", minAutoN-1, rb.phi, rb.inflate)
	}
}

// TestOutliersReplaced: a run of up to (sideSpan+1)/2 outliers takes the
// level around it; a step, even at the newest points, stays.
func TestOutliersReplaced(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 400))
	v := noise(r, 200, "white", 0.01)
	for i := range v {
		v[i] *= 100
		if i >= 150 {
			v[i] *= 1.2
		}
	}
	x := slices.Clone(v)
	const run = (sideSpan + 1) / 2
	for i := 60; i < 60+run; i++ {
		x[i] *= 0.6
	}
	x[100] *= 3
	var rb robust
	rb.update(x)
	for i := range x {
		switch {
		case i >= 60 && i < 60+run || i == 100:
			if math.Abs(rb.y[i]-100) > 4 {
				t.Errorf("outlier at %d: %g → %g, want near 100", i, x[i], rb.y[i])
			}
		case rb.y[i] != x[i]:
			t.Errorf("point %d: %g → %g, want unchanged", i, x[i], rb.y[i])
		}
	}
	// A step among the newest points is not an outlier.
	w := noise(r, 100, "white", 0.01)
	for i := range w {
		w[i] *= 100
		if i >= 97 {
			w[i] *= 1.3
		}
	}
	rb.update(w)
	if !slices.Equal(rb.y, w) {
		t.Errorf("a step at the newest 3 points was taken for outliers")
	}
}

// TestCalibrationLongDips: in a long series, a dip of five points or more
// that recovers is two change points (the outlier replacement keeps it:
// its edges agree with its middle), and one of three or four points is a
// run of outliers (docs/changepoint.md, "The calibrated method").
func TestCalibrationLongDips(t *testing.T) {
	for _, l := range []int{3, 4, 5, 6, 7, 10} {
		r := rand.New(rand.NewPCG(19, 500+uint64(l)))
		both, any := 0, 0
		const k = 40
		for range k {
			v := noise(r, 300, "white", 0.02)
			for i := range v {
				v[i] *= 100
				if i >= 150 && i < 150+l {
					v[i] *= 0.8
				}
			}
			cps := mustDetect(t, v, Options{}, HigherIsBetter)
			if near(cps, 150, 1) && near(cps, 150+l, 1) {
				both++
			}
			any += len(cps)
		}
		switch {
		case l >= 5 && both < k*95/100:
			t.Errorf("a 20 %% dip of %d points at 2 %% noise: both edges found in %d of %d series, want 95 %%", l, both, k)
		case l < 5 && any > 0:
			t.Errorf("a 20 %% dip of %d points (a run of outliers): %d change points in %d series, want none", l, any, k)
		}
	}
}

// TestCalibrationSweeps: the goals of sweeps at a small scale
// (bench/changepoint-calibrate.sh runs them at full scale, with the table
// of what a sweep's detection sees): over sweeps of 6 to 30 builds of 1
// to 3 runs, steps and dips of 25 and 50 % at ±3 and ±5 % noise (a step in
// the middle, on the two newest or the two oldest builds, on the newest
// build alone with three runs; a dip of four builds or more), 0.9 or
// more of the changes in view (a change point, a lead or an unconfirmed
// change), 0.85 or more as change points (the 0.9 is over the
// cells the table says a sweep sees, which the bench measures: 3 draws a
// cell are too few to tell them here), precision of 0.9 or more; no
// false change in flat sweeps of the same builds, runs and noise. A change
// is found when a change point lies within one build of it.
func TestCalibrationSweeps(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 600))
	var changes, found, seen, cps, true_, flat, false_, leads int
	for _, n := range []int{6, 8, 12, 18, 24, 30} {
		for _, runs := range []int{1, 2, 3} {
			for _, cv := range []float64{0.03, 0.05} {
				for _, size := range []float64{0.25, 0.5} {
					for shape := range 5 {
						sign := float64(2*r.IntN(2) - 1)
						var at map[int]float64
						var truth []int
						switch shape {
						case 0:
							at, truth = map[int]float64{n / 2: sign * size}, []int{n / 2}
						case 1:
							at, truth = map[int]float64{n - 2: sign * size}, []int{n - 2}
						case 2:
							at, truth = map[int]float64{2: sign * size}, []int{2}
						case 3:
							if runs < MinRuns {
								continue
							}
							at, truth = map[int]float64{n - 1: sign * size}, []int{n - 1}
						case 4:
							if n < 8 {
								continue
							}
							l := 4 + r.IntN(max(1, min(8, n-7)))
							s := 2 + r.IntN(n-l-3)
							at, truth = map[int]float64{s: -size, s + l: 1/(1-size) - 1}, []int{s, s + l}
						}
						for range 3 {
							res := mustSweep(t, sweepOf(r, levels(n, at), runs, cv), Options{}, HigherIsBetter)
							for _, c := range truth {
								changes++
								if near(res.ChangePoints, c, 1) {
									found++
								}
								if near(res.ChangePoints, c, 1) || near(res.Leads, c, 1) || near(res.Unconfirmed, c, 1) {
									seen++
								}
							}
							for _, c := range res.ChangePoints {
								cps++
								if slices.ContainsFunc(truth, func(x int) bool { return abs(c.Index-x) <= 1 }) {
									true_++
								}
							}
						}
					}
					for range 5 {
						flat++
						res := mustSweep(t, sweepOf(r, levels(n, nil), runs, cv), Options{}, HigherIsBetter)
						false_ += len(res.ChangePoints)
						leads += len(res.Leads)
					}
				}
			}
		}
	}
	recall, precision, inView := float64(found)/float64(changes), float64(true_)/float64(cps), float64(seen)/float64(changes)
	if recall < 0.85 || inView < 0.9 || precision < 0.9 {
		t.Errorf("the goal region: recall %.3f (%d of %d changes; want 0.85), %.3f as a change point, a lead or an unconfirmed change (want 0.9), precision %.3f (%d of %d change points; want 0.9)", recall, found, changes, inView, precision, true_, cps)
	}
	if false_ > 0 {
		t.Errorf("%d false change points in %d flat sweeps, want none", false_, flat)
	}
	t.Logf("recall %.3f (%d of %d), in view %.3f, precision %.3f (%d of %d), %d false change points and %d leads in %d flat sweeps", recall, found, changes, inView, precision, true_, cps, false_, leads, flat)
}
