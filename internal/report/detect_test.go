package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
)

func detection() Detection {
	p := func(b, v string, vals ...float64) history.Point {
		return history.Point{Build: b, Version: v, Value: vals[len(vals)/2], N: len(vals), Values: vals}
	}
	return Detection{
		Series: 3,
		Changes: []analysis.Change{{Series: "s qps", Test: "t", Metric: "qps", Kind: "regression", Magnitude: -0.2, MeanBefore: 1000, MeanAfter: 800,
			PValue: 1e-9, Index: 6, Points: 12, Order: "version", Arrived: p("b7", "1.7", 800), Before: p("b6", "1.6", 1000),
			Earliest: p("b6", "1.6", 1000), Latest: p("b8", "1.8", 800), Last: true, New: true, Method: analysis.ChangeSweep,
			Note: "compare of b6 1.6 and b7 1.7 (paired rounds of one plan) says undecided (0.80 [0.55, 1.16], p=0.21): the history's change rests on the builds around them too, the paired verdict on these two alone"},
			{Series: "s p95", Test: "t", Metric: "p95", Kind: "unconfirmed regression", Magnitude: 0.3, MeanBefore: 10, MeanAfter: 13,
				PValue: 0.004, Index: 11, Points: 12, Order: "version", Arrived: p("b12", "1.12", 13), Before: p("b11", "1.11", 10),
				Earliest: p("b12", "1.12", 13), Latest: p("b12", "1.12", 13), Last: true, Method: analysis.ChangeSweep, Unconfirmed: true,
				Confirm: "it rests on one build, b12 1.12, of 1 run: another build at its level after it, or 3 runs of it (qpslab run --repeat 3), would confirm it"}},
		Builds: []analysis.BuildChange{
			{Series: "s p99", Test: "t", Metric: "p99", Kind: "regression", From: p("a", "1", 1, 1, 1, 1, 1), To: p("b", "2", 2, 2, 2, 2, 2),
				Magnitude: 1, PValue: 0.0079, Confidence: 0.9921, Tested: true, Alpha: 0.05, Newest: true, Method: analysis.MethodRunsT},
			{Series: "s tps", Test: "t", Metric: "tps", Kind: analysis.CannotTell, Why: "one run per build", From: p("a", "1", 5), To: p("b", "2", 6),
				Magnitude: 0.2, PValue: math.NaN(), Confidence: math.NaN(), Alpha: 0.05, Newest: true},
		},
	}
}

// Every format carries the change points and the builds compared; the
// gate's outcome is in the Markdown summary and the JSON.
func TestDetectFormats(t *testing.T) {
	d := detection()
	g, _ := analysis.ParseGate("regression:10%")
	d.Gate = NewGateResult(g, d)
	if !d.Gate.Failed || len(d.Gate.Changes) != 1 || len(d.Gate.Builds) != 1 || len(d.Gate.Unconfirmed) != 1 {
		t.Fatalf("gate: %+v", d.Gate)
	}
	var b bytes.Buffer
	if err := Detect(&b, d, "text", false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"s qps: regression -20.0% (1000 → 800, p=1e-09), arrived in b7 1.7, after b6 1.6 (95%: from b6 1.6 to b8 1.8)",
		"s p99: regression between a 1 and b 2: +100.0% (1.0 → 2.0, 5 runs each, p=0.0079, 99.2% confidence)",
		"s tps: cannot tell between a 1 and b 2: +20.0% (5.0 → 6.0, 1 run each): one run per build",
		"s qps: regression -20.0% (1000 → 800, p=1e-09), arrived in b7 1.7, after b6 1.6 (95%: from b6 1.6 to b8 1.8); compare of b6 1.6 and b7 1.7 (paired rounds of one plan) says undecided",
		"s p95: unconfirmed regression +30.0% (10.0 → 13.0, p=0.004), arrived in b12 1.12, after b11 1.11: it rests on one build, b12 1.12, of 1 run: another build at its level after it, or 3 runs of it (qpslab run --repeat 3), would confirm it",
		"1 change point(s) and 1 unconfirmed in 3 series; neighbouring builds compared by their runs in 2 series (Student's t on their logarithms, α 0.05): 1 regression, 1 cannot tell",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Detect(&b, d, "md", false)
	if !strings.Contains(b.String(), "**Gate failed** (`--fail-on regression:10%`): 2 regression(s) of 10% or more in the newest build.") ||
		!strings.Contains(b.String(), "| s qps | regression -20.0 % | 1000 → 800 | 1e-09 | b7 1.7 | b6 1.6 | b6 1.6 … b8 1.8 | compare of b6 1.6") ||
		!strings.Contains(b.String(), "1 unconfirmed regression(s) in the newest build (no failure: one build of a run or two, or a lead short of a call):") {
		t.Errorf("markdown:\n%s", b.String())
	}
	b.Reset()
	Detect(&b, d, "csv", false)
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 5 || rows[1][18] != "change point" || rows[3][18] != "builds" || rows[4][9] != "" || rows[3][23] != "5" || !strings.HasPrefix(rows[2][25], "it rests on one build") {
		t.Errorf("csv: %v %q", err, rows)
	}
	b.Reset()
	if err := Detect(&b, d, "json", false); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Series       int
		ChangePoints []map[string]any `json:"change_points"`
		Builds       []map[string]any
		Gate         struct{ Failed bool }
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil || j.Series != 3 || len(j.ChangePoints) != 2 || len(j.Builds) != 2 || !j.Gate.Failed || j.Builds[1]["pvalue"] != nil {
		t.Errorf("json: %v %s", err, b.String())
	}
	if err := Detect(&b, d, "xml", false); err == nil || !strings.Contains(err.Error(), "--format xml") {
		t.Errorf("xml: %v", err)
	}
	if s := GateSummary(&GateResult{Spec: "regression"}); s != "--fail-on regression: passed: no regression in the newest build" {
		t.Errorf("summary: %q", s)
	}
}
