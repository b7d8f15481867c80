package report

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/stacks"
	"github.com/qpslab/qpslab/internal/store"
)

// CompareOptions are a comparison's options: the group layout, and the
// noise floors of the host the base ran on (qpslab run --aa); a store
// that cannot say is warned of on errw and the comparison goes on without.
func CompareOptions(ctx context.Context, st *store.Store, sets []analysis.Set, groups string, errw io.Writer) analysis.Options {
	o := analysis.Options{Layout: groups}
	if st == nil || len(sets) == 0 || len(sets[0].Runs) == 0 {
		return o
	}
	noise, err := st.NoiseFor(ctx, sets[0].Runs[0].Suite, sets[0].Runs)
	if err != nil {
		fmt.Fprintf(errw, "warning: no noise floor: %v\n", err)
		return o
	}
	o.Noise = noise
	return o
}

// HTMLFile writes the HTML report of sets (loaded with samples) and their
// comparison to path, with the configs' contents from st, and says where
// on errw.
func HTMLFile(ctx context.Context, st *store.Store, sets []analysis.Set, cmp *analysis.Comparison, path string, errw io.Writer) error {
	content := func(id string) string {
		_, c, _ := st.Config(ctx, id) // imports may have no content
		return c
	}
	m := NewModel(sets, cmp, store.HostID, content, time.Now().UTC())
	var err error
	if m.Steps, err = StepSections(sets, cmp.Suite); err != nil {
		return err
	}
	if err := WriteHTML(path, m); err != nil {
		return err
	}
	fmt.Fprintf(errw, "report: %s\n", path)
	return nil
}

// StepReport prints the step tables (StepSections) and the response-time
// buckets after a comparison of a suite run in steps.
func StepReport(w io.Writer, sets []analysis.Set, suiteName, format string) error {
	secs, err := StepSections(sets, suiteName)
	if err != nil || len(secs) == 0 {
		return err
	}
	fmt.Fprintln(w)
	if err := StepTables(w, secs, format, IsTTY(w)); err != nil {
		return err
	}
	bt, err := analysis.Buckets(sets)
	if err != nil {
		return err
	}
	return BucketTables(w, bt, format)
}

// Why prints, after a run with --pmp or --perf, for each test with
// stacks: the server's counters per op side by side, each label's top
// stacks and, against the first label, their diff.
func Why(w io.Writer, sets []analysis.Set) error {
	secs := StackSections(sets)
	if len(secs) == 0 {
		return nil
	}
	var l []string
	for _, s := range sets {
		l = append(l, s.Label)
	}
	labels := strings.Join(l, " ")
	shown := map[string]bool{}
	for _, s := range secs {
		key := fmt.Sprintf("%s/%d", s.Test, s.Threads)
		if !shown[key] {
			shown[key] = true
			if tables, err := analysis.Metrics(sets, s.Test); err == nil {
				for _, t := range tables {
					if t.Threads == s.Threads && len(t.Server) > 0 {
						fmt.Fprintf(w, "\n%s, %d thread(s): the server's own figures (qpslab metrics %s --test %s)\n\n", t.Test, t.Threads, labels, t.Test)
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
		fmt.Fprintf(w, "%s, %d thread(s): top %s stacks (qpslab stacks %s --test %s --source %s)\n\n", s.Test, s.Threads, s.Source, labels, s.Test, s.Source)
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
