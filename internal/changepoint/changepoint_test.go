package changepoint

import (
	"encoding/csv"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// noisy returns n points of level·(1 + cv·N(0,1)) with the level
// multiplied by (1+rel) at each index of steps.
func noisy(seed uint64, n int, cv float64, steps map[int]float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float64, n)
	level := 100.0
	for i := range v {
		if rel, ok := steps[i]; ok {
			level *= 1 + rel
		}
		v[i] = level * (1 + cv*r.NormFloat64())
	}
	return v
}

func mustDetect(t *testing.T, v []float64, o Options, dir Direction) []ChangePoint {
	t.Helper()
	cps, err := Detect(v, o, dir)
	if err != nil {
		t.Fatal(err)
	}
	return cps
}

// near reports whether some change point is within ±tol of idx.
func near(cps []ChangePoint, idx, tol int) bool {
	for _, c := range cps {
		if c.Index >= idx-tol && c.Index <= idx+tol {
			return true
		}
	}
	return false
}

func TestStepsFound(t *testing.T) {
	steps := map[int]float64{100: -0.05, 220: 0.08, 350: 0.05, 480: -0.10}
	for seed := uint64(1); seed <= 10; seed++ {
		v := noisy(seed, 600, 0.01, steps)
		cps := mustDetect(t, v, Options{}, HigherIsBetter)
		for idx := range steps {
			if !near(cps, idx, 2) {
				t.Errorf("seed %d: step at %d not found within ±2: %v", seed, idx, indexes(cps))
			}
		}
		if len(cps) > len(steps)+1 {
			t.Errorf("seed %d: %d change points for %d steps: %v", seed, len(cps), len(steps), indexes(cps))
		}
	}
}

func TestStepsFoundSmallWindow(t *testing.T) {
	// Steps closer together than the window, and a window of 10.
	steps := map[int]float64{30: 0.1, 45: -0.1, 90: 0.1}
	for seed := uint64(1); seed <= 5; seed++ {
		v := noisy(seed, 150, 0.01, steps)
		for _, w := range []int{10, 50} {
			cps := mustDetect(t, v, Options{Window: w}, HigherIsBetter)
			for idx := range steps {
				if !near(cps, idx, 2) {
					t.Errorf("seed %d window %d: step at %d not found within ±2: %v", seed, w, idx, indexes(cps))
				}
			}
		}
	}
}

func TestSpikeNotReported(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		for _, width := range []int{1, 2} {
			// Otava's rules report a spike a few points before a window
			// boundary (windows start at 0, 25, 50, …): the documented
			// difference.
			for _, at := range []int{95, 110} {
				v := noisy(seed, 200, 0.01, nil)
				for i := 0; i < width; i++ {
					v[at+i] *= 1.5
				}
				if cps := mustDetect(t, v, Options{}, HigherIsBetter); len(cps) != 0 {
					t.Errorf("seed %d: %d-point spike at %d reported: %v", seed, width, at, indexes(cps))
				}
				ot, err := DetectOtava(v, Options{}, HigherIsBetter)
				if err != nil {
					t.Fatal(err)
				}
				if at == 95 && !slices.Contains(indexes(ot), at) {
					t.Errorf("seed %d: Otava's rules on a %d-point spike at %d: %v", seed, width, at, indexes(ot))
				}
			}
		}
	}
}

func TestSpikeNextToStep(t *testing.T) {
	// A big spike a few points from a real step must neither be reported
	// nor hide or move the step: its points stay out of the statistics.
	for _, off := range []int{-6, -4, -3, -2, -1, 1, 2, 3, 5} {
		for _, f := range []float64{0.5, 1.5} {
			ok, otavaOK := 0, 0
			const seeds = 40
			for seed := uint64(1); seed <= seeds; seed++ {
				v := noisy(seed, 200, 0.01, map[int]float64{100: -0.12})
				v[100+off] *= f
				good := func(cps []ChangePoint) bool {
					if !near(cps, 100, 2) {
						return false
					}
					for _, c := range cps {
						if d := c.Index - (100 + off); d >= -2 && d <= 2 && (c.Index < 98 || c.Index > 102) {
							return false
						}
						if c.Index >= 98 && c.Index <= 102 && math.Abs(c.MeanBefore-100) > 1 {
							return false // the spike is in the step's statistics
						}
					}
					return true
				}
				if good(mustDetect(t, v, Options{}, HigherIsBetter)) {
					ok++
				}
				if ot, _ := DetectOtava(v, Options{}, HigherIsBetter); good(ot) {
					otavaOK++
				}
			}
			if ok < seeds*9/10 {
				t.Errorf("spike ×%g at step%+d: right in %d of %d series (Otava's rules: %d)", f, off, ok, seeds, otavaOK)
			}
		}
	}
}

func TestEdges(t *testing.T) {
	// Odd points at either end are not change points.
	v := noisy(3, 150, 0.01, nil)
	v[0] *= 1.3
	v[149] *= 0.7
	if cps := mustDetect(t, v, Options{}, HigherIsBetter); len(cps) != 0 {
		t.Errorf("odd end points reported: %v", indexes(cps))
	}
	v[148] *= 0.7
	if cps := mustDetect(t, v, Options{}, HigherIsBetter); len(cps) != 0 {
		t.Errorf("two odd end points reported: %v", indexes(cps))
	}
	// A step at the newest points is reported once MinSegment points follow.
	a, err := NewAnalysis(Options{}, HigherIsBetter)
	if err != nil {
		t.Fatal(err)
	}
	w := noisy(4, 130, 0.01, map[int]float64{120: -0.2})
	for i, x := range w {
		cps, err := a.Append(x)
		if err != nil {
			t.Fatal(err)
		}
		switch n := i + 1; {
		case n < 120+DefaultMinSegment && len(cps) != 0:
			t.Errorf("%d points: %v before %d points after the step", n, indexes(cps), DefaultMinSegment)
		case n >= 120+DefaultMinSegment && !slices.Equal(indexes(cps), []int{120}):
			t.Errorf("%d points: %v, want [120]", n, indexes(cps))
		}
	}
}

func TestConstantSeries(t *testing.T) {
	// Exact constant data has nothing to report.
	for _, m := range Methods {
		if cps := mustDetect(t, slices.Repeat([]float64{7}, 300), Options{Method: m}, HigherIsBetter); len(cps) != 0 {
			t.Errorf("%s: constant series: %v", m, indexes(cps))
		}
	}
}

func TestDirectionAndMagnitude(t *testing.T) {
	drop := noisy(5, 200, 0.01, map[int]float64{100: -0.1})
	rise := noisy(6, 200, 0.01, map[int]float64{100: 0.1})
	for _, tc := range []struct {
		name       string
		v          []float64
		dir        Direction
		regression bool
		sign       float64
	}{
		{"qps drop", drop, HigherIsBetter, true, -1},
		{"qps rise", rise, HigherIsBetter, false, 1},
		{"latency drop", drop, LowerIsBetter, false, -1},
		{"latency rise", rise, LowerIsBetter, true, 1},
	} {
		cps := mustDetect(t, tc.v, Options{}, tc.dir)
		if len(cps) != 1 || !near(cps, 100, 2) {
			t.Errorf("%s: %v, want one change point at 100", tc.name, indexes(cps))
			continue
		}
		c := cps[0]
		if c.Regression != tc.regression {
			t.Errorf("%s: regression %v", tc.name, c.Regression)
		}
		if math.Abs(c.Magnitude-tc.sign*0.1) > 0.01 {
			t.Errorf("%s: magnitude %g, want %g", tc.name, c.Magnitude, tc.sign*0.1)
		}
		if got := (c.MeanAfter - c.MeanBefore) / c.MeanBefore; got != c.Magnitude {
			t.Errorf("%s: magnitude %g, means give %g", tc.name, c.Magnitude, got)
		}
		if !(c.PValue < DefaultPValue) || c.StdBefore <= 0 || c.StdAfter <= 0 {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
	// MinMagnitude filters on max(|a/b−1|, |b/a−1|).
	small := noisy(7, 200, 0.001, map[int]float64{100: 0.03})
	if cps := mustDetect(t, small, Options{}, HigherIsBetter); !slices.Equal(indexes(cps), []int{100}) {
		t.Errorf("3%% step: %v", indexes(cps))
	}
	if cps := mustDetect(t, small, Options{MinMagnitude: 0.05}, HigherIsBetter); len(cps) != 0 {
		t.Errorf("3%% step with minimum magnitude 5%%: %v", indexes(cps))
	}
}

func TestDeterministic(t *testing.T) {
	v := noisy(8, 2000, 0.02, map[int]float64{500: 0.05, 1200: -0.05, 1500: 0.03})
	a := mustDetect(t, v, Options{}, HigherIsBetter)
	b := mustDetect(t, v, Options{}, HigherIsBetter)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%v\n%v", a, b)
	}
	an, _ := NewAnalysis(Options{}, HigherIsBetter)
	c, err := an.Extend(v...)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) {
		t.Fatalf("Extend differs from Detect:\n%v\n%v", a, c)
	}
}

// randomSeries mixes steps, spikes, ramps, integer rounding and missing
// values.
func randomSeries(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	level, cv := 100.0, []float64{0.002, 0.01, 0.05}[r.IntN(3)]
	for i := range v {
		if r.IntN(40) == 0 {
			level *= 1 + (r.Float64()-0.5)*0.3
		}
		v[i] = level * (1 + cv*r.NormFloat64())
		switch r.IntN(60) {
		case 0:
			v[i] *= 1.5
		case 1:
			v[i] = math.NaN()
		}
	}
	if r.IntN(4) == 0 {
		for i := range v {
			v[i] = math.Round(v[i])
		}
	}
	if r.IntN(5) == 0 {
		v[0] = math.NaN()
	}
	return v
}

func TestAppendEqualsDetect(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 42))
	for k := 0; k < 24; k++ {
		n := 50 + r.IntN(350)
		v := randomSeries(r, n)
		o := Options{
			Window:       []int{0, 2, 3, 7, 10, 30, 51}[r.IntN(7)],
			PValue:       []float64{0, 0.05, 0.01, 0.0001}[r.IntN(4)],
			MinMagnitude: []float64{0, 0, 0.01, 0.05}[r.IntN(4)],
			MinSegment:   []int{0, 1, 2, 5}[r.IntN(4)],
			Method:       []Method{"", Calibrated, OtavaTTest}[r.IntN(3)],
		}
		c, err := resolve(o, HigherIsBetter)
		if err != nil {
			t.Fatal(err)
		}
		// Only the windows that reached the old end are run again, and for
		// the calibrated method the windows that hold one of the last
		// finalLag clipped values (all of them while the series is
		// shorter than scaleSpan+3·sideSpan: the clipping scale of the
		// first points is still changing).
		bound, from := 3, 0
		if c.calibrated {
			bound, from = (c.window+finalLag+1)/c.step+2, scaleSpan+3*sideSpan
		}
		dir := []Direction{HigherIsBetter, LowerIsBetter}[r.IntN(2)]
		a, err := NewAnalysis(o, dir)
		if err != nil {
			t.Fatal(err)
		}
		head := r.IntN(n / 2)
		if _, err := a.Extend(v[:head]...); err != nil {
			t.Fatal(err)
		}
		maxRuns := 0
		for i := head; i < n; i++ {
			before := a.e.runs
			got, err := a.Append(v[i])
			if err != nil {
				t.Fatal(err)
			}
			if i >= from {
				maxRuns = max(maxRuns, a.e.runs-before)
			}
			want := mustDetect(t, v[:i+1], o, dir)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d (%+v) after %d points: Append %v, Detect %v", k, o, i+1, got, want)
			}
		}
		if a.Len() != n {
			t.Errorf("Len %d, want %d", a.Len(), n)
		}
		if !reflect.DeepEqual(a.ChangePoints(), mustDetect(t, v, o, dir)) {
			t.Errorf("ChangePoints differs from Detect")
		}
		if maxRuns > bound {
			t.Errorf("case %d (%+v): an Append ran %d windows, more than %d", k, o, maxRuns, bound)
		}
	}
}

func TestMissingAndInvalid(t *testing.T) {
	v := noisy(9, 120, 0.01, map[int]float64{60: 0.1})
	filled := slices.Clone(v)
	w := slices.Clone(v)
	w[0], w[1], w[30], w[61] = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	filled[0], filled[1], filled[30], filled[61] = filled[2], filled[2], filled[29], filled[60]
	if a, b := mustDetect(t, w, Options{}, HigherIsBetter), mustDetect(t, filled, Options{}, HigherIsBetter); !reflect.DeepEqual(a, b) {
		t.Errorf("missing values: %v, filled by hand: %v", a, b)
	}
	if cps := mustDetect(t, []float64{math.NaN(), math.NaN()}, Options{}, HigherIsBetter); len(cps) != 0 {
		t.Errorf("all missing: %v", cps)
	}
	if _, err := Detect([]float64{1, math.Inf(1)}, Options{}, HigherIsBetter); !errors.Is(err, ErrInfinite) {
		t.Errorf("+Inf: %v", err)
	}
	a, _ := NewAnalysis(Options{}, HigherIsBetter)
	if _, err := a.Append(math.Inf(-1)); !errors.Is(err, ErrInfinite) || a.Len() != 0 {
		t.Errorf("Append(-Inf): %v, Len %d", err, a.Len())
	}
	if _, err := a.Extend(1, 2, math.Inf(1)); !errors.Is(err, ErrInfinite) || a.Len() != 0 {
		t.Errorf("Extend with +Inf: %v, Len %d", err, a.Len())
	}
	for _, tc := range []struct {
		o   Options
		dir Direction
	}{
		{Options{Window: 1}, HigherIsBetter},
		{Options{Window: -5}, HigherIsBetter},
		{Options{PValue: -0.1}, HigherIsBetter},
		{Options{PValue: 1.5}, HigherIsBetter},
		{Options{PValue: math.NaN()}, HigherIsBetter},
		{Options{MinMagnitude: -1}, HigherIsBetter},
		{Options{MinMagnitude: math.NaN()}, HigherIsBetter},
		{Options{MinSegment: -1}, HigherIsBetter},
		{Options{}, 0},
		{Options{}, 2},
	} {
		if _, err := Detect(v, tc.o, tc.dir); err == nil {
			t.Errorf("%+v %v: no error", tc.o, tc.dir)
		}
		if _, err := NewAnalysis(tc.o, tc.dir); err == nil {
			t.Errorf("NewAnalysis %+v %v: no error", tc.o, tc.dir)
		}
	}
	for n := 0; n < 6; n++ {
		if _, err := Detect(v[:n], Options{}, HigherIsBetter); err != nil {
			t.Errorf("%d points: %v", n, err)
		}
	}
}

// TestWindowDetector checks the E-divisive candidates against a direct
// evaluation of q̂ and Otava's detector test sequence.
func TestWindowDetector(t *testing.T) {
	seq := []float64{0.3, 2.4, 1.5, -0.9, -0.5, 99.7, 98.3, 99.1, 149.0, 149.7, 149.5, 149.1, 148.8, 150.0}
	var d windowDetector
	if got := d.detect(seq, 0.01); !slices.Equal(got, []int{5, 8}) {
		t.Errorf("Otava's divisive sequence: %v, want [5 8]", got)
	}
	r := rand.New(rand.NewPCG(3, 3))
	for k := 0; k < 200; k++ {
		m := 2 + r.IntN(30)
		z := make([]float64, m)
		for i := range z {
			z[i] = math.Round(r.NormFloat64()*10) / 4
			if i > m/2 {
				z[i] += 3
			}
		}
		d.grow(m)
		d.table(z)
		s := r.IntN(m - 1)
		e := s + 2 + r.IntN(m-s-1)
		got := d.candidate(m, s, e)
		wantTau, wantQ := -1, math.Inf(-1)
		for tau := s + 1; tau < e; tau++ {
			for kappa := tau + 1; kappa <= e; kappa++ {
				if q := qhatSlow(z[s:tau], z[tau:kappa]); q > wantQ+1e-9 {
					wantTau, wantQ = tau, q
				}
			}
		}
		if math.Abs(got.q-wantQ) > 1e-9*math.Max(1, math.Abs(wantQ)) {
			t.Fatalf("%v [%d,%d): q̂ %g at %d, direct %g at %d", z, s, e, got.q, got.tau, wantQ, wantTau)
		}
	}
}

func qhatSlow(x, y []float64) float64 {
	n, m := float64(len(x)), float64(len(y))
	var xy, xx, yy float64
	for _, a := range x {
		for _, b := range y {
			xy += math.Abs(a - b)
		}
	}
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			xx += math.Abs(x[i] - x[j])
		}
	}
	for i := range y {
		for j := i + 1; j < len(y); j++ {
			yy += math.Abs(y[i] - y[j])
		}
	}
	q := 2 / (n + m) * xy
	if n > 1 {
		q -= 2 * m / (n + m) / (n - 1) * xx
	}
	if m > 1 {
		q -= 2 * n / (n + m) / (m - 1) * yy
	}
	return q
}

func TestTTest(t *testing.T) {
	// scipy 1.16.3 stats.ttest_ind_from_stats(mean1, std1, n1, mean2, std2, n2).pvalue
	for _, tc := range []struct {
		n1, n2         int
		m1, s1, m2, s2 float64
		want           float64
	}{
		{20, 25, 10, 1, 11, 2, 0.047702039028389744},
		{7, 40, 100, 3, 90, 0.5, 1.830473267937827e-24},
		{7, 400, 100, 3, 90, 0.001, 1.4875689331641164e-232},
	} {
		if p := tTest(tc.n1, tc.m1, tc.s1*tc.s1, tc.n2, tc.m2, tc.s2*tc.s2); math.Abs(p-tc.want) > 1e-9*tc.want {
			t.Errorf("%+v: p %v", tc, p)
		}
	}
	if p := tTest(1, 5, 0, 1, 6, 0); p != 1 {
		t.Errorf("two points: %v", p)
	}
	if p := tTest(3, 5, 0, 3, 5, 0); !math.IsNaN(p) {
		t.Errorf("equal constants: %v", p)
	}
	if p := tTest(3, 5, 0, 3, 6, 0); p != 0 {
		t.Errorf("different constants: %v", p)
	}
}

// readValidation reads a CSV of testdata/validation: value and, if
// present, git_commit columns.
func readValidation(t *testing.T, name string) (values []float64, commits []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "validation", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 {
		t.Fatalf("%s: %d rows, want a header and values", name, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, row := range rows[1:] {
		x, err := strconv.ParseFloat(row[col["value"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, x)
		if c, ok := col["git_commit"]; ok {
			commits = append(commits, row[c])
		}
	}
	return values, commits
}

// TestValidationSeries runs the public validation series against the
// answers their sources state.
func TestValidationSeries(t *testing.T) {
	tb, commits := readValidation(t, "tigerbeetle_load_accepted.csv")
	if len(tb) != 365 {
		t.Fatalf("tigerbeetle: %d points", len(tb))
	}
	// Nyrkiö (backend/tests/test_core.py): p 0.001, magnitude 0.05, two
	// change points at these commits.
	cps := mustDetect(t, tb, Options{PValue: 0.001, MinMagnitude: 0.05}, HigherIsBetter)
	var got []string
	for _, c := range cps {
		got = append(got, commits[c.Index][:8])
	}
	if !slices.Equal(got, []string{"e88458cb", "7a724369"}) {
		t.Errorf("tigerbeetle, Nyrkiö defaults: commits %v", got)
	}
	// Otava's defaults ([15 61 71 95 117 131 192 212], what Apache Otava
	// 0.8.0, github.com/apache/otava, finds: case tigerbeetle_defaults of
	// testdata/otava/validation.json, see docs/changepoint.md): Detect with
	// Otava's t-test agrees.
	otava := []int{15, 61, 71, 95, 117, 131, 192, 212}
	if cps := mustDetect(t, tb, Options{Method: OtavaTTest}, HigherIsBetter); !slices.Equal(indexes(cps), otava) {
		t.Errorf("tigerbeetle, Otava's defaults: %v", indexes(cps))
	}
	// The calibrated method finds fewer (the series is autocorrelated, and
	// 117 and 131, 192 and 212 are steps of 2–4 % a few points from
	// another), each where Otava finds one: within its interval.
	cal := mustDetect(t, tb, Options{}, HigherIsBetter)
	if len(cal) < 5 || len(cal) > len(otava) {
		t.Errorf("tigerbeetle, calibrated: %v", indexes(cal))
	}
	for _, c := range cal {
		if !slices.ContainsFunc(otava, func(i int) bool { return c.Lo <= i && i <= c.Hi }) {
			t.Errorf("tigerbeetle, calibrated: %d [%d, %d] holds none of Otava's %v", c.Index, c.Lo, c.Hi, otava)
		}
	}
	for _, tc := range []struct {
		file string
		o    Options
		want []int
	}{
		{"otava_single_series.csv", Options{Window: 10, PValue: 0.0001}, []int{10}},
		{"otava_series1.csv", Options{}, []int{6}},
		{"otava_series2.csv", Options{}, []int{4}},
		{"otava_series1.csv", Options{MinMagnitude: 0.2}, []int{6}},
		{"otava_series2.csv", Options{MinMagnitude: 0.2}, []int{}},
		{"otava_single_series.csv", Options{Window: 10, PValue: 0.0001, Method: OtavaTTest}, []int{10}},
		{"otava_series1.csv", Options{Method: OtavaTTest}, []int{6}},
		{"otava_series2.csv", Options{Method: OtavaTTest}, []int{4}},
	} {
		v, _ := readValidation(t, tc.file)
		if cps := mustDetect(t, v, tc.o, HigherIsBetter); !slices.Equal(indexes(cps), tc.want) {
			t.Errorf("%s %+v: %v, want %v", tc.file, tc.o, indexes(cps), tc.want)
		}
	}
	seq, _ := readValidation(t, "otava_divisive_sequence.csv")
	var d windowDetector
	if got := d.detect(seq, 0.01); !slices.Equal(got, []int{5, 8}) {
		t.Errorf("divisive sequence, detector at p 0.01: %v, want [5 8]", got)
	}
}

func BenchmarkDetect20k(b *testing.B) {
	steps := map[int]float64{}
	for i := 1000; i < 20000; i += 1000 {
		steps[i] = 0.05 * float64(1-2*(i/1000%2))
	}
	v := noisy(1, 20000, 0.02, steps)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Detect(v, Options{}, HigherIsBetter); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend20k(b *testing.B) {
	v := noisy(1, 20000+b.N, 0.02, map[int]float64{5000: 0.05, 15000: -0.05})
	a, _ := NewAnalysis(Options{}, HigherIsBetter)
	a.Extend(v[:20000]...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.Append(v[20000+i])
	}
}

// TestCritical checks the shortcut that decides p ≤ level from t² against
// the p-value itself.
func TestCritical(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, level := range []float64{0.2, 0.05, 0.01, 0.001, 1e-4, 1e-7, 1e-12} {
		c := critical{level: level}
		for df := 1; df < 3000; df += 1 + df/10 {
			tc := criticalT2(level, df)
			if tc < 0 {
				if level >= 1e-7 {
					t.Errorf("level %g df %d: no critical t²", level, df)
				}
				tc = 30
			} else if p := pValue(tc, float64(df)); math.Abs(p/level-1) > 1e-3 {
				t.Errorf("level %g df %d: critical t² %g gives p %g", level, df, tc, p)
			}
			for k := 0; k < 20; k++ {
				t2 := tc * math.Exp((r.Float64()-0.5)*1e-5)
				if k%2 == 0 {
					t2 = tc * math.Exp(r.NormFloat64())
				}
				f := float64(df)
				want := pValue(t2, f) <= level
				got := want
				switch c.side(t2, f) {
				case -1:
					got = true
				case 1:
					got = false
				}
				if got != want {
					t.Fatalf("level %g df %d t² %g: shortcut says %v, p %g", level, df, t2, got, pValue(t2, f))
				}
			}
		}
	}
}
