package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/table"
)

// Suites describes the registered suites: each with its parameters, the
// params that make its runs repeats of each other (its conditions), its
// report layouts, the figures it reports and its tests.
func Suites(w io.Writer, suites []suite.Suite, format string) error {
	type js struct {
		Name       string         `json:"name"`
		Summary    string         `json:"summary"`
		Params     []suite.Param  `json:"params"`
		Conditions []string       `json:"conditions"`
		Layouts    []suite.Layout `json:"layouts"`
		Figures    []suite.Figure `json:"figures"`
		Tests      []suite.Test   `json:"tests"`
	}
	var out []js
	d := Doc{What: "qpslab suites"}
	for _, s := range suites {
		conds := s.Conditions()
		if conds == nil {
			conds = []string{}
		}
		out = append(out, js{s.Name(), s.Summary(), s.Params(), conds, s.Layouts(), suite.FiguresOf(s), s.Tests()})
		d.Sayf("%s: %s", s.Name(), s.Summary())
		d.Gap()
		var names []string
		for _, p := range s.Params() {
			names = append(names, "--"+p.Name)
		}
		d.Sayf("  run it: qpslab run %s --build B [--config C] (its own flags: %s)", s.Name(), strings.Join(names, " "))
		if len(conds) == 0 {
			conds = []string{"none"}
		}
		d.Sayf("  conditions (params its runs must share to be repeats, beside the plan's): %s", strings.Join(conds, ", "))
		d.Gap()
		for _, l := range s.Layouts() {
			d.Sayf("  layout %s (%s): %s", l.Name, l.Title, strings.Join(l.Groups, ", "))
		}
		d.Gap()
		figures := &table.Table{Indent: "  ", Columns: []table.Column{{Name: "FIGURE"}, {Name: "UNIT"}, {Name: "BETTER"}, {Name: "PER"}, {Name: "TESTS"}}}
		for _, f := range suite.FiguresOf(s) {
			better := "lower"
			if f.HigherIsBetter {
				better = "higher"
			}
			figures.Add(f.Name, dash(f.Unit), better, dash(f.Per), dash(f.Tests))
		}
		d.Put(figures)
		d.Gap()
		tests := table.New("TEST", "ROLE")
		tests.Indent = "  "
		for _, l := range s.Layouts() {
			tests.Columns = append(tests.Columns, table.Column{Name: "GROUP (" + l.Name + ")"})
		}
		tests.Columns = append(tests.Columns, table.Column{Name: "WHAT"})
		for _, t := range s.Tests() {
			tests.Add(slices.Concat([]string{t.Name, roleName(t.Role)}, groupCells(s.Layouts(), t.Groups), []string{t.Note})...)
		}
		d.Put(tests)
		d.Gap()
	}
	d.Data = out
	return d.Write(w, format, false)
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

func groupCells(layouts []suite.Layout, groups []result.Placement) []string {
	var cells []string
	for _, l := range layouts {
		g := "-"
		for _, p := range groups {
			if p.Layout == l.Name {
				g = p.Group
			}
		}
		cells = append(cells, g)
	}
	return cells
}

// Designs says, in a line, how a comparison's tests will be measured
// (--repeat, --until-decided) and what they can tell: the range of the
// smallest changes they find with 80 % power.
func Designs(w io.Writer, p *plan.Runner, designs []StepDesign) {
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
	if p.Design.WriteSlices > 0 && p.Design.WriteSlices != p.Design.Slices {
		slices = fmt.Sprintf("%d slice(s) per repeat of a read test, %d of a write", p.Design.Slices, p.Design.WriteSlices)
	}
	found := "no test's smallest change found can be said (qpslab run --list-tests shows why)"
	if lo <= hi {
		found = fmt.Sprintf("the tests find changes of %.0f–%.0f %% with 80 %% power (qpslab run --list-tests shows each)", 100*lo, 100*hi)
	}
	line := fmt.Sprintf("%d repeat(s), each from the tables as loaded; %s; %s", p.Design.Repeat, slices, found)
	if l := looksLine(p); l != "" {
		line += "; " + l
	}
	fmt.Fprintln(w, line)
}

// looksLine says what --until-decided will do with its budget ("" without
// it).
func looksLine(p *plan.Runner) string {
	switch {
	case p.Design.Looks > 1:
		return fmt.Sprintf("--until-decided: then %d more repeat(s) of the tests still undecided at each look, up to %d looks, within a budget of %s", p.Design.Step, p.Design.Looks, p.Design.Budget.Round(time.Second))
	case p.UntilDecided:
		return fmt.Sprintf("--until-decided: the budget of %s holds the first look only, so each test is judged once, at α (a larger --budget allows more looks)", p.Design.Budget.Round(time.Second))
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
func PlanTests(w io.Writer, p *plan.Runner, designs []StepDesign) error {
	layouts := p.Suite.Layouts()
	var d Doc
	steps := table.New("TEST", "ROLE", "THREADS", "SECS")
	for _, l := range layouts {
		steps.Columns = append(steps.Columns, table.Column{Name: "GROUP (" + l.Name + ")"})
	}
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
		steps.Add(append([]string{st.Test, roleName(st.Role), ints(threads), secs}, groupCells(layouts, st.Groups)...)...)
	}
	d.Put(steps)
	if len(p.Grid) > 0 {
		d.Gap()
		d.Sayf("%d config(s): each of the %d named at each of the grid's %d point(s)", len(p.Configs), len(p.Configs)/len(p.Grid.Combinations()), len(p.Grid.Combinations()))
		for _, c := range p.Configs {
			d.Sayf("  %s  (%s)", c.Name, p.Points[c.Name])
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
	if len(p.StorageEngines) > 1 {
		engines = fmt.Sprintf(" × %d engines", len(p.StorageEngines))
	}
	line := fmt.Sprintf("%d run(s) (%d step(s) × thread counts × %d build(s) × %d config(s)%s × %d repeat(s)): %s of warmups and measured time",
		len(items), len(p.Steps.Steps), len(p.Builds), len(p.Configs), engines, max(p.Design.Repeat, 1), total.Round(round))
	if tasks > 0 {
		line += fmt.Sprintf(", plus %d run(s) that take as long as they take (loads; paced steps too, if the server falls behind)", tasks)
	}
	d.Gap()
	d.Sayf("%s, server starts and postwrite waits", line)
	if l := looksLine(p); l != "" {
		d.Sayf("%s", l)
	}
	if len(designs) > 0 {
		d.Gap()
		d.Sayf("Each test's design (%d repeats; the slices per repeat by Kalibera and Jones's rule from the variance components) and the smallest change it finds with 80 %% power (MDE):", p.Design.Repeat)
		d.Gap()
		t := table.New("TEST", "POOL", "REPEATS × SLICES", "SLICE", "INTERVAL ON", "DF", "MDE", "COMPONENTS FROM")
		for _, ds := range designs {
			mde := "-"
			if !math.IsNaN(ds.Design.MDE) {
				mde = fmt.Sprintf("%.1f%%", 100*ds.Design.MDE)
			}
			t.Add(ds.Test, ds.Pool, fmt.Sprintf("%d × %d", ds.Design.Repeats, ds.Design.Slices), ds.Design.Slice.Round(time.Millisecond).String(), ds.Design.Unit,
				fmt.Sprintf("%g", ds.Design.DF), mde, ds.Source)
		}
		d.Put(t)
	}
	return d.Write(w, "text", false)
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// Look says what look look of looks (--until-decided) decided, undecided
// the tests it left open: per other label, its tests' verdicts so far.
func Look(w io.Writer, c *analysis.Comparison, look, looks int, undecided []string) {
	decided, tests := 0, 0
	for _, r := range c.Rows {
		if r.Group == "load" {
			continue
		}
		tests++
		if !slices.Contains(undecided, r.Test) {
			decided++
		}
	}
	var per []string
	for i, o := range c.Others {
		t := c.Tally[i]
		per = append(per, fmt.Sprintf("%s: %d worse, %d better, %d the same within the floor, %d inside the floor, %d undecided, %d cannot tell", o, t.Worse, t.Better, t.Equivalent, t.Inside, t.Same, t.CannotTell))
	}
	fmt.Fprintf(w, "look %d of %d (at level %.4g): %d of %d test(s) decided against every label (%s)\n", look, looks, 1-c.Confidence, decided, tests, strings.Join(per, "; "))
}
