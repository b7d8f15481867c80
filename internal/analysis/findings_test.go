package analysis

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// findingsGroups place the fixture's tests: t01…t42 in five groups of a
// layout "5" (written out: the findings know no suite's layout).
var findingsGroups = []string{"point-1", "range-1", "writes", "point-2", "range-2"}

func findingsTest(i int) string { return fmt.Sprintf("t%02d", i) }

// findingsRuns are five repeats of test i at about qps (±0.4 %), with
// the per-op figures hw gives (nil: none measured).
func findingsRuns(i int, qps float64, hw func(rep int) *result.HW) []result.Run {
	g := (i - 1) * len(findingsGroups) / 42
	var out []result.Run
	for rep, j := range []float64{0, 4, -4, 2, -2} {
		r := result.Run{Suite: "fixture", Test: findingsTest(i), Threads: 1, Status: result.OK, Step: i,
			Params: map[string]string{"repeat": strconv.Itoa(rep)},
			Totals: result.Totals{Reported: qps * (1 + j/1000), ReportedUnit: "qps"},
			Groups: []result.Placement{{Layout: "5", Group: findingsGroups[g], Pos: g}}}
		if hw != nil {
			r.HW = hw(rep)
		}
		out = append(out, r)
	}
	return out
}

// findingsFixture is a comparison with known answers: of 42 tests the
// new build is faster on 41, beyond the noise on 35 (6 are 2 % faster,
// inside the ±5 % floor); the max is t17 (1.97); t30 is 22 % slower,
// with context switches per op up from 8.44 to 36.08 and CPU per op
// unmoved; t05 is 1.20 with per-op figures that did not move.
func findingsFixture(t *testing.T, csOther float64) (Set, Set) {
	t.Helper()
	hw := func(cpu, cs float64) func(int) *result.HW {
		return func(rep int) *result.HW {
			j := []float64{0, 1, -1, 2, -2}[rep] / 1000
			return &result.HW{Op: "statement", Samples: 60, OpsPerSec: 1000, CPUPerOp: cpu * (1 + j), CSPerOp: cs * (1 + j), WriteKBPerOp: 2 * (1 + j)}
		}
	}
	var a, b []result.Run
	inside := map[int]bool{3: true, 9: true, 14: true, 22: true, 35: true, 40: true}
	for i := 1; i <= 42; i++ {
		rel := 1.10 + float64(i)/100
		var hwa, hwb func(int) *result.HW
		switch {
		case i == 17:
			rel = 1.97
		case i == 30:
			rel = 0.78
			hwa, hwb = hw(0.0069, 8.44), hw(0.0069, csOther)
		case i == 5:
			rel = 1.20
			hwa, hwb = hw(0.0069, 8.44), hw(0.0070, 8.50)
		case inside[i]:
			rel = 1.02
		}
		a = append(a, findingsRuns(i, 1000, hwa)...)
		b = append(b, findingsRuns(i, 1000*rel, hwb)...)
	}
	return Set{Label: "old.c", Runs: a}, Set{Label: "new.c", Runs: b}
}

func TestFindingsKnownAnswers(t *testing.T) {
	base, other := findingsFixture(t, 36.08)
	c, err := Compare(base, []Set{other}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tables, err := Metrics([]Set{base, other}, "")
	if err != nil {
		t.Fatal(err)
	}
	f := FindingsOf(c, tables)
	if len(f.Labels) != 1 || f.Sweep {
		t.Fatalf("%+v", f)
	}
	l := f.Labels[0]
	if l.Tests != 42 || l.Faster != 41 || l.Slower != 1 || l.Better != 35 || l.Worse != 1 || l.Inside != 6 {
		t.Errorf("tests %d, faster %d (beyond the noise %d), slower %d (beyond %d), inside the floor %d; want 42, 41 (35), 1 (1), 6",
			l.Tests, l.Faster, l.Better, l.Slower, l.Worse, l.Inside)
	}
	if l.Max.Test != "t17" || math.Abs(l.Max.Rel-1.97) > 0.005 || l.Max.Kind != KindBetter {
		t.Errorf("max: %+v, want t17 at 1.97", l.Max)
	}
	if l.Min.Test != "t30" || math.Abs(l.Min.Rel-0.78) > 0.005 || l.Min.Kind != KindWorse {
		t.Errorf("min: %+v, want t30 at 0.78", l.Min)
	}
	if len(l.Groups) != 5 {
		t.Fatalf("groups: %+v", l.Groups)
	}
	for gi, g := range l.Groups {
		if g.Group != findingsGroups[gi] || g.Median != c.Groups[gi].Stats[0].Median || g.N != c.Groups[gi].Stats[0].N {
			t.Errorf("group %d: %+v, the comparison's %s: %+v", gi, g, c.Groups[gi].Name, c.Groups[gi].Stats[0])
		}
	}
	if g := l.Groups[3]; g.Min.Test != "t30" || g.Max.Test == "" {
		t.Errorf("t30's group: %+v", g)
	}
	if len(l.Regressions) != 1 || l.Regressions[0].Test != "t30" {
		t.Fatalf("regressions: %+v", l.Regressions)
	}
	if !l.Regressions[0].Measured || l.Regressed != 1 {
		t.Errorf("t30: per-op figures measured %v, regressions %d", l.Regressions[0].Measured, l.Regressed)
	}
	hw := l.Regressions[0].Hardware
	if len(hw) != 1 || hw[0].Metric != "cs/o" || math.Abs(hw[0].Base-8.44) > 1e-9 || math.Abs(hw[0].Other-36.08) > 1e-9 || hw[0].Verdict.Kind != KindWorse {
		t.Errorf("t30's per-op figures that went up: %+v; want cs/o alone, 8.44 to 36.08", hw)
	}

	// The same regression with cs/o unmoved: no figure to tell of.
	base, other = findingsFixture(t, 8.45)
	c, _ = Compare(base, []Set{other}, Options{})
	tables, _ = Metrics([]Set{base, other}, "")
	f = FindingsOf(c, tables)
	if r := f.Labels[0].Regressions; len(r) != 1 || len(r[0].Hardware) != 0 {
		t.Errorf("cs/o did not move, yet: %+v", r)
	}
}

// A sweep of five builds in version order; t02 regresses in build 3
// (index 2) and stays there, t04 improves in build 3 and recovers in
// build 5 (a second change); t01 and t03 drift inside the noise.
func TestArrivalsKnownBuild(t *testing.T) {
	levels := map[int][]float64{
		1: {1000, 1010, 1005, 1015, 1010},
		2: {1000, 1000, 700, 700, 700},
		3: {1000, 1020, 1000, 1020, 1000},
		4: {1000, 1000, 1300, 1300, 1000},
	}
	var sets []Set
	for bi := 0; bi < 5; bi++ {
		v := fmt.Sprintf("10.%d.1", bi+2)
		s := Set{Label: "mariadb-" + v + ".c"}
		for i := 1; i <= 4; i++ {
			for _, r := range findingsRuns(i, levels[i][bi], nil) {
				r.Version = v
				s.Runs = append(s.Runs, r)
			}
		}
		sets = append(sets, s)
	}
	arr, err := Arrivals(sets, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		test  string
		index int
		kind  string
		first bool
	}{{"t02", 2, KindWorse, true}, {"t04", 2, KindBetter, true}, {"t04", 4, KindWorse, false}}
	if len(arr) != len(want) {
		t.Fatalf("arrivals: %+v", arr)
	}
	for i, w := range want {
		a := arr[i]
		if a.Test != w.test || a.Index != w.index || a.Kind != w.kind || a.First != w.first || a.Label != sets[w.index].Label || a.Before != sets[w.index-1].Label {
			t.Errorf("arrival %d: %+v, want %+v", i, a, w)
		}
	}
	if math.Abs(arr[0].Rel-0.70) > 0.005 || arr[0].Version != "10.4.1" {
		t.Errorf("t02: %+v", arr[0])
	}

	c, err := Compare(sets[0], sets[1:], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !IsSweep(c) {
		t.Errorf("five builds in version order are no sweep: %v", c.Versions)
	}
	f := FindingsFor(c, sets)
	if !f.Sweep || len(f.Arrivals) != 3 || f.Neighbours != 16 || f.Untold != 0 {
		t.Errorf("findings of the sweep: sweep %v, %d arrivals, %d neighbour comparisons, %d untold", f.Sweep, len(f.Arrivals), f.Neighbours, f.Untold)
	}
	// One run a build: nothing to tell a change from noise with, and the
	// findings say so rather than that nothing changed.
	var single []Set
	for _, s := range sets {
		s1 := Set{Label: s.Label}
		for _, r := range s.Runs {
			if r.Params["repeat"] == "0" {
				s1.Runs = append(s1.Runs, r)
			}
		}
		single = append(single, s1)
	}
	c1, _ := Compare(single[0], single[1:], Options{})
	if f := FindingsFor(c1, single); len(f.Arrivals) != 0 || f.Untold != 16 || f.Neighbours != 16 {
		t.Errorf("one run a build: %d arrivals, %d of %d untold", len(f.Arrivals), f.Untold, f.Neighbours)
	}
	c2, _ := Compare(sets[2], []Set{sets[0], sets[1]}, Options{})
	if IsSweep(c2) {
		t.Errorf("builds out of version order are a sweep: %v", c2.Versions)
	}
}
