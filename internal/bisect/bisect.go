// Package bisect is qpslab bisect, all of it but its table (internal/store),
// its job kind (internal/fleet), its pages (internal/serve) and its flags
// (cmd/qpslab).
//
// The walk (this file): the commits between a GOOD and a BAD commit of a
// source tree, binary-searched for the first one whose build is
// measurably worse, each step a midpoint compiled (through a Builder) and
// measured paired against GOOD's build (through a Tester), judged by the
// halfway cut (rule.go), logged as it goes (through a Log: the store),
// resumed from that log, with commits that do not build or cannot be told
// skipped as git bisect skip does. The walk itself compiles, runs and
// stores nothing, and prints only to the writer it is given.
//
// Its orchestration: the commands and the Tester that runs a step's plan
// (command.go), a fleet agent's bisection job (job.go), and the
// dashboard's "bisect this" (dashboard.go). It reads no flags; a step's
// plan runs on the runner internal/app gives it in its Env.
package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// CompileOptions are a compile's options; CompileError a commit that
// does not build.
type (
	CompileOptions = build.CompileOptions
	CompileError   = build.CompileError
)

// Builder compiles a commit of a source tree into a registered build
// (production: build.Registry.Compile). A commit that does not build
// returns a *CompileError.
type Builder interface {
	Compile(ctx context.Context, o CompileOptions) (build.Build, error)
}

// Measure is what one paired measurement of a build against a base build
// found, for the walk's metric.
type Measure struct {
	Plan    string           // the plan id of its runs
	Rounds  int              // paired rounds
	Verdict analysis.Verdict // other against base (analysis.Test: Rel, Lo, Hi, Significant)
	// Floor is this host's noise floor of the test (qpslab run --aa), 0
	// where it was never measured.
	Floor float64
}

// MeasureOptions say how much to measure.
type MeasureOptions struct {
	Rounds int
	// Earlier are the plans of earlier measurements of the same two
	// builds (a retry pools their rounds with its own).
	Earlier []string
	// Final: the last measurement, the first bad commit against its
	// parent (the Tester captures stacks there when asked to).
	Final bool
	// Decided, if set, says whether a verdict answers the step's question
	// (a midpoint's: Classify is not CannotTell): the Tester then adds
	// repeats, look after look, until it does, as --until-decided adds
	// them to a comparison's undecided tests (one mechanism: the plan's
	// looks), each look judged at the level that keeps the false calls of
	// all of them within α.
	Decided func(analysis.Verdict) bool
}

// Tester measures build other against build base, paired (production: a
// plan of the two builds interleaved by test, its rounds compared).
type Tester interface {
	Measure(ctx context.Context, base, other build.Build, o MeasureOptions) (Measure, error)
}

// Log keeps the walk's steps and state (production: the store).
type Log interface {
	AddBisectStep(ctx context.Context, id int64, st store.BisectStep) (store.BisectStep, error)
	SetBisection(ctx context.Context, b store.Bisection) error
}

// Walk is one bisection: its question, what it is given to answer it,
// and its stored log (empty for a new one).
type Walk struct {
	Good    build.Commit
	Commits []build.Commit // after GOOD up to BAD (the last), oldest first: build.Range
	Compile CompileOptions // Src, Flavor, CFlags, Progress; Commit is set per step
	Builder Builder
	Tester  Tester
	// Lookup finds a build compiled before (a resumed walk reuses the
	// builds its log names); nil: compile again.
	Lookup func(ctx context.Context, name string) (build.Build, error)
	Log    Log
	// Bisection is the stored bisection (its ID, threshold: 0 for the
	// host's noise floor, else analysis.DefaultFloor) and Steps its log.
	Bisection store.Bisection
	Steps     []store.BisectStep
	Rounds    int  // rounds of each measurement
	Higher    bool // the metric: higher is better
	// Why: the final measurement captures stacks (--pmp, --perf), so it
	// is made even where a step measured the same two builds.
	Why bool
	Out io.Writer

	builds map[string]build.Build
}

// Result is how a walk ended.
type Result struct {
	State     string         // a store.Bisect* state
	Line      string         // one line: the answer, or why it stopped
	First     *build.Commit  // the first bad commit (nil: none, or a range)
	Range     []build.Commit // the commits the first bad one is among, when skipped commits border it
	Parent    build.Commit   // First's parent
	Magnitude float64        // 1 − rel of BAD against GOOD (rel turned up)
	Final     *Measure       // First against Parent
	Base      build.Build    // Parent's build (for stacks)
	Bad       build.Build    // First's build
	Undecided *build.Commit  // the step that could not tell
}

// latest is the log's latest step of commit against base, the final
// measurement (kind Final) not among them: it is no verdict.
func (w *Walk) latest(commit, base string) (store.BisectStep, bool) {
	for i := len(w.Steps) - 1; i >= 0; i-- {
		if s := w.Steps[i]; s.Commit == commit && s.Base == base && s.Kind != Final {
			return s, true
		}
	}
	return store.BisectStep{}, false
}

// final is the log's latest final measurement of commit against base.
func (w *Walk) final(commit, base string) (store.BisectStep, bool) {
	for i := len(w.Steps) - 1; i >= 0; i-- {
		if s := w.Steps[i]; s.Commit == commit && s.Base == base && s.Kind == Final {
			return s, true
		}
	}
	return store.BisectStep{}, false
}

// earlier are the plans of the log's measurements of commit against base.
func (w *Walk) earlier(commit, base string) []string {
	var out []string
	for _, s := range w.Steps {
		if s.Commit == commit && s.Base == base && s.Plan != "" {
			out = append(out, s.Plan)
		}
	}
	return out
}

func (w *Walk) add(ctx context.Context, st store.BisectStep) error {
	st, err := w.Log.AddBisectStep(ctx, w.Bisection.ID, st)
	if err != nil {
		return err
	}
	w.Steps = append(w.Steps, st)
	return nil
}

func (w *Walk) end(ctx context.Context, state, line string) (Result, error) {
	w.Bisection.State, w.Bisection.Result = state, line
	w.Bisection.Ended = time.Time{}
	if state != store.BisectRunning {
		w.Bisection.Ended = time.Now().UTC()
	}
	if err := w.Log.SetBisection(ctx, w.Bisection); err != nil {
		return Result{}, err
	}
	return Result{State: state, Line: line}, nil
}

// buildOf is commit c's build: the one its log names when Lookup finds
// it and it is still of that commit (a build of the same name may have
// been compiled again since), else compiled (the Builder reuses a build of
// the same commit and flags). A commit that does not build returns its
// *CompileError.
func (w *Walk) buildOf(ctx context.Context, c build.Commit) (build.Build, error) {
	if b, ok := w.builds[c.Hash]; ok {
		return b, nil
	}
	if w.builds == nil {
		w.builds = map[string]build.Build{}
	}
	if w.Lookup != nil {
		for i := len(w.Steps) - 1; i >= 0; i-- {
			if s := w.Steps[i]; s.Commit == c.Hash && s.Build != "" {
				if b, err := w.Lookup(ctx, s.Build); err == nil && b.Commit == c.Hash {
					w.builds[c.Hash] = b
					return b, nil
				}
				break
			}
		}
	}
	o := w.Compile
	o.Commit = c.Hash
	b, err := w.Builder.Compile(ctx, o)
	if err != nil {
		return b, err
	}
	w.builds[c.Hash] = b
	return b, nil
}

func doesNotBuild(err error) (*CompileError, bool) {
	var ce *CompileError
	ok := errors.As(err, &ce)
	return ce, ok
}

func (w *Walk) say(format string, a ...any) {
	if w.Out != nil {
		fmt.Fprintf(w.Out, format+"\n", a...)
	}
}

// into is step s with m's figures: its plan, interval and rounds.
func (m Measure) into(s store.BisectStep) store.BisectStep {
	s.Plan, s.Rel, s.Lo, s.Hi, s.Rounds = m.Plan, m.Verdict.Rel, m.Verdict.Lo, m.Verdict.Hi, m.Rounds
	return s
}

func unmeasured(c build.Commit, base, bld, kind, note string) store.BisectStep {
	return store.BisectStep{Commit: c.Hash, CommitTime: c.Time, Base: base, Build: bld, Kind: kind, Rel: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Note: note}
}

// Name is a commit as the walk's lines name it, its subject Shown.
func Name(c build.Commit) string { return c.Short() + " " + result.Shown(c.Subject) }

// Run walks: GOOD's build, the endpoints (BAD against GOOD: is there a
// regression beyond the threshold, and how large), then midpoints until
// the first bad commit is known (or the range skipped commits leave),
// then the first bad commit against its parent. Every step is logged as
// it is decided; what the log already holds is not measured again. It
// stops at a step that cannot tell (state BisectCannotTell: resume with
// more rounds, or skip it).
//
// An error other than an interrupt (the context's) ends the bisection
// failed, its line stored; an interrupted one stays running: resumable.
func (w *Walk) Run(ctx context.Context) (Result, error) {
	res, err := w.run(ctx)
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		line, _, _ := strings.Cut(err.Error(), "\n")
		w.end(ctx, store.BisectFailed, line)
	}
	return res, err
}

func (w *Walk) run(ctx context.Context) (Result, error) {
	if len(w.Commits) == 0 {
		return Result{}, fmt.Errorf("no commits after GOOD %s up to BAD", w.Good.Short())
	}
	good, bad := w.Good, w.Commits[len(w.Commits)-1]
	w.say("bisection %d: %d commit(s) after GOOD %s up to BAD %s; about %d step(s)", w.Bisection.ID, len(w.Commits), good.Short(), bad.Short(), steps(len(w.Commits)-1))
	if err := w.setState(ctx, store.BisectRunning, ""); err != nil {
		return Result{}, err
	}
	var gb build.Build
	goodBuild := func() (Result, bool, error) {
		if gb.Name != "" {
			return Result{}, false, nil
		}
		var err error
		gb, err = w.buildOf(ctx, good)
		if ce, ok := doesNotBuild(err); ok {
			res, err := w.end(ctx, store.BisectFailed, fmt.Sprintf("GOOD %s does not build (%v): give a GOOD that builds", good.Short(), result.Shown(ce.Error())))
			return res, true, err
		} else if err != nil {
			return Result{}, true, err
		}
		if _, ok := w.latest(good.Hash, ""); !ok {
			if err := w.add(ctx, unmeasured(good, "", gb.Name, Good, "GOOD: the base of every step")); err != nil {
				return Result{}, true, err
			}
		}
		return Result{}, false, nil
	}
	// The endpoints: a decided step stored is their answer.
	var m float64
	if st, ok := w.latest(bad.Hash, good.Hash); ok && st.Kind == Good {
		return w.end(ctx, store.BisectNoRegression, st.Note)
	} else if ok && st.Kind == Bad {
		r, _, _ := Up(analysis.Verdict{Rel: st.Rel, Lo: st.Lo, Hi: st.Hi}, w.Higher)
		m = 1 - r
	} else {
		if res, stop, err := goodBuild(); stop {
			return res, err
		}
		bb, err := w.buildOf(ctx, bad)
		if ce, ok := doesNotBuild(err); ok {
			return w.end(ctx, store.BisectFailed, fmt.Sprintf("BAD %s does not build (%v): give a BAD that builds", bad.Short(), result.Shown(ce.Error())))
		} else if err != nil {
			return Result{}, err
		}
		w.say("endpoints: BAD %s against GOOD %s, %d round(s)", bad.Short(), good.Short(), w.Rounds)
		ms, err := w.Tester.Measure(ctx, gb, bb, MeasureOptions{Rounds: w.Rounds, Earlier: w.earlier(bad.Hash, good.Hash)})
		if err != nil {
			return Result{}, err
		}
		if w.Bisection.Threshold == 0 {
			w.Bisection.Threshold = analysis.DefaultFloor
			what := "analysis.DefaultFloor: qpslab run --aa measures this host's noise floor"
			if ms.Floor > 0 {
				w.Bisection.Threshold, what = ms.Floor, "this host's noise floor (qpslab run --aa)"
			}
			w.say("threshold %.1f %%: %s", 100*w.Bisection.Threshold, what)
		}
		kind, mag, why := Regression(ms.Verdict, w.Higher, w.Bisection.Threshold)
		if err := w.add(ctx, ms.into(unmeasured(bad, good.Hash, bb.Name, kind, why))); err != nil {
			return Result{}, err
		}
		switch kind {
		case CannotTell:
			return w.end(ctx, store.BisectCannotTell, fmt.Sprintf("BAD against GOOD: cannot tell (%s): qpslab bisect resume %d --rounds %d", why, w.Bisection.ID, 2*max(w.Rounds, 1)))
		case Good:
			return w.end(ctx, store.BisectNoRegression, why)
		}
		w.say("%s", why)
		m = mag
	}
	w.say("the halfway cut: %.3f (a step is bad when its interval lies below it, good when above)", Cut(m))
	// The walk.
	for {
		lo, hi, cands := w.bounds()
		if len(cands) == 0 {
			return w.finish(ctx, lo, hi, m, goodBuild)
		}
		i := pick(cands, lo, hi)
		c := w.Commits[i]
		if res, stop, err := goodBuild(); stop {
			return res, err
		}
		b, err := w.buildOf(ctx, c)
		if ce, ok := doesNotBuild(err); ok {
			w.say("step %s: does not build: skipped (%v)", Name(c), result.Shown(ce.Error()))
			if err := w.add(ctx, unmeasured(c, good.Hash, "", Skipped, "does not build: "+result.Shown(ce.Error()))); err != nil {
				return Result{}, err
			}
			continue
		} else if err != nil {
			return Result{}, err
		}
		decided := func(v analysis.Verdict) bool { k, _ := Classify(v, w.Higher, m); return k != CannotTell }
		ms, err := w.Tester.Measure(ctx, gb, b, MeasureOptions{Rounds: w.Rounds, Earlier: w.earlier(c.Hash, good.Hash), Decided: decided})
		if err != nil {
			return Result{}, err
		}
		kind, why := Classify(ms.Verdict, w.Higher, m)
		if err := w.add(ctx, ms.into(unmeasured(c, good.Hash, b.Name, kind, why))); err != nil {
			return Result{}, err
		}
		w.say("step %s: %s: %s (%d round(s), ~%d step(s) left)", Name(c), kind, why, ms.Rounds, steps(len(cands)-1))
		if kind == CannotTell {
			res, err := w.end(ctx, store.BisectCannotTell, fmt.Sprintf("%s cannot tell: %s: qpslab bisect resume %d --rounds %d (adds rounds), or qpslab bisect skip %d",
				c.Short(), why, w.Bisection.ID, 2*max(w.Rounds, 1), w.Bisection.ID))
			res.Undecided = &c
			return res, err
		}
	}
}

func (w *Walk) setState(ctx context.Context, state, line string) error {
	w.Bisection.State, w.Bisection.Result, w.Bisection.Ended = state, line, time.Time{}
	return w.Log.SetBisection(ctx, w.Bisection)
}

// steps is about how many halvings n candidates take.
func steps(n int) int {
	k := 0
	for n > 0 {
		n /= 2
		k++
	}
	return k
}

// bounds are, from the log, the last good index (-1: GOOD), the first bad
// one (BAD's at the latest) and the candidates between them not skipped
// nor yet measured to a decision.
func (w *Walk) bounds() (lo, hi int, cands []int) {
	good := w.Good.Hash
	lo, hi = -1, len(w.Commits)-1
	kinds := make([]string, len(w.Commits))
	for i, c := range w.Commits {
		if s, ok := w.latest(c.Hash, good); ok {
			kinds[i] = s.Kind
		}
	}
	for i := 0; i < len(w.Commits)-1; i++ {
		if kinds[i] == Bad && i < hi {
			hi = i
		}
	}
	for i := 0; i < hi; i++ {
		if kinds[i] == Good {
			lo = i
		}
	}
	for i := lo + 1; i < hi; i++ {
		if kinds[i] != Skipped {
			cands = append(cands, i)
		}
	}
	return lo, hi, cands
}

// pick is the candidate nearest the middle of (lo, hi), the older on a
// tie.
func pick(cands []int, lo, hi int) int {
	mid := float64(lo+hi) / 2
	best := cands[0]
	for _, c := range cands {
		if math.Abs(float64(c)-mid) < math.Abs(float64(best)-mid) {
			best = c
		}
	}
	return best
}

// finish ends a walk whose candidates are decided: the first bad commit
// (hi) measured against its parent, or the range skipped commits leave.
func (w *Walk) finish(ctx context.Context, lo, hi int, m float64, goodBuild func() (Result, bool, error)) (Result, error) {
	if hi-lo > 1 { // skipped commits border it
		rng := w.Commits[lo+1 : hi+1]
		var names []string
		for _, c := range rng {
			names = append(names, c.Short())
		}
		line := fmt.Sprintf("first bad commit is one of %s (skipped: %d, they do not build or could not be told)", strings.Join(names, " "), len(rng)-1)
		res, err := w.end(ctx, store.BisectFound, line)
		res.Range, res.Magnitude = rng, m
		return res, err
	}
	first := w.Commits[hi]
	parent := w.Good
	if hi > 0 {
		parent = w.Commits[hi-1]
	}
	var fin Measure
	var fb, pb build.Build
	st, ok := w.final(first.Hash, parent.Hash)
	if !ok && !w.Why { // a step that measured the same two builds
		st, ok = w.latest(first.Hash, parent.Hash)
		ok = ok && !math.IsNaN(st.Rel) && st.Kind != CannotTell
	}
	if ok {
		fin = Measure{Plan: st.Plan, Rounds: st.Rounds, Verdict: analysis.Verdict{Rel: st.Rel, Lo: st.Lo, Hi: st.Hi, Significant: st.Hi < 1 || st.Lo > 1}}
	} else {
		if res, stop, err := goodBuild(); stop {
			return res, err
		}
		var err error
		if fb, err = w.buildOf(ctx, first); err != nil {
			return Result{}, err
		}
		if pb, err = w.buildOf(ctx, parent); err != nil {
			return Result{}, err
		}
		w.say("the first bad commit %s against its parent %s, %d round(s)", first.Short(), parent.Short(), w.Rounds)
		fin, err = w.Tester.Measure(ctx, pb, fb, MeasureOptions{Rounds: w.Rounds, Final: true, Earlier: w.earlier(first.Hash, parent.Hash)})
		if err != nil {
			return Result{}, err
		}
		if err := w.add(ctx, fin.into(unmeasured(first, parent.Hash, fb.Name, Final, finalNote))); err != nil {
			return Result{}, err
		}
	}
	r, lo2, hi2 := Up(fin.Verdict, w.Higher)
	line := fmt.Sprintf("first bad commit: %s: %s against its parent %s (%+.1f %%)", Name(first), Interval(r, lo2, hi2), parent.Short(), 100*(r-1))
	if kind, _, _ := Regression(fin.Verdict, w.Higher, w.Bisection.Threshold); kind != Bad && fin.Verdict.Kind != analysis.CannotTell {
		line += fmt.Sprintf("; against its parent it is not worse beyond the threshold %.1f %%: the regression may be spread over several commits (qpslab bisect status %d shows each step)", 100*w.Bisection.Threshold, w.Bisection.ID)
	}
	res, err := w.end(ctx, store.BisectFound, line)
	res.First, res.Parent, res.Magnitude, res.Final, res.Base, res.Bad = &first, parent, m, &fin, pb, fb
	return res, err
}

const finalNote = "the first bad commit against its parent"

// Skip logs commit (a hash of the walk's, or a unique prefix of at
// least 4 hex digits, any case) as skipped by the user, as git bisect
// skip does; "" skips the step that could not tell: the commit whose
// latest step against GOOD is CannotTell.
func (w *Walk) Skip(ctx context.Context, commit string) (build.Commit, error) {
	between := w.Commits[:len(w.Commits)-1]
	if commit == "" {
		for _, c := range between {
			if s, ok := w.latest(c.Hash, w.Good.Hash); ok && s.Kind == CannotTell {
				return c, w.add(ctx, unmeasured(c, w.Good.Hash, "", Skipped, "skipped by the user (qpslab bisect skip)"))
			}
		}
		return build.Commit{}, fmt.Errorf("bisection %d has no undecided step: name the commit to skip (qpslab bisect skip %d COMMIT)", w.Bisection.ID, w.Bisection.ID)
	}
	p := strings.ToLower(commit)
	if len(p) < 4 || strings.Trim(p, "0123456789abcdef") != "" {
		return build.Commit{}, fmt.Errorf("commit %q: give at least 4 hex digits of a commit's hash (qpslab bisect status %d lists them)", commit, w.Bisection.ID)
	}
	var found []build.Commit
	for _, c := range between {
		if strings.HasPrefix(strings.ToLower(c.Hash), p) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 1:
		return found[0], w.add(ctx, unmeasured(found[0], w.Good.Hash, "", Skipped, "skipped by the user (qpslab bisect skip)"))
	case 0:
		return build.Commit{}, fmt.Errorf("commit %s is not one of bisection %d's commits between GOOD and BAD (BAD itself cannot be skipped): qpslab bisect status %d lists them", commit, w.Bisection.ID, w.Bisection.ID)
	}
	return build.Commit{}, fmt.Errorf("commit %s is the start of %d of bisection %d's commits (%s, %s, …): give more of its hash", commit, len(found), w.Bisection.ID, found[0].Short(), found[1].Short())
}
