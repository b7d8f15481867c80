package study

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
)

// The study is laid out once as sections of prose and tables (doc), then
// written as Markdown or HTML from the same sections, so the two cannot
// differ.

type table struct {
	Head []string
	Rows [][]string
}

type section struct {
	Title string
	Level int      // 2 or 3
	Text  []string // paragraphs, before the table
	Items []string // a bulleted list
	Chart string   // the group whose chart goes here ("": none)
	Table *table
	After []string // paragraphs after the table
	Code  []string // lines of a shell block
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// labelOf is a label with its version where the label does not say it.
func (s *Study) labelOf(i int) string {
	if v := s.Versions[i]; v != "" && !strings.Contains(s.Labels[i], v) {
		return s.Labels[i] + " (" + v + ")"
	}
	return s.Labels[i]
}

func (s *Study) title() string {
	return fmt.Sprintf("Study: %s on %s … %s", s.Suite, s.Labels[0], s.Labels[len(s.Labels)-1])
}

// rowName is a row's test, with its thread count and conditions where
// the study has more than one.
func (s *Study) rowName(test string, threads int, cond string) string {
	n := test
	if threads != 1 {
		n += fmt.Sprintf(" @%d", threads)
	}
	if s.Cmp.MixedConditions && cond != "" {
		n += " [" + cond + "]"
	}
	return n
}

// doc lays the study out.
func (s *Study) doc() []section {
	base := s.Labels[s.Base]
	var out []section
	intro := []string{
		fmt.Sprintf("%d builds of %s in sweep order: %s. The base is %s: relative values are each build's QPS over the base's (above 1 is faster). Tests are grouped by the layout %q (qpslab suites lists its groups).",
			len(s.Labels), s.Suite, strings.Join(s.Labels, ", "), s.labelOf(s.Base), s.Layout),
		"The figures are the host's that ran them: compare builds measured on one host, not figures across hosts.",
	}
	out = append(out, section{Text: intro})
	if len(s.Findings) > 0 {
		out = append(out, section{Title: "tl;dr", Level: 2, Items: s.Findings})
	}

	// The summary: rows are builds, each group's min, max, avg and median.
	sum := &table{Head: []string{"build"}}
	var groups []analysis.Group // the load is no test: not summarised
	for _, g := range s.Cmp.Groups {
		if g.Name != "load" {
			groups = append(groups, g)
		}
	}
	for _, g := range groups {
		for _, st := range []string{"min", "max", "avg", "median"} {
			sum.Head = append(sum.Head, g.Name+" "+st)
		}
	}
	sum.Head = append(sum.Head, "all median", "geomean")
	for j, i := range s.Others {
		row := []string{s.labelOf(i)}
		for _, g := range groups {
			st := g.Stats[j]
			if st.N == 0 {
				row = append(row, "-", "-", "-", "-")
				continue
			}
			row = append(row, num(st.Min), num(st.Max), num(st.Avg), num(st.Median))
		}
		row = append(row, num(s.Cmp.All[j].Median), num(s.Cmp.Geomean[j]))
		sum.Rows = append(sum.Rows, row)
	}
	out = append(out, section{Title: "Summary per group", Level: 2,
		Text:  []string{"Relative QPS against " + base + ", per group of tests: min, max, avg and median over the group's tests (the load is not a test: its row is in its own group below)."},
		Table: sum})
	if s.Summary != "" {
		out = append(out, s.seedSections()...)
	}

	// One chart and table per group: tests × builds.
	out = append(out, section{Title: "Relative QPS per group", Level: 2,
		Text: []string{"Each build's QPS over " + base + "'s, test by test; the charts' y axis does not start at 0. A value in bold is a change beyond the noise (analysis's verdict: significant and beyond the noise floor)."}})
	for gi, g := range s.Cmp.Groups {
		t := &table{Head: []string{"test"}}
		for _, i := range s.Others {
			t.Head = append(t.Head, s.Labels[i])
		}
		for _, r := range s.Cmp.Rows {
			if r.Group != g.Name {
				continue
			}
			row := []string{s.rowName(r.Test, r.Threads, r.Conditions)}
			for _, c := range r.Others {
				v := num(c.Rel)
				if !c.Missing && c.Verdict.Changed() {
					v = "**" + v + "**"
				}
				row = append(row, v)
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, section{Title: g.Name, Level: 3, Chart: s.Cmp.Groups[gi].Name, Table: t})
	}

	// The neighbours: each build against the one before it.
	nt := &table{Head: []string{"build", "against", "better", "worse", "same within the floor", "undecided", "inside noise", "cannot tell", "geomean", "pairing"}}
	for i, n := range s.Neighbours {
		ta := n.Tally[0]
		nt.Rows = append(nt.Rows, []string{s.labelOf(i + 1), s.Labels[i], strconv.Itoa(ta.Better), strconv.Itoa(ta.Worse), strconv.Itoa(ta.Equivalent), strconv.Itoa(ta.Same),
			strconv.Itoa(ta.Inside), strconv.Itoa(ta.CannotTell), num(n.Geomean[0]), pairings(n.Pairings)})
	}
	out = append(out, section{Title: "Neighbour verdicts", Level: 2,
		Text:  []string{"Each build against the one before it, test by test (qpslab compare PREVIOUS BUILD): a change is placed in the build it arrived in, so adjacent changes are each placed."},
		Table: nt})
	ct := &table{Head: []string{"arrived in", "from", "test", "group", "relative", "interval", "verdict", "method"}}
	for _, c := range s.Changes {
		v := c.Verdict
		iv := "-"
		if !math.IsNaN(v.Lo) && !math.IsNaN(v.Hi) {
			iv = strconv.FormatFloat(v.Lo, 'f', 3, 64) + "–" + strconv.FormatFloat(v.Hi, 'f', 3, 64)
		}
		method := v.Method
		if v.Pairing != "" && v.Method == analysis.MethodPaired {
			method += " (" + v.Pairing + ", " + strconv.Itoa(v.N) + " rounds)"
		} else if v.N > 0 {
			method += " (n=" + strconv.Itoa(v.N) + ")"
		}
		ct.Rows = append(ct.Rows, []string{c.To, c.From, s.rowName(c.Test, c.Threads, c.Conditions), c.Group, num(v.Rel), iv, v.Kind, method})
	}
	changes := section{Title: "Changes and the build they arrived in", Level: 3, Table: ct}
	if len(s.Changes) == 0 {
		changes.Table = nil
		changes.Text = []string{"No test changed beyond the noise between neighbouring builds."}
	}
	out = append(out, changes)

	// The hardware cost per operation of the tests that changed.
	var says []string // what a rise means, as the registry says it (result.Metric.Rise)
	for _, m := range result.MetricsOf(result.ClassHW) {
		if m.Rise != "" {
			says = append(says, m.Name+" up is "+m.Rise)
		}
	}
	hw := section{Title: "Hardware per operation for the tests that changed", Level: 2,
		Text: []string{"The tests that changed between neighbours or against " + base + ". The median over repeats of each figure per operation (qpslab metrics): " + strings.Join(says, "; ") + ". In parentheses: relative to " + s.Labels[0] + "."}}
	switch {
	case len(s.Hardware) == 0 && s.hwChanged == 0:
		hw.Text = []string{"No test changed beyond the noise, between neighbours or against " + base + "."}
	case len(s.Hardware) == 0:
		hw.Text = []string{"The runs measured no hardware figures (an import, or a run without them)."}
	}
	out = append(out, hw)
	ms := result.MetricsOf(result.ClassHW)
	for _, t := range s.Hardware {
		ht := &table{Head: []string{"build"}}
		for _, m := range ms {
			ht.Head = append(ht.Head, m.Name)
		}
		ht.Head = append(ht.Head, "n")
		first := t.Rows[0]
		for _, r := range t.Rows {
			row := []string{r.Label}
			for k, v := range r.Abs {
				cell := ms[k].Format(v)
				if r.Label != first.Label {
					cell += " (" + r.RelAt(first, k) + ")"
				}
				row = append(row, cell)
			}
			ht.Rows = append(ht.Rows, append(row, strconv.Itoa(r.N)))
		}
		out = append(out, section{Title: s.rowName(t.Test, t.Threads, t.Conditions), Level: 3, Table: ht})
	}
	if s.HardwareLeft > 0 {
		out = append(out, section{Text: []string{fmt.Sprintf("%d more changed test(s) left out: qpslab metrics %s shows them all.", s.HardwareLeft, strings.Join(s.Labels, " "))}})
	}
	if len(s.Commands) > 0 {
		text := "The study, and its re-rendering from the store:"
		if len(s.Commands) == 1 {
			text = "The study's re-rendering from the store (it was re-rendered so: the store keeps the runs, not the command that ran them):"
		}
		out = append(out, section{Title: "Reproduce", Level: 2, Text: []string{text}, Code: s.Commands})
	}
	return out
}

func pairings(m map[string]int) string {
	var out []string
	for _, k := range []string{result.PairedSlices, result.PairedTests, result.PairedPasses, "unpaired"} {
		if m[k] > 0 {
			out = append(out, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// ChartFile is the file name of group's chart beside a study named name.
func ChartFile(name, group string) string {
	return name + "-" + slug.ReplaceAllString(group, "_") + ".svg"
}

var slug = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// mdEsc keeps a cell's text from breaking the Markdown table.
func mdEsc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Markdown writes the study as Markdown; its charts are the SVG files
// ChartFile names beside it (name is the study's file name, without .md).
func (s *Study) Markdown(w io.Writer, name string) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# %s\n", mdEsc(s.title()))
	for _, sec := range s.doc() {
		if sec.Title != "" {
			fmt.Fprintf(b, "\n%s %s\n", strings.Repeat("#", sec.Level), mdEsc(sec.Title))
		}
		for _, p := range sec.Text {
			fmt.Fprintf(b, "\n%s\n", p)
		}
		if len(sec.Items) > 0 {
			b.WriteString("\n")
			for _, it := range sec.Items {
				fmt.Fprintf(b, "- %s\n", it)
			}
		}
		if sec.Chart != "" {
			fmt.Fprintf(b, "\n![%s: relative QPS against %s](%s)\n", mdEsc(sec.Chart), s.Labels[s.Base], ChartFile(name, sec.Chart))
		}
		if t := sec.Table; t != nil && len(t.Rows) > 0 {
			b.WriteString("\n| " + strings.Join(mapStr(t.Head, mdEsc), " | ") + " |\n|---|" + strings.Repeat("---:|", len(t.Head)-1) + "\n")
			for _, r := range t.Rows {
				b.WriteString("| " + strings.Join(mapStr(r, mdEsc), " | ") + " |\n")
			}
		}
		for _, p := range sec.After {
			fmt.Fprintf(b, "\n%s\n", p)
		}
		if len(sec.Code) > 0 {
			b.WriteString("\n```sh\n" + strings.Join(sec.Code, "\n") + "\n```\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mapStr(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// seedSections are the seeds' group summaries, a table per build against
// the base in the study's layout (report.SeedTables: the tables compare
// --summary prints), each under its title.
func (s *Study) seedSections() []section {
	how := "groups as rows; min, max, avg, median and stddev over the group's tests (the seeds' layout since July 2024)"
	if s.Summary == report.SummarySeedsApr2024 {
		how = "statistics as rows (average, median, min, max, stddev over the group's tests), groups as columns (the seeds' April-2024 layout)"
	}
	out := []section{{Title: "Group summaries as the seeds print them", Level: 2,
		Text: []string{"Each build's relative QPS against " + s.Labels[s.Base] + ", a table per build: " + how + "."}}}
	for _, tb := range report.SeedTables(s.Cmp, s.Summary) {
		var title strings.Builder
		for _, sp := range tb.Title {
			title.WriteString(sp.Text)
		}
		t := &table{}
		for _, c := range tb.Columns {
			h := c.Name
			if h == "" {
				h = c.Key
			}
			t.Head = append(t.Head, h)
		}
		for _, r := range tb.Rows {
			row := make([]string, len(r))
			for i, c := range r {
				row[i] = c.Text
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, section{Title: title.String(), Level: 3, Table: t})
	}
	return out
}
