package table

import (
	"encoding/csv"
	"io"
)

func init() {
	Register(CSV, "comma-separated values", func(w io.Writer, t *Table, _ Options) error { return renderCSV(w, t, ',') })
	Register(TSV, "tab-separated values", func(w io.Writer, t *Table, _ Options) error { return renderCSV(w, t, '\t') })
}

// renderCSV writes the columns' keys, then each row's cells: no title and
// no notes, so that the file is the table alone.
func renderCSV(w io.Writer, t *Table, comma rune) error {
	cw := csv.NewWriter(w)
	cw.Comma = comma
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.key()
	}
	cw.Write(head)
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = c.Text
		}
		cw.Write(cells)
	}
	cw.Flush()
	return cw.Error()
}
