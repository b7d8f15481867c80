package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/table"
)

// Summaries compare can print: everything, or only the group statistics
// as the seeds print them, in either of their published layouts.
const (
	SummaryFull = "full"
	// SummarySeeds is the seeds' July-2024 layout (and since): a table per
	// compared label, groups as rows, min, max, avg, median and stddev as
	// columns.
	SummarySeeds = "seeds"
	// SummarySeedsApr2024 is the seeds' April-2024 layout: a table per
	// compared label, statistics as rows (average, median, min, max,
	// stddev), groups as columns.
	SummarySeedsApr2024 = "seeds-apr2024"
)

// Summaries are the values --summary takes, the default first.
var Summaries = []string{SummaryFull, SummarySeeds, SummarySeedsApr2024}

type summaryValue struct{ p *string }

func (v summaryValue) String() string { return *v.p }
func (v summaryValue) Type() string   { return "summary" }
func (v summaryValue) Set(s string) error {
	if !slices.Contains(Summaries, s) {
		return fmt.Errorf("use %s (the whole comparison), %s (the group statistics as the seeds print them since July 2024: groups as rows) or %s (as in April 2024: statistics as rows, groups as columns)", SummaryFull, SummarySeeds, SummarySeedsApr2024)
	}
	*v.p = s
	return nil
}

// SummaryFlag offers --summary on fs: full (the default) or a seeds layout.
func SummaryFlag(fs *pflag.FlagSet, p *string) {
	*p = SummaryFull
	fs.Var(summaryValue{p}, "summary", "what to print: full (the comparison), seeds (only the group statistics in the seeds' layout since July 2024: a table per compared label, groups as rows, min, max, avg, median, stddev as columns) or seeds-apr2024 (their April-2024 layout: statistics as rows, average, median, min, max, stddev, groups as columns)")
}

// ComparisonAs prints a comparison as summary asks: the whole of it
// (Comparison) or the seeds' group summary in one of their layouts
// (SeedSummary).
func ComparisonAs(w io.Writer, sets []analysis.Set, cmp *analysis.Comparison, f, summary string) error {
	if summary == SummarySeeds || summary == SummarySeedsApr2024 {
		return SeedSummary(w, cmp, f, summary)
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
	Stddev float64 `json:"stddev"`
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
				t.Groups = append(t.Groups, seedRow{g.Name, s.N, s.Min, s.Max, s.Avg, s.Median, s.Stddev})
			}
		}
		out = append(out, t)
	}
	return out
}

// seedStat is one statistic of a group, as the seeds name it in each
// layout.
type seedStat struct {
	july  string
	april string // "": the July name
	of    func(seedRow) float64
}

// The statistics in the order each layout prints them.
var (
	julyStats = []seedStat{
		{"min", "", func(r seedRow) float64 { return r.Min }},
		{"max", "", func(r seedRow) float64 { return r.Max }},
		{"avg", "average", func(r seedRow) float64 { return r.Avg }},
		{"median", "", func(r seedRow) float64 { return r.Median }},
		{"stddev", "", func(r seedRow) float64 { return r.Stddev }},
	}
	aprilStats = []seedStat{julyStats[2], julyStats[3], julyStats[0], julyStats[1], julyStats[4]}
)

func seedNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// SeedTables are the seeds' group summaries of a comparison in layout
// (SummarySeeds or SummarySeedsApr2024), a table per compared label: its
// relative QPS to the base summarised per group of the layout, two
// decimals. July 2024: groups as rows (in the layout's order), min, max,
// avg, median and stddev (n-1) as columns. April 2024: average, median,
// min, max and stddev as rows, the groups as columns. The study prints the
// same tables.
func SeedTables(c *analysis.Comparison, layout string) []*table.Table {
	var out []*table.Table
	for _, t := range seedTables(c) {
		var tb *table.Table
		if layout == SummarySeedsApr2024 {
			cols := []table.Column{{Key: "statistic"}}
			for _, g := range t.Groups {
				cols = append(cols, table.Column{Name: g.Group, Number: true})
			}
			tb = &table.Table{Columns: cols}
			for _, st := range aprilStats {
				row := []string{cmp.Or(st.april, st.july)}
				for _, g := range t.Groups {
					row = append(row, seedNum(st.of(g)))
				}
				tb.Add(row...)
			}
		} else {
			cols := []table.Column{{Key: "group"}}
			for _, st := range julyStats {
				cols = append(cols, table.Column{Name: st.july, Number: true})
			}
			tb = &table.Table{Columns: cols}
			for _, g := range t.Groups {
				row := []string{g.Group}
				for _, st := range julyStats {
					row = append(row, seedNum(st.of(g)))
				}
				tb.Add(row...)
			}
		}
		tb.Titled(table.Plain("Relative QPS of "), table.Code(t.Label), table.Plain(" to "), table.Code(t.Base), table.Plain(", "+t.Layout+"-group layout"))
		out = append(out, tb)
	}
	return out
}

// SeedSummary prints the group statistics of a comparison as the seeds
// do, in layout (SeedTables), in format f (text, md, csv, tsv, json; csv,
// tsv and json are the same flat rows in either layout: a row per label
// and group).
func SeedSummary(w io.Writer, c *analysis.Comparison, f, layout string) error {
	tables := seedTables(c)
	d := Doc{Data: tables, What: "--summary " + layout}
	cols := []table.Column{{Name: "label"}, {Name: "base"}, {Name: "layout"}, {Name: "group"}, {Name: "n"}}
	for _, st := range julyStats {
		cols = append(cols, table.Column{Name: st.july, Number: true})
	}
	d.Flat = &table.Table{Columns: cols}
	for _, t := range tables {
		for _, r := range t.Groups {
			row := []string{t.Label, t.Base, t.Layout, r.Group, strconv.Itoa(r.N)}
			for _, st := range julyStats {
				row = append(row, seedNum(st.of(r)))
			}
			d.Flat.Add(row...)
		}
	}
	for i, tb := range SeedTables(c, layout) {
		if i > 0 {
			d.Gap()
		}
		d.Put(tb)
	}
	return d.Write(w, f, false)
}
