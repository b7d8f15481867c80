package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// Suites describes the registered suites: each with its parameters, its
// report layouts, the figures it reports and its tests.
func Suites(w io.Writer, suites []suite.Suite, format string) error {
	type js struct {
		Name    string         `json:"name"`
		Summary string         `json:"summary"`
		Params  []suite.Param  `json:"params"`
		Layouts []suite.Layout `json:"layouts"`
		Figures []suite.Figure `json:"figures"`
		Tests   []suite.Test   `json:"tests"`
	}
	switch format {
	case "json":
		var out []js
		for _, s := range suites {
			out = append(out, js{s.Name(), s.Summary(), s.Params(), s.Layouts(), suite.FiguresOf(s), s.Tests()})
		}
		return JSON(w, out)
	case "text":
	default:
		return fmt.Errorf("--format %s: use text or json", format)
	}
	for _, s := range suites {
		fmt.Fprintf(w, "%s: %s\n\n", s.Name(), s.Summary())
		fmt.Fprintf(w, "  run it: qpslab run %s --build B [--config C] (its own flags: ", s.Name())
		var names []string
		for _, p := range s.Params() {
			names = append(names, "--"+p.Name)
		}
		fmt.Fprintf(w, "%s)\n\n", strings.Join(names, " "))
		for _, l := range s.Layouts() {
			fmt.Fprintf(w, "  layout %s (%s): %s\n", l.Name, l.Title, strings.Join(l.Groups, ", "))
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  FIGURE\tUNIT\tBETTER\tPER\tTESTS")
		for _, f := range suite.FiguresOf(s) {
			better := "lower"
			if f.HigherIsBetter {
				better = "higher"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", f.Name, dash(f.Unit), better, dash(f.Per), dash(f.Tests))
		}
		tw.Flush()
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head := "  TEST\tROLE"
		for _, l := range s.Layouts() {
			head += "\tGROUP (" + l.Name + ")"
		}
		fmt.Fprintln(tw, head+"\tWHAT")
		for _, t := range s.Tests() {
			fmt.Fprintf(tw, "  %s\t%s%s\t%s\n", t.Name, roleName(t.Role), groupCells(s.Layouts(), t.Groups), t.Note)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func roleName(r string) string {
	if r == result.RoleTest {
		return "test"
	}
	return r
}

func groupCells(layouts []suite.Layout, groups []result.Placement) string {
	var b strings.Builder
	for _, l := range layouts {
		g := "-"
		for _, p := range groups {
			if p.Layout == l.Name {
				g = p.Group
			}
		}
		b.WriteString("\t" + g)
	}
	return b.String()
}

// Designs says, in a line, how a comparison's tests will be measured
// (--repeat, --until-decided) and what they can tell: the range of the
// smallest changes they find with 80 % power.
func Designs(w io.Writer, p *plan.Plan, designs []StepDesign) {
	if len(designs) == 0 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, d := range designs {
		if !math.IsNaN(d.Design.MDE) {
			lo, hi = math.Min(lo, d.Design.MDE), math.Max(hi, d.Design.MDE)
		}
	}
	slices := fmt.Sprintf("%d slice(s) per repeat", designs[0].Design.Slices)
	if p.WriteSlices > 0 && p.WriteSlices != p.Slices {
		slices = fmt.Sprintf("%d slice(s) per repeat of a read test, %d of a write", p.Slices, p.WriteSlices)
	}
	found := "no test's smallest change found can be said (qpslab run --list-tests shows why)"
	if lo <= hi {
		found = fmt.Sprintf("the tests find changes of %.0f–%.0f %% with 80 %% power (qpslab run --list-tests shows each)", 100*lo, 100*hi)
	}
	line := fmt.Sprintf("%d repeat(s), each from the tables as loaded; %s; %s", p.Repeat, slices, found)
	if l := looksLine(p); l != "" {
		line += "; " + l
	}
	fmt.Fprintln(w, line)
}

// looksLine says what --until-decided will do with its budget ("" without
// it).
func looksLine(p *plan.Plan) string {
	switch {
	case p.Looks > 1:
		return fmt.Sprintf("--until-decided: then %d more repeat(s) of the tests still undecided at each look, up to %d looks, within a budget of %s", p.Step, p.Looks, p.Budget.Round(time.Second))
	case p.UntilDecided:
		return fmt.Sprintf("--until-decided: the budget of %s holds the first look only, so each test is judged once, at α (a larger --budget allows more looks)", p.Budget.Round(time.Second))
	}
	return ""
}

// StepDesign is how a step of a comparison is measured and what it can
// tell (analysis.Design), with where its variance components come from.
type StepDesign struct {
	Test, Pool string
	Design     analysis.Design
	Source     string
}

// PlanTests lists what a plan would run (--list-tests): each step with its
// thread counts, seconds (per repeat) and groups, then the plan's total
// time, and for a comparison each sliced step's design: its repeats and
// slices, and the smallest change it finds with 80 % power.
func PlanTests(w io.Writer, p *plan.Plan, designs []StepDesign) error {
	layouts := p.Suite.Layouts()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "TEST\tROLE\tTHREADS\tSECS"
	for _, l := range layouts {
		head += "\tGROUP (" + l.Name + ")"
	}
	fmt.Fprintln(tw, head)
	for _, st := range p.Steps.Steps {
		threads := st.Threads
		if len(threads) == 0 {
			threads = p.Threads
		}
		secs := "to its end"
		switch {
		case st.Drive != nil && st.Drive.UntilScheduled && st.Seconds > 0:
			secs = strconv.FormatFloat(st.Seconds.Seconds(), 'f', -1, 64) + " (paced)"
		case st.Drive != nil && !st.Drive.UntilScheduled:
			secs = strconv.FormatFloat(st.Seconds.Seconds(), 'f', -1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\n", st.Test, roleName(st.Role), ints(threads), secs, groupCells(layouts, st.Groups))
	}
	tw.Flush()
	if len(p.Grid) > 0 {
		fmt.Fprintf(w, "\n%d config(s): each of the %d named at each of the grid's %d point(s)\n", len(p.Configs), len(p.Configs)/len(p.Grid.Combinations()), len(p.Grid.Combinations()))
		for _, c := range p.Configs {
			fmt.Fprintf(w, "  %s  (%s)\n", c.Name, p.Points[c.Name])
		}
	}
	var total time.Duration
	tasks := 0
	items := p.Items()
	for _, it := range items {
		total += it.Seconds
		if it.Seconds == 0 {
			tasks++
		}
	}
	round := time.Second
	if total < time.Minute {
		round = 100 * time.Millisecond
	}
	engines := ""
	if len(p.Engines) > 1 {
		engines = fmt.Sprintf(" × %d engines", len(p.Engines))
	}
	fmt.Fprintf(w, "\n%d run(s) (%d step(s) × thread counts × %d build(s) × %d config(s)%s × %d repeat(s)): %s of warmups and measured time",
		len(items), len(p.Steps.Steps), len(p.Builds), len(p.Configs), engines, max(p.Repeat, 1), total.Round(round))
	if tasks > 0 {
		fmt.Fprintf(w, ", plus %d run(s) that take as long as they take (loads; paced steps too, if the server falls behind)", tasks)
	}
	fmt.Fprintln(w, ", server starts and postwrite waits")
	if l := looksLine(p); l != "" {
		fmt.Fprintln(w, l)
	}
	if len(designs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nEach test's design (%d repeats; the slices per repeat by Kalibera and Jones's rule from the variance components) and the smallest change it finds with 80 %% power (MDE):\n\n", p.Repeat)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TEST\tPOOL\tREPEATS × SLICES\tSLICE\tINTERVAL ON\tDF\tMDE\tCOMPONENTS FROM")
	for _, d := range designs {
		mde := "-"
		if !math.IsNaN(d.Design.MDE) {
			mde = fmt.Sprintf("%.1f%%", 100*d.Design.MDE)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d × %d\t%s\t%s\t%g\t%s\t%s\n", d.Test, d.Pool, d.Design.Repeats, d.Design.Slices, d.Design.Slice.Round(time.Millisecond), d.Design.Unit, d.Design.DF, mde, d.Source)
	}
	return tw.Flush()
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// Labels lists the store's labels: one line per label and suite, with the
// build's version.
func Labels(w io.Writer, ls []store.LabelInfo, where string) error {
	if len(ls) == 0 {
		fmt.Fprintf(w, "no results in %s yet: run qpslab run SUITE (qpslab suites lists them), or qpslab import\n", where)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LABEL\tVERSION\tSUITE\tRUNS\tTESTS\tTHREADS\tSTATUS\tLAST\tHOSTS / SOURCES")
	for _, l := range ls {
		last := l.Last
		if len(last) > 19 {
			last = last[:19]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s / %s\n", l.Label, dash(l.Version), l.Suite, l.Runs, l.Tests, ints(l.Threads), l.Status, last,
			strings.Join(l.Hosts, " "), strings.Join(l.Sources, " "))
	}
	return tw.Flush()
}

// Look says what look look of looks (--until-decided) decided: per other
// label, its tests' verdicts so far.
func Look(w io.Writer, c *analysis.Comparison, look, looks, decided, tests int) {
	var per []string
	for i, o := range c.Others {
		t := c.Tally[i]
		per = append(per, fmt.Sprintf("%s: %d worse, %d better, %d the same within the floor, %d inside the floor, %d undecided, %d cannot tell", o, t.Worse, t.Better, t.Equivalent, t.Inside, t.Same, t.CannotTell))
	}
	fmt.Fprintf(w, "look %d of %d (at level %.4g): %d of %d test(s) decided against every label (%s)\n", look, looks, 1-c.Confidence, decided, tests, strings.Join(per, "; "))
}
