package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/table"
)

// comparisonDoc is what compare prints: its findings, the comparison, the
// hosts, the step tables and buckets of a suite run in steps, what each
// grid setting moved and the concurrency sweeps (prose and tables); one
// row per test and label in csv; the comparison with its findings in
// json; the reference's own layouts as qps.abs and qps.rel.
func comparisonDoc(sets []analysis.Set, cmp *analysis.Comparison) (Doc, error) {
	d := Doc{What: "qpslab compare"}
	fs := analysis.FindingsFor(cmp, sets)
	d.Blocks = findingsDoc(fs).Blocks
	c := compareDoc(cmp)
	d.Blocks = append(d.Blocks, c.Blocks...)
	d.Flat, d.Layouts = c.Flat, c.Layouts
	tails := analysis.Tails(sets)
	d.Blocks = append(d.Blocks, tailBlocks(tails, cmp.MixedConditions)...)
	d.Data = comparisonJSON{Comparison: cmp, Findings: findingsJSON{Words: FindingsWords(fs), Findings: fs}, Tails: tails}
	d.Blocks = append(d.Blocks, hostBlocks(sets, store.HostID)...)
	st, err := stepsDoc(sets, cmp.Suite)
	if err != nil {
		return d, err
	}
	d.Blocks = append(d.Blocks, st.Blocks...)
	d.Blocks = append(d.Blocks, effectsBlocks(analysis.Effects(sets))...)
	if sw := analysis.Sweeps(sets); len(sw) > 0 {
		d.Gap()
		d.Blocks = append(d.Blocks, stepBlocks(sweepViews(sw))...)
	}
	return d, nil
}

// compareDoc is the comparison itself: on a terminal the labels' legend,
// the verdict lines, the table (short column names, groups as rows, the
// noise floor) and the group statistics; in Markdown the table headed by
// the labels and the group statistics; csv one row per test and label;
// json the comparison; qps.abs and qps.rel the reference's layouts.
func compareDoc(c *analysis.Comparison) Doc {
	d := Doc{What: "qpslab compare", Data: c, Flat: compareFlat(c), Layouts: map[string]func(io.Writer) error{
		"qps.abs": func(w io.Writer) error { return qpsTSV(w, c, false) },
		"qps.rel": func(w io.Writer) error { return qpsTSV(w, c, true) },
	}}
	d.Only(table.Text, compareTerminal(c))
	d.Only(table.Markdown, compareMarkdown(c))
	return d
}

// sayLines appends what write prints, a line of prose each (the verdict
// lines, which the run's progress prints as they come too).
func (d *Doc) sayLines(write func(io.Writer)) {
	var b bytes.Buffer
	write(&b)
	if b.Len() == 0 {
		return
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		d.Sayf("%s", l)
	}
}

func compareTerminal(c *analysis.Comparison) Doc {
	var d Doc
	d.Sayf("base: %s%s", c.Base, versionOf(c, 0))
	for i, o := range c.Others {
		d.Sayf("col-%d: %s%s", i+1, o, versionOf(c, i+1))
	}
	d.Gap()
	d.sayLines(func(w io.Writer) { VerdictSummary(w, c) })
	d.Gap()
	if c.Repeats {
		d.Sayf("values with repeats: the median, ± its 95%% interval where %d or more repeats give one", c.IntervalN)
	}
	for _, l := range verdictLegend(c) {
		d.Sayf("%s", l)
	}
	if l := missedLegend(c); l != "" {
		for _, line := range strings.Split(l, "\n") {
			d.Sayf("%s", line)
		}
	}
	d.Gap()
	noise := calibrated(c)
	head := []string{"TEST", "THR"}
	if noise {
		head = append(head, "NOISE")
	}
	head = append(head, "BASE")
	for i := range c.Others {
		head = append(head, fmt.Sprintf("col-%d", i+1), fmt.Sprintf("rel-%d", i+1))
	}
	t := table.New(head...)
	group := ""
	for _, r := range c.Rows {
		if r.Group != group {
			group = r.Group
			row := make([]string, len(head))
			row[0] = "[" + group + "]" // a row of its own: one alignment for all groups
			t.Add(row...)
		}
		cells := []table.Cell{{Text: rowName(c, r)}, {Text: strconv.Itoa(r.Threads)}}
		if noise {
			cells = append(cells, table.Cell{Text: noiseCell(r)})
		}
		cells = append(cells, table.Cell{Text: absCell(r.Base) + unitSuffix(r.Unit) + marked(r.Base)})
		for _, o := range r.Others {
			cells = append(cells, table.Cell{Text: absCell(o.Summary) + marked(o.Summary)}, relTableCell(o))
		}
		t.AddCells(cells...)
	}
	d.Put(t)
	d.Gap()
	d.sayLines(func(w io.Writer) { stallList(w, c) })
	d.Sayf("Relative QPS by group (%s-group layout)", c.Layout)
	g := table.New("GROUP", "LABEL", "N", "AVG", "MEDIAN", "MIN", "MAX", "STDDEV")
	st := func(v float64) table.Cell {
		if math.IsNaN(v) {
			return table.Cell{Text: "-"}
		}
		return table.Cell{Text: fmt.Sprintf("%.2f", v), Colour: analysis.Colour(v)}
	}
	row := func(name string, i int, s analysis.Stats) {
		if s.N > 0 {
			g.AddCells(table.Cell{Text: name}, table.Cell{Text: fmt.Sprintf("col-%d", i+1)}, table.Cell{Text: strconv.Itoa(s.N)},
				st(s.Avg), st(s.Median), st(s.Min), st(s.Max), table.Cell{Text: fmt.Sprintf("%.3f", s.Stddev)})
		}
	}
	for _, gr := range c.Groups {
		for i, s := range gr.Stats {
			row(gr.Name, i, s)
		}
	}
	for i, s := range c.All {
		row("all", i, s)
	}
	d.Put(g)
	for i, gm := range c.Geomean {
		v := st(gm)
		d.Say(table.Plain(fmt.Sprintf("geomean col-%d (%s): ", i+1, c.Others[i])), table.Span{Text: v.Text, Colour: v.Colour})
	}
	return d
}

// relTableCell is a relative value as the table shows it (relCell), in
// its verdict's colour.
func relTableCell(o analysis.Cell) table.Cell {
	cell := table.Cell{Text: relCell(o, false)}
	if col := o.Verdict.Colour(); col == "red" || col == "green" {
		cell.Colour = col
	}
	return cell
}

func compareMarkdown(c *analysis.Comparison) Doc {
	var d Doc
	d.Say(table.Plain("Base: "), table.Code(c.Base), table.Plain(". Relative = other / base."))
	d.Gap()
	for _, l := range verdictLegend(c) {
		d.Sayf("%s.", l)
	}
	d.Gap()
	if l := missedLegend(c); l != "" {
		for _, line := range strings.Split(l, "\n") {
			d.Sayf("%s", line)
		}
		d.Gap()
	}
	t := &table.Table{Columns: []table.Column{{Name: "test"}, {Name: "threads", Number: true}, {Name: c.Base, Number: true}}}
	for _, o := range c.Others {
		t.Columns = append(t.Columns, table.Column{Name: o, Number: true}, table.Column{Name: "rel", Number: true})
	}
	for _, r := range c.Rows {
		cells := []table.Cell{{Text: rowName(c, r)}, {Text: strconv.Itoa(r.Threads)}, {Text: absCell(r.Base) + unitSuffix(r.Unit) + marked(r.Base)}}
		for _, o := range r.Others {
			cells = append(cells, table.Cell{Text: absCell(o.Summary) + marked(o.Summary)}, relTableCell(o))
		}
		t.AddCells(cells...)
	}
	d.Put(t)
	d.Gap()
	g := &table.Table{Columns: []table.Column{{Name: "group"}, {Name: "label"}}}
	for _, n := range []string{"n", "avg", "median", "min", "max", "stddev"} {
		g.Columns = append(g.Columns, table.Column{Name: n, Number: true})
	}
	for _, gr := range append(c.Groups, analysis.Group{Name: "all", Stats: c.All}) {
		for i, s := range gr.Stats {
			if s.N > 0 {
				g.Add(gr.Name, c.Others[i], strconv.Itoa(s.N), fmt.Sprintf("%.2f", s.Avg), fmt.Sprintf("%.2f", s.Median), fmt.Sprintf("%.2f", s.Min),
					fmt.Sprintf("%.2f", s.Max), fmt.Sprintf("%.3f", s.Stddev))
			}
		}
	}
	d.Put(g)
	d.Gap()
	for i, gm := range c.Geomean {
		v := "-" // no test in common
		if !math.IsNaN(gm) {
			v = fmt.Sprintf("%.2f", gm)
		}
		d.Sayf("Geomean of the relative values, %s: %s", c.Others[i], v)
	}
	return d
}

// compareFlat is the comparison as csv and tsv give it: one row per test
// and compared label.
func compareFlat(c *analysis.Comparison) *table.Table {
	t := flatTable("test", "threads", "conditions", "group", "unit", "base", "base_value", "base_n", "label", "value", "n", "rel", "p", "significant",
		"rel_lo", "rel_hi", "method", "pairing", "rounds", "floor", "floor_calibrated", "verdict")
	num := func(v float64, prec int) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	for _, r := range c.Rows {
		for i, o := range r.Others {
			p, sig := "", ""
			if o.Tested {
				p, sig = strconv.FormatFloat(o.P, 'f', 4, 64), strconv.FormatBool(o.Significant)
			}
			val, rel := "", ""
			if !o.Missing {
				val, rel = strconv.FormatFloat(o.Center, 'f', 2, 64), num(o.Rel, 4)
			}
			v := o.Verdict
			rounds := ""
			if v.Method == analysis.MethodPaired {
				rounds = strconv.Itoa(v.N)
			}
			t.Add(r.Test, strconv.Itoa(r.Threads), r.Conditions, r.Group, r.Unit, c.Base, strconv.FormatFloat(r.Base.Center, 'f', 2, 64),
				strconv.Itoa(r.Base.N), c.Others[i], val, strconv.Itoa(o.N), rel, p, sig,
				num(v.Lo, 4), num(v.Hi, 4), v.Method, v.Pairing, rounds, num(v.Floor, 4), strconv.FormatBool(v.Calibrated), v.Kind)
		}
	}
	return t
}

// findingsDoc is the findings in prose: the tl;dr, then per label its
// findings as a list, then where each change arrived; json gives the
// sentences beside the numbers they rest on.
func findingsDoc(f analysis.Findings) Doc {
	s := FindingsWords(f)
	d := Doc{Data: findingsJSON{Words: s, Findings: f}}
	if len(s.TLDR) > 0 {
		d.Say(table.Span{Text: "tl;dr", Lead: true}, table.Plain(strings.Join(s.TLDR, " ")))
		d.Gap()
	}
	list := func(head []table.Span, lines []string) {
		d.Say(head...)
		for _, l := range lines {
			d.Item(l)
		}
		d.Gap()
	}
	for _, l := range s.Labels {
		list([]table.Span{table.Plain("Findings for "), table.Code(l.Label), table.Plain(" against "), table.Code(l.Base), table.Plain(":")}, l.Lines)
	}
	if len(s.Sweep) > 0 {
		list([]table.Span{table.Plain("Where each change arrived (neighbouring builds):")}, s.Sweep)
	}
	return d
}

// stepsDoc is the step tables (StepSections) and the response-time
// buckets after a comparison of a suite run in steps, under a blank line.
func stepsDoc(sets []analysis.Set, suiteName string) (Doc, error) {
	var d Doc
	secs, err := StepSections(sets, suiteName)
	if err != nil || len(secs) == 0 {
		return d, err
	}
	d.Gap()
	d.Blocks = append(d.Blocks, stepBlocks(stepViews(secs))...)
	bt, err := analysis.Buckets(sets)
	if err != nil {
		return d, err
	}
	d.Blocks = append(d.Blocks, bucketBlocks(bt)...)
	return d, nil
}

// tailBlocks name, one line each, the tests whose latency tails a label's
// runs cannot be trusted for (analysis.Tails): the test, the label and the
// connections that completed nothing in a window; their response times
// are not called (marked "?" in the sweeps' tables). The conditions are
// named where a test ran under several (mixed).
func tailBlocks(ws []analysis.TailWarning, mixed bool) []Block {
	var d Doc
	for _, l := range tailLines(ws, mixed) {
		d.Sayf("tails not called: %s", l)
	}
	if len(d.Blocks) > 0 {
		d.Gap()
	}
	return d.Blocks
}

// tailLines are the tails-not-called lines' text, for the terminal and the
// HTML report alike.
func tailLines(ws []analysis.TailWarning, mixed bool) []string {
	var out []string
	for _, w := range ws {
		cond := ""
		if mixed && w.Conditions != "" {
			cond = " [" + w.Conditions + "]"
		}
		out = append(out, fmt.Sprintf("%s%s, %d thread(s), %s: %s (%d of %d run(s)); its p95, p99 and max are not compared", w.Test, cond, w.Threads, w.Label, w.Why, w.Runs, w.Of))
	}
	return out
}
