package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/stacks"
	"github.com/qpslab/qpslab/internal/table"
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
	// StorageEngine is its runs' storage engine ("" where they record none).
	StorageEngine string `json:"engine,omitempty"`
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
	return stackTopDoc(sets, n).Write(w, f, false)
}

// stackTopDoc is StackTop's doc.
func stackTopDoc(sets []StackSet, n int) Doc {
	type top struct {
		StackSet
		Top    []stacks.Entry     `json:"top"`
		States map[string]float64 `json:"states"`
	}
	var out []top
	d := Doc{What: "qpslab stacks (and folded, pprof)"}
	for _, s := range sets {
		t := top{StackSet: s, Top: stacks.Top(s.Stacks, n), States: stacks.States(s.Stacks)}
		t.StackSet.Stacks.Stacks = nil // the top is what was asked for; --format folded has them all
		out = append(out, t)
		d.Sayf("%s", s.Title())
		d.Sayf("  %s", stackHow(s.Stacks, s.Runs))
		for _, note := range s.Stacks.Notes {
			d.Sayf("  note: %s", note)
		}
		if s.Stacks.Samples() == 0 {
			d.Sayf("  no samples")
			d.Gap()
			continue
		}
		d.Sayf("  thread states: %s", stateShares(s.Stacks))
		d.Gap()
		tb := table.New("COUNT", "SHARE", "STATE", "STACK (innermost first)")
		tb.Indent = "  "
		for _, e := range stacks.Top(s.Stacks, n) {
			st := e.State
			if st == "" {
				st = "-"
			}
			tb.Add(strconv.FormatInt(e.Count, 10), fmt.Sprintf("%.1f%%", 100*e.Share), st, pmpLine(e.Frames))
		}
		d.Put(tb)
		d.Gap()
	}
	d.Data = out
	return d
}

// StackDiff is two sets' stacks compared (stacks.Compare): A is the base.
type StackDiff struct {
	A, B StackSet
	Diff stacks.Diff
}

// StackDiffs writes each comparison: the stacks whose share grew and
// shrank most, and those present in one set only. Format text or json.
func StackDiffs(w io.Writer, diffs []StackDiff, f string) error {
	type out struct {
		A, B      string
		Test      string
		Threads   int
		Source    string
		Diff      stacks.Diff
		How, HowB string
		Note      string `json:",omitempty"`
	}
	var o []out
	d := Doc{What: "qpslab stacks diff"}
	for _, sd := range diffs {
		note := storageEnginesNote(sd.A, sd.B)
		o = append(o, out{A: sd.A.Label, B: sd.B.Label, Test: sd.A.Test, Threads: sd.A.Threads, Source: sd.A.Stacks.Source, Diff: sd.Diff,
			How: stackHow(sd.A.Stacks, sd.A.Runs), HowB: stackHow(sd.B.Stacks, sd.B.Runs), Note: note})
		d.Sayf("%s, %d thread(s), %s: %s (A, %d samples) against %s (B, %d samples); stacks below %.1f%% of the samples in both left out as noise",
			sd.A.Test, sd.A.Threads, sd.A.Stacks.Source, sd.A.Label, sd.Diff.SamplesA, sd.B.Label, sd.Diff.SamplesB, 100*sd.Diff.Threshold)
		d.Sayf("  A: %s", stackHow(sd.A.Stacks, sd.A.Runs))
		d.Sayf("  B: %s", stackHow(sd.B.Stacks, sd.B.Runs))
		if note != "" {
			d.Sayf("  note: %s", note)
		}
		d.Gap()
		section := func(title string, es []stacks.Entry) {
			d.Sayf("  %s", title)
			if len(es) == 0 {
				d.Sayf("    none")
				d.Gap()
				return
			}
			tb := table.New("A", "B", "CHANGE", "STACK (innermost first)")
			tb.Indent = "    "
			for _, e := range es {
				tb.Add(fmt.Sprintf("%.1f%%", 100*e.Share), fmt.Sprintf("%.1f%%", 100*e.ShareB), fmt.Sprintf("%+.1f", 100*e.Delta()), pmpLine(e.Frames))
			}
			d.Put(tb)
			d.Gap()
		}
		section("only in B (absent in A):", sd.Diff.OnlyB)
		section("only in A (absent in B):", sd.Diff.OnlyA)
		section("grew most (share of samples, points):", sd.Diff.Grew)
		section("shrank most:", sd.Diff.Shrank)
	}
	d.Data = o
	return d.Write(w, f, false)
}

// storageEnginesNote says, for a diff of two storage engines' stacks (an InnoDB
// run against a MyRocks run of the same test), that their code paths
// differ; "" for stacks of one engine.
func storageEnginesNote(a, b StackSet) string {
	ea, eb := storageEngineName(a.StorageEngine), storageEngineName(b.StorageEngine)
	if ea == eb {
		return ""
	}
	return fmt.Sprintf("A ran storage engine %s and B %s: their code paths differ, so most stacks below the handler are in one of them only; the diff says where each engine spends the server's time on this test, not what changed in one code path", ea, eb)
}

// storageEngineName is a run's engine as the note says it: InnoDB where none is
// recorded (runs from before --engine were InnoDB's).
func storageEngineName(e string) string {
	if e == "" {
		return result.DefaultStorageEngine
	}
	return e
}
