package report

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/pflag"
)

// Format is an output format a command can print in: its name as --format
// takes it and one line on what it is.
type Format struct{ Name, About string }

// formats is the registry of output formats: every --format flag offers
// a subset of these, by name, and lists them from here.
var formats = []Format{
	{"text", "aligned columns for a terminal"},
	{"md", "Markdown tables (markdown is the same)"},
	{"csv", "comma-separated values"},
	{"tsv", "tab-separated values"},
	{"json", "JSON, the same numbers as the API's"},
	{"qps.abs", "the reference harness's absolute QPS layout"},
	{"qps.rel", "the reference harness's relative QPS layout"},
	{"folded", "folded stacks (flamegraph.pl, speedscope)"},
	{"pprof", "a pprof profile (go tool pprof)"},
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
			if f.Name == o {
				found = true
				about = append(about, f.Name)
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
