package counters

import (
	"fmt"

	"github.com/qpslab/qpslab/internal/result"
)

// What says whether a run was IO-bound: the server's cache misses per op
// and its hit ratio (from its own counters), and storage reads per op (the
// device's, r/o); and what an iobound plan records of the cache it gave
// the server.
const (
	FigureMissPerOp = "miss/o"
	FigureHitPct    = "hit%"
	FigureCacheMB   = "cache_mb"
	FigureTablesMB  = "tables_mb"
	// VerdictIOBound is the verdict of a run an iobound plan asked to be
	// IO-bound (result.Run.Verdicts).
	VerdictIOBound = "io-bound"
)

// Thresholds of IOBound: a run is IO-bound when storage was read at least
// MinReads times per op, the server's cache missed at least MinMisses
// pages per op, and storage served at least MinServed of those misses. A
// cached run reads storage a few times in ten thousand ops (the flusher's
// and the OS's own reads); an IO-bound point lookup whose cache holds a
// sixteenth of the tables misses on most leaf pages, and with direct IO
// each miss is a read (more with read-ahead, fewer where the device merges
// them). With buffered IO (PostgreSQL before 16) the OS page cache serves
// most misses: 2 % of them reached the disk on a loaded host here.
const (
	MinReads  = 0.01
	MinMisses = 0.01
	MinServed = 0.25
)

// cacheCounters are each engine's cache misses and what tells its
// requests: InnoDB's buffer pool (its read requests), PostgreSQL's shared
// buffers (blks_read counts what the OS page cache served too), and
// MyRocks' block cache (its hits: requests are hits and misses), first on
// a run of engine rocksdb, whose server counts InnoDB's pages too.
var cacheCounters = []cacheCounter{
	{miss: "innodb_buffer_pool_reads", requests: "innodb_buffer_pool_read_requests"},
	{miss: "blks_read", requests: "blks_requested"},
	{miss: "rocksdb_block_cache_miss", hits: "rocksdb_block_cache_hit", storageEngine: "rocksdb"},
}

// cacheCounter is one engine's pair: its misses, and its requests or
// (hits) its hits.
type cacheCounter struct {
	miss, requests, hits string
	storageEngine        string // the runs' params.engine it is first for
}

// cacheCountersOf are cacheCounters in the order run r is judged by: its
// engine's pair first.
func cacheCountersOf(r result.Run) []cacheCounter {
	out := make([]cacheCounter, 0, len(cacheCounters))
	for _, c := range cacheCounters {
		if c.storageEngine != "" && c.storageEngine == r.Params["engine"] {
			out = append(out, c)
		}
	}
	for _, c := range cacheCounters {
		if c.storageEngine == "" || c.storageEngine != r.Params["engine"] {
			out = append(out, c)
		}
	}
	return out
}

func init() {
	result.Register(
		result.Metric{Name: FigureMissPerOp, Max: result.DefaultMax, Unit: "pages", Per: "op", Class: result.ClassServer, Verb: "%.4f",
			Help: "pages per op the server's cache missed (InnoDB innodb_buffer_pool_reads, PostgreSQL blks_read; db_bench: blocks its block cache missed, rocksdb.block.cache.miss): what it asked of storage or, on buffered IO, of the OS page cache",
			Of: func(r result.Run) (float64, bool) {
				m, _, ok := misses(r)
				return m, ok
			}},
		result.Metric{Name: FigureHitPct, Max: 100, Unit: "%", Per: "run", Class: result.ClassServer, Verb: "%.2f", HigherIsBetter: true,
			Help: "the server's cache hit ratio over the window: page requests it found in its cache, in % (db_bench: its block cache's)",
			Of: func(r result.Run) (float64, bool) {
				_, hit, ok := misses(r)
				return hit, ok && hit >= 0
			}},
		result.Metric{Name: FigureCacheMB, Max: 1e9, Unit: "MB", Per: "run", Class: result.ClassFigure, Verb: "%.0f",
			Help: "--workload iobound: the cache the server ran with after the load (innodb_buffer_pool_size, shared_buffers), as it reports it"},
		result.Metric{Name: FigureTablesMB, Max: 1e9, Unit: "MB", Per: "run", Class: result.ClassFigure, Verb: "%.0f",
			Help: "--workload iobound: what the loaded tables took on disk when the cache was sized"},
	)
}

// misses is r's server cache misses per op and its hit ratio in % (-1
// where no page was requested), from the first pair of cacheCounters it
// recorded; for a run with no server (db_bench), from the figures its
// suite computed of its own cache under the same names (RocksDB's block
// cache: --statistics' rocksdb.block.cache.miss and .hit).
func misses(r result.Run) (perOp, hitPct float64, ok bool) {
	if m, okF := r.Totals.Figures[FigureMissPerOp]; okF {
		hitPct = -1
		if h, okH := r.Totals.Figures[FigureHitPct]; okH {
			hitPct = h
		}
		return m, hitPct, true
	}
	for _, c := range cacheCountersOf(r) {
		m, okM := CounterMetric(c.miss + result.CounterSuffix)
		if !okM {
			continue
		}
		v, okV := m.Of(r)
		if !okV {
			continue
		}
		hitPct = -1
		missed, _ := r.HW.Server.Counter(c.miss)
		if c.hits != "" {
			if hits, okH := r.HW.Server.Counter(c.hits); okH && hits.Value+missed.Value > 0 {
				hitPct = 100 * hits.Value / (hits.Value + missed.Value)
			}
		} else if req, okR := r.HW.Server.Counter(c.requests); okR && req.Value > 0 {
			hitPct = 100 * max(0, 1-missed.Value/req.Value)
		}
		return v, hitPct, true
	}
	return 0, 0, false
}

// IOBound judges whether run r was IO-bound: storage read at least MinReads
// times per op, and (where the run has the server's counters) its cache
// missing at least MinMisses pages per op, at least MinServed of them read
// from storage, so that the reads were the server's and its misses went to
// storage rather than to the OS page cache. ok is false where r has no storage reads measured (an import,
// a run whose device was not found). The verdict's detail gives the
// figures and, when it was not IO-bound, what served it.
func IOBound(r result.Run) (v result.Verdict, ok bool) {
	ro, okR := result.Lookup("r/o")
	if !okR {
		return result.Verdict{}, false
	}
	reads, okR := ro.Of(r)
	if !okR {
		return result.Verdict{}, false
	}
	miss, hit, okM := misses(r)
	v.Name = VerdictIOBound
	v.OK = reads >= MinReads && (!okM || miss >= MinMisses && reads >= MinServed*miss)
	hitText := ""
	if okM && hit >= 0 {
		hitText = fmt.Sprintf(", cache hit %.2f %%", hit)
	}
	switch {
	case !okM:
		v.Detail = fmt.Sprintf("%.4g storage reads/op (the server's counters were not read)", reads)
	case v.OK:
		v.Detail = fmt.Sprintf("%.4g storage reads/op, %.4g cache misses/op%s", reads, miss, hitText)
	case miss >= MinMisses:
		v.Detail = fmt.Sprintf("the server's cache missed %.4g pages/op%s, but storage was read %.4g times/op (%.0f %% of them): the OS page cache served them", miss, hitText, reads, 100*reads/miss)
	default:
		v.Detail = fmt.Sprintf("%.4g cache misses/op%s, %.4g storage reads/op: served from memory", miss, hitText, reads)
	}
	return v, true
}
