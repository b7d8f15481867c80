package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
)

// Findings in words: every sentence names a figure and the test it was
// measured on, from analysis.Findings; none says a cause.

// FindingsSection is the findings as sentences: the tl;dr (two to four
// sentences) and, per other label, its findings; for a sweep, the build
// each change arrived in.
type FindingsSection struct {
	TLDR   []string        `json:"tldr"`
	Labels []FindingsLines `json:"labels"`
	Sweep  []string        `json:"sweep,omitempty"`
}

// FindingsLines are one other label's findings against the base.
type FindingsLines struct {
	Label string   `json:"label"`
	Base  string   `json:"base"`
	Lines []string `json:"lines"`
}

// FindingsWords says the findings of f in sentences.
func FindingsWords(f analysis.Findings) FindingsSection {
	var s FindingsSection
	s.TLDR = findTLDR(f)
	for _, l := range f.Labels {
		fl := FindingsLines{Label: l.Label, Base: f.Base}
		if l.Tests == 0 {
			fl.Lines = append(fl.Lines, "No test has a relative value.")
			s.Labels = append(s.Labels, fl)
			continue
		}
		fl.Lines = append(fl.Lines, findCapital(findWinsLosses(l, findTestsWord(f.Suite)))+".")
		if lo, hi := fmt.Sprintf("%.2f", l.Min.Rel), fmt.Sprintf("%.2f", l.Max.Rel); lo == hi {
			fl.Lines = append(fl.Lines, fmt.Sprintf("All %d %s at %s, %s first in the table.", l.Tests, findPlural(l.Tests, "test is", "tests are"), lo, findWhere(l.Max)))
		} else {
			fl.Lines = append(fl.Lines, fmt.Sprintf("The max, %s, is at %s; the min, %s, at %s; the geomean is %s.",
				hi, findWhere(l.Max), lo, findWhere(l.Min), findRel(l.Geomean)))
		}
		for _, g := range l.Groups {
			line := fmt.Sprintf("%s: median %.2f over %d %s", g.Group, g.Median, g.N, findPlural(g.N, "test", "tests"))
			switch lo, hi := fmt.Sprintf("%.2f", g.Min.Rel), fmt.Sprintf("%.2f", g.Max.Rel); {
			case g.N > 1 && lo == hi:
				line += ", each at " + lo
			case g.N > 1:
				line += fmt.Sprintf(", from %s (%s) to %s (%s)", lo, findWhere(g.Min), hi, findWhere(g.Max))
			default:
				line += fmt.Sprintf(" (%s)", findWhere(g.Min))
			}
			fl.Lines = append(fl.Lines, line+".")
		}
		for _, r := range l.Regressions {
			fl.Lines = append(fl.Lines, findRegression(r))
		}
		if more := l.Regressed - len(l.Regressions); more > 0 {
			fl.Lines = append(fl.Lines, fmt.Sprintf("%d more %s regressed, none below %.2f (the table lists %s).", more,
				findPlural(more, "test", "tests"), l.Regressions[len(l.Regressions)-1].Rel, findPlural(more, "it", "them")))
		}
		s.Labels = append(s.Labels, fl)
	}
	s.Sweep = findArrivals(f.Arrivals)
	return s
}

// findTLDR heads the findings: the newest (last) label's wins and losses, its
// range, its largest regression, and for a sweep where the changes
// arrived, or the other labels' geomeans.
func findTLDR(f analysis.Findings) []string {
	if len(f.Labels) == 0 {
		return nil
	}
	l := f.Labels[len(f.Labels)-1]
	if l.Tests == 0 {
		return []string{fmt.Sprintf("%s has no test in common with %s.", l.Label, f.Base)}
	}
	out := []string{
		fmt.Sprintf("%s against %s: %s.", l.Label, f.Base, findWinsLosses(l, findTestsWord(f.Suite))),
		fmt.Sprintf("Its relative values run from %.2f (%s) to %.2f (%s), geomean %s.", l.Min.Rel, findWhere(l.Min), l.Max.Rel, findWhere(l.Max), findRel(l.Geomean)),
	}
	if l.CostTested > 0 {
		s := fmt.Sprintf("Its cost, the server's CPU per operation (a cost, not a rate), is lower beyond the noise on %d and higher on %d of the %d %s measured",
			l.CostBetter, l.CostWorse, l.CostTested, findPlural(l.CostTested, "test", "tests"))
		if l.CostAgainst > 0 {
			s += fmt.Sprintf("; on %d the rate and the cost go opposite ways, both real", l.CostAgainst)
		}
		out = append(out, s+".")
	}
	if len(l.Regressions) > 0 {
		r := l.Regressions[0]
		s := fmt.Sprintf("The largest regression is %s at %.2f", findWhere(r.Where), r.Rel)
		var ups []string
		for _, h := range r.Hardware {
			ups = append(ups, fmt.Sprintf("%s %s", h.Metric, findTimes(h.Rel)))
		}
		if len(ups) > 0 {
			s += ", with " + strings.Join(ups, " and ")
		}
		out = append(out, s+".")
	}
	switch {
	case f.Sweep && len(f.Arrivals) > 0:
		builds := map[string][]string{}
		index := map[string]int{}
		var order []string
		for _, a := range f.Arrivals {
			if len(builds[a.Label]) == 0 {
				order = append(order, a.Label)
				index[a.Label] = a.Index
			}
			builds[a.Label] = append(builds[a.Label], a.Test)
		}
		// In build order (the arrivals come in the tests' order).
		sort.SliceStable(order, func(i, j int) bool { return index[order[i]] < index[order[j]] })
		var in []string
		for i, b := range order {
			if i == 4 {
				in = append(in, fmt.Sprintf("%d more %s", len(order)-i, findPlural(len(order)-i, "build", "builds")))
				break
			}
			in = append(in, fmt.Sprintf("%d in %s", len(builds[b]), b))
		}
		s := fmt.Sprintf("Across the sweep, %d %s arrived beyond the noise between neighbouring builds: %s",
			len(f.Arrivals), findPlural(len(f.Arrivals), "change", "changes"), strings.Join(in, ", "))
		if f.Untold > 0 {
			s += fmt.Sprintf("; %d of the %d neighbour comparisons cannot tell", f.Untold, f.Neighbours)
		}
		out = append(out, s+".")
	case f.Sweep && f.Untold > 0:
		out = append(out, fmt.Sprintf("Across the sweep, no change between neighbouring builds is beyond the noise, but %d of the %d neighbour comparisons cannot tell (repeat the runs: qpslab run --repeat).", f.Untold, f.Neighbours))
	case f.Sweep:
		out = append(out, "Across the sweep, no change between neighbouring builds is beyond the noise.")
	case len(f.Labels) > 1:
		var gs []string
		for _, o := range f.Labels[:len(f.Labels)-1] {
			gs = append(gs, fmt.Sprintf("%s %s", o.Label, findRel(o.Geomean)))
		}
		out = append(out, fmt.Sprintf("The other labels' geomeans: %s.", strings.Join(gs, ", ")))
	}
	return out
}

// findWinsLosses is "faster on 41 of 42 microbenchmarks, beyond the noise on
// 35; slower on 1, beyond the noise on 1" with the verdicts' marks.
func findWinsLosses(l analysis.LabelFindings, tests string) string {
	if l.Untested == l.Tests {
		return fmt.Sprintf("faster on %d of %d %s, slower on %d (one value a side: nothing tells a change from noise; run --repeat)", l.Faster, l.Tests, tests, l.Slower)
	}
	fdr := ""
	if l.NotAfterFDR > 0 {
		fdr = fmt.Sprintf("; %d of the %d changes not after false-discovery correction", l.NotAfterFDR, l.Better+l.Worse)
	}
	return fmt.Sprintf("faster on %d of %d %s, beyond the noise on %d; slower on %d, beyond the noise on %d (verdicts: %d +, %d -, %d ≈, %d ~, %d =, %d ?%s)",
		l.Faster, l.Tests, tests, l.Better, l.Slower, l.Worse, l.Better, l.Worse, l.Equivalent, l.Same, l.Inside, l.CannotTell, fdr)
}

// findRegression is a regression with the per-op figures that went up.
func findRegression(r analysis.Regression) string {
	mark := "-"
	if r.Kind != analysis.KindWorse {
		mark = fmt.Sprintf("one value a side, untested: at or below %.2f", analysis.Worse)
	}
	s := fmt.Sprintf("Regression: %s at %.2f (%s)", findWhere(r.Where), r.Rel, mark)
	switch {
	case len(r.Hardware) > 0:
		var parts []string
		for _, h := range r.Hardware {
			if h.Paired && (h.Rel > 1) != (h.Medians > 1) {
				// The verdict's own ratio, round by round; the medians, which
				// moved the other way, beside it only as what they are.
				parts = append(parts, fmt.Sprintf("%s %s paired round by round (medians %s → %s): %s", h.Metric, findTimes(h.Rel), findFigure(h.Metric, h.Base), findFigure(h.Metric, h.Other), h.Says))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s → %s (%s): %s", h.Metric, findFigure(h.Metric, h.Base), findFigure(h.Metric, h.Other), findTimes(h.Rel), h.Says))
		}
		s += "; " + strings.Join(parts, "; ")
	case r.Measured:
		s += "; none of its per-op figures (" + strings.Join(analysis.HardwareSays(), ", ") + ") went up"
	}
	return s + "."
}

// findArrivals are a sweep's arrivals, one sentence per test.
func findArrivals(as []analysis.Arrival) []string {
	var out []string
	for i := 0; i < len(as); {
		j := i
		var parts []string
		for ; j < len(as) && as[j].Test == as[i].Test && as[j].Threads == as[i].Threads && as[j].Conditions == as[i].Conditions; j++ {
			a := as[j]
			parts = append(parts, fmt.Sprintf("in %s (%.2f %s against %s)", a.Label, a.Rel, strings.TrimSpace(verdictMark(a.Verdict)), a.Before))
		}
		w := analysis.Where{Test: as[i].Test, Threads: as[i].Threads}
		out = append(out, fmt.Sprintf("%s changed %s.", findWhere(w), strings.Join(parts, ", then ")))
		i = j
	}
	return out
}

// FindingsOut writes the findings of f in format: text, md, or json
// (the sentences and the numbers they rest on): findingsDoc.
func FindingsOut(w io.Writer, f analysis.Findings, format string) error {
	return findingsDoc(f).Write(w, format, false)
}

// findingsJSON is the findings' JSON: the sentences beside the numbers.
type findingsJSON struct {
	Words    FindingsSection   `json:"words"`
	Findings analysis.Findings `json:"findings"`
}

// comparisonJSON is compare's JSON with the findings beside the
// comparison's fields.
type comparisonJSON struct {
	*analysis.Comparison
	Findings findingsJSON `json:"findings"`
	// Tails are the tests whose tails a label's runs cannot be trusted
	// for (analysis.Tails).
	Tails []analysis.TailWarning `json:"tails,omitempty"`
}

// ComparisonJSON writes cmp as compare's JSON does, with its findings
// (analysis.FindingsFor of sets) under "findings": qpslab compare --format
// json and the API's compare.
func ComparisonJSON(w io.Writer, sets []analysis.Set, cmp *analysis.Comparison) error {
	f := analysis.FindingsFor(cmp, sets)
	return JSON(w, comparisonJSON{Comparison: cmp, Findings: findingsJSON{Words: FindingsWords(f), Findings: f}})
}

// FindingsHTML is the findings as a report section (id "findings"); empty
// without labels.
func FindingsHTML(f analysis.Findings) template.HTML {
	if len(f.Labels) == 0 {
		return ""
	}
	s := FindingsWords(f)
	var b strings.Builder
	esc := template.HTMLEscapeString
	b.WriteString(`<h2 id="findings">Findings</h2>` + "\n")
	if len(s.TLDR) > 0 {
		fmt.Fprintf(&b, "<p class=\"tldr\"><b>tl;dr.</b> %s</p>\n", esc(strings.Join(s.TLDR, " ")))
	}
	list := func(head string, lines []string) {
		fmt.Fprintf(&b, "<p>%s</p>\n<ul class=\"findings\">\n", head)
		for _, l := range lines {
			fmt.Fprintf(&b, "<li>%s</li>\n", esc(l))
		}
		b.WriteString("</ul>\n")
	}
	for _, l := range s.Labels {
		list(fmt.Sprintf("<b>%s</b> against <b>%s</b>:", esc(l.Label), esc(l.Base)), l.Lines)
	}
	if len(s.Sweep) > 0 {
		list("Where each change arrived (neighbouring builds):", s.Sweep)
	}
	return template.HTML(b.String())
}

// findTestsWord is what the suite's tests are called: the seeds call
// sysbench's microbenchmarks.
func findTestsWord(suite string) string {
	if suite == "sysbench" {
		return "microbenchmarks"
	}
	return "tests"
}

// findWhere is a test as the findings name it: with its thread count
// where it is not 1.
func findWhere(w analysis.Where) string {
	if w.Threads > 1 {
		return fmt.Sprintf("%s at %d threads", w.Test, w.Threads)
	}
	return w.Test
}

// findFigure is a per-op value as its tables print it.
func findFigure(metric string, v float64) string {
	if m, err := result.MetricNamed(metric); err == nil {
		return m.Format(v)
	}
	return textNum(v)
}

// findTimes is a ratio of a figure: "4.27×", or "from 0" where the base
// was 0.
func findTimes(rel float64) string {
	if math.IsInf(rel, 1) {
		return "up from 0"
	}
	return fmt.Sprintf("%.2f×", rel)
}

func findRel(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func findPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func findCapital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
