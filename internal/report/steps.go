package report

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/table"
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

// StepTables writes the step tables (stepViews) in a reading format
// (text, md); the other formats are compare's own.
func StepTables(w io.Writer, sections []StepSection, f string, colour bool) error {
	if !readsProse(f) {
		return nil
	}
	return Doc{Blocks: stepBlocks(stepViews(sections))}.Write(w, f, colour)
}

// stepBlocks are tables laid out as stepViews does: a relative table's
// gains and losses coloured (on a terminal; bold in Markdown).
func stepBlocks(views []stepView) []Block {
	var d Doc
	for _, v := range views {
		var rows [][]table.Cell
		for _, r := range v.Rows {
			var cells []table.Cell
			for k, c := range r {
				cell := table.Cell{Text: c.Text}
				if k > 0 && v.Relative {
					cell.Colour = c.Class
				}
				cells = append(cells, cell)
			}
			rows = append(rows, cells)
		}
		d.Put(stepTable(v.Title, v.Head, rows))
		d.Gap()
	}
	return d.Blocks
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

// stepTable is a step table: a title, the label column, then a number
// column per step.
func stepTable(title string, head []string, rows [][]table.Cell) *table.Table {
	t := &table.Table{Title: []table.Span{table.Plain(title)}}
	for i, h := range head {
		t.Columns = append(t.Columns, table.Column{Name: h, Number: i > 0})
	}
	for _, r := range rows {
		t.AddCells(r...)
	}
	return t
}

// BucketTables writes the reference's response-time tables (rth.sh): per
// step and operation kind, each label's share of operations in each
// bucket, in percent with three decimals ("nonzero" for a share that
// rounds to 0.000), and the largest response time in seconds.
func BucketTables(w io.Writer, tables []analysis.BucketTable, f string) error {
	if !readsProse(f) {
		return nil
	}
	return Doc{Blocks: bucketBlocks(tables)}.Write(w, f, false)
}

// bucketBlocks are BucketTables' tables.
func bucketBlocks(tables []analysis.BucketTable) []Block {
	var d Doc
	for _, t := range tables {
		head := append(append([]string{"label", "n"}, analysis.BucketNames...), "max s")
		var rows [][]table.Cell
		for _, r := range t.Rows {
			row := []table.Cell{{Text: r.Label}, {Text: strconv.FormatInt(r.Count, 10)}}
			for _, s := range r.Shares {
				c := fmt.Sprintf("%.3f", s)
				if s > 0 && c == "0.000" {
					c = "nonzero"
				}
				row = append(row, table.Cell{Text: c})
			}
			mx := "-"
			if !math.IsNaN(r.MaxSec) {
				mx = fmt.Sprintf("%.3f", r.MaxSec)
			}
			rows = append(rows, append(row, table.Cell{Text: mx}))
		}
		d.Put(stepTable(fmt.Sprintf("%s, %d client(s): %s response time, %% of operations per bucket", t.Test, t.Threads, t.Kind), head, rows))
		d.Gap()
	}
	return d.Blocks
}
