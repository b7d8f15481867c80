package counters_test

import (
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/result"
	_ "github.com/qpslab/qpslab/internal/workload" // r/o's owner registers it
)

// The judgement on figures of known shape: storage reads per op against
// the server's cache misses per op (100 ops a second over 10 s).
func TestIOBoundJudgement(t *testing.T) {
	run := func(reads float64, misses, requests float64, counters bool, disk bool) result.Run {
		hw := &result.HW{Samples: 3, Seconds: 10, OpsPerSec: 100, ReadsPerOp: reads, NoDisk: !disk}
		if counters {
			hw.Server = &result.ServerCounters{Seconds: 10, Values: []result.CounterValue{
				{Name: "innodb_buffer_pool_reads", Value: misses * 1000},
				{Name: "innodb_buffer_pool_read_requests", Value: requests * 1000},
			}}
		}
		return result.Run{Totals: result.Totals{Seconds: 10}, HW: hw}
	}
	// A run with no server (db_bench) computes its cache's misses per op
	// and hit ratio itself, under the same names.
	blockCache := func(reads, missPerOp, hitPct float64) result.Run {
		r := run(reads, 0, 0, false, true)
		r.Totals.Figures = map[string]float64{counters.FigureMissPerOp: missPerOp, counters.FigureHitPct: hitPct}
		return r
	}
	for _, c := range []struct {
		name  string
		r     result.Run
		ok    bool
		bound bool
		says  string
	}{
		{"direct IO, a read per miss", run(0.9, 0.9, 10, true, true), true, true, "cache hit 91.00 %"},
		{"read-ahead: more reads than misses", run(2, 0.4, 40, true, true), true, true, "0.4 cache misses/op"},
		{"the page cache served 98 %", run(0.03, 1.5, 4, true, true), true, false, "(2 % of them): the OS page cache served them"},
		{"cached", run(0.0001, 0.0001, 20, true, true), true, false, "served from memory"},
		{"reads that were not the server's", run(0.5, 0.001, 20, true, true), true, false, "served from memory"},
		{"no counters: the disk alone", run(0.5, 0, 0, false, true), true, true, "the server's counters were not read"},
		{"no disk measured", run(0.5, 0.5, 5, true, false), false, false, ""},
		{"db_bench: its block cache's figures, O_DIRECT", blockCache(0.8, 0.75, 40), true, true, "0.75 cache misses/op, cache hit 40.00 %"},
		{"db_bench: buffered, the page cache served them", blockCache(0.004, 0.75, 40), true, false, "the OS page cache served them"},
	} {
		v, ok := counters.IOBound(c.r)
		if ok != c.ok || v.OK != c.bound || !strings.Contains(v.Detail, c.says) || ok && v.Name != counters.VerdictIOBound {
			t.Errorf("%s: %+v %v, want ok=%v bound=%v saying %q", c.name, v, ok, c.ok, c.bound, c.says)
		}
	}
}

// A MyRocks run is judged by its block cache (rocksdb_block_cache_miss,
// and its hits for the ratio), not by the InnoDB pages its server counts
// too; an InnoDB run on the same server by InnoDB's.
func TestIOBoundMyRocks(t *testing.T) {
	run := func(engine string) result.Run {
		hw := &result.HW{Samples: 3, Seconds: 10, OpsPerSec: 100, ReadsPerOp: 0.5, Server: &result.ServerCounters{Seconds: 10, Values: []result.CounterValue{
			{Name: "innodb_buffer_pool_reads", Value: 0},
			{Name: "innodb_buffer_pool_read_requests", Value: 10},
			{Name: "rocksdb_block_cache_miss", Value: 600},
			{Name: "rocksdb_block_cache_hit", Value: 1400},
		}}}
		return result.Run{Totals: result.Totals{Seconds: 10}, HW: hw, Params: map[string]string{"engine": engine}}
	}
	v, ok := counters.IOBound(run("rocksdb"))
	if !ok || !v.OK || !strings.Contains(v.Detail, "0.6 cache misses/op, cache hit 70.00 %") {
		t.Errorf("MyRocks: %+v %v", v, ok)
	}
	v, ok = counters.IOBound(run("innodb"))
	if !ok || v.OK || !strings.Contains(v.Detail, "0 cache misses/op") {
		t.Errorf("InnoDB on the same server: %+v %v", v, ok)
	}
	for _, name := range []string{"rocksdb_block_cache_miss", "rocksdb_block_cache_hit", "rocksdb_compact_write_bytes", "rocksdb_rows_read"} {
		found := false
		for _, d := range counters.Curated("mysql") {
			found = found || d.Name == name
		}
		if !found {
			t.Errorf("the MySQL family's curated counters lack MyRocks' %s", name)
		}
	}
}
