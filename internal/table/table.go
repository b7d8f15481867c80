// Package table owns the one model of a table that qpslab prints: columns
// (with their units and which way is better), rows of cells, a title and
// notes, built once by the table's owner and rendered per format by the
// renderers registered here (text, md, csv, tsv, json, html). It is a
// foundation: the owner of a listing (sandboxes, builds, fleet hosts,
// tokens, bisections) builds its table itself, and report renders it.
//
// text/tabwriter, encoding/csv, encoding/json and html/template do the
// writing; this package only decides, once for every command, how a table
// maps onto each of them (golang.org/x/perf's benchstat keeps the same
// split: a table model, then ToText and ToCSV).
package table

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Format is a way a table is rendered, by the name --format takes.
type Format string

// The formats a table renders in.
const (
	Text     Format = "text"
	Markdown Format = "md"
	CSV      Format = "csv"
	TSV      Format = "tsv"
	JSON     Format = "json"
	HTML     Format = "html"
)

// Better is which way a column's values are better.
type Better int8

// Which way is better: not a measure (a name, a state), higher, lower.
const (
	Neither Better = iota
	Higher
	Lower
)

func (b Better) String() string {
	switch b {
	case Higher:
		return "higher"
	case Lower:
		return "lower"
	}
	return ""
}

// Column is one column: its header as a terminal and Markdown show it,
// the key csv, tsv and json name it by (default: the header in lower case,
// spaces as _), its unit and which way is better (for a measure), and
// whether its values are numbers (right-aligned in md and html).
type Column struct {
	Name   string
	Key    string
	Unit   string
	Better Better
	Number bool
}

// key is the column's name in csv, tsv and json.
func (c Column) key() string {
	if c.Key != "" {
		return c.Key
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(c.Name)), " ", "_")
}

// Cell is one value as printed, with its colour on a terminal and in
// html ("red" worse, "green" better, "" none) and, where the value is a
// number, the number json gives (nil: the text).
type Cell struct {
	Text   string
	Colour string
	Value  any
}

// Span is part of a line of prose: Code marks a name (a label, a test)
// that Markdown sets as code; Lead a lead-in ("tl;dr"), bold with a full
// stop in Markdown and followed by a colon on a terminal; Colour a value's
// colour on a terminal ("red", "green").
type Span struct {
	Text   string
	Code   bool
	Lead   bool
	Colour string
}

// Table is one table: a title (a line before it; none when empty), its
// columns and rows, an indent in text, what to print instead of an empty one (Empty; "" for
// the header alone), and notes (lines after it).
type Table struct {
	// Indent starts each line of the table (not its title) in text: a
	// table under a heading of prose.
	Indent  string
	Title   []Span
	Columns []Column
	Rows    [][]Cell
	Empty   string
	Notes   []string
}

// New is a table with these columns, each by its header.
func New(headers ...string) *Table {
	t := &Table{}
	for _, h := range headers {
		t.Columns = append(t.Columns, Column{Name: h})
	}
	return t
}

// Add appends a row of plain cells, one per column.
func (t *Table) Add(cells ...string) {
	row := make([]Cell, len(cells))
	for i, c := range cells {
		row[i] = Cell{Text: c}
	}
	t.AddCells(row...)
}

// AddCells appends a row of cells, one per column.
func (t *Table) AddCells(cells ...Cell) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("table: a row of %d cells in a table of %d columns", len(cells), len(t.Columns)))
	}
	t.Rows = append(t.Rows, cells)
}

// Note appends a line printed after the table.
func (t *Table) Note(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// Titled sets the title from spans.
func (t *Table) Titled(spans ...Span) *Table { t.Title = spans; return t }

// Plain is a span of prose; Code one of a name.
func Plain(s string) Span { return Span{Text: s} }

// Code is a span naming something (a label, a test): code in Markdown.
func Code(s string) Span { return Span{Text: s, Code: true} }

// Options are how a rendering may differ by where it goes: Colour colours
// cells on a terminal.
type Options struct {
	Colour bool
}

// Renderer writes a table in one format.
type Renderer func(w io.Writer, t *Table, o Options) error

type entry struct {
	about  string
	render Renderer
}

// renderers is the registry of formats a table renders in: a new format
// is one renderer file and its Register call.
var renderers = map[Format]entry{}

// Register adds a format; a second registration of one name is a
// programming error.
func Register(f Format, about string, r Renderer) {
	if _, dup := renderers[f]; dup {
		panic("table: format " + string(f) + " registered twice")
	}
	renderers[f] = entry{about, r}
}

// Formats are the registered formats, by name.
func Formats() []Format {
	var fs []Format
	for f := range renderers {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	return fs
}

// About is one line on what format f is ("" when not registered).
func About(f Format) string { return renderers[f].about }

// Render writes t in format f.
func Render(w io.Writer, f Format, t *Table, o Options) error {
	e, ok := renderers[f]
	if !ok {
		return fmt.Errorf("no table format %q: use one of %s", f, strings.Join(names(), ", "))
	}
	return e.render(w, t, o)
}

func names() []string {
	var ns []string
	for _, f := range Formats() {
		ns = append(ns, string(f))
	}
	return ns
}

// Line is a line of prose from spans in a reading format: code spans
// plain (text) or in backticks (md), a lead-in as each format sets it,
// a coloured span in its colour (text, where o.Colour), control
// characters spelled out (Printable).
func Line(spans []Span, f Format, o Options) string {
	md := f == Markdown
	var b strings.Builder
	for _, s := range spans {
		t := Printable(s.Text)
		switch {
		case md && s.Code:
			t = "`" + t + "`"
		case md && s.Lead:
			t = "**" + t + ".** "
		case s.Lead:
			t += ": "
		case !md:
			t = Coloured(Cell{Text: t, Colour: s.Colour}, o.Colour)
		}
		b.WriteString(t)
	}
	return b.String()
}

// titleText is the title as prose: code spans plain (text, csv) or in
// backticks (md).
func titleText(spans []Span, md bool) string {
	f := Text
	if md {
		f = Markdown
	}
	return Line(spans, f, Options{})
}
