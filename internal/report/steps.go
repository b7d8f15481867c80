package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/qpslab/qpslab/internal/analysis"
)

// StepSection is one step table and how to show it.
type StepSection struct {
	Title    string
	Table    analysis.StepTable
	Relative bool // also the table relative to its first label
}

// stepCell is one cell of a step table as shown: its text (with the marks
// a terminal needs) and its class (for colour: green the column's best or
// a relative gain, red a missed goal or a relative loss).
type stepCell struct{ Text, Class string }

// stepView is one table, ready for text or HTML.
type stepView struct {
	Title    string
	Head     []string
	Rows     [][]stepCell // the first cell of a row is its label
	Relative bool         // the values are relative: their classes are shown
}

// stepViews lays the sections out as the reference's report does
// (gen_html.sh): labels as rows, steps as columns. For each table the
// absolute values (the column's best, among the labels that met their
// goals, marked "*"; a value whose run missed its goal marked "!"; a
// target row where steps have one, values below 95 % of it marked "!"),
// then for a Relative section the same relative to the first label (≤ 0.95
// red, ≥ 1.05 green, as compare).
func stepViews(sections []StepSection) []stepView {
	var out []stepView
	for _, sec := range sections {
		t := sec.Table
		head := append([]string{"label"}, t.Steps...)
		hasTarget := false
		for _, tg := range t.Targets {
			hasTarget = hasTarget || !math.IsNaN(tg)
		}
		v := stepView{Title: sec.Title, Head: head}
		if t.Threads > 0 {
			v.Title += fmt.Sprintf(", %d client(s)", t.Threads)
		}
		if t.Mixed {
			v.Title += " [" + t.Conditions + "]"
		}
		if hasTarget {
			row := []stepCell{{Text: "target"}}
			for _, tg := range t.Targets {
				row = append(row, stepCell{Text: stepNum(tg)})
			}
			v.Rows = append(v.Rows, row)
		}
		for i, l := range t.Labels {
			row := []stepCell{{Text: l}}
			for j, x := range t.Values[i] {
				c := stepCell{Text: stepNum(x)}
				if t.Best[j] == i && len(t.Labels) > 1 {
					c.Text += "*"
					c.Class = "green"
				}
				below := hasTarget && !math.IsNaN(t.Targets[j]) && x < 0.95*t.Targets[j]
				if (t.Missed[i][j] && !hasTarget) || below {
					c.Text += "!"
					c.Class = "red"
				}
				row = append(row, c)
			}
			v.Rows = append(v.Rows, row)
		}
		out = append(out, v)
		if !sec.Relative || len(t.Labels) < 2 {
			continue
		}
		rel := stepView{Title: v.Title + ", relative to " + t.Labels[0], Head: head, Relative: true}
		for i := 1; i < len(t.Labels); i++ {
			rel.Rows = append(rel.Rows, append([]stepCell{{Text: t.Labels[i]}}, relCells(t.Values[i], t.Values[0], true)...))
		}
		out = append(out, rel)
	}
	return out
}

// relCells are values relative to base, cell by cell: two decimals ("-"
// where either is missing or the base is 0), green for a gain and red for
// a loss, a gain being a rise when higherIsBetter and a fall otherwise.
func relCells(vals, base []float64, higherIsBetter bool) []stepCell {
	out := make([]stepCell, len(vals))
	for j, x := range vals {
		out[j] = stepCell{Text: "-"}
		if math.IsNaN(x) || math.IsNaN(base[j]) || base[j] == 0 || (x == 0 && !higherIsBetter) {
			continue
		}
		out[j] = stepCell{Text: fmt.Sprintf("%.2f", x/base[j]), Class: analysis.Colour(x / base[j])}
		if !higherIsBetter {
			out[j].Class = analysis.Colour(base[j] / x)
		}
	}
	return out
}

// StepTables writes the step tables (stepViews) as text or Markdown; the
// other formats are compare's own.
func StepTables(w io.Writer, sections []StepSection, f string, colour bool) error {
	if f != "text" && f != "md" {
		return nil
	}
	writeViews(w, stepViews(sections), f == "md", colour)
	return nil
}

// writeViews writes tables laid out as stepViews does, as text or
// Markdown: a relative table's gains and losses coloured on a terminal,
// bold in Markdown.
func writeViews(w io.Writer, views []stepView, md, colour bool) {
	for _, v := range views {
		var rows [][]string
		for _, r := range v.Rows {
			var cells []string
			for k, c := range r {
				text := c.Text
				if k > 0 && v.Relative {
					switch c.Class {
					case "red":
						text = paint(text, ansiRed, colour, md)
					case "green":
						text = paint(text, ansiGreen, colour, md)
					}
				}
				cells = append(cells, text)
			}
			rows = append(rows, cells)
		}
		stepTable(w, md, v.Title, v.Head, rows)
	}
}

func paint(s, ansi string, colour, md bool) string {
	switch {
	case md:
		return "**" + s + "**"
	case colour:
		return ansi + s + ansiReset
	}
	return s
}

func stepNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func stepTable(w io.Writer, md bool, title string, head []string, rows [][]string) {
	if md {
		fmt.Fprintf(w, "%s\n\n| %s |\n|---|%s\n", title, strings.Join(head, " | "), strings.Repeat("---:|", len(head)-1))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// BucketTables writes the reference's response-time tables (rth.sh): per
// step and operation kind, each label's share of operations in each
// bucket, in percent with three decimals ("nonzero" for a share that
// rounds to 0.000), and the largest response time in seconds.
func BucketTables(w io.Writer, tables []analysis.BucketTable, f string) error {
	if f != "text" && f != "md" {
		return nil
	}
	for _, t := range tables {
		head := append(append([]string{"label", "n"}, analysis.BucketNames...), "max s")
		var rows [][]string
		for _, r := range t.Rows {
			row := []string{r.Label, strconv.FormatInt(r.Count, 10)}
			for _, s := range r.Shares {
				c := fmt.Sprintf("%.3f", s)
				if s > 0 && c == "0.000" {
					c = "nonzero"
				}
				row = append(row, c)
			}
			mx := "-"
			if !math.IsNaN(r.MaxSec) {
				mx = fmt.Sprintf("%.3f", r.MaxSec)
			}
			rows = append(rows, append(row, mx))
		}
		stepTable(w, f == "md", fmt.Sprintf("%s, %d client(s): %s response time, %% of operations per bucket", t.Test, t.Threads, t.Kind), head, rows)
	}
	return nil
}
