package recorder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

var ctx = context.Background()

// smallDisk mounts a tmpfs of size bytes: a disk that fills up for real.
// Mounting needs root, which the tests' servers need too (make test runs
// as root on CI); elsewhere the test says so and stops.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		if errors.Is(err, syscall.EPERM) {
			testenv.Skip(t, "mounting a small tmpfs needs root: "+err.Error())
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

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

// The store's disk fills mid-run: every result said to be stored is in
// the store, the one that could not be is not called stored, and the
// results file, on another disk, holds them all and says so.
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
	if !strings.Contains(err.Error(), "results so far are in "+file) {
		t.Errorf("the failure does not say where the results are: %v", err)
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
	// not be stored has no row at all.
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
