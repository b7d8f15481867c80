package table

import (
	"fmt"
	"io"
	"strings"
)

func init() { Register(Markdown, "Markdown tables (markdown is the same)", renderMarkdown) }

// renderMarkdown writes the title as a paragraph (names as code), then a
// pipe table whose number columns are right-aligned and whose coloured
// cells (a change) are bold, then the notes as paragraphs.
func renderMarkdown(w io.Writer, t *Table, _ Options) error {
	if len(t.Title) > 0 {
		fmt.Fprintf(w, "%s\n\n", titleText(t.Title, true))
	}
	if len(t.Rows) == 0 && t.Empty != "" {
		_, err := fmt.Fprintln(w, t.Empty)
		return err
	}
	var head, rule strings.Builder
	for _, c := range t.Columns {
		name := c.Name
		if name == "" {
			name = c.key() // a pipe table's column needs a header
		}
		head.WriteString("| " + mdCell(name) + " ")
		if c.Number {
			rule.WriteString("|---:")
		} else {
			rule.WriteString("|---")
		}
	}
	fmt.Fprintf(w, "%s|\n%s|\n", head.String(), rule.String())
	for _, row := range t.Rows {
		var b strings.Builder
		for _, c := range row {
			text := mdCell(c.Text)
			if c.Colour == "red" || c.Colour == "green" {
				text = "**" + text + "**" // Markdown has no colour: a change is bold
			}
			b.WriteString("| " + text + " ")
		}
		if _, err := fmt.Fprintf(w, "%s|\n", b.String()); err != nil {
			return err
		}
	}
	for _, n := range t.Notes {
		if _, err := fmt.Fprintf(w, "\n%s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// mdCell is a cell's text with its pipes escaped and its control
// characters spelled out (Printable): either would end the cell.
func mdCell(s string) string {
	return strings.ReplaceAll(Printable(s), "|", `\|`)
}
