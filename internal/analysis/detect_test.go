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
