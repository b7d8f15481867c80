package report

import (
	"io"
	"math"
	"strconv"

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

// serverBlocks are a table's server figures, side by side per label,
// after its hardware tables.
func serverBlocks(t analysis.MetricTable) []Block {
	if len(t.Server) == 0 {
		return nil
	}
	op := t.Rows[0].Op
	if op == "" {
		op = "op"
	}
	var d Doc
	d.Sayf("the server's own figures per %s (NAME/o: its counters' change per %s; NAME.avg: a level's mean; memory in MB)", op, op)
	d.Gap()
	d.Put(metricTable(serverRows(t)))
	d.Gap()
	if t.HiddenServer > 0 {
		d.Sayf("%d counter(s) zero in every run left out; --counters all shows every one recorded", t.HiddenServer)
		d.Gap()
	}
	return d.Blocks
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
	return Doc{Blocks: serverBlocks(t)}.Write(w, "text", false)
}
