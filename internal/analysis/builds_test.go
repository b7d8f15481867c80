package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
)

func versionSeries(metric string, hib bool, builds ...[]float64) history.Series {
	s := history.Series{Test: "t", Metric: metric, HigherIsBetter: hib, Order: "version"}
	for i, vals := range builds {
		v := string(rune('1' + i))
		sorted := append([]float64{}, vals...)
		// the values of a point are sorted, as history gives them
		for a := range sorted {
			for b := a + 1; b < len(sorted); b++ {
				if sorted[b] < sorted[a] {
					sorted[a], sorted[b] = sorted[b], sorted[a]
				}
			}
		}
		s.Points = append(s.Points, history.Point{Build: "b" + v, Version: "1." + v, Value: history.Median(sorted), N: len(sorted), Values: sorted})
	}
	return s
}

var base = changepoint.Options{Window: 50, PValue: 0.001, MinSegment: 3}

// Neighbouring builds of a short series, by their runs: a significant
// drop of QPS is a regression, of latency an improvement; three runs
// against three are enough for a large change (compare's rank test cannot
// call them, and the line says so); the same runs without a spread cannot
// tell.
func TestBuilds(t *testing.T) {
	a := []float64{1000, 1004, 997, 1001, 995}
	b := []float64{880, 884, 877, 881, 875}
	got := Builds([]history.Series{
		versionSeries("qps", true, a, b),
		versionSeries("p99", false, a, b, b),
		versionSeries("qps", true, []float64{1000}, []float64{800}),
		versionSeries("qps", true, a[:3], b[:3]),
		versionSeries("qps", true, a, a),
		versionSeries("qps", true, []float64{1000}, []float64{500, 520}),
	}, DetectSettings{}, base)
	want := []struct {
		kind   string
		newest bool
		why    string
		note   string
	}{
		{"regression", true, "", ""},
		{"improvement", false, "", ""}, {NoChange, true, "", ""},
		{CannotTell, true, "one run per build", ""},
		{"regression", true, "", "compare says cannot tell: 3 runs each: too few for the Mann-Whitney test"},
		{NoChange, true, "", ""},
		{CannotTell, true, "1 and 2 runs: too few", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d comparisons: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Kind != w.kind || g.Newest != w.newest || !strings.Contains(g.Why, w.why) || !strings.HasPrefix(g.Note, w.note) || (w.note == "") != (g.Note == "") {
			t.Errorf("%d: %s newest %v %q %q, want %s %v %q %q", i, g.Kind, g.Newest, g.Why, g.Note, w.kind, w.newest, w.why, w.note)
		}
	}
	// 5 against 5 runs 12 % apart: Student's t on the logarithms, and
	// compare's verdict beside it (Mann-Whitney, 2/252: worse too).
	if g := got[0]; !g.Tested || g.Method != MethodRunsT || !(g.PValue < 1e-9) || math.Abs(g.Confidence-(1-g.PValue)) > 1e-12 ||
		math.Abs(g.Magnitude-(-0.12)) > 1e-9 || g.Compare == nil || g.Compare.Kind != KindWorse || math.Abs(g.Compare.P-2.0/252) > 1e-9 {
		t.Errorf("5 against 5 runs apart: %+v %+v", g, g.Compare)
	}
	if g := got[3]; g.Tested || !math.IsNaN(g.PValue) {
		t.Errorf("one run each was tested: %+v", g)
	}
	// A minimum magnitude keeps a significant small change out.
	small := Builds([]history.Series{versionSeries("qps", true, a, []float64{980, 984, 977, 981, 975})}, DetectSettings{}, changepoint.Options{MinSegment: 3, MinMagnitude: 0.05})
	if small[0].Kind != NoChange || !strings.Contains(small[0].Why, "--min-magnitude") {
		t.Errorf("a 2 %% change with --min-magnitude 0.05: %+v", small[0])
	}
	// Series long enough for change points (a sweep of four builds or
	// more), and series of one build's runs, are not compared.
	long := versionSeries("qps", true, a, a, b, b)
	runs := history.Series{Test: "t", Metric: "qps", HigherIsBetter: true, Order: "time", Points: long.Points[:3]}
	if got := Builds([]history.Series{long, runs}, DetectSettings{}, base); len(got) != 0 {
		t.Errorf("compared %+v", got)
	}
	if n, need := TooShort([]history.Series{long, runs, versionSeries("qps", true, a, b)}, DetectSettings{}, base); n != 1 || need != 6 {
		t.Errorf("TooShort: %d series, %d points", n, need)
	}
}

// pairedPoints are two builds measured side by side in one plan: rounds
// of repeats of a plan, the other's value ratio × the base's with a
// wobble per round.
func pairedPoints(ratio float64, wobble []float64) (history.Point, history.Point) {
	from := history.Point{Build: "b1", Version: "1.1", N: 1, Value: 1000, Values: []float64{1000}}
	to := history.Point{Build: "b2", Version: "1.2", N: 1, Value: 1000 * ratio, Values: []float64{1000 * ratio}}
	for k, w := range wobble {
		rep, rd := k/4+1, k%4+1
		from.Obs = append(from.Obs, history.Obs{Plan: "p", Pairing: "slices", Repeat: rep, Round: rd, Value: 1000})
		to.Obs = append(to.Obs, history.Obs{Plan: "p", Pairing: "slices", Repeat: rep, Round: rd, Value: 1000 * ratio * w})
	}
	return from, to
}

// Builds measured side by side: compare's verdict is the answer, the one
// settings.Pair gives (qpslab compare's own comparison) where it is set,
// else Judge on the rounds.
func TestBuildsPaired(t *testing.T) {
	from, to := pairedPoints(0.8, []float64{1, 1.01, 0.99, 1, 1.02, 0.98, 1, 1.01})
	s := history.Series{Test: "t", Metric: "qps", HigherIsBetter: true, Order: "version", Points: []history.Point{from, to}}
	got := Builds([]history.Series{s}, DetectSettings{}, base)
	if len(got) != 1 || got[0].Kind != "regression" || got[0].Method != MethodPaired || got[0].Rounds != 8 || math.Abs(got[0].Magnitude+0.2) > 0.01 || got[0].Note != "" {
		t.Fatalf("a paired 20 %% drop: %+v", got)
	}
	// compare's own verdict (its pool can say the rounds of a repeat move
	// together, so that the repeats are the units): undecided wins.
	undecided := Verdict{Method: MethodPaired, Pairing: "slices", N: 8, Rel: 1.33, Lo: 0.66, Hi: 2.69, P: 0.31, Kind: KindSame}
	set := DetectSettings{Pair: func(history.Series, history.Point, history.Point) (Verdict, bool) { return undecided, true }}
	got = Builds([]history.Series{s}, set, base)
	if len(got) != 1 || got[0].Kind != NoChange || !strings.Contains(got[0].Why, "1.33 [0.66, 2.69]") || got[0].Compare.Kind != KindSame {
		t.Errorf("compare undecided: %+v", got)
	}
}

func TestMinMannWhitneyP(t *testing.T) {
	for _, c := range []struct {
		n, m int
		want float64
	}{{1, 1, 1}, {3, 3, 0.1}, {4, 4, 2.0 / 70}, {3, 4, 2.0 / 35}, {5, 5, 2.0 / 252}, {2, 8, 2.0 / 45}} {
		if got := minMannWhitneyP(c.n, c.m); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%d and %d: %g, want %g", c.n, c.m, got, c.want)
		}
	}
}

func TestParseGate(t *testing.T) {
	for spec, want := range map[string]float64{"regression": 0, "regression:5%": 0.05, "regression:0.5%": 0.005} {
		if g, err := ParseGate(spec); err != nil || math.Abs(g.Min-want) > 1e-12 {
			t.Errorf("%s: %+v %v", spec, g, err)
		}
	}
	for _, bad := range []string{"", "regression:5", "regression:-1%", "regression:nan%", "improvement", "regression:%"} {
		if _, err := ParseGate(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The gate fails on a regression the newest build brings: the last change
// point of a series, found only with the newest point, or a regression
// between the two newest builds, at least the threshold.
func TestGateFailures(t *testing.T) {
	mk := func(n, at int, drop float64) history.Series {
		s := history.Series{Test: "t", Metric: "qps", HigherIsBetter: true, Order: "time"}
		for i := 0; i < n; i++ {
			v := 1000 * (1 + 0.003*math.Sin(float64(i)*2.1))
			if i >= at {
				v *= 1 - drop
			}
			s.Points = append(s.Points, history.Point{Build: "b", Value: v, N: 1})
		}
		return s
	}
	// New: three points at the new level. Old: ten. Small: a 3 % drop.
	cs, err := Detect([]history.Series{mk(43, 40, 0.1), mk(50, 40, 0.1), mk(43, 40, 0.03)}, DetectSettings{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || !cs[0].New || cs[1].New || !cs[2].New || !cs[0].Last || cs[0].Index != 40 {
		t.Fatalf("%+v", cs)
	}
	g, _ := ParseGate("regression:5%")
	fc, fb := g.Failures(cs, []BuildChange{{Kind: "regression", Newest: true, Magnitude: -0.2}, {Kind: "regression", Newest: false, Magnitude: -0.2}, {Kind: NoChange, Newest: true}})
	if len(fc) != 1 || fc[0].Index != 40 || fc[0].Points != 43 || len(fb) != 1 {
		t.Errorf("failures: %+v %+v", fc, fb)
	}
}
