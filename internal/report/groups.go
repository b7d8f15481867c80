package report

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/table"
)

// Summaries compare can print: everything, or only the group statistics
// as the seeds print them.
const (
	SummaryFull  = "full"
	SummarySeeds = "seeds"
)

type summaryValue struct{ p *string }

func (v summaryValue) String() string { return *v.p }
func (v summaryValue) Type() string   { return "summary" }
func (v summaryValue) Set(s string) error {
	if s != SummaryFull && s != SummarySeeds {
		return fmt.Errorf("use %s (the whole comparison) or %s (the group statistics as the seeds print them)", SummaryFull, SummarySeeds)
	}
	*v.p = s
	return nil
}

// SummaryFlag offers --summary on fs: full (the default) or seeds.
func SummaryFlag(fs *pflag.FlagSet, p *string) {
	*p = SummaryFull
	fs.Var(summaryValue{p}, "summary", "what to print: full (the comparison), or seeds (only the group statistics in the seeds' own layout: a table per compared label, groups as rows, min, max, avg, median as columns)")
}

// ComparisonAs prints a comparison as summary asks: the whole of it
// (Comparison) or the seeds' group summary (SeedSummary).
func ComparisonAs(w io.Writer, sets []analysis.Set, cmp *analysis.Comparison, f, summary string) error {
	if summary == SummarySeeds {
		return SeedSummary(w, cmp, f)
	}
	return Comparison(w, sets, cmp, f)
}

// seedRow is one group of the seeds' summary of one compared label.
type seedRow struct {
	Group  string  `json:"group"`
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Avg    float64 `json:"avg"`
	Median float64 `json:"median"`
}

// seedTable is the seeds' summary of one label against the base.
type seedTable struct {
	Label  string    `json:"label"`
	Base   string    `json:"base"`
	Layout string    `json:"layout"`
	Groups []seedRow `json:"groups"`
}

func seedTables(c *analysis.Comparison) []seedTable {
	var out []seedTable
	for i, o := range c.Others {
		t := seedTable{Label: o, Base: c.Base, Layout: c.Layout}
		for _, g := range c.Groups {
			if i < len(g.Stats) && g.Stats[i].N > 0 {
				s := g.Stats[i]
				t.Groups = append(t.Groups, seedRow{g.Name, s.N, s.Min, s.Max, s.Avg, s.Median})
			}
		}
		out = append(out, t)
	}
	return out
}

// SeedSummary prints the group statistics of a comparison as the seeds
// do: for each compared label, its relative QPS to the base summarised per
// group of the layout, groups as rows (in the layout's order) and min, max,
// avg and median as columns, two decimals; in format f (text, md, csv,
// tsv, json).
func SeedSummary(w io.Writer, c *analysis.Comparison, f string) error {
	tables := seedTables(c)
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	stats := []table.Column{{Name: "min", Number: true}, {Name: "max", Number: true}, {Name: "avg", Number: true}, {Name: "median", Number: true}}
	d := Doc{Data: tables, What: "--summary " + SummarySeeds}
	d.Flat = &table.Table{Columns: append([]table.Column{{Name: "label"}, {Name: "base"}, {Name: "layout"}, {Name: "group"}, {Name: "n"}}, stats...)}
	for i, t := range tables {
		if i > 0 {
			d.Gap()
		}
		tb := &table.Table{Columns: append([]table.Column{{Key: "group"}}, stats...)}
		tb.Titled(table.Plain("Relative QPS of "), table.Code(t.Label), table.Plain(" to "), table.Code(t.Base), table.Plain(", "+t.Layout+"-group layout"))
		for _, r := range t.Groups {
			tb.Add(r.Group, num(r.Min), num(r.Max), num(r.Avg), num(r.Median))
			d.Flat.Add(t.Label, t.Base, t.Layout, r.Group, strconv.Itoa(r.N), num(r.Min), num(r.Max), num(r.Avg), num(r.Median))
		}
		d.Put(tb)
	}
	return d.Write(w, f, false)
}
