package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
)

func TestDetectSettingsPrecedence(t *testing.T) {
	f := filepath.Join(t.TempDir(), "detect.yaml")
	os.WriteFile(f, []byte("pvalue: 0.01\nwindow: 30\ntests:\n  - match: \"scan*\"\n    min_magnitude: 0.1\n  - match: \"scan*\"\n    metric: p99\n    pvalue: 0.0001\n"), 0o644)
	s, err := LoadDetectSettings(f, true)
	if err != nil {
		t.Fatal(err)
	}
	base := s.Defaults(changepoint.Options{Window: 50, PValue: 0.001, MinSegment: 3})
	if base.PValue != 0.01 || base.Window != 30 || base.MinSegment != 3 {
		t.Errorf("file defaults: %+v", base)
	}
	base.PValue = 0.005 // a flag given on the command line
	if o := s.Options(base, "point-query_range=100", "qps"); o != base {
		t.Errorf("an unmatched test: %+v", o)
	}
	if o := s.Options(base, "scan_range=100", "qps"); o.MinMagnitude != 0.1 || o.PValue != 0.005 {
		t.Errorf("scan qps: %+v", o)
	}
	if o := s.Options(base, "scan_range=100", "p99"); o.MinMagnitude != 0.1 || o.PValue != 0.0001 {
		t.Errorf("scan p99: %+v", o)
	}
	if _, err := LoadDetectSettings(filepath.Join(t.TempDir(), "none.yaml"), false); err != nil {
		t.Errorf("a missing default file: %v", err)
	}
	os.WriteFile(f, []byte("tests:\n  - pvalue: 0.1\n"), 0o644)
	if _, err := LoadDetectSettings(f, true); err == nil || !strings.Contains(err.Error(), "no match") {
		t.Errorf("an override without match: %v", err)
	}
}

// A step in QPS is a regression, the same step in p99 (lower is better) too,
// and a drop in p99 an improvement; each names where it arrived.
func TestDetectDirections(t *testing.T) {
	mk := func(metric string, hib bool, before, after float64) history.Series {
		s := history.Series{Test: "t", Metric: metric, HigherIsBetter: hib, Order: "version"}
		for i := 0; i < 20; i++ {
			v := before
			if i >= 10 {
				v = after
			}
			v += float64(i%3) * before / 200
			s.Points = append(s.Points, history.Point{Build: "b" + string(rune('a'+i)), Version: "1." + string(rune('a'+i)), Value: v})
		}
		return s
	}
	cs, err := Detect([]history.Series{mk("qps", true, 1000, 800), mk("p99", false, 10, 12), mk("p95", false, 10, 8)}, DetectSettings{}, changepoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 {
		t.Fatalf("%d changes: %+v", len(cs), cs)
	}
	for i, want := range []string{"regression", "regression", "improvement"} {
		if cs[i].Kind != want || cs[i].Index != 10 || cs[i].Arrived.Build != "bk" || cs[i].Before.Build != "bj" {
			t.Errorf("%s: %s at %d arrived %s after %s", cs[i].Metric, cs[i].Kind, cs[i].Index, cs[i].Arrived.Build, cs[i].Before.Build)
		}
	}
}

// A sweep of builds (a point a build, its runs behind it): a dip that
// recovers is two changes found from the runs, a step at the newest
// build of one run is unconfirmed (with what would confirm it) and trips
// no gate, the same step with three runs is a regression the newest build
// brings; the changes say how they were found.
func TestDetectSweep(t *testing.T) {
	r := func(v float64, k int) []float64 { // k runs around v, ±0.5 %
		out := make([]float64, k)
		for i := range out {
			out[i] = v * (1 + 0.005*float64(i%3-1))
		}
		return out
	}
	mk := func(runs int, newest float64) history.Series {
		var builds [][]float64
		for i := 0; i < 12; i++ {
			v := 1000.0
			if i >= 4 && i < 8 {
				v = 700
			}
			if i == 11 {
				v = newest
			}
			builds = append(builds, r(v*(1+0.01*float64(i%2)), runs))
		}
		return versionSeries("qps", true, builds...)
	}
	cs, err := Detect([]history.Series{mk(1, 600)}, DetectSettings{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].Index != 4 || cs[0].Kind != "regression" || cs[1].Index != 8 || cs[1].Kind != "improvement" ||
		cs[2].Index != 11 || cs[2].Kind != "unconfirmed regression" || !cs[2].Unconfirmed || !strings.Contains(cs[2].Confirm, "rests on one build, "+cs[2].Arrived.Build+" "+cs[2].Arrived.Version+", of 1 run: another build at its level after it, or 3 runs of it") {
		t.Fatalf("a dip and an unconfirmed newest build: %+v", cs)
	}
	for _, c := range cs {
		if c.Method != ChangeSweep {
			t.Errorf("%d: method %q", c.Index, c.Method)
		}
	}
	g, _ := ParseGate("regression")
	if fc, _ := g.Failures(cs, nil); len(fc) != 0 {
		t.Errorf("an unconfirmed regression trips the gate: %+v", fc)
	}
	cs, err = Detect([]history.Series{mk(3, 600)}, DetectSettings{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[2].Index != 11 || cs[2].Kind != "regression" || cs[2].Unconfirmed || !cs[2].Last || !cs[2].New {
		t.Fatalf("the newest build of three runs 40 %% worse: %+v", cs)
	}
	if fc, _ := g.Failures(cs, nil); len(fc) != 1 || fc[0].Index != 11 {
		t.Errorf("the gate on a regression in the newest build of three runs: %+v", fc)
	}
}

// A lead (significant at a tenth of the p-value, short of a sweep's call
// at a hundredth: changepoint.SweepResult.Leads) is an unconfirmed change
// that says its p-value and which builds more runs of would decide it; no
// gate fails on it. The series is a flat draw of twelve builds of one run
// whose two newest are low by chance.
func TestDetectSweepLead(t *testing.T) {
	var builds [][]float64
	for _, v := range []float64{986, 994, 1003, 983, 996, 1005, 1001, 996, 997, 1018, 928, 911} {
		builds = append(builds, []float64{v})
	}
	cs, err := Detect([]history.Series{versionSeries("qps", true, builds...)}, DetectSettings{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Index != 10 || cs[0].Kind != "unconfirmed regression" || !cs[0].Unconfirmed || !cs[0].Last ||
		!strings.Contains(cs[0].Confirm, "a lead, short of a call (p below 1e-05 for a sweep): more runs of the builds either side, "+pointWords(cs[0].Before)+" and "+pointWords(cs[0].Arrived)+" (qpslab run --repeat 3)") {
		t.Fatalf("a lead on the two newest builds: %+v", cs)
	}
	g, _ := ParseGate("regression")
	if fc, _ := g.Failures(cs, nil); len(fc) != 0 {
		t.Errorf("a lead trips the gate: %+v", fc)
	}
}

// Where the builds either side of a change were measured side by side,
// the change carries compare's verdict on them, and says so when it is
// another answer.
func TestDetectPairNote(t *testing.T) {
	from, to := pairedPoints(0.8, []float64{1, 1.01, 0.99, 1, 1.02, 0.98, 1, 1.01})
	s := versionSeries("qps", true, []float64{1000}, []float64{1001}, []float64{999}, []float64{1000}, []float64{800}, []float64{801}, []float64{799}, []float64{800})
	from.Build, from.Version, to.Build, to.Version = s.Points[3].Build, s.Points[3].Version, s.Points[4].Build, s.Points[4].Version
	s.Points[3], s.Points[4] = from, to
	s.Points[4].Value, s.Points[4].Values = 800, []float64{800}
	undecided := Verdict{Method: MethodPaired, Pairing: "slices", N: 8, Rel: 0.8, Lo: 0.5, Hi: 1.3, P: 0.2, Kind: KindSame}
	for _, c := range []struct {
		set  DetectSettings
		kind string
		note string
	}{
		{DetectSettings{}, KindWorse, ""},
		{DetectSettings{Pair: func(history.Series, history.Point, history.Point) (Verdict, bool) { return undecided, true }}, KindSame,
			"compare of b4 1.4 and b5 1.5 (paired rounds of one plan) says undecided (0.80 [0.50, 1.30], p=0.2): the history's change rests on the builds around them too"},
	} {
		cs, err := Detect([]history.Series{s}, c.set, base)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].Index != 4 || cs[0].Pair == nil || cs[0].Pair.Kind != c.kind || !strings.HasPrefix(cs[0].Note, c.note) || (c.note == "") != (cs[0].Note == "") {
			t.Errorf("%+v", cs)
		}
	}
}
