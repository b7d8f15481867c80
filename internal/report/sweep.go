package report

import (
	"html/template"
	"io"
	"math"
	"strconv"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
)

// sweepViews lays out each concurrency sweep as the seeds tabulate one: per
// test and figure (events/s, QPS, p95, p99, the median response time,
// fairness), the labels as rows and the client counts as columns; with two
// labels or more, the same relative to the first label beneath, coloured
// by the figure's direction (a response time that grows is a loss).
func sweepViews(sweeps []analysis.Sweep) []stepView {
	tests := map[string]int{}
	for _, sw := range sweeps {
		tests[sw.Test]++
	}
	var out []stepView
	for _, sw := range sweeps {
		head := []string{"label"}
		for _, t := range sw.Threads {
			head = append(head, strconv.Itoa(t))
		}
		for mi, name := range sw.Metrics {
			m, ok := result.Lookup(name)
			if !ok || mi >= len(sw.Values) {
				continue
			}
			title := sw.Test + " by clients: " + m.Name
			if m.Unit != "" {
				title += " (" + m.Unit + ")"
			}
			if tests[sw.Test] > 1 {
				title += " [" + sw.Conditions + "]"
			}
			vals := sw.Values[mi]
			// A response time whose tails were cut (analysis.Sweep.Cut) is
			// shown marked, and its relative value not called.
			cut := func(li, ti int) bool {
				return m.Class == result.ClassLatency && li < len(sw.Cut) && ti < len(sw.Cut[li]) && sw.Cut[li][ti]
			}
			abs := stepView{Title: title, Head: head}
			for li, l := range sw.Labels {
				row := []stepCell{{Text: l}}
				for ti, v := range vals[li] {
					c := stepCell{Text: sweepNum(m, v)}
					if cut(li, ti) && !math.IsNaN(v) {
						c.Text += tailMark
					}
					row = append(row, c)
				}
				abs.Rows = append(abs.Rows, row)
			}
			out = append(out, abs)
			if len(sw.Labels) < 2 {
				continue
			}
			rel := stepView{Title: title + ", relative to " + sw.Labels[0], Head: head, Relative: true}
			for li := 1; li < len(sw.Labels); li++ {
				cells := relCells(vals[li], vals[0], m.HigherIsBetter)
				for ti := range cells {
					if (cut(li, ti) || cut(0, ti)) && cells[ti].Text != "-" {
						cells[ti] = stepCell{Text: cells[ti].Text + tailMark}
					}
				}
				rel.Rows = append(rel.Rows, append([]stepCell{{Text: sw.Labels[li]}}, cells...))
			}
			out = append(out, rel)
		}
	}
	return out
}

// tailMark follows a response time whose tails cannot be trusted
// (result.TailsCut): compare names why in its "tails not called" lines.
const tailMark = " ?"

// Sweeps writes each concurrency sweep (sweepViews) in a reading format
// (text, md), its relative values coloured on a terminal and bold in
// Markdown.
func Sweeps(w io.Writer, sweeps []analysis.Sweep, f string, colour bool) error {
	return Doc{Blocks: stepBlocks(sweepViews(sweeps))}.Write(w, f, colour)
}

// sweepNum prints a sweep's value: whole from 100 on (a p95 of seconds in
// ms reads 5090, not 5.09e+03), else as the metric does.
func sweepNum(m result.Metric, v float64) string {
	if !math.IsNaN(v) && math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return m.Format(v)
}

// htmlSweep is one test's concurrency sweep: its tables (sweepViews), and
// a chart per figure against clients, as the seeds draw them.
type htmlSweep struct {
	Title  string
	Tables []stepView
	Charts []template.HTML
}

func htmlSweeps(sws []analysis.Sweep, colour map[string]string) []htmlSweep {
	tests := map[string]int{}
	for _, sw := range sws {
		tests[sw.Test]++
	}
	var out []htmlSweep
	for _, sw := range sws {
		v := htmlSweep{Title: sw.Test, Tables: sweepViews([]analysis.Sweep{sw})}
		if tests[sw.Test] > 1 {
			v.Title += " [" + sw.Conditions + "]"
		}
		for mi, name := range sw.Metrics {
			m, ok := result.Lookup(name)
			if !ok || mi >= len(sw.Values) {
				continue
			}
			var lines []svgLine
			for li, l := range sw.Labels {
				lines = append(lines, svgLine{Name: l, Colour: colour[l], Values: sw.Values[mi][li]})
			}
			y := m.Name
			if m.Unit != "" {
				y += " " + m.Unit
			}
			if c := svgSweepChart(ChartHead{"sweep:" + sw.Test + ":" + sw.Conditions + ":" + name, sw.Test + ": " + m.Name + " by clients", y}, sw.Threads, lines, m.Class == result.ClassLatency); c != "" {
				v.Charts = append(v.Charts, c)
			}
		}
		out = append(out, v)
	}
	return out
}
