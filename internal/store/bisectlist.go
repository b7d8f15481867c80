package store

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/table"
)

// The stored bisections as every surface shows them (their owner builds
// their tables, as it does the tokens' and labels'): qpslab bisect status
// (internal/bisect) and the dashboard's pages (internal/serve), with the
// same cells (BisectStepCells).

// BisectionsTable is qpslab bisect status: the stored bisections, one a line.
func BisectionsTable(bs []Bisection) *table.Table {
	t := table.New("ID", "STATE", "GOOD", "BAD", "SUITE", "TEST", "METRIC", "THRESHOLD", "STARTED", "RESULT")
	t.Empty = "no bisections (qpslab bisect GOOD BAD --src DIR --suite S --test T starts one)"
	for _, b := range bs {
		t.Add(strconv.FormatInt(b.ID, 10), b.State, Hash8(b.Good), Hash8(b.Bad), b.Suite, b.Test, b.Metric,
			fmt.Sprintf("%.1f %%", 100*b.Threshold), b.Started.Format("2006-01-02 15:04"), b.Result)
	}
	return t
}

// WriteBisectSteps prints one bisection and every step of its log: the commit,
// its build, what it was measured against, the verdict and interval.
// subjects are the commits' subjects by hash (where the tree still has
// them).
func WriteBisectSteps(w io.Writer, b Bisection, steps []BisectStep, subjects map[string]string) error {
	fmt.Fprintf(w, "bisection %d: %s, %s %s of suite %s, GOOD %s, BAD %s, threshold %.1f %%, src %s\n", b.ID, b.State, b.Test, b.Metric, b.Suite,
		Hash8(b.Good), Hash8(b.Bad), 100*b.Threshold, b.Src)
	if b.Result != "" {
		fmt.Fprintln(w, b.Result)
	}
	fmt.Fprintln(w)
	t := table.New("#", "COMMIT", "AGAINST", "BUILD", "VERDICT", "REL (>1 BETTER)", "INTERVAL", "ROUNDS", "PLAN", "SUBJECT", "NOTE")
	for _, s := range steps {
		against, rel, iv := BisectStepCells(b, s)
		t.Add(strconv.Itoa(s.Seq), Hash8(s.Commit), against, s.Build, s.Kind, rel, iv, strconv.Itoa(s.Rounds), s.Plan, subjects[s.Commit], s.Note)
	}
	return table.Render(w, table.Text, t, table.Options{})
}

// BisectStepCells are a step's cells as every surface shows them: what it was
// measured against (GOOD, a hash, or - for GOOD itself), its relative
// value and its interval (- where not measured), turned so that above 1
// is better as the walk's notes say them (inverted for a metric where
// lower is better).
func BisectStepCells(b Bisection, s BisectStep) (against, rel, interval string) {
	if m, ok := result.Lookup(b.Metric); ok && b.Metric != HeadlineMetric && !m.HigherIsBetter {
		s.Rel, s.Lo, s.Hi = 1/s.Rel, 1/s.Hi, 1/s.Lo
	}
	against, rel, interval = Hash8(s.Base), "-", "-"
	switch s.Base {
	case b.Good:
		against = "GOOD"
	case "":
		against = "-"
	}
	if !math.IsNaN(s.Rel) {
		rel = fmt.Sprintf("%.3f", s.Rel)
	}
	if !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi) {
		interval = fmt.Sprintf("[%.3f, %.3f]", s.Lo, s.Hi)
	}
	return against, rel, interval
}

// Hash8 is a commit hash as builds and bisections name it (8 hex digits).
func Hash8(hash string) string { return build.Commit{Hash: hash}.Short() }
