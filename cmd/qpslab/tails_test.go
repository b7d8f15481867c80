package main_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// Slices keep the tail (issue 59 item 4): MariaDB with the thread pool and
// with a thread per connection at 256 clients, run in 0.25 s slices
// alternating between the servers and run whole (--interleave pass), each
// 1 s. Every sliced run counts the operations in flight at its slices' ends
// (inflight); for each label the sliced p99 is within 4× of the whole
// run's (the noise of one second at 256 clients on a busy 2-core host),
// or the run said in one line why its tails cannot be trusted; and compare
// names, in one "tails not called" line each, exactly the labels whose
// runs result.TailsCut says that of.
func TestRunSlicesKeepTheTail(t *testing.T) {
	h := newHome(t)
	dir := t.TempDir()
	args := []string{"run", "sysbench", "--build", "mariadb-system", "--config", "pool-of-threads,one-thread-per-connection",
		"--tests", "point-query_range=100", "--threads", "256", "--rows", "2000", "--read-secs", "1", "--warmup", "0.5",
		"--postwrite-scale", "0", "--repeat", "1"}
	sliced := qpslab(t, h, append(args, "--slices", "4", "--out", filepath.Join(dir, "s.json"))...)
	if sliced.code != 0 {
		t.Fatalf("sliced: exit %d: %s", sliced.code, sliced.stderr)
	}
	c := qpslab(t, h, "compare", "mariadb-system.pool-of-threads", "mariadb-system.one-thread-per-connection")
	if c.code != 0 {
		t.Fatalf("compare: exit %d: %s", c.code, c.stderr)
	}
	whole := qpslab(t, h, append(args, "--interleave", "pass", "--out", filepath.Join(dir, "w.json"))...)
	if whole.code != 0 {
		t.Fatalf("whole: exit %d: %s", whole.code, whole.stderr)
	}
	runs := func(name string) map[string]result.Run {
		f, err := result.Read(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]result.Run{}
		for _, r := range f.Runs {
			if r.Test == "point-query_range=100" {
				out[result.ConfigName(r.Config)] = r
			}
		}
		return out
	}
	s, w := runs("s.json"), runs("w.json")
	if len(s) != 2 || len(w) != 2 {
		t.Fatalf("runs: %d sliced, %d whole, want 2 each", len(s), len(w))
	}
	for cfg, sr := range s {
		label := "mariadb-system." + cfg
		if sr.Pairing != result.PairedSlices || sr.SliceLength() <= 0 || sr.Totals.Figures["inflight"] < 1 {
			t.Errorf("%s: pairing %q, slice %v, in flight %v: want slices that count the operations in flight at their ends", label, sr.Pairing, sr.SliceLength(), sr.Totals.Figures["inflight"])
		}
		sp, wp := sr.Totals.Response.P99, w[cfg].Totals.Response.P99
		warned := strings.Contains(sliced.stderr, "point-query_range=100, 256 thread(s), "+label+": its latency tails cannot be trusted")
		_, why := result.TailsCut(sr)
		if warned != (why != "") {
			t.Errorf("%s: warned %v, but TailsCut says %q:\n%s", label, warned, why, sliced.stderr)
		}
		if called := !strings.Contains(c.stdout, "tails not called: point-query_range=100, 256 thread(s), "+label+": "); called != (why == "") {
			t.Errorf("%s: compare calls its tails %v, but TailsCut says %q:\n%s", label, called, why, c.stdout)
		}
		if r := sp / wp; !warned && !(r >= 0.25 && r <= 4) || math.IsNaN(r) {
			t.Errorf("%s: sliced p99 %.0f µs, whole %.0f µs, and no warning", label, sp, wp)
		}
		t.Logf("%s: sliced p99 %.1f ms (in flight %v, starved in a slice %v), whole %.1f ms; warned %v: %s", label, sp/1000, sr.Totals.Figures["inflight"], sr.Totals.Figures["starved_1s"], wp/1000, warned, why)
	}
}
