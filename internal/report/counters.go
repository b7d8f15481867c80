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

// counterNum prints a server figure: whole from 100 on, else four
// significant digits; "-" where missing.
func counterNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// serverRows are a table's server figures, one row a figure: its values
// per label, then each other label relative to the first.
func serverRows(t analysis.MetricTable) (head []string, rows [][]string) {
	head = []string{"server"}
	for _, r := range t.Rows {
		head = append(head, r.Label)
	}
	for _, r := range t.Rows[1:] {
		head = append(head, "rel "+r.Label)
	}
	for _, l := range t.Server {
		row := []string{l.Metric}
		for _, v := range l.Values {
			row = append(row, counterNum(v))
		}
		for i := 1; i < len(l.Values); i++ {
			row = append(row, analysis.RelString(l.Values[0], l.Values[i]))
		}
		rows = append(rows, row)
	}
	return head, rows
}

// serverTable writes a table's server figures, side by side per label,
// after its hardware tables.
func serverTable(w io.Writer, t analysis.MetricTable, table func(head []string, rows [][]string)) {
	if len(t.Server) == 0 {
		return
	}
	op := t.Rows[0].Op
	if op == "" {
		op = "op"
	}
	fmt.Fprintf(w, "the server's own figures per %s (NAME/o: its counters' change per %s; NAME.avg: a level's mean; memory in MB)\n\n", op, op)
	head, rows := serverRows(t)
	table(head, rows)
	if t.HiddenServer > 0 {
		fmt.Fprintf(w, "%d counter(s) zero in every run left out; --counters all shows every one recorded\n\n", t.HiddenServer)
	}
}

// htmlServer is a table's server figures for the HTML report.
type htmlServer struct {
	Head   []string
	Rows   [][]string
	Hidden int
}

func htmlServerOf(t analysis.MetricTable) *htmlServer {
	if len(t.Server) == 0 {
		return nil
	}
	head, rows := serverRows(t)
	return &htmlServer{Head: head, Rows: rows, Hidden: t.HiddenServer}
}

// ServerTable writes one table's server figures as text, side by side per
// label (what a run with --pmp prints for each test it took stacks of).
func ServerTable(w io.Writer, t analysis.MetricTable) error {
	serverTable(w, t, func(head []string, rows [][]string) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		tw.Flush()
		fmt.Fprintln(w)
	})
	return nil
}
