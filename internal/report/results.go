package report

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/stacks"
	"github.com/qpslab/qpslab/internal/store"
)

// What the results commands (compare, metrics, report, stacks, detect)
// print of what selector loaded: each is one call from cmd.

// Comparison prints a comparison in format f (comparisonDoc): for text
// and Markdown its findings first, its table, the hosts of the sets, the
// step tables and response-time buckets of a suite run in steps, and the
// effects and sweeps; csv one row per test and label; json the comparison
// with its findings; qps.abs and qps.rel the reference's layouts.
func Comparison(w io.Writer, sets []analysis.Set, cmp *analysis.Comparison, f string) error {
	d, err := comparisonDoc(sets, cmp)
	if err != nil {
		return err
	}
	return d.Write(w, f, IsTTY(w))
}

// Steps prints the step tables (StepSections) and the response-time
// buckets after a comparison of a suite run in steps (in text or md).
func Steps(w io.Writer, sets []analysis.Set, suiteName, f string) error {
	d, err := stepsDoc(sets, suiteName)
	if err != nil || !readsProse(f) {
		return err
	}
	return d.Write(w, f, IsTTY(w))
}

// MetricsOf prints the per-op tables of sets' tests matching the glob
// test ("": all), with the server counters choice shows, in format f, and
// the hosts of the sets for text and Markdown: qpslab metrics and the
// API's metrics.
func MetricsOf(w io.Writer, sets []analysis.Set, test string, choice analysis.CounterChoice, f string) error {
	tables, err := analysis.MetricsCounters(sets, test, choice)
	if err != nil {
		return err
	}
	d := metricsDoc(tables)
	d.Blocks = append(d.Blocks, hostBlocks(sets, store.HostID)...)
	return d.Write(w, f, false)
}

// HTMLReport writes the report of sets (loaded with samples) and their
// comparison to file, and says so on note; content gives a config's text
// by its id.
func HTMLReport(note io.Writer, file string, sets []analysis.Set, cmp *analysis.Comparison, content func(id string) string) error {
	m := NewModel(sets, cmp, store.HostID, content, time.Now().UTC())
	var err error
	if m.Steps, err = StepSections(sets, cmp.Suite); err != nil {
		return err
	}
	if err := WriteHTML(file, m); err != nil {
		return err
	}
	fmt.Fprintf(note, "report: %s\n", file)
	return nil
}

// Stacks are the sections of sets' stacks of source (pmp or perf) whose
// test matches the glob test ("": all); an error names what there is when
// nothing matches.
func Stacks(sets []analysis.Set, labels []string, test, source string) ([]StackSection, error) {
	if source != "pmp" && source != "perf" {
		return nil, fmt.Errorf("--source %s: use pmp or perf", source)
	}
	if _, err := path.Match(test, ""); err != nil {
		return nil, fmt.Errorf("--test %q is not a valid glob: %v", test, err)
	}
	var out []StackSection
	var have []string
	for _, s := range StackSections(sets) {
		have = append(have, fmt.Sprintf("%s at %d thread(s) (%s)", s.Test, s.Threads, s.Source))
		if ok, _ := path.Match(test, s.Test); (test == "" || ok) && s.Source == source {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		if len(have) == 0 {
			return nil, fmt.Errorf("%s have no stacks: run with qpslab run … --pmp 1 (thread stacks) or --perf (CPU profile)", strings.Join(labels, ", "))
		}
		return nil, fmt.Errorf("no %s stacks for --test %q: the labels have %s", source, test, strings.Join(have, "; "))
	}
	return out, nil
}

// StackQuery is what qpslab stacks and stacks diff show of labels'
// stacks: a test glob ("": all), the source (pmp or perf), the format,
// the top N stacks per list (0: all), the file of a folded or pprof export
// (Out), and diff's Threshold (percent of the samples below which a stack
// is noise in both).
type StackQuery struct {
	Test, Source, Format, Out string
	Top                       int
	Threshold                 float64
}

// Show prints the stacks q selects of sets (the labels'): their top in
// text or json, or one label's stacks of one test as folded lines or a
// pprof profile, to q.Out (folded: w when "") and says so on note.
func (q StackQuery) Show(w, note io.Writer, sets []analysis.Set, labels []string) error {
	if q.Top < 0 {
		return fmt.Errorf("--top %d: give 0 (all) or more", q.Top)
	}
	secs, err := Stacks(sets, labels, q.Test, q.Source)
	if err != nil {
		return err
	}
	var all []StackSet
	for _, s := range secs {
		all = append(all, s.Sets...)
	}
	d := stackTopDoc(all, q.Top)
	export := func(write func(io.Writer, result.Stacks) error, binary bool) func(io.Writer) error {
		return func(w io.Writer) error { return q.export(w, note, all, write, binary) }
	}
	d.Layouts = map[string]func(io.Writer) error{"folded": export(stacks.WriteFolded, false), "pprof": export(stacks.WritePprof, true)}
	return d.Write(w, q.Format, false)
}

// export writes the one set of all as folded lines or a pprof profile
// (write; binary: only to a file), to q.Out (w when "") and says so on
// note.
func (q StackQuery) export(w, note io.Writer, all []StackSet, write func(io.Writer, result.Stacks) error, binary bool) error {
	if len(all) != 1 {
		var names []string
		for _, s := range all {
			names = append(names, s.Title())
		}
		return fmt.Errorf("--format %s writes one label's stacks of one test: narrow with one LABEL, --test and --threads (there are %d: %s)", q.Format, len(all), strings.Join(names, "; "))
	}
	if q.Out == "" && binary {
		return fmt.Errorf("--format pprof writes a binary profile: name its file with --out (then: go tool pprof -top FILE)")
	}
	var out *os.File
	var err error
	if q.Out != "" {
		if out, err = os.Create(q.Out); err != nil {
			return fmt.Errorf("write the export: %w", err)
		}
		w = out
	}
	err = write(w, all[0].Stacks)
	if out != nil {
		if cerr := out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write the export %s: %w", q.Out, cerr)
		}
		if err == nil {
			fmt.Fprintf(note, "%s: %s (%s)\n", q.Format, q.Out, all[0].Title())
		}
	}
	return err
}

// Diff prints the diff of label a's stacks with b's (of sets) in every
// section q selects that has both.
func (q StackQuery) Diff(w io.Writer, sets []analysis.Set, a, b string) error {
	if q.Threshold < 0 || q.Threshold >= 100 {
		return fmt.Errorf("--threshold %g: give a percentage of the samples from 0 to below 100", q.Threshold)
	}
	if q.Top < 0 {
		return fmt.Errorf("--top %d: give 0 (all) or more", q.Top)
	}
	secs, err := Stacks(sets, []string{a, b}, q.Test, q.Source)
	if err != nil {
		return err
	}
	diffs, err := q.diffsOf(secs, a, b)
	if err != nil {
		return err
	}
	return StackDiffs(w, diffs, q.Format)
}

// diffsOf compares label a's stacks with b's in every section that has
// both, q's Top stacks of each (q.Threshold: the percent of the samples
// below which a stack is noise); none is an error that says so.
func (q StackQuery) diffsOf(secs []StackSection, a, b string) ([]StackDiff, error) {
	var out []StackDiff
	for _, s := range secs {
		var sa, sb *StackSet
		for i := range s.Sets {
			switch s.Sets[i].Label {
			case a:
				sa = &s.Sets[i]
			case b:
				sb = &s.Sets[i]
			}
		}
		if sa != nil && sb != nil {
			out = append(out, StackDiff{A: *sa, B: *sb, Diff: stacks.Compare(sa.Stacks, sb.Stacks, q.Threshold/100, q.Top)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s and %s have no %s stacks of the same test and thread count: see qpslab stacks %s %s", a, b, q.Source, a, b)
	}
	return out, nil
}

// Why prints, after a run with --pmp or --perf, for each test with
// stacks: the server's counters per op side by side, each label's top
// stacks and, against the first label, their diff.
func Why(w io.Writer, sets []analysis.Set) error {
	secs := StackSections(sets)
	if len(secs) == 0 {
		return nil
	}
	var labels []string
	for _, s := range sets {
		labels = append(labels, s.Label)
	}
	all := strings.Join(labels, " ")
	shown := map[string]bool{}
	for _, s := range secs {
		key := fmt.Sprintf("%s/%d", s.Test, s.Threads)
		if !shown[key] {
			shown[key] = true
			if tables, err := analysis.Metrics(sets, s.Test); err == nil {
				for _, t := range tables {
					if t.Threads == s.Threads && len(t.Server) > 0 {
						fmt.Fprintf(w, "\n%s, %d thread(s): the server's own figures (qpslab metrics %s --test %s)\n\n", t.Test, t.Threads, all, t.Test)
						if err := ServerTable(w, t); err != nil {
							return err
						}
					}
				}
			}
		}
		// Sets without samples (a load shorter than half the interval)
		// have nothing to show or compare.
		var with []StackSet
		for _, set := range s.Sets {
			if set.Stacks.Samples() > 0 {
				with = append(with, set)
			}
		}
		if len(with) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s, %d thread(s): top %s stacks (qpslab stacks %s --test %s --source %s)\n\n", s.Test, s.Threads, s.Source, all, s.Test, s.Source)
		if err := StackTop(w, with, 5, "text"); err != nil {
			return err
		}
		if len(with) > 1 && with[0].Label == s.Sets[0].Label {
			var diffs []StackDiff
			for _, o := range with[1:] {
				diffs = append(diffs, StackDiff{A: with[0], B: o, Diff: stacks.Compare(with[0].Stacks, o.Stacks, DiffThreshold, 5)})
			}
			fmt.Fprintf(w, "their diff (qpslab stacks diff %s %s --test %s --source %s)\n\n", with[0].Label, with[1].Label, s.Test, s.Source)
			if err := StackDiffs(w, diffs, "text"); err != nil {
				return err
			}
		}
	}
	return nil
}

// ExitGate is qpslab detect's exit status when --fail-on finds a
// regression: not 1 (an error) nor 2 (usage, by convention), so that a CI
// job can tell a regression from a broken command.
const ExitGate = 3

// GateFailed is the error of a failed gate: its summary, and the exit
// status ExitGate.
type GateFailed struct{ Summary string }

func (g *GateFailed) Error() string { return g.Summary }

// ExitCode is the status qpslab exits with.
func (g *GateFailed) ExitCode() int { return ExitGate }

// DetectOut prints a detection in format f (md for markdown), the order
// note (on note when the format is a data format, so that it stays whole)
// and, with a gate, its lines and summary on note; a failed gate is a
// *GateFailed error.
func DetectOut(w, note io.Writer, d Detection, f string) error {
	if err := Detect(w, d, f, IsTTY(w)); err != nil {
		return err
	}
	on := w
	if !readsProse(f) {
		on = note // a data format stays whole
	}
	if err := OrderNote(on, d.series); err != nil || d.Gate == nil {
		return err
	}
	GateLines(note, d.Gate)
	if d.Gate.Failed {
		return &GateFailed{GateSummary(d.Gate)}
	}
	fmt.Fprintln(note, GateSummary(d.Gate))
	return nil
}
