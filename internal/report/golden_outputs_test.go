package report

import (
	"io"
	"testing"

	_ "github.com/qpslab/qpslab/internal/workload" // every suite registers itself

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/suite"
)

// TestGoldenOutputs: what compare, compare --summary seeds, detect and the
// findings print in every format they offer, from the fixtures of the
// tests beside (textComparison, findFixture, detection), byte for byte.
func TestGoldenOutputs(t *testing.T) {
	small := textComparison(t)
	smallSets := []analysis.Set{{Label: small.Base}, {Label: small.Others[0]}}
	_, _, sets, big := findFixture(t, 9.5)
	for _, f := range []string{"text", "md", "csv", "tsv", "json", "qps.abs", "qps.rel"} {
		golden(t, "compare-small."+f, func(w io.Writer) error { return ComparisonAs(w, smallSets, small, f, SummaryFull) })
		golden(t, "compare-big."+f, func(w io.Writer) error { return ComparisonAs(w, sets, big, f, SummaryFull) })
	}
	for _, f := range []string{"text", "md", "csv", "tsv", "json"} {
		golden(t, "seeds-big."+f, func(w io.Writer) error { return ComparisonAs(w, sets, big, f, SummarySeeds) })
		d := detection()
		golden(t, "detect."+f, func(w io.Writer) error { return Detect(w, d, f, false) })
		g, _ := analysis.ParseGate("regression:10%")
		d.Gate = NewGateResult(g, d)
		golden(t, "detect-gate."+f, func(w io.Writer) error { return Detect(w, d, f, false) })
	}
	for _, f := range []string{"text", "md", "json"} {
		golden(t, "findings-big."+f, func(w io.Writer) error { return FindingsOut(w, analysis.FindingsFor(big, sets), f) })
	}
}

// TestGoldenSuites: qpslab suites, every registered suite, text and json.
func TestGoldenSuites(t *testing.T) {
	for _, f := range []string{"text", "json"} {
		golden(t, "suites."+f, func(w io.Writer) error { return Suites(w, suite.All(), f) })
	}
}
