package report

import (
	"io"

	"github.com/qpslab/qpslab/internal/table"
)

// Print writes t, built by its owner (a listing: builds, configs,
// sandboxes, tokens, labels, bisections, fleet hosts and jobs), in format
// f, a --format name; text is coloured on a terminal.
func Print(w io.Writer, t *table.Table, f string) error {
	return table.Render(w, table.Format(f), t, table.Options{Colour: IsTTY(w)}) // only text colours, on a terminal
}

// Warnings writes each error as a line of its own, as qpslab's errors
// read ("qpslab: …").
func Warnings(w io.Writer, errs []error) {
	for _, err := range errs {
		io.WriteString(w, "qpslab: "+err.Error()+"\n")
	}
}
