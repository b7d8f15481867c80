package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/stacks"
)

// StackSet is one label's stacks of one source for one test at one thread
// count, merged over its runs.
type StackSet struct {
	Label   string        `json:"label"`
	Test    string        `json:"test"`
	Threads int           `json:"threads"`
	Runs    int           `json:"runs"`
	Stacks  result.Stacks `json:"stacks"`
	// Conditions are its runs' when the test has runs under others too.
	Conditions string `json:"conditions,omitempty"`
}

// Title names the set: label, test, threads (conditions), source.
func (s StackSet) Title() string {
	cond := ""
	if s.Conditions != "" {
		cond = " [" + s.Conditions + "]"
	}
	return fmt.Sprintf("%s %s, %d thread(s)%s, %s", s.Label, s.Test, s.Threads, cond, s.Stacks.Source)
}

// stackHow says how a set's stacks were taken, and what that cost.
func stackHow(s result.Stacks, runs int) string {
	var b strings.Builder
	switch s.Source {
	case "pmp":
		fmt.Fprintf(&b, "%d capture(s) by %s every %s s over %d run(s), %d thread samples", s.Captures, s.Tool, trimFloat(s.Interval), runs, s.Samples())
		if s.Captures > 0 {
			fmt.Fprintf(&b, "; each capture took up to %.0f ms (mean %.0f ms)", s.PauseMaxMs, s.PauseMeanMs)
			switch s.Tool {
			case stacks.EuStack:
				b.WriteString(", stopping one thread at a time within it")
			case stacks.GDB:
				b.WriteString(", stopping every thread for all of it")
			}
		}
	case "perf":
		fmt.Fprintf(&b, "perf record at %.0f Hz over %d run(s): %d on-CPU sample(s)", 1/s.Interval, runs, s.Samples())
	default:
		fmt.Fprintf(&b, "%s: %d sample(s)", s.Source, s.Samples())
	}
	return b.String()
}

func trimFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// stateShares prints each thread state's share of the samples, most first.
func stateShares(s result.Stacks) string {
	st := stacks.States(s)
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return st[keys[i]] > st[keys[j]] })
	var parts []string
	for _, k := range keys {
		name := k
		if name == "" {
			name = "unknown"
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%%", name, 100*st[k]))
	}
	return strings.Join(parts, ", ")
}

// pmpLine is a folded stack as pt-pmp prints it: innermost first,
// comma-joined.
func pmpLine(folded string) string { return strings.Join(stacks.Frames(folded), ",") }

// StackTop writes each set's top n stacks: count, share of the samples,
// thread state, the stack innermost first (as pt-pmp prints it). Format
// text or json.
func StackTop(w io.Writer, sets []StackSet, n int, f string) error {
	switch f {
	case "json":
		type top struct {
			StackSet
			Top    []stacks.Entry     `json:"top"`
			States map[string]float64 `json:"states"`
		}
		var out []top
		for _, s := range sets {
			t := top{StackSet: s, Top: stacks.Top(s.Stacks, n), States: stacks.States(s.Stacks)}
			t.StackSet.Stacks.Stacks = nil // the top is what was asked for; --format folded has them all
			out = append(out, t)
		}
		return JSON(w, out)
	case "text":
	default:
		return fmt.Errorf("--format %s: qpslab stacks writes text, json, folded or pprof", f)
	}
	for _, s := range sets {
		fmt.Fprintf(w, "%s\n  %s\n", s.Title(), stackHow(s.Stacks, s.Runs))
		for _, note := range s.Stacks.Notes {
			fmt.Fprintf(w, "  note: %s\n", note)
		}
		if s.Stacks.Samples() == 0 {
			fmt.Fprintf(w, "  no samples\n\n")
			continue
		}
		fmt.Fprintf(w, "  thread states: %s\n\n", stateShares(s.Stacks))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  COUNT\tSHARE\tSTATE\tSTACK (innermost first)")
		for _, e := range stacks.Top(s.Stacks, n) {
			st := e.State
			if st == "" {
				st = "-"
			}
			fmt.Fprintf(tw, "  %d\t%.1f%%\t%s\t%s\n", e.Count, 100*e.Share, st, pmpLine(e.Frames))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	return nil
}

// StackDiff is two sets' stacks compared (stacks.Compare): A is the base.
type StackDiff struct {
	A, B StackSet
	Diff stacks.Diff
}

// StackDiffs writes each comparison: the stacks whose share grew and
// shrank most, and those present in one set only. Format text or json.
func StackDiffs(w io.Writer, diffs []StackDiff, f string) error {
	switch f {
	case "json":
		type out struct {
			A, B      string
			Test      string
			Threads   int
			Source    string
			Diff      stacks.Diff
			How, HowB string
		}
		var o []out
		for _, d := range diffs {
			o = append(o, out{A: d.A.Label, B: d.B.Label, Test: d.A.Test, Threads: d.A.Threads, Source: d.A.Stacks.Source, Diff: d.Diff,
				How: stackHow(d.A.Stacks, d.A.Runs), HowB: stackHow(d.B.Stacks, d.B.Runs)})
		}
		return JSON(w, o)
	case "text":
	default:
		return fmt.Errorf("--format %s: qpslab stacks diff writes text or json", f)
	}
	for _, d := range diffs {
		fmt.Fprintf(w, "%s, %d thread(s), %s: %s (A, %d samples) against %s (B, %d samples); stacks below %.1f%% of the samples in both left out as noise\n",
			d.A.Test, d.A.Threads, d.A.Stacks.Source, d.A.Label, d.Diff.SamplesA, d.B.Label, d.Diff.SamplesB, 100*d.Diff.Threshold)
		fmt.Fprintf(w, "  A: %s\n  B: %s\n\n", stackHow(d.A.Stacks, d.A.Runs), stackHow(d.B.Stacks, d.B.Runs))
		section := func(title string, es []stacks.Entry) {
			fmt.Fprintf(w, "  %s\n", title)
			if len(es) == 0 {
				fmt.Fprintf(w, "    none\n\n")
				return
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "    A\tB\tCHANGE\tSTACK (innermost first)")
			for _, e := range es {
				fmt.Fprintf(tw, "    %.1f%%\t%.1f%%\t%+.1f\t%s\n", 100*e.Share, 100*e.ShareB, 100*e.Delta(), pmpLine(e.Frames))
			}
			tw.Flush()
			fmt.Fprintln(w)
		}
		section("only in B (absent in A):", d.Diff.OnlyB)
		section("only in A (absent in B):", d.Diff.OnlyA)
		section("grew most (share of samples, points):", d.Diff.Grew)
		section("shrank most:", d.Diff.Shrank)
	}
	return nil
}
