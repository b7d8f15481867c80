package table

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// ANSI colours for a cell on a terminal: white on red for worse, black on
// green for better, as every qpslab table shows them.
const (
	ANSIRed   = "\x1b[41;97m"
	ANSIGreen = "\x1b[42;30m"
	ANSIReset = "\x1b[0m"
)

func init() { Register(Text, "aligned columns for a terminal", renderText) }

// renderText writes the title, the header and rows in columns two spaces
// apart (text/tabwriter), then the notes; Empty instead of an empty
// table's header where it is set.
func renderText(w io.Writer, t *Table, o Options) error {
	if len(t.Title) > 0 {
		fmt.Fprintln(w, titleText(t.Title, false))
	}
	if len(t.Rows) == 0 && t.Empty != "" {
		_, err := fmt.Fprintln(w, t.Empty)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = Printable(c.Name)
	}
	fmt.Fprintln(tw, t.Indent+strings.Join(head, "\t"))
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			c.Text = Printable(c.Text)
			cells[i] = Coloured(c, o.Colour)
		}
		fmt.Fprintln(tw, t.Indent+strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// Coloured is a cell's text, in its colour where colour is on (a
// terminal).
func Coloured(c Cell, colour bool) string {
	if !colour {
		return c.Text
	}
	switch c.Colour {
	case "red":
		return ANSIRed + c.Text + ANSIReset
	case "green":
		return ANSIGreen + c.Text + ANSIReset
	}
	return c.Text
}

// Printable is s with its control characters (a line break, a tab, an
// escape) spelled out as Go spells them (\n, \t, \x1b), so that a cell
// stays on its row and in its column and cannot move a terminal's cursor
// (a name is user input).
func Printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isControl(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
