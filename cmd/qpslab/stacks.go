package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/stacks"
)

// stackFlags are what qpslab stacks and stacks diff select by.
type stackFlags struct {
	sel    selection
	test   string
	source string
	top    int
	format string
}

func (f *stackFlags) add(c *cobra.Command, formats string) {
	f.sel.flags(c)
	c.Flags().StringVar(&f.test, "test", "", "only tests matching this glob (e.g. update-index_range=100)")
	c.Flags().StringVar(&f.source, "source", "pmp", "pmp (thread stacks, qpslab run --pmp) or perf (on-CPU samples, qpslab run --perf)")
	c.Flags().IntVar(&f.top, "top", 10, "stacks shown per list (0: all)")
	c.Flags().StringVar(&f.format, "format", "text", formats)
}

// sections loads labels' runs with their stacks and gathers the selected
// ones; an error names what there is when nothing matches.
func (f *stackFlags) sections(cmd *cobra.Command, labels []string) ([]report.StackSection, error) {
	if f.source != "pmp" && f.source != "perf" {
		return nil, fmt.Errorf("--source %s: use pmp or perf", f.source)
	}
	if f.top < 0 {
		return nil, fmt.Errorf("--top %d: give 0 (all) or more", f.top)
	}
	if f.test != "" {
		if _, err := path.Match(f.test, ""); err != nil {
			return nil, fmt.Errorf("--test %q is not a valid glob: %v", f.test, err)
		}
	}
	st, err := readStore(cmd)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	f.sel.stacks = true
	sets, err := f.sel.load(cmd, st, labels, false)
	if err != nil {
		return nil, err
	}
	var out []report.StackSection
	var have []string
	for _, s := range report.StackSections(sets) {
		have = append(have, fmt.Sprintf("%s at %d thread(s) (%s)", s.Test, s.Threads, s.Source))
		if ok, _ := path.Match(f.test, s.Test); (f.test == "" || ok) && s.Source == f.source {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		if len(have) == 0 {
			return nil, fmt.Errorf("%s have no stacks: run with qpslab run … --pmp 1 (thread stacks) or --perf (CPU profile)", strings.Join(labels, ", "))
		}
		return nil, fmt.Errorf("no %s stacks for --test %q: the labels have %s", f.source, f.test, strings.Join(have, "; "))
	}
	return out, nil
}

func newStacksCmd() *cobra.Command {
	var f stackFlags
	var out string
	c := &cobra.Command{
		Use:   "stacks LABEL... [--test T]",
		Short: "Where the server's threads were: the top stacks of runs made with --pmp or --perf, their diff, folded and pprof exports",
		Long: `Show the server's thread stacks captured during the measured windows of runs
made with qpslab run … --pmp N (every thread's stack every N seconds: where
threads run and where they wait) or --perf (on-CPU samples). Stacks are
collapsed as pt-pmp does (function names, argument lists dropped, identical
stacks counted) and merged over a label's runs of a test: the top stacks
with their count, share of the samples and thread state (R running, S
sleeping, D waiting for I/O), innermost frame first.

--format folded writes one test's stacks as folded lines (flamegraph.pl,
speedscope); --format pprof writes a pprof profile to --out (go tool pprof).
qpslab stacks diff compares two labels.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			secs, err := f.sections(cmd, args)
			if err != nil {
				return err
			}
			switch f.format {
			case "text", "json":
				return report.StackTop(cmd.OutOrStdout(), flatten(secs), f.top, f.format)
			case "folded", "pprof":
				sets := flatten(secs)
				if len(sets) != 1 {
					var names []string
					for _, s := range sets {
						names = append(names, s.Title())
					}
					return fmt.Errorf("--format %s writes one label's stacks of one test: narrow with one LABEL, --test and --threads (there are %d: %s)", f.format, len(sets), strings.Join(names, "; "))
				}
				return writeExport(cmd, out, f.format, sets[0])
			}
			return fmt.Errorf("--format %s: use text, json, folded or pprof", f.format)
		},
	}
	f.add(c, "text, json, folded (flamegraph.pl, speedscope) or pprof (needs --out)")
	c.Flags().StringVar(&out, "out", "", "write the folded or pprof export to this file (default for folded: standard output)")

	var df stackFlags
	var threshold float64
	diff := &cobra.Command{
		Use:   "diff A B [--test T]",
		Short: "Compare two labels' stacks: what grew or shrank most, what is present in one and absent in the other",
		Long: `Compare the stacks of label A (the base) and label B, test by test: the
stacks whose share of the samples grew and shrank most, and the stacks
present in one and absent in the other. Thread states are merged: a stack is
its frames. Stacks below --threshold percent of the samples in both are left
out as noise.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if threshold < 0 || threshold >= 100 {
				return fmt.Errorf("--threshold %g: give a percentage of the samples from 0 to below 100", threshold)
			}
			secs, err := df.sections(cmd, args)
			if err != nil {
				return err
			}
			diffs := stackDiffs(secs, args[0], args[1], threshold/100, df.top)
			if len(diffs) == 0 {
				return fmt.Errorf("%s and %s have no %s stacks of the same test and thread count: see qpslab stacks %s %s", args[0], args[1], df.source, args[0], args[1])
			}
			return report.StackDiffs(cmd.OutOrStdout(), diffs, df.format)
		},
	}
	df.add(diff, "text or json")
	diff.Flags().Float64Var(&threshold, "threshold", 100*report.DiffThreshold, "percent of the samples below which a stack is noise (in both labels)")
	c.AddCommand(diff)
	return c
}

func flatten(secs []report.StackSection) []report.StackSet {
	var out []report.StackSet
	for _, s := range secs {
		out = append(out, s.Sets...)
	}
	return out
}

// stackDiffs compares label a's stacks with b's in every section that has
// both.
func stackDiffs(secs []report.StackSection, a, b string, threshold float64, top int) []report.StackDiff {
	var out []report.StackDiff
	for _, s := range secs {
		var sa, sb *report.StackSet
		for i := range s.Sets {
			switch s.Sets[i].Label {
			case a:
				sa = &s.Sets[i]
			case b:
				sb = &s.Sets[i]
			}
		}
		if sa != nil && sb != nil {
			out = append(out, report.StackDiff{A: *sa, B: *sb, Diff: stacks.Compare(sa.Stacks, sb.Stacks, threshold, top)})
		}
	}
	return out
}

// writeExport writes set as folded stacks or a pprof profile, to file (or,
// for folded, standard output).
func writeExport(cmd *cobra.Command, file, format string, set report.StackSet) error {
	if format == "pprof" && file == "" {
		return fmt.Errorf("--format pprof writes a binary profile: name its file with --out (then: go tool pprof -top FILE)")
	}
	var w io.Writer = cmd.OutOrStdout()
	var f *os.File
	if file != "" {
		var err error
		if f, err = os.Create(file); err != nil {
			return fmt.Errorf("write the export: %w", err)
		}
		w = f
	}
	var err error
	if format == "pprof" {
		err = stacks.WritePprof(w, set.Stacks)
	} else {
		err = stacks.WriteFolded(w, set.Stacks)
	}
	if f != nil {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write the export %s: %w", file, cerr)
		}
		if err == nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s (%s)\n", format, file, set.Title())
		}
	}
	return err
}
