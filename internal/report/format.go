package report

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/pflag"

	"github.com/qpslab/qpslab/internal/table"
)

// Format is an output format a command can print in: its name as --format
// takes it, one line on what it is, and which part of a Doc it renders
// (none for a layout one writer owns: the reference's qps.abs and
// qps.rel, stacks' folded and pprof).
type Format struct {
	Name  table.Format
	About string
	part  docPart
}

// docPart is the part of a Doc a format renders.
type docPart int

const (
	ownLayout docPart = iota // a writer's own layout, not a Doc's
	reading                  // the blocks: prose and tables
	flat                     // the one flat table
	data                     // the data, as JSON
)

// formats is the registry of output formats: every --format flag offers
// a subset of these, by name, and lists them from here; Doc.Write renders
// in the ones with a doc renderer. A new format is its entry here and its
// table renderer (internal/table).
var formats = []Format{
	{table.Text, table.About(table.Text), reading},
	{table.Markdown, table.About(table.Markdown), reading},
	{table.CSV, table.About(table.CSV), flat},
	{table.TSV, table.About(table.TSV), flat},
	{table.JSON, table.About(table.JSON), data},
	{"qps.abs", "the reference harness's absolute QPS layout", ownLayout},
	{"qps.rel", "the reference harness's relative QPS layout", ownLayout},
	{"folded", "folded stacks (flamegraph.pl, speedscope)", ownLayout},
	{"pprof", "a pprof profile (go tool pprof)", ownLayout},
}

// formatValue is a --format flag that accepts only the formats it offers,
// so a command never sees one it cannot write (pflag reports the refusal
// as "invalid argument … for --format": one line, before anything runs).
type formatValue struct {
	p      *string
	offers []string
}

func (v *formatValue) String() string { return *v.p }
func (v *formatValue) Type() string   { return "format" }
func (v *formatValue) Set(s string) error {
	if s == "markdown" {
		s = "md"
	}
	for _, o := range v.offers {
		if s == o {
			*v.p = s
			return nil
		}
	}
	return fmt.Errorf("use one of %s", strings.Join(v.offers, ", "))
}

// FormatFlag offers --format on fs with the registered formats named in
// offers (the first is the default) and stores the choice in p. A name
// that is not registered is a programming error: FormatFlag panics, so a
// test of the command finds it.
func FormatFlag(fs *pflag.FlagSet, p *string, offers ...string) {
	var about []string
	for _, o := range offers {
		found := false
		for _, f := range formats {
			if string(f.Name) == o {
				found = true
				about = append(about, o)
			}
		}
		if !found {
			panic("report.FormatFlag: no format " + o)
		}
	}
	*p = offers[0]
	fs.Var(&formatValue{p: p, offers: offers}, "format", "output format: "+strings.Join(about, ", "))
}

// JSON writes v as indented JSON: every command's --format json and the
// API's bodies are written by this one function.
func JSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", " ")
	return e.Encode(finite(reflect.ValueOf(v))) // NaN and ±Inf as null
}
