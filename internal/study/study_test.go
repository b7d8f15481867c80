package study

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/study.md from this code's output")

// The fixture history: five builds of a suite with no registered layout
// (its runs carry their groups, as an import's do), each test run as 3
// repeats of 8 paired rounds, with known changes:
//   - point-a is 20 % slower from v3 on, with 30 % more CPU per operation;
//   - write-c is 10 % slower in v2 and 10 % slower again in v3 (adjacent
//     changes, each placed);
//   - range-b is 15 % faster from v4 on;
//   - the others do not change.
var fixtureTests = []fixtureTest{
	{"point-a", "point", 0, 10000, [5]float64{1, 1, 0.8, 0.8, 0.8}},
	{"point-b", "point", 0, 8000, [5]float64{1, 1, 1, 1, 1}},
	{"range-a", "range", 1, 3000, [5]float64{1, 1, 1, 1, 1}},
	{"range-b", "range", 1, 2000, [5]float64{1, 1, 1, 1.15, 1.15}},
	{"write-c", "writes", 2, 5000, [5]float64{1, 0.9, 0.81, 0.81, 0.81}},
	{"write-d", "writes", 2, 4000, [5]float64{1, 1, 1, 1, 1}},
}

// fixtureTest is one test of the fixture: its group and place, its QPS on
// the first build and its factor on each of the five.
type fixtureTest struct {
	test, group string
	pos         int
	qps         float64
	factor      [5]float64
}

func fixtureSets() []analysis.Set { return fixtureSetsOf(fixtureTests) }

func fixtureSetsOf(fixtureTests []fixtureTest) []analysis.Set {
	var sets []analysis.Set
	for b := 0; b < 5; b++ {
		build := fmt.Sprintf("fx-1%d.0", b)
		set := analysis.Set{Label: build + ".cfg"}
		for step, ft := range fixtureTests {
			for rep := 1; rep <= 3; rep++ {
				r := result.Run{Suite: "fixture", Test: ft.test, Build: build, Version: fmt.Sprintf("1%d.0", b), Config: "cfg@abc", Threads: 1,
					Status: result.OK, Step: step + 1, Plan: "plan-1", Pairing: result.PairedSlices,
					Params: map[string]string{"repeat": fmt.Sprint(rep)},
					Groups: []result.Placement{{Layout: "fx", Group: ft.group, Pos: ft.pos}}}
				var sum float64
				for round := 1; round <= 8; round++ {
					// A small deterministic wobble, the same for every build
					// in a round (what pairing cancels), and a little of
					// each build's own.
					w := 1 + 0.01*math.Sin(float64(rep*8+round)) + 0.002*math.Cos(float64(b*13+round*7+rep))
					v := ft.qps * ft.factor[b] * w
					sum += v
					r.Rounds = append(r.Rounds, result.Round{Repeat: rep, Round: round, Value: v})
				}
				mean := sum / 8
				r.Totals = result.Totals{Reported: mean, ReportedUnit: "qps"}
				cpu := 50.0
				if ft.test == "point-a" && b >= 2 {
					cpu = 65
				}
				r.HW = &result.HW{Op: "statement", Samples: 60, OpsPerSec: mean, CPUPerOp: cpu / 1e6 * (1 + 0.001*float64(rep)), CSPerOp: 0.5, WriteKBPerOp: 0.1}
				set.Runs = append(set.Runs, r)
			}
		}
		// The load: in a group of its own, never in the summary.
		set.Runs = append(set.Runs, result.Run{Suite: "fixture", Test: "load", Build: build, Version: fmt.Sprintf("1%d.0", b), Config: "cfg@abc", Threads: 2,
			Status: result.OK, Role: result.RoleLoad, Params: map[string]string{"repeat": "1"}, Totals: result.Totals{Reported: 50000 + 1000*float64(b), ReportedUnit: "rows/s"}})
		sets = append(sets, set)
	}
	return sets
}

func TestAssembleKnownChanges(t *testing.T) {
	s, err := Assemble(fixtureSets(), Options{Base: 0})
	if err != nil {
		t.Fatal(err)
	}
	type arrival struct{ test, to, kind string }
	want := []arrival{
		{"write-c", "fx-11.0.cfg", analysis.KindWorse},
		{"point-a", "fx-12.0.cfg", analysis.KindWorse},
		{"write-c", "fx-12.0.cfg", analysis.KindWorse},
		{"range-b", "fx-13.0.cfg", analysis.KindBetter},
	}
	var got []arrival
	for _, c := range s.Changes {
		got = append(got, arrival{c.Test, c.To, c.Verdict.Kind})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("changes %v, want %v", got, want)
	}
	// The summary: v3 (fx-12.0) against the base, group point: min 0.80 at
	// point-a, max 1.00.
	if last := s.Cmp.Groups[len(s.Cmp.Groups)-1]; last.Name != "load" {
		t.Errorf("the last group is %s, not the load", last.Name)
	}
	g := s.Cmp.Groups[0]
	if g.Name != "point" || math.Abs(g.Stats[1].Min-0.8) > 0.005 || math.Abs(g.Stats[1].Max-1) > 0.005 {
		t.Errorf("point group of fx-12.0: %+v", g)
	}
	var hw []string
	for _, h := range s.Hardware {
		hw = append(hw, h.Test)
	}
	if strings.Join(hw, " ") != "point-a range-b write-c" {
		t.Errorf("hardware tables of %v, want those of the changed tests", hw)
	}
}

// Where a build's verdict against the base and the changes placed
// between neighbours tell different stories, the tl;dr says why: a test
// 20 % faster in v1 and back in v3 (the changes cancel), one that creeps
// up 4 % a build (no step beyond the noise, 17 % in all), one that creeps
// up and back (said at the build where it stood).
func TestStudyDisagreementsSaid(t *testing.T) {
	tests := []fixtureTest{
		{"up-and-back", "point", 0, 10000, [5]float64{1, 1.2, 1.2, 1, 1}},
		{"creeping", "point", 0, 8000, [5]float64{1, 1.04, 1.082, 1.125, 1.17}},
		{"steady", "range", 1, 3000, [5]float64{1, 1, 1, 1, 1}},
	}
	s, err := Assemble(fixtureSetsOf(tests), Options{Base: 0})
	if err != nil {
		t.Fatal(err)
	}
	said := strings.Join(s.Findings, "\n")
	for _, want := range []string{
		"up-and-back changed between neighbours (1.20 in fx-11.0.cfg, 0.83 in fx-13.0.cfg) but the changes cancel (their product 1.00): against fx-10.0.cfg it is 1.00, the same within ±5 %",
		"creeping is 1.17 against fx-10.0.cfg (better), a change no step between neighbours shows beyond the noise: it crept in over the builds between them.",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("the findings do not say %q:\n%s", want, said)
		}
	}
	if strings.Contains(said, "steady") {
		t.Errorf("a steady test in the disagreements:\n%s", said)
	}

	// A creep that goes back by the newest build is said at the build
	// where it stood; a single step, seen from a base after it, is one
	// story (the step's inverse), said nowhere.
	tests = []fixtureTest{
		{"creep-and-back", "point", 0, 8000, [5]float64{1, 1.04, 1.082, 1.04, 1}},
		{"step", "point", 0, 9000, [5]float64{1, 1.2, 1.2, 1.2, 1.2}},
	}
	s, err = Assemble(fixtureSetsOf(tests), Options{Base: 0})
	if err != nil {
		t.Fatal(err)
	}
	said = strings.Join(s.Findings, "\n")
	if want := "creep-and-back in fx-12.0.cfg is 1.08 against fx-10.0.cfg (better), a change no step between neighbours shows"; !strings.Contains(said, want) {
		t.Errorf("the findings do not say %q:\n%s", want, said)
	}
	if s, err = Assemble(fixtureSetsOf(tests), Options{Base: 2}); err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Findings {
		if strings.HasPrefix(f, "step") {
			t.Errorf("a single step before the base in the disagreements: %s", f)
		}
	}
}

func TestStudyMarkdownGolden(t *testing.T) {
	s, err := Assemble(fixtureSets(), Options{Base: 0, Findings: Findings(analysis.Options{}),
		Commands: Commands("fixture", map[string]string{"tests": "point-*,write-c"}, Inputs{Builds: []string{"fx-10.0", "fx-11.0", "fx-12.0", "fx-13.0", "fx-14.0"}, Config: "cfg", Size: "tiny"}, "out", false)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Markdown(&b, "study"); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "study.md")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestStudyMarkdownGolden -update writes it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
				t.Errorf("the study's Markdown differs from %s from line %d (go test -update rewrites it after a deliberate change):\ngot  %q\nwant %q", golden, i+1, at(gl, i), at(wl, i))
				break
			}
		}
	}
	// The page and the charts come from the same study.
	var page bytes.Buffer
	if err := s.HTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<h2>tl;dr</h2>", `data-chart="rel-point"`, "<b>0.80</b>", "qpslab study fixture --build fx-10.0,"} {
		if !strings.Contains(page.String(), w) {
			t.Errorf("the HTML page lacks %q", w)
		}
	}
	dir := t.TempDir()
	if err := Write(dir, "study", s); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"study.md", "study.html", "study-point.svg", "study-range.svg", "study-writes.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		} else if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o, want 0600 (a report is its owner's alone)", f, fi.Mode().Perm())
		}
	}
}

// --summary adds the seeds' group summaries, a table per build against
// the base, in either published layout, in the Markdown and the page alike:
// the same numbers as the builds-as-rows summary.
func TestStudySeedSummaries(t *testing.T) {
	for _, c := range []struct {
		layout string
		want   []string
	}{
		{report.SummarySeeds, []string{"| group | min | max | avg | median | stddev |", "| point |"}},
		{report.SummarySeedsApr2024, []string{"| statistic | point | range | writes |", "| average |", "| stddev |"}},
	} {
		s, err := Assemble(fixtureSets(), Options{Base: 0, Summary: c.layout})
		if err != nil {
			t.Fatal(err)
		}
		var md, page bytes.Buffer
		if err := s.Markdown(&md, "study"); err != nil {
			t.Fatal(err)
		}
		if err := s.HTML(&page); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(md.String(), "### Relative QPS of fx-"); n != 4 {
			t.Errorf("%s: %d per-build tables, want 4 (every build but the base)", c.layout, n)
		}
		for _, w := range c.want {
			if !strings.Contains(md.String(), w) {
				t.Errorf("%s: the Markdown lacks %q:\n%s", c.layout, w, md.String())
			}
		}
		// The writes group's median of the last build, in both summaries.
		st := s.Cmp.Groups[len(s.Cmp.Groups)-1].Stats[len(s.Others)-1]
		if med := num(st.Median); strings.Count(md.String(), med) < 2 || !strings.Contains(page.String(), "Group summaries as the seeds print them") {
			t.Errorf("%s: the median %s is not in both summaries, or the page lacks the section", c.layout, med)
		}
	}
}

func TestStudyWithoutFindingsHasNoTLDR(t *testing.T) {
	s, err := Assemble(fixtureSets(), Options{Base: 2})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	s.Markdown(&b, "study")
	if strings.Contains(b.String(), "tl;dr") {
		t.Error("a study without a findings hook has a tl;dr")
	}
	if !strings.Contains(b.String(), "The base is fx-12.0.cfg") {
		t.Errorf("the base is not the one asked for:\n%s", b.String())
	}
}

func TestCheckRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given map[string]string
		o     RunOptions
		want  string
	}{
		{"no builds", map[string]string{}, RunOptions{}, "two builds or more"},
		{"one build", map[string]string{"build": "postgres-12.22.0"}, RunOptions{}, "two builds or more"},
		{"base not in the list", map[string]string{"build": "a,b"}, RunOptions{Base: "c"}, "--base c is not one of --build's builds (a, b)"},
		{"hostile name", map[string]string{"build": "a,../../etc"}, RunOptions{}, "--build"},
		{"shell in a name", map[string]string{"build": "a,b;rm -rf x"}, RunOptions{}, "--build"},
		{"a build twice", map[string]string{"build": "a,b,a"}, RunOptions{}, "names a twice"},
		{"two configs", map[string]string{"build": "a,b", "config": "x,y"}, RunOptions{}, "one config"},
		{"unknown size", map[string]string{"build": "a,b"}, RunOptions{Size: "huge"}, "--scale huge: use tiny, small or full"},
		{"unknown summary", map[string]string{"build": "a,b"}, RunOptions{Summary: "full\x1b[31m"}, `--summary "full\x1b[31m": use seeds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.given, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line with %q", err, tc.want)
			}
		})
	}
}

// An unknown build stops the study before anything runs or is written.
func TestRunUnknownBuild(t *testing.T) {
	h := testenv.Home(t)
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	e := Env{Home: h, Out: &out, Err: &errw, RunPlan: func(context.Context, map[string]string, string, []string) error {
		t.Error("the plan ran")
		return nil
	}}
	out2 := filepath.Join(t.TempDir(), "study")
	err = Run(context.Background(), e, s, map[string]string{"build": "nosuch-1,mariadb-system"}, RunOptions{Out: out2})
	if err == nil || !strings.Contains(err.Error(), `unknown build "nosuch-1"`) {
		t.Errorf("got %v", err)
	}
	if _, serr := os.Stat(out2); serr == nil {
		t.Error("the study's directory was made for a study that cannot run")
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end)"
}

// A group's chart draws relative QPS as the seeds do: its y axis does not
// start at 0 (point's values are 0.80 to 1.00).
func TestChartAxisNotFromZero(t *testing.T) {
	s, err := Assemble(fixtureSets(), Options{Base: 0})
	if err != nil {
		t.Fatal(err)
	}
	c := string(s.Chart("point"))
	if !strings.Contains(c, `data-chart="rel-point"`) || strings.Count(c, `class="mark"`) != 8 {
		t.Fatalf("the point chart is not 2 tests × 4 builds of bars:\n%s", c)
	}
	if strings.Contains(c, `>0</text>`) || strings.Contains(c, `>0.0</text>`) || strings.Contains(c, `>0.00</text>`) || !strings.Contains(c, `>0.78</text>`) {
		t.Errorf("the y axis starts at 0, or not just below 0.80:\n%s", c)
	}
}

// A study re-rendered from the store names only the re-rendering: the
// flags it was given are not the ones its runs were made with.
func TestCommands(t *testing.T) {
	in := Inputs{Builds: []string{"fx-10.0", "fx-11.0"}, Config: "cfg", Size: "tiny"}
	run := Commands("fixture", map[string]string{"tests": "point-*", "rows": "100000"}, in, "out", false)
	want := []string{
		"qpslab study fixture --build fx-10.0,fx-11.0 --config cfg --base fx-10.0 --scale tiny --rows 100000 --tests 'point-*' --out out",
		"qpslab study fixture --build fx-10.0,fx-11.0 --config cfg --base fx-10.0 --from-store --out out",
	}
	if !slices.Equal(run, want) {
		t.Errorf("after a run: %q, want %q", run, want)
	}
	if got := Commands("fixture", map[string]string{"from-store": "true"}, in, "out", true); !slices.Equal(got, want[1:]) {
		t.Errorf("from the store: %q, want %q", got, want[1:])
	}
}

// The tl;dr places each change from the study's own neighbour verdicts,
// wherever the base stands in the sweep: with the base in the middle, the
// step in fx-11.0 is still said to arrive there.
func TestStudyArrivalsWithMiddleBase(t *testing.T) {
	tests := []fixtureTest{{"step", "point", 0, 9000, [5]float64{1, 1.2, 1.2, 1.2, 1.2}}, {"steady", "range", 1, 3000, [5]float64{1, 1, 1, 1, 1}}}
	s, err := Assemble(fixtureSetsOf(tests), Options{Base: 2, Findings: Findings(analysis.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	said := strings.Join(s.Findings, "\n")
	for _, want := range []string{
		"Across the sweep, 1 change arrived beyond the noise between neighbouring builds: 1 in fx-11.0.cfg.",
		"step changed in fx-11.0.cfg (1.20 + against fx-10.0.cfg).",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("the tl;dr does not say %q:\n%s", want, said)
		}
	}
}
