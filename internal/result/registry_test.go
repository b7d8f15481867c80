package result_test

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	_ "github.com/qpslab/qpslab/internal/workload" // every owner registers its figures
)

// Every figure is registered once, by its owner, with a class and a unit
// or a derivation; the per-op tables' blocks hold what they held as
// slices; a figure's old names (the store's columns before migration 11,
// its old table header) find it under its one name.
func TestTheRegistry(t *testing.T) {
	all := result.All()
	seen := map[string]bool{}
	for _, m := range all {
		if seen[m.Name] || m.Of == nil || m.Help == "" {
			t.Errorf("%s: twice, or without a derivation or a help", m.Name)
		}
		seen[m.Name] = true
	}
	if got := result.Names(); strings.Join(got[:3], " ") != "qps tps rows/s" {
		t.Errorf("table order starts %v", got[:3])
	}
	for class, want := range map[string]string{
		result.ClassHW:     "cpu/o cs/o r/o rKB/o wKB/o o/s",
		result.ClassCPU:    "host_cpu_us/o server_cpu_us/o client_cpu_us/o",
		result.ClassInsert: "cpu/i cs/i rKB/i wKB/i",
		result.ClassDevice: "readahead_kb max_sectors_kb rareq-sz wareq-sz",
		result.ClassServer: "pss_mb rss_mb miss/o hit%",
	} {
		var got []string
		for _, m := range result.MetricsOf(class) {
			got = append(got, m.Name)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("class %s: %v, want %s", class, got, want)
		}
	}
	for _, old := range []string{"server_cpu_us_o", "server µs/o"} {
		if m, ok := result.Lookup(old); !ok || m.Name != "server_cpu_us/o" {
			t.Errorf("%s finds %q", old, m.Name)
		}
	}
	for _, form := range []string{"insert/s", "query.p99", "innodb_rows_read/o", "threads_running.avg"} {
		if _, ok := result.Lookup(form); !ok {
			t.Errorf("%s: no registered form takes it", form)
		}
	}
	for _, name := range []string{"KIND/s", "COUNTER/o", "ips", "w_amp", "stall_max"} {
		if !strings.Contains(result.MetricNames(), name) {
			t.Errorf("the help lacks %s", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a second qps was registered")
		}
	}()
	result.Register(result.Metric{Name: "qps", Class: result.ClassFigure})
}

// Check refuses a figure no measurement gives, by its one name.
func TestCheckNamesTheFigure(t *testing.T) {
	r := result.Run{Test: "t", HW: &result.HW{Samples: 3, OpsPerSec: 10, ServerCPUUsOp: -1}}
	if err := r.Check(); err == nil || !strings.Contains(err.Error(), "server_cpu_us/o is -1") {
		t.Errorf("a negative server CPU: %v", err)
	}
	r = result.Run{Test: "t", Totals: result.Totals{Figures: map[string]float64{"w_amp": -2}}}
	if err := r.Check(); err == nil || !strings.Contains(err.Error(), "w_amp is -2") {
		t.Errorf("a negative suite figure: %v", err)
	}
}
