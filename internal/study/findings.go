package study

import (
	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/report"
)

// Findings is the study's tl;dr from the generated findings
// (analysis.FindingsFor, said by report.FindingsWords), as qpslab compare
// and the HTML report give them: the tl;dr sentences, the newest build's
// findings against the base (wins and losses, the max and the min and
// their tests, each group's median, the largest regressions with the
// per-op figures that went up) and the build each change arrived in,
// from the study's own neighbour verdicts (sets are in the sweep's order,
// wherever the base stands). o are the comparisons' options (layout,
// noise floors).
func Findings(o analysis.Options) FindingsFunc {
	return func(base *analysis.Comparison, neighbours []*analysis.Comparison, sets []analysis.Set) []string {
		if base == nil {
			return nil
		}
		w := report.FindingsWords(analysis.FindingsWith(base, sets, sets, neighbours))
		out := append([]string(nil), w.TLDR...)
		// The tl;dr already says the newest build's wins and losses and its
		// range (its findings' first two lines): the rest follow it.
		if n := len(w.Labels); n > 0 && len(w.Labels[n-1].Lines) > 2 {
			out = append(out, w.Labels[n-1].Lines[2:]...)
		}
		return append(out, w.Sweep...)
	}
}
