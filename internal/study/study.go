// Package study owns qpslab study: a version sweep's one document. It runs
// a suite on a list of builds (through internal/app, fetching registry
// builds once), or reads their runs back from the store (internal/selector),
// and assembles the study from the runs, ordered as the builds were given:
// the summary per group per build against a base, the relative values per
// group (a chart each), the neighbour verdicts with the build each change
// arrived in, the hardware cost per operation of the tests that changed,
// and the commands that reproduce it; then writes it as Markdown and as an
// HTML page. Assembly (Assemble) reads nothing and runs nothing, so it is
// tested over fixture history and re-rendered from a store alike. It
// concludes nothing itself: verdicts are analysis's, findings come from the
// hook it is given; it starts no server (jobs and plan do).
package study

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
)

// FindingsFunc gives a study's tl;dr: sentences, each backed by a figure
// and a test name, from the comparison of every build with the base and
// the neighbours' comparisons (each build against the one before it). nil
// (or no sentence) leaves the tl;dr out.
type FindingsFunc func(base *analysis.Comparison, neighbours []*analysis.Comparison, sets []analysis.Set) []string

// Options of an assembly.
type Options struct {
	Base     int              // index into the sets of the base
	Compare  analysis.Options // the comparisons' layout and noise floors
	Findings FindingsFunc     // the tl;dr; nil for none
	Commands []string         // the commands that reproduce the study
	// MaxHardware caps the hardware tables (the largest changes first in
	// the choice, run order in the document); 0 for 12.
	MaxHardware int
	// Summary: the seeds' group summaries in this layout too
	// (RunOptions.Summary).
	Summary string
}

// Study is a sweep's document, assembled from its runs.
type Study struct {
	Suite    string
	Labels   []string // in sweep order
	Versions []string // of each label ("" unknown)
	Base     int      // index into Labels
	Layout   string
	// Cmp is every other label against the base, in sweep order.
	Cmp *analysis.Comparison
	// Others are Cmp.Others' indexes into Labels.
	Others []int
	// Neighbours are each label against the one before it: Neighbours[i]
	// is Labels[i+1] against Labels[i].
	Neighbours []*analysis.Comparison
	Changes    []Change
	Hardware   []analysis.MetricTable
	// HardwareLeft is how many changed tests' tables were left out.
	HardwareLeft int
	hwChanged    int // tests that changed, between neighbours or against the base
	Findings     []string
	Commands     []string
	// Summary is the seeds' layout of the per-build group summaries
	// ("": none).
	Summary string
}

// Change is a test whose verdict changed between two neighbours: it
// arrived in To.
type Change struct {
	From, To   string
	Test       string
	Threads    int
	Conditions string
	Group      string
	Verdict    analysis.Verdict
}

// Assemble makes the study of sets, ordered as the sweep is (by version,
// or as the builds were given): every label against the base, each
// against its predecessor, and the hardware tables of the tests whose
// verdict changed between neighbours.
func Assemble(sets []analysis.Set, o Options) (*Study, error) {
	if len(sets) < 2 {
		return nil, fmt.Errorf("a study needs two builds or more: give --build B1,B2,…")
	}
	if o.Base < 0 || o.Base >= len(sets) {
		return nil, fmt.Errorf("the base is not one of the study's builds")
	}
	s := &Study{Base: o.Base, Commands: o.Commands, Summary: o.Summary}
	var others []analysis.Set
	for i, set := range sets {
		s.Labels = append(s.Labels, set.Label)
		s.Versions = append(s.Versions, set.Version())
		if i != o.Base {
			others = append(others, set)
			s.Others = append(s.Others, i)
		}
	}
	cmp, err := analysis.Compare(sets[o.Base], others, o.Compare)
	if err != nil {
		return nil, err
	}
	s.Cmp, s.Suite, s.Layout = cmp, cmp.Suite, cmp.Layout
	changed := map[[2]string]float64{} // test, threads → the largest |log rel|
	for i := 1; i < len(sets); i++ {
		nc := o.Compare
		nc.Layout = cmp.Layout
		n, err := analysis.Compare(sets[i-1], sets[i:i+1], nc)
		if err != nil {
			return nil, fmt.Errorf("%s against %s: %w", sets[i].Label, sets[i-1].Label, err)
		}
		s.Neighbours = append(s.Neighbours, n)
		for _, r := range n.Rows {
			v := r.Others[0].Verdict
			if r.Others[0].Missing || !v.Changed() {
				continue
			}
			s.Changes = append(s.Changes, Change{From: sets[i-1].Label, To: sets[i].Label, Test: r.Test, Threads: r.Threads, Conditions: r.Conditions, Group: r.Group, Verdict: v})
			k := [2]string{r.Test, fmt.Sprint(r.Threads)}
			changed[k] = math.Max(changed[k], math.Abs(math.Log(v.Rel)))
		}
	}
	for _, r := range cmp.Rows { // changes that crept in over several builds
		for _, c := range r.Others {
			if !c.Missing && c.Verdict.Changed() {
				k := [2]string{r.Test, fmt.Sprint(r.Threads)}
				changed[k] = math.Max(changed[k], math.Abs(math.Log(c.Verdict.Rel)))
			}
		}
	}
	s.hwChanged = len(changed)
	if o.Findings != nil {
		s.Findings = o.Findings(cmp, s.Neighbours, sets)
	}
	s.Findings = append(s.Findings, s.disagreements()...)
	s.Hardware, s.HardwareLeft = hardware(sets, changed, o.MaxHardware)
	return s, nil
}

// hardware are the metric tables of the changed tests that have hardware
// metrics, at most max of them (the largest changes), in run order.
func hardware(sets []analysis.Set, changed map[[2]string]float64, most int) ([]analysis.MetricTable, int) {
	if len(changed) == 0 {
		return nil, 0
	}
	if most <= 0 {
		most = 12
	}
	tables, err := analysis.Metrics(sets, "")
	if err != nil {
		return nil, 0 // no run measured its hardware
	}
	var keep []int
	for i, t := range tables {
		if _, ok := changed[[2]string{t.Test, fmt.Sprint(t.Threads)}]; ok {
			keep = append(keep, i)
		}
	}
	left := 0
	if len(keep) > most {
		by := append([]int{}, keep...)
		sort.SliceStable(by, func(a, b int) bool {
			ta, tb := tables[by[a]], tables[by[b]]
			return changed[[2]string{ta.Test, fmt.Sprint(ta.Threads)}] > changed[[2]string{tb.Test, fmt.Sprint(tb.Threads)}]
		})
		left = len(keep) - most
		keep = by[:most]
		sort.Ints(keep)
	}
	out := make([]analysis.MetricTable, len(keep))
	for i, k := range keep {
		out[i] = tables[k]
	}
	return out, left
}

// disagreements say why a build's verdict against the base and the
// changes the neighbour verdicts placed between them do not tell one
// story, test by test: a change against the base that no neighbour step
// shows (it crept in over several builds), neighbour changes whose
// product is no change against the base (they cancel, or the base
// comparison is not decided), neighbour changes the other way than the
// change against the base, each with the figures. Each test gets one
// sentence, of the newest build that disagrees (named where it is not
// the newest of the sweep). Every verdict is the same analysis.Judge's,
// over the same runs.
func (s *Study) disagreements() []string {
	last := len(s.Labels) - 1
	var out []string
	for _, r := range s.Cmp.Rows {
		if r.Group == "load" {
			continue
		}
		for at := last; at >= 0; at-- {
			if line := s.disagreement(r, at, at == last); line != "" {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// disagreement is what disagreements say of row r at build at ("" where
// its verdict against the base and the neighbour changes agree); newest
// leaves the build unnamed.
func (s *Study) disagreement(r analysis.Row, at int, newest bool) string {
	oi := slices.Index(s.Others, at)
	if at == s.Base || oi < 0 || r.Others[oi].Missing {
		return ""
	}
	lo, hi := min(s.Base, at), max(s.Base, at)
	var placed []Change
	prod := 1.0
	for _, ch := range s.Changes {
		i := slices.Index(s.Labels, ch.To)
		if ch.Test == r.Test && ch.Threads == r.Threads && i > lo && i <= hi {
			placed = append(placed, ch)
			prod *= ch.Verdict.Rel
		}
	}
	if at < s.Base {
		prod = 1 / prod // the steps lead from this build up to the base: its value against the base is their inverse
	}
	v := r.Others[oi].Verdict
	var where []string
	for _, ch := range placed {
		where = append(where, fmt.Sprintf("%.2f in %s", ch.Verdict.Rel, ch.To))
	}
	test := r.Test
	if !newest {
		test += " in " + s.Labels[at]
	}
	switch {
	case v.Changed() && len(placed) == 0:
		return fmt.Sprintf("%s is %.2f against %s (%s), a change no step between neighbours shows beyond the noise: it crept in over the builds between them.", test, v.Rel, s.Labels[s.Base], v.Kind)
	case !v.Changed() && len(placed) > 0:
		why := fmt.Sprintf("against %s it is %.2f, %s", s.Labels[s.Base], v.Rel, kindWords(v))
		if len(placed) > 1 && math.Abs(math.Log(prod)) <= math.Log1p(v.Floor) {
			why = fmt.Sprintf("the changes cancel (their product %.2f): %s", prod, why)
		}
		return fmt.Sprintf("%s changed between neighbours (%s) but %s.", test, strings.Join(where, ", "), why)
	case v.Changed() && math.Log(prod)*math.Log(v.Rel) < 0:
		return fmt.Sprintf("%s is %.2f against %s (%s), but the changes between neighbours (%s, product %.2f) go the other way: the neighbour steps do not account for it.", test, v.Rel, s.Labels[s.Base], v.Kind, strings.Join(where, ", "), prod)
	}
	return ""
}

// kindWords is a verdict's kind in words, with its interval.
func kindWords(v analysis.Verdict) string {
	iv := ""
	if v.Lo > 0 && v.Hi > 0 {
		iv = fmt.Sprintf(" (%.2f to %.2f)", v.Lo, v.Hi)
	}
	switch v.Kind {
	case analysis.KindSame:
		return "undecided" + iv
	case analysis.KindEquivalent:
		return "the same within ±" + fmt.Sprintf("%.0f %%", 100*v.Floor) + iv
	case analysis.KindInsideNoise:
		return "inside the noise floor" + iv
	}
	return v.Kind + iv
}
