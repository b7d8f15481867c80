package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/store"
)

// fake is a source tree whose commits' builds have known speeds (ops/s;
// 0: the commit does not build), measured in synthetic paired rounds with
// a relative noise of sigma per observation, and a log in memory.
type fake struct {
	speed   map[string]float64 // by hash
	sigma   float64
	rng     *rand.Rand
	plans   map[string][2][]analysis.Obs
	measure map[string]int // measurements per build
	compile map[string]int // compiles per commit
	stopAt  int            // the measurement that is interrupted (0: none)
	stopErr error          // its error (nil: context.Canceled)
	n       int
	log     []store.BisectStep
	state   store.Bisection
}

func newFake(seed uint64, sigma float64) *fake {
	return &fake{speed: map[string]float64{}, sigma: sigma, rng: rand.New(rand.NewPCG(seed, 7)), plans: map[string][2][]analysis.Obs{},
		measure: map[string]int{}, compile: map[string]int{}}
}

func (f *fake) Compile(_ context.Context, o CompileOptions) (build.Build, error) {
	f.compile[o.Commit]++
	if f.speed[o.Commit] == 0 {
		return build.Build{}, &CompileError{Name: "b-" + o.Commit[:8], Phase: "make", Log: "/tmp/x.log", Err: errors.New("exit 2")}
	}
	return build.Build{Name: "b-" + o.Commit[:8], Flavor: build.RocksDB, Version: o.Commit, Commit: o.Commit}, nil
}

func (f *fake) Measure(ctx context.Context, base, other build.Build, o MeasureOptions) (Measure, error) {
	f.n++
	if f.stopAt > 0 && f.n == f.stopAt {
		if f.stopErr != nil {
			return Measure{}, f.stopErr
		}
		return Measure{}, context.Canceled
	}
	f.measure[other.Name]++
	id := fmt.Sprintf("plan%d", f.n)
	var bs, os []analysis.Obs
	for r := 1; r <= o.Rounds; r++ {
		bs = append(bs, analysis.Obs{Plan: id, Pairing: "test", Repeat: r, Round: 1, Value: f.speed[base.Version] * (1 + f.sigma*f.rng.NormFloat64())})
		os = append(os, analysis.Obs{Plan: id, Pairing: "test", Repeat: r, Round: 1, Value: f.speed[other.Version] * (1 + f.sigma*f.rng.NormFloat64())})
	}
	f.plans[id] = [2][]analysis.Obs{bs, os}
	for _, e := range o.Earlier {
		bs, os = append(bs, f.plans[e][0]...), append(os, f.plans[e][1]...)
	}
	v := Test(analysis.Side{Obs: bs, Runs: 1}, analysis.Side{Obs: os, Runs: 1}, analysis.DefaultJudging())
	return Measure{Plan: id, Rounds: v.N, Verdict: v}, nil
}

func (f *fake) AddBisectStep(_ context.Context, _ int64, st store.BisectStep) (store.BisectStep, error) {
	st.Seq = len(f.log) + 1
	f.log = append(f.log, st)
	return st, nil
}

func (f *fake) SetBisection(_ context.Context, b store.Bisection) error { f.state = b; return nil }

// tree makes n commits after GOOD, the speeds of GOOD and each commit
// given by speed(i) (i = -1 for GOOD).
func (f *fake) tree(n int, speed func(i int) float64) (build.Commit, []build.Commit) {
	mk := func(i int) build.Commit {
		h := fmt.Sprintf("%08x%032x", i+1000, i)
		f.speed[h] = speed(i)
		return build.Commit{Hash: h, Time: time.Unix(int64(1e9+i), 0).UTC(), Subject: fmt.Sprintf("commit %d", i)}
	}
	good := mk(-1)
	var cs []build.Commit
	for i := 0; i < n; i++ {
		cs = append(cs, mk(i))
	}
	return good, cs
}

func (f *fake) walk(good build.Commit, cs []build.Commit, rounds int) *Walk {
	return &Walk{Good: good, Commits: cs, Builder: f, Tester: f, Log: f, Rounds: rounds, Higher: true,
		Bisection: store.Bisection{ID: 1, Threshold: 0.05}, Steps: append([]store.BisectStep{}, f.log...)}
}

// A regression of 25 % planted at a commit is found at that commit, over
// many seeds and every place it may be planted, with its magnitude; no
// commit is compiled twice; the first bad commit's parent is measured
// against it at the end.
func TestRegressionFoundAtThePlantedCommit(t *testing.T) {
	for seed := uint64(1); seed <= 160; seed++ {
		planted := int(seed % 16)
		f := newFake(seed, 0.02)
		good, cs := f.tree(16, func(i int) float64 {
			if i >= planted {
				return 750
			}
			return 1000
		})
		res, err := f.walk(good, cs, 8).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.State != store.BisectFound || res.First == nil || res.First.Hash != cs[planted].Hash {
			t.Fatalf("seed %d, planted at %d: %+v", seed, planted, res)
		}
		if math.Abs(res.Magnitude-0.25) > 0.03 || res.Final == nil || math.Abs(res.Final.Verdict.Rel-0.75) > 0.03 {
			t.Errorf("seed %d: magnitude %.3f, final %+v", seed, res.Magnitude, res.Final)
		}
		for h, n := range f.compile {
			if n > 1 {
				t.Errorf("seed %d: %s compiled %d times", seed, h[:8], n)
			}
		}
		if !strings.HasPrefix(res.Line, "first bad commit: "+cs[planted].Short()+" commit "+fmt.Sprint(planted)+": 0.7") {
			t.Errorf("seed %d: %s", seed, res.Line)
		}
		last := f.log[len(f.log)-1]
		if want := good.Hash; planted > 0 {
			want = cs[planted-1].Hash
			if last.Base != want || last.Commit != cs[planted].Hash || last.Note != finalNote {
				t.Errorf("seed %d: the last step is not the first bad against its parent: %+v", seed, last)
			}
		}
	}
}

// An A/A-like range (BAD as fast as GOOD) has no regression to bisect:
// the walk stops after the endpoints, saying so; so does a regression
// smaller than the threshold.
func TestNoRegression(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		f := newFake(seed, 0.02)
		good, cs := f.tree(8, func(int) float64 { return 1000 })
		res, err := f.walk(good, cs, 8).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.State != store.BisectNoRegression || !strings.Contains(res.Line, "no regression to bisect at this threshold") || len(f.measure) != 1 {
			t.Fatalf("seed %d: %+v, %d measured", seed, res, len(f.measure))
		}
	}
	f := newFake(1, 0.005)
	good, cs := f.tree(8, func(i int) float64 { return map[bool]float64{true: 980, false: 1000}[i >= 3] })
	res, _ := f.walk(good, cs, 8).Run(context.Background())
	if res.State != store.BisectNoRegression || !strings.Contains(res.Line, "within the threshold 5.0 %") {
		t.Errorf("a 2 %% regression at a 5 %% threshold: %+v", res)
	}
}

// A regression spread over several commits: the walk names the first
// commit nearer BAD than GOOD, and says that against its parent it is not
// worse beyond the threshold.
func TestSpreadRegression(t *testing.T) {
	f := newFake(8, 0.005)
	good, cs := f.tree(8, func(i int) float64 {
		switch {
		case i < 2:
			return 1000
		case i < 5:
			return []float64{920, 860, 800}[i-2]
		}
		return 750
	})
	w := f.walk(good, cs, 8)
	w.Bisection.Threshold = 0.10
	res, err := w.Run(context.Background())
	if err != nil || res.First == nil || res.First.Hash != cs[3].Hash || !strings.Contains(res.Line, "the regression may be spread over several commits") {
		t.Fatalf("%+v %v", res, err)
	}
}

// A commit that does not build is skipped and logged; when it borders the
// answer, the answer is a range, as git bisect's "one of".
func TestDoesNotBuild(t *testing.T) {
	f := newFake(3, 0.02)
	good, cs := f.tree(8, func(i int) float64 {
		switch {
		case i == 3:
			return 0 // does not build
		case i >= 5:
			return 700
		}
		return 1000
	})
	res, err := f.walk(good, cs, 8).Run(context.Background())
	if err != nil || res.First == nil || res.First.Hash != cs[5].Hash {
		t.Fatalf("%+v %v", res, err)
	}
	skipped := 0
	for _, s := range f.log {
		if s.Kind == Skipped && s.Commit == cs[3].Hash && strings.HasPrefix(s.Note, "does not build: compile b-") {
			skipped++
		}
	}
	if skipped != 1 {
		t.Errorf("the commit that does not build: %+v", f.log)
	}
	// The planted commit itself does not build: the answer is it or the next.
	f = newFake(4, 0.02)
	good, cs = f.tree(8, func(i int) float64 {
		switch {
		case i == 4:
			return 0
		case i >= 4:
			return 700
		}
		return 1000
	})
	res, err = f.walk(good, cs, 8).Run(context.Background())
	if err != nil || res.First != nil || len(res.Range) != 2 || res.Range[0].Hash != cs[4].Hash || res.Range[1].Hash != cs[5].Hash ||
		!strings.HasPrefix(res.Line, "first bad commit is one of "+cs[4].Short()+" "+cs[5].Short()) {
		t.Fatalf("%+v %v", res, err)
	}
	// GOOD or BAD that does not build stops the walk in one line.
	f = newFake(5, 0.02)
	good, cs = f.tree(4, func(i int) float64 { return map[bool]float64{true: 0, false: 1000}[i == 3] })
	res, err = f.walk(good, cs, 8).Run(context.Background())
	if err != nil || res.State != store.BisectFailed || !strings.HasPrefix(res.Line, "BAD "+cs[3].Short()+" does not build (compile b-") {
		t.Errorf("BAD does not build: %+v %v", res, err)
	}
}

// A walk interrupted at its k-th measurement resumes from its log: the
// steps decided before are not measured again, the answer is the same.
func TestResume(t *testing.T) {
	for k := 1; k <= 5; k++ {
		f := newFake(uint64(10+k), 0.02)
		good, cs := f.tree(16, func(i int) float64 { return map[bool]float64{true: 750, false: 1000}[i >= 6] })
		f.stopAt = k
		if _, err := f.walk(good, cs, 8).Run(context.Background()); !errors.Is(err, context.Canceled) {
			t.Fatalf("k %d: interrupted: %v", k, err)
		}
		before := map[string]int{}
		for b, n := range f.measure {
			before[b] = n
		}
		f.stopAt = 0
		res, err := f.walk(good, cs, 8).Run(context.Background())
		if err != nil || res.First == nil || res.First.Hash != cs[6].Hash {
			t.Fatalf("k %d: resumed: %+v %v", k, res, err)
		}
		decided := map[string]bool{}
		for _, s := range f.log[:len(f.log)] {
			if s.Kind == Good || s.Kind == Bad {
				decided[s.Build] = true
			}
		}
		for b, n := range before {
			if decided[b] && f.measure[b] > n && !strings.HasSuffix(b, cs[6].Hash[:8]) {
				t.Errorf("k %d: %s measured again after the resume (%d, then %d)", k, b, n, f.measure[b])
			}
		}
		if f.measure["b-"+cs[15].Hash[:8]] != 1 {
			t.Errorf("k %d: the endpoints measured %d times", k, f.measure["b-"+cs[15].Hash[:8]])
		}
	}
}

// A step halfway between GOOD and BAD cannot tell: the walk stops, says
// so, and names the commands; resumed, it measures that step again with
// its earlier rounds pooled; skipped, the walk goes on and the answer is a
// range that includes it.
func TestCannotTell(t *testing.T) {
	f := newFake(21, 0.02)
	good, cs := f.tree(8, func(i int) float64 {
		switch {
		case i == 3:
			return 875 // exactly halfway: no number of rounds tells
		case i > 3:
			return 750
		}
		return 1000
	})
	res, err := f.walk(good, cs, 8).Run(context.Background())
	if err != nil || res.State != store.BisectCannotTell || res.Undecided == nil || res.Undecided.Hash != cs[3].Hash ||
		!strings.Contains(res.Line, "qpslab bisect resume 1 --rounds 16") || !strings.Contains(res.Line, "qpslab bisect skip 1") {
		t.Fatalf("%+v %v", res, err)
	}
	w := f.walk(good, cs, 8)
	res, err = w.Run(context.Background())
	if err != nil || res.State != store.BisectCannotTell {
		t.Fatalf("resumed: %+v %v", res, err)
	}
	if last := f.log[len(f.log)-1]; last.Commit != cs[3].Hash || last.Rounds != 16 {
		t.Errorf("the retry did not pool the earlier rounds: %+v", last)
	}
	w = f.walk(good, cs, 8)
	if c, err := w.Skip(context.Background(), ""); err != nil || c.Hash != cs[3].Hash {
		t.Fatalf("skip: %v %v", c, err)
	}
	res, err = w.Run(context.Background())
	if err != nil || res.State != store.BisectFound || len(res.Range) != 2 || res.Range[0].Hash != cs[3].Hash || res.Range[1].Hash != cs[4].Hash {
		t.Fatalf("after the skip: %+v %v", res, err)
	}
	if _, err := w.Skip(context.Background(), cs[7].Hash); err == nil || !strings.Contains(err.Error(), "BAD itself cannot be skipped") {
		t.Errorf("skip BAD: %v", err)
	}
}

// The decision rule on synthetic verdicts: the endpoints' regression and
// the halfway cut, for a metric where higher is better and one where
// lower is.
func TestRule(t *testing.T) {
	v := func(r, lo, hi float64) analysis.Verdict {
		return analysis.Verdict{Rel: r, Lo: lo, Hi: hi, Significant: hi < 1 || lo > 1}
	}
	for _, c := range []struct {
		v      analysis.Verdict
		higher bool
		kind   string
		m      float64
	}{
		{v(0.75, 0.74, 0.76), true, Bad, 0.25},
		{v(0.97, 0.96, 0.98), true, Good, 0.03},       // significant, within 5 %
		{v(0.9, 0.8, 1.01), true, Good, 0.1},          // not significant
		{v(1.25, 1.24, 1.26), true, Good, -0.25},      // better
		{v(1/0.75, 1/0.76, 1/0.74), false, Bad, 0.25}, // cpu/o up by a third: 25 % fewer ops per CPU
		{analysis.Verdict{Kind: analysis.CannotTell, Why: "3 paired round(s)", Rel: 0.7, Lo: math.NaN(), Hi: math.NaN()}, true, CannotTell, math.NaN()},
	} {
		kind, m, _ := Regression(c.v, c.higher, 0.05)
		if kind != c.kind || !(math.Abs(m-c.m) < 1e-9 || math.IsNaN(m) && math.IsNaN(c.m)) {
			t.Errorf("Regression(%+v): %s %.3f, want %s %.3f", c.v, kind, m, c.kind, c.m)
		}
	}
	for _, c := range []struct {
		v    analysis.Verdict
		kind string
	}{
		{v(0.76, 0.74, 0.80), Bad},
		{v(0.99, 0.96, 1.01), Good},
		{v(0.87, 0.85, 0.89), CannotTell},
		{v(0.80, 0.78, 0.875), CannotTell}, // touches the cut
		{v(0.90, 0.88, 0.92), Good},        // a smaller regression of its own: nearer GOOD
	} {
		if kind, why := Classify(c.v, true, 0.25); kind != c.kind {
			t.Errorf("Classify(%+v): %s (%s), want %s", c.v, kind, why, c.kind)
		}
	}
}

// rerun walks again from f's log and says how many measurements and
// compiles it made.
func rerun(t *testing.T, f *fake, w *Walk) (Result, int, int) {
	t.Helper()
	n, c := f.n, 0
	for _, k := range f.compile {
		c -= k
	}
	res, err := w.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range f.compile {
		c += k
	}
	return res, f.n - n, c
}

// The final measurement (the first bad commit against its parent) is no
// verdict: where the parent is GOOD it does not replace the commit's
// step, so a re-run gives the same answer without measuring (with --pmp,
// and where the final is below the threshold though the step is bad).
func TestFinalIsNoVerdict(t *testing.T) {
	f := newFake(41, 0.002)
	good, cs := f.tree(8, func(i int) float64 {
		switch {
		case i < 0:
			return 1000
		case i == 0:
			return 940
		}
		return 900
	})
	w := f.walk(good, cs, 8)
	w.Bisection.Threshold, w.Why = 0.07, true
	res, err := w.Run(context.Background())
	if err != nil || res.First == nil || res.First.Hash != cs[0].Hash {
		t.Fatalf("%+v %v", res, err)
	}
	if last := f.log[len(f.log)-1]; last.Kind != Final || last.Base != good.Hash {
		t.Fatalf("the final step: %+v", last)
	}
	w = f.walk(good, cs, 8)
	w.Bisection.Threshold, w.Why = 0.07, true
	res2, n, _ := rerun(t, f, w)
	if res2.First == nil || res2.First.Hash != cs[0].Hash || res2.Line != res.Line || n != 0 {
		t.Errorf("re-run: %d measurement(s), %+v", n, res2)
	}
}

// A finished bisection is not measured again: a one-commit range, and
// one with no regression.
func TestFinishedIsNotMeasuredAgain(t *testing.T) {
	f := newFake(42, 0.02)
	good, cs := f.tree(1, func(i int) float64 { return map[bool]float64{true: 1000, false: 700}[i < 0] })
	res, err := f.walk(good, cs, 8).Run(context.Background())
	if err != nil || res.State != store.BisectFound {
		t.Fatalf("%+v %v", res, err)
	}
	res2, n, c := rerun(t, f, f.walk(good, cs, 8))
	if res2.State != store.BisectFound || res2.Line != res.Line || n != 0 || c != 0 {
		t.Errorf("one commit, re-run: %d measurement(s), %d compile(s), %+v", n, c, res2)
	}
	f = newFake(43, 0.02)
	good, cs = f.tree(4, func(int) float64 { return 1000 })
	res, err = f.walk(good, cs, 8).Run(context.Background())
	if err != nil || res.State != store.BisectNoRegression {
		t.Fatalf("%+v %v", res, err)
	}
	res2, n, c = rerun(t, f, f.walk(good, cs, 8))
	if res2.State != store.BisectNoRegression || res2.Line != res.Line || n != 0 || c != 0 {
		t.Errorf("no regression, re-run: %d measurement(s), %d compile(s), %+v", n, c, res2)
	}
}

// skip without a commit skips only a commit whose latest step against
// GOOD could not tell, never one decided since.
func TestSkipOnlyUndecided(t *testing.T) {
	f := newFake(21, 0.02)
	good, cs := f.tree(8, func(i int) float64 { return map[bool]float64{true: 875, false: 1000}[i == 3] })
	w := f.walk(good, cs, 8)
	w.Steps = append(w.Steps, unmeasured(cs[3], good.Hash, "", CannotTell, ""), unmeasured(cs[3], good.Hash, "", Good, ""))
	if _, err := w.Skip(context.Background(), ""); err == nil || !strings.HasPrefix(err.Error(), "bisection 1 has no undecided step: name the commit to skip") {
		t.Errorf("skip of a decided step: %v", err)
	}
	w.Steps = append(w.Steps, unmeasured(cs[5], good.Hash, "", CannotTell, ""))
	if c, err := w.Skip(context.Background(), ""); err != nil || c.Hash != cs[5].Hash {
		t.Errorf("skip of the undecided step: %v %v", c, err)
	}
}

// skip COMMIT takes a unique prefix of at least 4 hex digits in any case.
func TestSkipPrefix(t *testing.T) {
	f := newFake(22, 0.02)
	good, cs := f.tree(8, func(int) float64 { return 1000 })
	w := f.walk(good, cs, 8)
	if c, err := w.Skip(context.Background(), strings.ToUpper(cs[1].Hash[:8])); err != nil || c.Hash != cs[1].Hash {
		t.Errorf("upper case: %v %v", c, err)
	}
	for _, p := range []string{"0000", "3e9", "zz03e9"} {
		if _, err := w.Skip(context.Background(), p); err == nil {
			t.Errorf("skip %s: no error", p)
		}
	}
	if _, err := w.Skip(context.Background(), "0000"); err == nil || !strings.Contains(err.Error(), "give more of its hash") {
		t.Errorf("ambiguous: %v", err)
	}
}

// An error other than an interrupt ends the bisection failed with its
// line; an interrupt leaves it running (resumable).
func TestErrorFails(t *testing.T) {
	f := newFake(44, 0.02)
	good, cs := f.tree(8, func(i int) float64 { return map[bool]float64{true: 700, false: 1000}[i >= 4] })
	f.stopAt, f.stopErr = 2, errors.New("plan p1: the server did not start\nmore")
	if _, err := f.walk(good, cs, 8).Run(context.Background()); err == nil {
		t.Fatal("no error")
	}
	if f.state.State != store.BisectFailed || f.state.Result != "plan p1: the server did not start" || f.state.Ended.IsZero() {
		t.Errorf("after an error: %+v", f.state)
	}
	f.n, f.stopErr = 0, nil
	if _, err := f.walk(good, cs, 8).Run(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if f.state.State != store.BisectRunning {
		t.Errorf("after an interrupt: %+v", f.state)
	}
}

// A resumed walk reuses a build its log names only while that build is
// still of the commit: one compiled again from another commit under the
// same name is not measured as this one.
func TestLookupChecksTheCommit(t *testing.T) {
	f := newFake(45, 0.02)
	good, cs := f.tree(8, func(i int) float64 { return map[bool]float64{true: 700, false: 1000}[i >= 4] })
	f.stopAt = 2
	if _, err := f.walk(good, cs, 8).Run(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	f.stopAt = 0
	for _, w := range []struct {
		commit string
		more   int
	}{{"", 0}, {cs[2].Hash, 1}} {
		before := f.compile[good.Hash]
		wk := f.walk(good, cs, 8)
		wk.Steps = wk.Steps[:len(wk.Steps):len(wk.Steps)]
		commit := w.commit
		wk.Lookup = func(_ context.Context, name string) (build.Build, error) {
			c := commit
			if c == "" {
				c = good.Hash
			}
			return build.Build{Name: name, Flavor: build.RocksDB, Version: c, Commit: c}, nil
		}
		wk.Bisection.State = store.BisectRunning
		// only GOOD's build is asked for: stop at once after it
		f.stopAt, f.n = 1, 0
		wk.Run(context.Background())
		f.stopAt = 0
		if got := f.compile[good.Hash] - before; got != w.more {
			t.Errorf("lookup of a build of commit %q: GOOD compiled %d more time(s), want %d", w.commit, got, w.more)
		}
	}
}

// A commit's subject is shown with its control and bidirectional
// characters written as code points, in the walk's lines and its answer.
func TestSubjectShown(t *testing.T) {
	f := newFake(46, 0.02)
	good, cs := f.tree(4, func(i int) float64 { return map[bool]float64{true: 700, false: 1000}[i >= 2] })
	cs[2].Subject = "evil\x1b[2J\u202eexe"
	var out strings.Builder
	w := f.walk(good, cs, 8)
	w.Out = &out
	res, err := w.Run(context.Background())
	if err != nil || res.First == nil || res.First.Hash != cs[2].Hash {
		t.Fatalf("%+v %v", res, err)
	}
	want := "evil[U+001B][2J[U+202E]exe"
	if !strings.Contains(res.Line, want) || strings.ContainsAny(res.Line+out.String(), "\x1b\u202e") || !strings.Contains(out.String(), want) {
		t.Errorf("line %q\n%s", res.Line, out.String())
	}
}

// The final measurement pools the rounds of earlier measurements of the
// same two builds (the first bad commit's step against GOOD, its parent).
func TestFinalPoolsEarlier(t *testing.T) {
	f := newFake(47, 0.02)
	good, cs := f.tree(4, func(i int) float64 { return map[bool]float64{true: 700, false: 1000}[i >= 0] })
	w := f.walk(good, cs, 8)
	w.Why = true
	res, err := w.Run(context.Background())
	if err != nil || res.First == nil || res.First.Hash != cs[0].Hash {
		t.Fatalf("%+v %v", res, err)
	}
	if last := f.log[len(f.log)-1]; last.Kind != Final || last.Rounds != 16 {
		t.Errorf("the final measurement pooled %d rounds, want 8 + 8: %+v", last.Rounds, last)
	}
}
