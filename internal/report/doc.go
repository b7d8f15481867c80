package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/qpslab/qpslab/internal/table"
)

// Doc is what a writer builds once, whatever the format: the reading
// formats (text, md) render its blocks in order, lines of prose and
// tables; csv and tsv its one flat table (a file holds one table); json
// its data, the shape the API serves. A writer builds a Doc and never
// asks which format it is in: Write does, from the registry (formats).
type Doc struct {
	Blocks []Block
	Flat   *table.Table
	Data   any
	// Layouts are the writer's own layouts, by format name (compare's
	// qps.abs and qps.rel: the reference's files, which are no table).
	Layouts map[string]func(io.Writer) error
	// What names the command in a refusal ("qpslab stacks diff"): a format
	// the doc has nothing for is refused with the ones it has.
	What string
}

// Block is a line of prose (Line: names in it set as code in Markdown;
// Item: an item of a list), a blank line, or a table. Only, where set, is
// the one reading format it belongs to: where a terminal and a Markdown
// document show different things (compare's terminal view names its
// columns col-1 … with a legend and leads with its verdict lines; its
// Markdown heads the columns with the labels).
type Block struct {
	Line  []table.Span
	Item  bool
	Blank bool
	Table *table.Table
	Only  table.Format
}

// Say appends a line of prose.
func (d *Doc) Say(spans ...table.Span) { d.Blocks = append(d.Blocks, Block{Line: spans}) }

// Sayf appends a line of prose, formatted.
func (d *Doc) Sayf(format string, args ...any) { d.Say(table.Plain(fmt.Sprintf(format, args...))) }

// Gap appends a blank line.
func (d *Doc) Gap() { d.Blocks = append(d.Blocks, Block{Blank: true}) }

// Put appends a table.
func (d *Doc) Put(t *table.Table) { d.Blocks = append(d.Blocks, Block{Table: t}) }

// Item appends an item of a list.
func (d *Doc) Item(line string) {
	d.Blocks = append(d.Blocks, Block{Line: []table.Span{table.Plain(line)}, Item: true})
}

// Only appends other's blocks as belonging to format f alone.
func (d *Doc) Only(f table.Format, other Doc) {
	for _, b := range other.Blocks {
		b.Only = f
		d.Blocks = append(d.Blocks, b)
	}
}

// Write renders d in format f (text coloured where colour is set): the
// one place a format is told apart, from the registry (formats).
func (d Doc) Write(w io.Writer, f string, colour bool) error {
	if f == "markdown" {
		f = string(table.Markdown)
	}
	if layout, ok := d.Layouts[f]; ok {
		return layout(w)
	}
	var has []string
	for _, fm := range formats {
		if !d.has(fm.part) {
			continue
		}
		has = append(has, string(fm.Name))
		if string(fm.Name) != f {
			continue
		}
		o := table.Options{Colour: colour && fm.Name == table.Text}
		switch fm.part {
		case reading:
			return d.read(w, fm.Name, o)
		case flat:
			return table.Render(w, fm.Name, d.Flat, o)
		case data:
			return JSON(w, d.Data)
		}
	}
	what := d.What
	if what == "" {
		what = "this command"
	}
	return fmt.Errorf("--format %s: %s writes %s", f, what, strings.Join(has, ", "))
}

// readsProse says whether format f renders a doc's prose and tables (text,
// md): what a writer asks when a part of its output exists only there.
func readsProse(f string) bool {
	for _, fm := range formats {
		if string(fm.Name) == f || f == "markdown" && fm.Name == table.Markdown {
			return fm.part == reading
		}
	}
	return false
}

// has says whether d has what part renders.
func (d Doc) has(p docPart) bool {
	switch p {
	case reading:
		return true // an empty doc reads as nothing, as a list of no items does
	case flat:
		return d.Flat != nil
	case data:
		return d.Data != nil
	case ownLayout:
		return false // asked by name: Write looks the layout up
	}
	return false
}

// read renders the blocks in a reading format (those of another format
// left out): lines (Markdown sets names as code), list items ("  - " on a
// terminal; "- " in Markdown, after a blank line where a list follows
// prose), blank lines, tables.
func (d Doc) read(w io.Writer, f table.Format, o table.Options) error {
	md := f == table.Markdown
	prev := Block{Blank: true}
	for _, b := range d.Blocks {
		if b.Only != "" && b.Only != f {
			continue
		}
		switch {
		case b.Table != nil:
			if err := table.Render(w, f, b.Table, o); err != nil {
				return err
			}
		case b.Blank:
			io.WriteString(w, "\n")
		case b.Item && md:
			if !prev.Item && !prev.Blank && prev.Table == nil {
				io.WriteString(w, "\n") // a Markdown list begins after a blank line
			}
			io.WriteString(w, "- "+table.Line(b.Line, f, o)+"\n")
		case b.Item:
			io.WriteString(w, "  - "+table.Line(b.Line, f, o)+"\n")
		default:
			io.WriteString(w, table.Line(b.Line, f, o)+"\n")
		}
		prev = b
	}
	return nil
}
