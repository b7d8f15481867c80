package table

import (
	"fmt"
	"html"
	"io"
	"strings"
)

func init() { Register(HTML, "an HTML table", renderHTML) }

// renderHTML writes the title as a caption and the table; a number
// column's cells have class num, a coloured cell its colour's class
// (worse, better), a column's unit and direction go in its header's
// title.
func renderHTML(w io.Writer, t *Table, _ Options) error {
	if len(t.Rows) == 0 && t.Empty != "" {
		_, err := fmt.Fprintf(w, "<p>%s</p>\n", html.EscapeString(t.Empty))
		return err
	}
	fmt.Fprintln(w, "<table>")
	if len(t.Title) > 0 {
		fmt.Fprint(w, "<caption>")
		for _, s := range t.Title {
			if s.Code {
				fmt.Fprintf(w, "<code>%s</code>", html.EscapeString(s.Text))
			} else {
				fmt.Fprint(w, html.EscapeString(s.Text))
			}
		}
		fmt.Fprintln(w, "</caption>")
	}
	fmt.Fprint(w, "<thead><tr>")
	for _, c := range t.Columns {
		title := c.Unit
		if b := c.Better.String(); b != "" {
			if title != "" {
				title += ", "
			}
			title += b + " is better"
		}
		attr := ""
		if title != "" {
			attr = ` title="` + html.EscapeString(title) + `"`
		}
		fmt.Fprintf(w, "<th%s>%s</th>", attr, html.EscapeString(c.Name))
	}
	fmt.Fprintln(w, "</tr></thead>")
	fmt.Fprintln(w, "<tbody>")
	for _, row := range t.Rows {
		fmt.Fprint(w, "<tr>")
		for j, c := range row {
			class := ""
			if t.Columns[j].Number {
				class = "num"
			}
			switch c.Colour {
			case "red":
				class += " worse"
			case "green":
				class += " better"
			}
			if class = strings.TrimSpace(class); class != "" {
				fmt.Fprintf(w, "<td class=\"%s\">%s</td>", class, html.EscapeString(c.Text))
			} else {
				fmt.Fprintf(w, "<td>%s</td>", html.EscapeString(c.Text))
			}
		}
		fmt.Fprintln(w, "</tr>")
	}
	fmt.Fprintln(w, "</tbody>")
	fmt.Fprintln(w, "</table>")
	for _, n := range t.Notes {
		fmt.Fprintf(w, "<p>%s</p>\n", html.EscapeString(n))
	}
	return nil
}
