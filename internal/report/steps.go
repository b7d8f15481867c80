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

// StepTables writes the tables of a suite run in steps (the Insert
// Benchmark) as the reference's report lays them out (gen_html.sh): labels
// as rows, steps as columns. For each table, the absolute values (the
// column's best, among the labels that met their goals, marked "*"; a
// value whose run missed its goal marked "!"), then, for a table of the
// headline figure, the same relative to the first label (≤ 0.95 and ≥ 1.05
// coloured as compare does), and for a table with targets a target row,
// values below 95 % of it marked "!". f is text or md.
func StepTables(w io.Writer, tables []analysis.StepTable, titles []string, relative []bool, f string, colour bool) error {
	if f != "text" && f != "md" {
		return nil // the other formats are compare's own
	}
	md := f == "md"
	for ti, t := range tables {
		head := []string{"label"}
		head = append(head, t.Steps...)
		var rows [][]string
		hasTarget := false
		for _, tg := range t.Targets {
			hasTarget = hasTarget || !math.IsNaN(tg)
		}
		if hasTarget {
			row := []string{"target"}
			for _, tg := range t.Targets {
				row = append(row, stepNum(tg))
			}
			rows = append(rows, row)
		}
		for i, l := range t.Labels {
			row := []string{l}
			for j, v := range t.Values[i] {
				cell := stepNum(v)
				if t.Best[j] == i && len(t.Labels) > 1 {
					cell += "*"
				}
				below := hasTarget && !math.IsNaN(t.Targets[j]) && v < 0.95*t.Targets[j]
				if (t.Missed[i][j] && !hasTarget) || below {
					cell += "!"
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
		title := titles[ti]
		if t.Threads > 0 {
			title += fmt.Sprintf(", %d client(s)", t.Threads)
		}
		if t.Mixed {
			title += " [" + t.Conditions + "]"
		}
		stepTable(w, md, title, head, rows)
		if ti < len(relative) && relative[ti] && len(t.Labels) > 1 {
			var rel [][]string
			for i := 1; i < len(t.Labels); i++ {
				row := []string{t.Labels[i]}
				for j, v := range t.Values[i] {
					base := t.Values[0][j]
					s := "-"
					if !math.IsNaN(v) && !math.IsNaN(base) && base != 0 {
						r := v / base
						s = fmt.Sprintf("%.2f", r)
						switch analysis.Colour(r) {
						case "red":
							s = paint(s, ansiRed, colour, md)
						case "green":
							s = paint(s, ansiGreen, colour, md)
						}
					}
					row = append(row, s)
				}
				rel = append(rel, row)
			}
			stepTable(w, md, title+", relative to "+t.Labels[0], head, rel)
		}
	}
	return nil
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
