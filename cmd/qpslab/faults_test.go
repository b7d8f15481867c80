package main_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/recorder"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

// The fault-injection tests (docs/reliability.md). Each injects one fault
// into real qpslab runs in a home of their own, and checks what qpslab
// promises after it (kept): every run that finished is in the store and
// in its results file, a run the fault cut short says why, on the label
// it concerns, nothing is left running, no partial file is left, and the
// next run works. bench/faults.sh runs them with more kill points.

// faultQuick makes a run of two labels short: one test, a small table,
// half a second per test, two repeats.
var faultQuick = []string{"--tables", "1", "--rows", "2000", "--read-secs", "0.5", "--warmup", "0", "--postwrite-scale", "0", "--repeat", "2"}

// twinHome is a test home with the config twin (default's settings under
// another name): two labels of one build.
func twinHome(t *testing.T) home.Home {
	t.Helper()
	h := newHome(t)
	if r := qpslab(t, h, "configs", "add", "twin", "--family", "mysql", emptyFile(t)); r.code != 0 {
		t.Fatalf("configs add: %+v", r)
	}
	return h
}

// started is a qpslab process running in the background.
type started struct {
	cmd      *exec.Cmd
	out, err lockedBuf // serve_test.go's
	done     chan struct{}
}

func start(t *testing.T, h home.Home, args ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	s.cmd.Env = testenv.Env(h)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.err
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.cmd.Process.Kill(); <-s.done })
	return s
}

// exit waits for the process to end and returns its exit code.
func (s *started) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(within):
		t.Fatalf("qpslab did not end within %s: stderr %q", within, s.err.String())
	}
	return s.cmd.ProcessState.ExitCode()
}

// waitSays waits until the process has said line on its stderr (failing
// t if it ends first).
func (s *started) waitSays(t *testing.T, line string) {
	t.Helper()
	testenv.WaitFor(t, 3*time.Minute, "qpslab saying "+line, func() bool {
		select {
		case <-s.done:
			t.Fatalf("qpslab ended early: %s", s.err.String())
		default:
		}
		return strings.Contains(s.err.String(), line)
	})
}

// allStatuses is every status a run can have in the store, running too.
var allStatuses = []string{result.OK, result.Failed, result.Aborted, result.Saturated, "running"}

// runKey names a run in a results file and in the store alike.
func runKey(r result.Run) string {
	return strings.Join([]string{r.Plan, r.Label(), r.Test, strconv.Itoa(r.Threads), r.Params["repeat"]}, "|")
}

// kept checks what qpslab promises of home h after a fault, once a qpslab
// command has run since (it cleans what a killed one left): every
// results file reads whole; every run a file holds is in the store, and
// every run the store holds ok is in a file; no run is left running; no
// partial file is left. It returns the store's runs.
func kept(t *testing.T, h home.Home) []result.Run {
	t.Helper()
	inFiles := map[string]result.Run{}
	files, _ := filepath.Glob(filepath.Join(h.Results(), "*.json"))
	for _, f := range files {
		rf, err := result.Read(f)
		if err != nil {
			t.Errorf("a results file does not read whole: %v", err)
			continue
		}
		for _, r := range rf.Runs {
			inFiles[runKey(r)] = r
		}
	}
	st, err := store.OpenRead(context.Background(), "", h.StoreFile())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.Filter{Status: allStatuses})
	if err != nil {
		t.Fatal(err)
	}
	inStore := map[string]result.Run{}
	for _, r := range runs {
		inStore[runKey(r)] = r
		if r.Status == "running" {
			t.Errorf("%s on %s left running", r.Test, r.Label())
		}
		if _, ok := inFiles[runKey(r)]; r.Status == result.OK && !ok {
			t.Errorf("%s on %s (plan %s) is stored ok, but in no results file", r.Test, r.Label(), r.Plan)
		}
	}
	for k, r := range inFiles {
		if _, ok := inStore[k]; !ok {
			t.Errorf("%s on %s (plan %s, %s) is in a results file, not in the store", r.Test, r.Label(), r.Plan, r.Status)
		}
	}
	filepath.WalkDir(h.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "data" && filepath.Dir(filepath.Dir(p)) == h.Sandboxes() {
			return fs.SkipDir // the server's own files
		}
		if _, tmp := atomicfile.Temporary(d.Name()); tmp || strings.HasSuffix(d.Name(), ".tmp") {
			t.Errorf("a partial file left: %s", p)
		}
		return nil
	})
	return runs
}

// byLabel is the store's runs of test, by label.
func byLabel(runs []result.Run, test string) map[string]result.Run {
	out := map[string]result.Run{}
	for _, r := range runs {
		if r.Test == test {
			out[r.Label()] = r
		}
	}
	return out
}

// Two runs started at once in one home, in the same second (each its own
// label, so each its own sandbox): two results files, each whole and
// holding its own run's runs, and both runs' rows in the store. Before,
// both were named by the second they started in and written through one
// NAME.tmp: one run's file overwrote the other's, or both left a torn one.
func TestFaultTwoRunsAtOnce(t *testing.T) {
	h := twinHome(t)
	args := func(cfg string) []string {
		return append([]string{"run", "sysbench", "--build", "mariadb-system", "--config", cfg, "--tests", "point-query.pre_range=100"}, faultQuick...)
	}
	// Both at the start of a second: they name their files within it.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	a, b := start(t, h, args("default")...), start(t, h, args("twin")...)
	for _, s := range []*started{a, b} {
		if code := s.exit(t, 5*time.Minute); code != 0 {
			t.Fatalf("exit %d: %s", code, s.err.String())
		}
	}
	files, _ := filepath.Glob(filepath.Join(h.Results(), "*.json"))
	if len(files) != 2 {
		t.Fatalf("%d results files, want 2: %v", len(files), files)
	}
	stamp := regexp.MustCompile(`\d{8}T\d{6}`)
	t.Logf("the results files: %s, %s (the same second: %v)", filepath.Base(files[0]), filepath.Base(files[1]),
		stamp.FindString(files[0]) == stamp.FindString(files[1]))
	runs := kept(t, h)
	labels := map[string]bool{}
	for _, f := range files {
		rf, err := result.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		own := map[string]bool{}
		for _, r := range rf.Runs {
			own[r.Label()] = true
		}
		if len(own) != 1 || len(rf.Runs) < 2 {
			t.Errorf("%s holds %d runs of labels %v, want its own run's only", f, len(rf.Runs), own)
		}
		for l := range own {
			labels[l] = true
		}
	}
	if !labels["mariadb-system.default"] || !labels["mariadb-system.twin"] {
		t.Errorf("the files hold labels %v", labels)
	}
	stored := map[string]int{}
	for _, r := range runs {
		stored[r.Label()]++
	}
	if stored["mariadb-system.default"] == 0 || stored["mariadb-system.default"] != stored["mariadb-system.twin"] {
		t.Errorf("stored runs by label: %v", stored)
	}
}

// The server of one of two labels SIGKILLed in the middle of a test whose
// slices alternate between them: qpslab ends with its one line naming the
// label, build and config whose server died; that label's run is failed,
// saying so with the server's last log lines, and the other's aborted,
// saying another label's server failed; everything is kept, and the next
// run works.
func TestFaultServerKilled(t *testing.T) {
	h := twinHome(t)
	s := start(t, h, "run", "sysbench", "--build", "mariadb-system", "--config", "default,twin", "--rows", "2000",
		"--read-secs", "60", "--warmup", "0", "--repeat", "1", "--tests", "point-query.pre_range=100", "-v")
	s.waitSays(t, "point-query.pre_range=100, 1 thread(s), 20 slice(s)")
	sts, err := sandbox.List(h)
	if err != nil {
		t.Fatal(err)
	}
	killed := false
	for _, st := range sts {
		if st.Name == "mariadb-system.twin" && st.PID > 0 {
			killed = syscall.Kill(st.PID, syscall.SIGKILL) == nil
		}
	}
	if !killed {
		t.Fatalf("no twin server to kill: %+v", sts)
	}
	if code := s.exit(t, 2*time.Minute); code != 1 {
		t.Fatalf("exit %d after the server's death: %s", code, s.err.String())
	}
	lines := strings.Split(strings.TrimSpace(s.err.String()), "\n")
	last := lines[len(lines)-1]
	for _, want := range []string{"qpslab: point-query.pre_range=100: the server of mariadb-system.twin (build mariadb-system, config twin@", "died: killed by signal 9"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last line %q lacks %q", last, want)
		}
	}
	testenv.WaitFor(t, 30*time.Second, "no server left", func() bool { return len(testenv.Processes(h.Root)) == 0 })
	runs := kept(t, h)
	pq := byLabel(runs, "point-query.pre_range=100")
	f, a := pq["mariadb-system.twin"], pq["mariadb-system.default"]
	t.Logf("twin: %s %s", f.Status, f.Error)
	t.Logf("default: %s %s", a.Status, a.Error)
	if f.Status != result.Failed || !strings.Contains(f.Error, "the server of mariadb-system.twin (build mariadb-system, config twin@") ||
		!strings.Contains(f.Error, "killed by signal 9") || !strings.Contains(f.Error, "server.log") {
		t.Errorf("the twin's run: %s %q", f.Status, f.Error)
	}
	if a.Status != result.Aborted || !strings.HasPrefix(a.Error, "another label's server failed: the server of mariadb-system.twin") {
		t.Errorf("the default label's run: %s %q", a.Status, a.Error)
	}
	for l, r := range byLabel(runs, "load") {
		if r.Status != result.OK {
			t.Errorf("the load of %s: %s %q", l, r.Status, r.Error)
		}
	}
	next := qpslab(t, h, append([]string{"run", "sysbench", "--build", "mariadb-system", "--config", "default,twin", "--tests", "point-query.pre_range=100"}, faultQuick...)...)
	if next.code != 0 {
		t.Fatalf("the next run: exit %d: %s", next.code, next.stderr)
	}
	kept(t, h)
}

// The home's disk fills in the middle of a run (another program takes
// every byte left): qpslab stops at once with one line saying the disk is
// full, the home and what was free; the run it cut is failed saying the
// same, in the store (which is on the full disk) and in the results file;
// the load before it is kept in both; nothing is left running nor
// partial; and once the space is freed the next run works, its reserve
// made again. Before, the run stayed running, later aborted for a reason
// that was not the disk, and NAME.json.tmp was left.
func TestFaultFullDisk(t *testing.T) {
	disk := testenv.SmallDisk(t, 320<<20)
	real := testenv.Home(t)
	h := home.Home{Root: filepath.Join(disk, "home"), Cache: real.Cache}
	if err := os.Mkdir(h.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("QPSLAB_HOME", h.Root)
	t.Cleanup(func() {
		exec.Command(bin, "server", "stop", "--all").Run()
		if left := testenv.Processes(h.Root); len(left) > 0 {
			t.Errorf("processes left behind: %q", left)
		}
	})
	// A redo log and buffer pool that fit the small disk.
	small := filepath.Join(t.TempDir(), "small.cnf")
	os.WriteFile(small, []byte("[mysqld]\ninnodb_log_file_size=48M\ninnodb_buffer_pool_size=64M\n"), 0o644)
	if r := qpslab(t, h, "configs", "add", "small", "--family", "mysql", small); r.code != 0 {
		t.Fatalf("configs add: %+v", r)
	}
	s := start(t, h, "run", "sysbench", "--build", "mariadb-system", "--config", "small", "--rows", "2000",
		"--read-secs", "120", "--warmup", "0", "--tests", "point-query.pre_range=100", "-v")
	s.waitSays(t, "-- point-query.pre_range=100, 1 thread(s)")
	filler := testenv.Fill(t, disk)
	want := "no space left on device (" + h.Root + ": 0 bytes free)"
	code := s.exit(t, 3*time.Minute)
	t.Logf("stderr: %s", s.err.String())
	if code != 1 || !strings.Contains(s.err.String(), "qpslab: "+want) {
		t.Fatalf("exit %d, want 1 and %q", code, want)
	}
	testenv.WaitFor(t, time.Minute, "no server left", func() bool { return len(testenv.Processes(h.Root)) == 0 })
	runs := kept(t, h)
	if r := byLabel(runs, "point-query.pre_range=100")["mariadb-system.small"]; r.Status != result.Failed || r.Error != want {
		t.Errorf("the cut run: %s %q, want failed %q", r.Status, r.Error, want)
	}
	if r := byLabel(runs, "load")["mariadb-system.small"]; r.Status != result.OK {
		t.Errorf("the load: %s %q", r.Status, r.Error)
	}

	// The space freed: the next run works, and makes its reserve again.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	next := qpslab(t, h, "run", "sysbench", "--build", "mariadb-system", "--config", "small", "--tests", "point-query.pre_range=100",
		"--rows", "2000", "--read-secs", "0.5", "--warmup", "0")
	if next.code != 0 {
		t.Fatalf("the next run: exit %d: %s", next.code, next.stderr)
	}
	if fi, err := os.Stat(h.Reserve()); err != nil || fi.Size() != recorder.ReserveSize {
		t.Errorf("the reserve after the next run: %v", err)
	}
	kept(t, h)
}

// faultPoints is how many times TestFaultKillQpslab kills qpslab: 3 in
// make test, QPSLAB_FAULT_POINTS (bench/faults.sh: 20) for more.
func faultPoints(t *testing.T) int {
	n := 3
	if v := os.Getenv("QPSLAB_FAULT_POINTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("QPSLAB_FAULT_POINTS=%q: give a whole number from 1", v)
		}
	}
	return n
}

// qpslab run of two labels SIGKILLed at random points of its run (from
// its start to its end: while it starts the servers, loads, measures,
// writes its results): after each, no server is left (the sandboxes'
// orphan guard), and once the next qpslab command has cleaned up what is
// kept holds; the next run works.
func TestFaultKillQpslab(t *testing.T) {
	h := twinHome(t)
	args := append([]string{"run", "sysbench", "--build", "mariadb-system", "--config", "default,twin", "--tests", "point-query.pre_range=100"}, faultQuick...)
	t0 := time.Now()
	if r := qpslab(t, h, args...); r.code != 0 {
		t.Fatalf("the whole run: exit %d: %s", r.code, r.stderr)
	}
	whole := time.Since(t0)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	points := faultPoints(t)
	t.Logf("a whole run takes %s; %d kill points, seed %d", whole.Round(time.Millisecond), points, seed)
	for i := range points {
		at := time.Duration(rng.Int64N(int64(whole)))
		s := start(t, h, args...)
		select {
		case <-s.done:
			t.Logf("point %d at %s: the run had ended", i+1, at)
		case <-time.After(at):
			s.cmd.Process.Signal(syscall.SIGKILL)
			<-s.done
		}
		testenv.WaitFor(t, time.Minute, fmt.Sprintf("no server left after the kill at %s", at), func() bool {
			return len(testenv.Processes(h.Root)) == 0
		})
		if r := qpslab(t, h, "server", "status"); r.code != 0 {
			t.Fatalf("server status after the kill at %s: %+v", at, r)
		}
		runs := kept(t, h)
		n := map[string]int{}
		for _, r := range runs {
			n[r.Status]++
		}
		t.Logf("point %d: killed at %s; the store holds %v", i+1, at.Round(time.Millisecond), n)
		if t.Failed() {
			t.Fatalf("after the kill at %s (seed %d)", at, seed)
		}
	}
	if r := qpslab(t, h, args...); r.code != 0 {
		t.Fatalf("the next run: exit %d: %s", r.code, r.stderr)
	}
	kept(t, h)
}

// emptyFile is an empty regular file: a config of no settings of its own
// (configs add reads regular files only, so not /dev/null).
func emptyFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "empty.cnf")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
