package recorder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

var ctx = context.Background()

// smallDisk is a disk of size bytes that fills up for real
// (testenv.SmallDisk).
func smallDisk(t *testing.T, size int64) string { return testenv.SmallDisk(t, size) }

// run is a finished run with n seconds of samples (about 1 KB each with
// their histograms), large enough to fill a small disk in a few runs.
func run(i, n int) result.Run {
	r := result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: fmt.Sprintf("t%02d", i), Build: "b", Flavor: "mariadb", Version: "1",
		Config: "c@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: time.Now().UTC(), Ended: time.Now().UTC(),
		Totals: result.Totals{Seconds: float64(n), Events: int64(1000 * n), QPS: 1000, Reported: 1000, ReportedUnit: "qps"}}
	for s := 0; s < n; s++ {
		r.Samples = append(r.Samples, result.Sample{Second: s, Events: 1000, Statements: 1000, ServiceHist: []byte(strings.Repeat("h", 1000))})
	}
	return r
}

// keep runs each run through the sink as a plan does, and returns how many
// Done accepted before the first failure, and that failure.
func keep(t *testing.T, s *Sink, runs int) (int, error) {
	t.Helper()
	for i := 0; i < runs; i++ {
		r := run(i, 40)
		start := r
		start.Status, start.Samples, start.Totals = "", nil, result.Totals{}
		rec, err := s.Begin(ctx, start)
		if err != nil {
			return i, err
		}
		for _, smp := range r.Samples {
			rec.Sample(smp)
		}
		if err := rec.Done(ctx, r); err != nil {
			return i, err
		}
	}
	return runs, nil
}

// The store's disk fills mid-run, with no reserve on it: every result
// said to be stored is in the store, the one that could not be is not
// called stored, and the results file, on another disk, holds them all
// and says so.
func TestStoreDiskFull(t *testing.T) {
	full := smallDisk(t, 2<<20)
	st, err := store.Open(ctx, filepath.Join(full, "qpslab.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	file := filepath.Join(t.TempDir(), "r.json")
	s := &Sink{Store: st, File: file}
	n, err := keep(t, s, 200)
	if err == nil {
		t.Fatal("200 runs fit on a 2 MB disk: the test no longer fills it")
	}
	if !strings.Contains(err.Error(), "results so far are in "+file) || !strings.Contains(err.Error(), "no space left on device ("+full+": ") {
		t.Errorf("the failure does not say where the results are, or that the disk is full: %v", err)
	}
	sum := s.Summary()
	if !strings.Contains(sum, fmt.Sprintf("%d result(s) stored", n)) || !strings.Contains(sum, "1 result(s) NOT stored") || !strings.Contains(sum, "all "+fmt.Sprint(n+1)+" written to") {
		t.Errorf("summary after %d stored: %s", n, sum)
	}
	stored, err := st.Runs(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d run(s) stored before the disk filled: %s", n, sum)
	if len(stored) != n {
		t.Errorf("the store holds %d ok runs, the summary says %d", len(stored), n)
	}
	f, err := result.Read(file)
	if err != nil || len(f.Runs) != n+1 {
		t.Errorf("the results file holds %d runs (%v), want %d", len(f.Runs), err, n+1)
	}
	// The run whose end could not be written (when the disk filled after
	// its start was stored) is not left reading ok; a run whose start could
	// not be stored has no row at all. (Without a reserve its status may
	// not fit either: TestRunCutByFullDisk has the reserve.)
	all, err := st.Runs(ctx, store.Filter{Status: []string{result.OK, result.Failed, "running"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) > n {
		last := all[len(all)-1]
		t.Logf("the unstored run reads %s: %s", last.Status, last.Error)
		if last.Status == result.OK {
			t.Errorf("the unstored run reads ok")
		}
	}
}

// stored is every run in st, whatever its status.
func stored(t *testing.T, st *store.Store) []result.Run {
	t.Helper()
	rs, err := st.Runs(ctx, store.Filter{Status: []string{result.OK, result.Failed, result.Aborted, "running"}, Samples: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A home whose disk fills in the middle of a run (another program took
// the space: a filler file), the store and the results file on it, with
// the reserve: the command is told at once (OnFull), the run cut short is
// recorded failed, saying the disk is full and what was free, in the
// store and in the file; the runs before it keep their results in both;
// nothing is left running and no partial file is left; and once the space
// is freed the next command keeps its runs, its reserve made again,
// without a manual step. Before, the cut run stayed running (later
// aborted, why lost) and a NAME.tmp was left.
func TestRunCutByFullDisk(t *testing.T) {
	home := smallDisk(t, 8<<20)
	reserve := filepath.Join(home, "reserve")
	if err := Reserve(reserve, 1<<20); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(home, "qpslab.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	file := filepath.Join(home, "results", "r.json")
	os.Mkdir(filepath.Dir(file), 0o755)
	told := make(chan error, 1)
	s := &Sink{Store: st, File: file, Home: home, Reserve: reserve, OnFull: func(err error) { told <- err }}
	if n, err := keep(t, s, 3); n != 3 || err != nil {
		t.Fatalf("%d runs kept before the disk filled: %v", n, err)
	}
	filler := testenv.Fill(t, home)

	// The fourth run: its row, then its samples, until a write finds the
	// disk full and the command is told (as the plan is, which then ends
	// the run it was in: aborted, interrupted).
	cut := run(3, 40)
	start := cut
	start.Status, start.Samples, start.Totals = "", nil, result.Totals{}
	rec, err := s.Begin(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	var full error
	testenv.WaitFor(t, time.Minute, "the full disk found", func() bool {
		select {
		case full = <-told:
			return true
		default:
		}
		rec.Sample(result.Sample{Second: len(cut.Samples), Events: 1, ServiceHist: []byte(strings.Repeat("h", 4000))})
		return false
	})
	var df *DiskFull
	want := "no space left on device (" + home + ": 0 bytes free)"
	if !errors.As(full, &df) || full.Error() != want {
		t.Fatalf("told %v, want %q", full, want)
	}
	cut.Status, cut.Error = result.Aborted, "interrupted"
	if err := rec.Done(ctx, cut); err != nil {
		t.Logf("its end: %v", err)
	}
	if got := s.Full(); got == nil || got.Error() != want {
		t.Errorf("Full() = %v", got)
	}

	// The store: three ok, the cut one failed with why; none running.
	rs := stored(t, st)
	if len(rs) != 4 {
		t.Fatalf("%d runs stored, want 4", len(rs))
	}
	for i, r := range rs {
		switch {
		case i < 3 && (r.Status != result.OK || len(r.Samples) != 40):
			t.Errorf("run %d: %s, %d samples", i, r.Status, len(r.Samples))
		case i == 3 && (r.Status != result.Failed || r.Error != want):
			t.Errorf("the cut run reads %s %q, want failed %q", r.Status, r.Error, want)
		}
	}
	// The file: the same four, the cut one failed with why.
	f, err := result.Read(file)
	if err != nil || len(f.Runs) != 4 || f.Runs[3].Status != result.Failed || f.Runs[3].Error != want {
		t.Errorf("the results file: %d runs (%v)", len(f.Runs), err)
	}
	// No partial file anywhere in the home.
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if _, tmp := atomicfile.Temporary(d.Name()); tmp || strings.HasSuffix(p, ".tmp") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})

	// The space freed: the next command makes its reserve again and keeps
	// its runs, with no step by hand.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := Reserve(reserve, 1<<20); err != nil {
		t.Fatalf("the reserve once the space is freed: %v", err)
	}
	next := &Sink{Store: st, File: filepath.Join(home, "results", "next.json"), Home: home, Reserve: reserve}
	if n, err := keep(t, next, 2); n != 2 || err != nil || next.Full() != nil {
		t.Fatalf("the next command kept %d of 2 runs: %v", n, err)
	}
	if rs := stored(t, st); len(rs) != 6 {
		t.Errorf("%d runs stored after the next command, want 6", len(rs))
	}
}

// The results file's disk fills: the store keeps every run, and the
// summary does not claim the file holds them.
func TestFileDiskFull(t *testing.T) {
	full := smallDisk(t, 200<<10)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "qpslab.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	file := filepath.Join(full, "r.json")
	s := &Sink{Store: st, File: file}
	n, err := keep(t, s, 100)
	if err == nil {
		t.Fatal("100 runs fit on a 200 KB disk: the test no longer fills it")
	}
	if !strings.Contains(err.Error(), "stored in") {
		t.Errorf("the failure does not say the store has them: %v", err)
	}
	sum := s.Summary()
	if !strings.Contains(sum, fmt.Sprintf("%d result(s) stored", n+1)) || !strings.Contains(sum, "is NOT complete") || strings.Contains(sum, "written to") {
		t.Errorf("summary: %s", sum)
	}
	if stored, err := st.Runs(ctx, store.Filter{}); err != nil || len(stored) != n+1 {
		t.Errorf("the store holds %d runs (%v), want %d", len(stored), err, n+1)
	}
	if _, err := os.Stat(file); err == nil {
		if f, err := result.Read(file); err == nil && len(f.Runs) > n {
			t.Errorf("the file holds %d runs though its write failed", len(f.Runs))
		}
	}
}
