package bisect_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
	_ "github.com/qpslab/qpslab/internal/workload"
)

// speedRepo makes a git repository whose commits each set the file speed:
// the ops/s the build of that commit runs at ("broken": it does not
// build). It returns the folder and the hashes, oldest first.
func speedRepo(t *testing.T, speeds []string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	var hashes []string
	for i, s := range speeds {
		os.WriteFile(filepath.Join(dir, "speed"), []byte(s+"\n"), 0o644)
		git("add", ".")
		git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("commit %d: speed %s", i, s))
		hashes = append(hashes, git("rev-parse", "HEAD"))
	}
	return dir, hashes
}

// dbBenchBuilder "compiles" a commit of a speedRepo into a db_bench that
// is a shell script: --version and --help as db_bench 7.8.3 answers them,
// and each benchmark printing its result line at the commit's speed, with
// 1 % of jitter (a speed written SPEED/SWING: readrandom's rounds swing by
// ±SWING %, so that no number of rounds tells it), and its report file. It registers the build as a
// rocksdb build of the home, as build.Registry.Compile will.
type dbBenchBuilder struct {
	h        home.Home
	compiled map[string]int
}

func (b *dbBenchBuilder) Compile(ctx context.Context, o bisect.CompileOptions) (build.Build, error) {
	b.compiled[o.Commit]++
	out, err := exec.CommandContext(ctx, "git", "-C", o.Src, "show", o.Commit+":speed").Output()
	if err != nil {
		return build.Build{}, err
	}
	speed := strings.TrimSpace(string(out))
	name := "fk_" + o.Commit[:8]
	if speed == "broken" {
		return build.Build{}, &bisect.CompileError{Name: name, Phase: "make", Log: filepath.Join(b.h.Root, "logs", name+".log"), Err: fmt.Errorf("exit status 2")}
	}
	base, swing, ok := strings.Cut(speed, "/") // SPEED/SWING: rounds that swing by ±SWING %
	if !ok {
		swing = "0"
	}
	dir := filepath.Join(b.h.Root, "fake-builds", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return build.Build{}, err
	}
	help, err := os.ReadFile(filepath.Join("..", "workload", "dbbench", "testdata", "db_bench-7.8.3-help.txt"))
	if err != nil {
		return build.Build{}, err
	}
	os.WriteFile(filepath.Join(dir, "help.txt"), help, 0o644)
	script := `#!/bin/sh
case "$1" in --version) echo "db_bench version 7.8.3"; exit 0;; --help) cat "$(dirname "$0")/help.txt"; exit 1;; esac
bench=; report=; seed=1
for a in "$@"; do case "$a" in --benchmarks=*) bench=${a#--benchmarks=}; bench=${bench%%,*};; --report_file=*) report=${a#--report_file=};; --seed=*) seed=${a#--seed=};; esac; done
ops=$(awk -v s="$seed" -v b=` + base + ` 'BEGIN { srand((s % 1000003) + b); printf "%d", b * (1 + (rand() - 0.5) * 0.02) }')
if [ "$bench" = readrandom ] && [ ` + swing + ` != 0 ]; then # a commit that cannot be told: its rounds swing by ±swing %
	n=$(cat "$(dirname "$0")/n" 2>/dev/null || echo 0); echo $((n + 1)) > "$(dirname "$0")/n"
	ops=$(awk -v o="$ops" -v w=` + swing + ` -v n="$n" 'BEGIN { printf "%d", o * (1 + (n % 2 ? w : -w) / 100) }')
fi
[ -n "$report" ] && printf 'secs_elapsed,interval_qps\n1,%d\n' "$ops" > "$report"
echo "$bench : 1.000 micros/op $ops ops/sec 1.000 seconds $ops operations;"
`
	prog := filepath.Join(dir, "db_bench")
	_ = os.Remove(filepath.Join(dir, "n"))
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		return build.Build{}, err
	}
	return build.Registry{Dir: b.h.Builds(), Cache: b.h.Cache}.AddProgram(ctx, name, prog, true)
}

func bisectEnv(t *testing.T) (app.Env, *bytes.Buffer, *bytes.Buffer) {
	h := testenv.Home(t)
	t.Setenv("QPSLAB_HOME", h.Root)
	var out, errb bytes.Buffer
	return app.Env{Home: h, Out: &out, Err: &errb}, &out, &errb
}

func fastOptions(src string, b bisect.Builder) bisect.Options {
	return bisect.Options{Src: src, Suite: "db_bench", Test: "readrandom.cached", Rounds: 6, Builder: b,
		Set: map[string]string{"size": "0.001", "seconds": "1", "settle-secs": "0"}}
}

// qpslab bisect on db_bench builds whose speeds are known: the real plan,
// pairing and comparison of every step; a regression of 25 % planted at
// commit 6 of 8 is found there, with a commit that does not build skipped
// (and nothing left of it in the registry); the steps are stored; run
// again, the same command answers from the store without measuring.
func TestBisectDBBench(t *testing.T) {
	ctx := context.Background()
	e, out, errb := bisectEnv(t)
	src, hs := speedRepo(t, []string{"1000", "1000", "1000", "1000", "broken", "1000", "750", "750", "750"})
	fb := &dbBenchBuilder{h: e.Home, compiled: map[string]int{}}
	o := fastOptions(src, fb)
	o.Good, o.Bad = hs[0], "HEAD"
	if err := bisect.Bisect(ctx, e.ForBisect(), o); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	want := "first bad commit: " + hs[6][:8] + " commit 6: speed 750: 0.7"
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "magnitude: 2") {
		t.Fatalf("lacks %q:\n%s\n%s", want, out, errb)
	}
	if _, err := (build.Registry{Dir: e.Home.Builds(), Cache: e.Home.Cache}).Get(ctx, "fk_"+hs[4][:8]); err == nil {
		t.Errorf("the commit that does not build left a build")
	}
	st, err := store.Open(ctx, "", e.Home.StoreFile())
	if err != nil {
		t.Fatal(err)
	}
	b, steps, err := st.Bisection(ctx, 1)
	st.Close()
	if err != nil || b.State != store.BisectFound || b.Threshold != 0.05 {
		t.Fatalf("stored: %+v %v", b, err)
	}
	kinds := map[string]string{}
	for _, s := range steps {
		kinds[s.Commit[:8]] = s.Kind
		if (s.Kind == bisect.Bad || s.Kind == bisect.Good) && s.Base != "" {
			if s.Plan == "" || s.Rounds != 6 || s.Build == "" {
				t.Errorf("step %+v", s)
			}
		}
	}
	if kinds[hs[4][:8]] != bisect.Skipped || !strings.Contains(errb.String(), "step "+hs[4][:8]+" commit 4: speed broken: does not build: skipped (compile fk_") {
		t.Errorf("the commit that does not build: %q\n%s", kinds[hs[4][:8]], errb)
	}
	compiled := len(fb.compiled)
	out.Reset()
	errb.Reset()
	if err := bisect.Bisect(ctx, e.ForBisect(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), want) || !strings.Contains(errb.String(), "resuming bisection 1 (found;") || strings.Contains(errb.String(), "measure ") || len(fb.compiled) != compiled {
		t.Errorf("run again: compiled %d (was %d)\n%s\n%s", len(fb.compiled), compiled, out, errb)
	}
	out.Reset()
	if err := bisect.Status(ctx, e.ForBisect(), 1, "text"); err != nil || !strings.Contains(out.String(), "commit 6: speed 750") || !strings.Contains(out.String(), "GOOD") {
		t.Errorf("status: %v\n%s", err, out)
	}
}

// Bad input gets one line naming the problem: not a git tree, GOOD after
// BAD, the same commit, an unknown suite or test, a threshold that is
// none, a --set the suite's plan refuses, an unknown --flavor or
// --config, --rounds outside 0..1000, control characters in --cflags or
// --set; nothing is compiled, no bisection is stored.
func TestBisectBadInput(t *testing.T) {
	ctx := context.Background()
	e, _, _ := bisectEnv(t)
	src, hs := speedRepo(t, []string{"1000", "900"})
	fb := &dbBenchBuilder{h: e.Home, compiled: map[string]int{}}
	for _, c := range []struct {
		edit func(*bisect.Options)
		want string
	}{
		{func(o *bisect.Options) { o.Src = t.TempDir() }, "is not a git tree"},
		{func(o *bisect.Options) { o.Good, o.Bad = hs[1], hs[0] }, "is not an ancestor of BAD"},
		{func(o *bisect.Options) { o.Bad = hs[0] }, "GOOD and BAD are the same commit"},
		{func(o *bisect.Options) { o.Suite = "nosuch" }, "nosuch"},
		{func(o *bisect.Options) { o.Test = "readrandom" }, `--test "readrandom": suite db_bench has no such test`},
		{func(o *bisect.Options) { o.Metric = "nosuch" }, "--metric nosuch: no such metric"},
		{func(o *bisect.Options) { o.Bad = "nosuchrev" }, `has no commit "nosuchrev"`},
		{func(o *bisect.Options) { o.Set["nosuchflag"] = "1" }, "nosuchflag"},
		{func(o *bisect.Options) { o.Set["seconds"] = "many" }, "seconds"},
		{func(o *bisect.Options) { o.Flavor = "nosuch" }, `--flavor: unknown flavor "nosuch"`},
		{func(o *bisect.Options) { o.Rounds = -1 }, "--rounds -1: give 1 to 1000"},
		{func(o *bisect.Options) { o.Rounds = 1001 }, "--rounds 1001: give 1 to 1000"},
		{func(o *bisect.Options) { o.Config = "nosuchconfig" }, "--config nosuchconfig: no such config"},
		{func(o *bisect.Options) { o.CFlags = "-O2\x1b[2J" }, "--cflags \"-O2\\x1b[2J\": it holds a control character"},
		{func(o *bisect.Options) { o.Set["seconds"] = "1\n" }, "--set seconds \"1\\n\": it holds a control character"},
	} {
		o := fastOptions(src, fb)
		o.Good, o.Bad = hs[0], hs[1]
		c.edit(&o)
		err := bisect.Bisect(ctx, e.ForBisect(), o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("want one line with %q: %v", c.want, err)
		}
	}
	if _, _, err := bisect.Flags("150%", nil); err == nil || !strings.Contains(err.Error(), "--threshold 150%") {
		t.Errorf("threshold 150%%: %v", err)
	}
	if th, set, err := bisect.Flags("7.5%", []string{"seconds=30"}); err != nil || th != 0.075 || set["seconds"] != "30" {
		t.Errorf("7.5%%: %v %v %v", th, set, err)
	}
	if len(fb.compiled) != 0 {
		t.Errorf("bad input compiled %v", fb.compiled)
	}
	if _, err := os.Stat(e.Home.StoreFile()); err == nil {
		st, err := store.Open(ctx, "", e.Home.StoreFile())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if bs, _ := st.Bisections(ctx); len(bs) != 0 {
			t.Errorf("bad options stored %+v", bs)
		}
	}
}

// A bisection interrupted (the context cancelled, as Ctrl-C does) resumes
// with qpslab bisect resume without measuring its endpoints again; a step
// that cannot tell stops it with the commands to go on; resumed with more
// rounds, the step pools them with its earlier ones; skipped, the walk
// goes on and, the skipped commit bordering the answer, names the range.
func TestBisectResumeCannotTellSkip(t *testing.T) {
	e, out, errb := bisectEnv(t)
	src, hs := speedRepo(t, []string{"1000", "1000", "1000", "1000", "875/20", "750", "750", "750", "750"})
	fb := &dbBenchBuilder{h: e.Home, compiled: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	o := fastOptions(src, interrupt{fb, hs[4], cancel})
	o.Good, o.Bad = hs[0], hs[8]
	if err := bisect.Bisect(ctx, e.ForBisect(), o); !errors.Is(err, context.Canceled) || !strings.Contains(errb.String(), "bisection 1 stopped: its decided steps are stored; qpslab bisect resume 1") {
		t.Fatalf("interrupted: %v\n%s", err, errb)
	}
	errb.Reset()
	err := bisect.Resume(context.Background(), e.ForBisect(), 1, 0, fb)
	if err == nil || !strings.Contains(err.Error(), hs[4][:8]+" cannot tell: ") || !strings.Contains(err.Error(), "qpslab bisect resume 1 --rounds 12") ||
		strings.Contains(errb.String(), "endpoints:") || strings.Count(errb.String(), "measure ") != 1 {
		t.Fatalf("resumed: %v\n%s", err, errb)
	}
	if err := bisect.Resume(context.Background(), e.ForBisect(), 1, 12, fb); err == nil || !strings.Contains(err.Error(), "cannot tell") {
		t.Fatalf("more rounds: %v", err)
	}
	// Each measurement of the midpoint took its looks (plan.DefaultLooks):
	// 6 repeats and 3 more at each of 3 looks, then the retry's 12 and 6
	// more at each of 3, all pooled.
	if steps := stepsOf(t, e); steps[len(steps)-1].Rounds != 15+30 {
		t.Errorf("the retry pooled %d rounds, want 15 + 30", steps[len(steps)-1].Rounds)
	}
	out.Reset()
	errb.Reset()
	if err := bisect.Skip(context.Background(), e.ForBisect(), 1, "", fb); err != nil {
		t.Fatalf("skip: %v\n%s", err, errb)
	}
	if want := "first bad commit is one of " + hs[4][:8] + " " + hs[5][:8]; !strings.Contains(out.String(), want) || !strings.Contains(errb.String(), "skipped "+hs[4][:8]) {
		t.Errorf("lacks %q:\n%s\n%s", want, out, errb)
	}
}

// interrupt cancels the bisection when it comes to compile commit.
type interrupt struct {
	bisect.Builder
	commit string
	cancel func()
}

func (i interrupt) Compile(ctx context.Context, o bisect.CompileOptions) (build.Build, error) {
	if o.Commit == i.commit {
		i.cancel()
		return build.Build{}, ctx.Err()
	}
	return i.Builder.Compile(ctx, o)
}

func stepsOf(t *testing.T, e app.Env) []store.BisectStep {
	st, err := store.Open(context.Background(), "", e.Home.StoreFile())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, steps, err := st.Bisection(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// Without --threshold, a bisection looks for a regression beyond this
// host's noise floor for the test where qpslab run --aa measured one (and
// stores it), else beyond analysis.DefaultFloor.
func TestBisectThresholdIsTheNoiseFloor(t *testing.T) {
	ctx := context.Background()
	e, _, errb := bisectEnv(t)
	fb := &dbBenchBuilder{h: e.Home, compiled: map[string]int{}}
	src, hs := speedRepo(t, []string{"1000", "800"})
	o := fastOptions(src, fb)
	o.Good, o.Bad = hs[0], hs[1]
	if err := bisect.Bisect(ctx, e.ForBisect(), o); err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	st, err := store.Open(ctx, "", e.Home.StoreFile())
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, store.Filter{Suite: "db_bench", Test: o.Test})
	if err != nil || len(runs) == 0 {
		t.Fatalf("%d runs: %v", len(runs), err)
	}
	hostID, err := store.HostID(runs[0].Host)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveNoise(ctx, []store.NoiseFloor{{HostID: hostID, Suite: "db_bench", Test: o.Test, Threads: runs[0].Threads, Conditions: runs[0].LabelConditions(),
		Metric: store.HeadlineMetric, Floor: 0.3, Measured: runs[0].Started}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	src2, hs2 := speedRepo(t, []string{"1000", "800"})
	o = fastOptions(src2, fb)
	o.Good, o.Bad = hs2[0], hs2[1]
	err = bisect.Bisect(ctx, e.ForBisect(), o)
	if err == nil || !strings.Contains(err.Error(), "within the threshold 30.0 % (rel 0.769 to 1.300): no regression to bisect") || !strings.Contains(errb.String(), "threshold 30.0 %: this host's noise floor (qpslab run --aa)") {
		t.Errorf("%v\n%s", err, errb)
	}
}

// startedBisection is bisection 1 of a 3-commit speedRepo, interrupted
// as it compiles GOOD: stored, with no step.
func startedBisection(t *testing.T) (app.Env, string, []string, *dbBenchBuilder, bisect.Options) {
	e, _, errb := bisectEnv(t)
	src, hs := speedRepo(t, []string{"1000", "1000", "900"})
	fb := &dbBenchBuilder{h: e.Home, compiled: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	o := fastOptions(src, interrupt{fb, hs[0], cancel})
	o.Good, o.Bad = hs[0], hs[2]
	if err := bisect.Bisect(ctx, e.ForBisect(), o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted: %v\n%s", err, errb)
	}
	return e, src, hs, fb, o
}

// The same command re-run with other build or plan settings is refused
// in one line naming the flag and its stored value (the walk goes on
// only with its own settings); resume --rounds N keeps N from then on.
func TestBisectSettingsDiffer(t *testing.T) {
	e, src, hs, fb, _ := startedBisection(t)
	for _, c := range []struct {
		edit func(*bisect.Options)
		want string
	}{
		{func(o *bisect.Options) { o.Config = "default" }, `bisection 1 was started with --config ""; resume it with its own settings: qpslab bisect resume 1, or start another`},
		{func(o *bisect.Options) { o.CFlags = "-O3" }, `--cflags ""`},
		{func(o *bisect.Options) { o.Flavor = "rocksdb" }, `--flavor ""`},
		{func(o *bisect.Options) { o.Rounds = 8 }, `--rounds "6"; resume it with its own settings: qpslab bisect resume 1 --rounds 8`},
		{func(o *bisect.Options) { o.Set["seconds"] = "2" }, `--set "seconds=1"`},
		{func(o *bisect.Options) { delete(o.Set, "seconds") }, `--set "seconds=1"`},
		{func(o *bisect.Options) { o.Set["compression"] = "none" }, `no --set compression`},
	} {
		o := fastOptions(src, fb)
		o.Good, o.Bad = hs[0], hs[2]
		c.edit(&o)
		if err := bisect.Bisect(context.Background(), e.ForBisect(), o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q: %v", c.want, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := bisect.Resume(ctx, e.ForBisect(), 1, 12, interrupt{fb, hs[0], cancel}); !errors.Is(err, context.Canceled) {
		t.Fatalf("resume: %v", err)
	}
	st, err := store.Open(context.Background(), "", e.Home.StoreFile())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if b, _, err := st.Bisection(context.Background(), 1); err != nil || b.Params["rounds"] != "12" {
		t.Errorf("resume --rounds 12 stored %q: %v", b.Params["rounds"], err)
	}
}

// bisect status only reads the store: with none, it says there are no
// bisections yet and creates nothing.
func TestBisectStatusCreatesNoStore(t *testing.T) {
	e, out, _ := bisectEnv(t)
	if err := bisect.Status(context.Background(), e.ForBisect(), 0, "text"); err != nil || !strings.HasPrefix(out.String(), "no bisections yet") {
		t.Errorf("%v: %s", err, out)
	}
	if err := bisect.Status(context.Background(), e.ForBisect(), 3, "text"); err == nil || !strings.Contains(err.Error(), "bisection 3: no such bisection") {
		t.Errorf("status 3: %v", err)
	}
	if _, err := os.Stat(e.Home.StoreFile()); err == nil {
		t.Errorf("status created the store %s", e.Home.StoreFile())
	}
}

// Two walks of one bisection do not run at once: the second is refused
// in one line naming the first's pid.
func TestBisectLocked(t *testing.T) {
	e, _, hs, fb, o := startedBisection(t)
	unlock, err := bisect.LockBisection(e.Home, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("bisection 1 is running (pid %d)", os.Getpid())
	o.Builder = fb
	for name, err := range map[string]error{
		"bisect": bisect.Bisect(context.Background(), e.ForBisect(), o),
		"resume": bisect.Resume(context.Background(), e.ForBisect(), 1, 0, fb),
		"skip":   bisect.Skip(context.Background(), e.ForBisect(), 1, hs[1], fb),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s while running: %v", name, err)
		}
	}
	if len(fb.compiled) != 0 {
		t.Errorf("compiled while locked: %v", fb.compiled)
	}
	unlock()
	if steps := stepsOf(t, e); len(steps) != 0 {
		t.Errorf("steps stored while locked: %+v", steps)
	}
}
