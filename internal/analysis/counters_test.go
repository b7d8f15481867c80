package analysis

import (
	"math"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// withCounters is a run at ops/s over a 10 s window whose server counted
// values (name → change), its tree at pss and rss KB.
func withCounters(qps float64, pss, rss uint64, values ...result.CounterValue) result.Run {
	r := run("update-index_range=100", 1, qps)
	r.HW = &result.HW{Op: "statement", Samples: 10, Seconds: 10, OpsPerSec: qps, Avg: result.HWSecond{ServerPSS: pss, ServerRSS: rss},
		Server: &result.ServerCounters{Seconds: 10, Values: values}}
	return r
}

// The server's lines of a table: memory, then the counters per op in the
// order recorded, medians over repeats, zero rows left out and counted,
// extra counters only when asked for.
func TestServerLines(t *testing.T) {
	c := func(name string, v float64) result.CounterValue { return result.CounterValue{Name: name, Value: v} }
	base := Set{Label: "a.default", Runs: []result.Run{
		withCounters(100, 1024, 4096, c("innodb_os_log_written", 500000), c("innodb_row_lock_waits", 0), result.CounterValue{Name: "threads_running", Value: 1.5, Level: true}),
		withCounters(100, 1024, 4096, c("innodb_os_log_written", 700000), c("innodb_row_lock_waits", 0), result.CounterValue{Name: "innodb_pages_created", Value: 50, Extra: true}),
		withCounters(100, 1024, 4096, c("innodb_os_log_written", 600000), c("innodb_row_lock_waits", 0)),
	}}
	other := Set{Label: "b.default", Runs: []result.Run{withCounters(200, 2048, 8192, c("innodb_os_log_written", 400000), c("innodb_row_lock_waits", 0))}}
	tables, err := Metrics([]Set{base, other}, "")
	if err != nil || len(tables) != 1 {
		t.Fatalf("%d tables, %v", len(tables), err)
	}
	tb := tables[0]
	got := map[string][]float64{}
	var order []string
	for _, l := range tb.Server {
		got[l.Metric] = l.Values
		order = append(order, l.Metric)
	}
	want := []string{"pss_mb", "rss_mb", "innodb_os_log_written/o", "threads_running.avg"}
	if len(order) != len(want) {
		t.Fatalf("lines %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("lines %v, want %v", order, want)
		}
	}
	// 600000 bytes over 10 s at 100 ops/s: 600 per op (the median); the
	// other: 400000 / 10 / 200 = 200.
	if v := got["innodb_os_log_written/o"]; !near(v[0], 600) || !near(v[1], 200) {
		t.Errorf("log bytes per op %v, want 600 and 200", v)
	}
	if v := got["pss_mb"]; !near(v[0], 1) || !near(v[1], 2) {
		t.Errorf("pss %v", v)
	}
	if v := got["threads_running.avg"]; !near(v[0], 1.5) || !math.IsNaN(v[1]) {
		t.Errorf("threads running %v, want 1.5 and missing", v)
	}
	if tb.HiddenServer != 1 {
		t.Errorf("hidden %d, want 1 (innodb_row_lock_waits, zero everywhere)", tb.HiddenServer)
	}
	all, err := MetricsCounters([]Set{base, other}, "", CounterChoice{All: true})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range all[0].Server {
		found = found || l.Metric == "innodb_pages_created/o"
	}
	if !found {
		t.Errorf("--counters all: no innodb_pages_created/o in %+v", all[0].Server)
	}
}
