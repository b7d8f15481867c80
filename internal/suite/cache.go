package suite

import (
	"strconv"
	"strings"
)

// Workloads: one vocabulary for every suite. A cached workload runs with
// the cache the config gives (the tables fit); an iobound one has its cache
// sized to a fraction of the data (--cache), so that most reads of a test
// go to storage. db_bench sizes its block cache itself; a server suite's
// plan restarts the server after the load with its cache sized
// (Plan.Cache, Step.Sizes) and judges every run after it (IO-bound or
// served from memory).
const (
	Cached  = "cached"
	IOBound = "iobound"
)

// DefaultCache is an iobound workload's cache as a fraction of the loaded
// data: a sixteenth, as db_bench's iobound block cache of the raw keys and
// values.
const DefaultCache = 1.0 / 16

// CacheParam is --cache, the same for every suite; of what it is a
// fraction is the suite's to say (the loaded tables, db_bench's raw keys
// and values).
func CacheParam(of string) Param {
	return Param{Name: "cache", Kind: Float, Default: strconv.FormatFloat(DefaultCache, 'g', -1, 64),
		Usage: "with --workload iobound: the cache as a fraction of " + of + ", above 0 and below 1 (a sixteenth by default)"}
}

// ServerWorkloadParams are --workload and --cache of a suite that runs on
// a server (sysbench, the Insert Benchmark, scripts).
func ServerWorkloadParams() []Param {
	return []Param{
		{Name: "workload", Kind: String, Default: Cached, Usage: "cached (the server's cache as the config sizes it) or iobound: after the load the server restarts with its cache (InnoDB's buffer pool, PostgreSQL's shared_buffers) sized to --cache of the loaded tables and with direct IO (O_DIRECT; PostgreSQL 16 and later debug_io_direct=data), and each run after it is judged IO-bound or served from memory"},
		CacheParam("the loaded tables (data and indexes, on disk)"),
	}
}

// Cache reads --workload and --cache of a server suite: the cache fraction
// of an iobound workload, 0 for a cached one.
func (c *Checker) Cache() float64 {
	w := strings.ToLower(c.String("workload"))
	switch w {
	case Cached, "":
		if c.v.Changed("cache") {
			c.Problem("--cache sizes the cache of --workload iobound: add --workload iobound, or leave --cache out")
		}
		return 0
	case IOBound:
		return c.CacheFraction()
	}
	c.Problem("--workload %s: use %s or %s (one workload a run; run the other as a second run)", Quote(w), Cached, IOBound)
	return 0
}

// CacheFraction reads --cache: a fraction above 0 and below 1.
func (c *Checker) CacheFraction() float64 {
	s := c.String("cache")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f < 1) { // NaN too
		c.fail("cache", Quote(s), "give a fraction above 0 and below 1 (0.0625: a sixteenth of the data)")
		return DefaultCache
	}
	return f
}

// CacheConditions are what RecordCache records, among the Conditions of
// a suite that takes ServerWorkloadParams: an iobound run is never a
// repeat of a cached one, nor of one with another cache fraction.
func CacheConditions() []string { return []string{"workload", "cache"} }

// RecordCache adds what an iobound plan records with each run (conditions:
// CacheConditions): the workload and the cache fraction.
func RecordCache(params map[string]string, cache float64) {
	if cache > 0 {
		params["workload"] = IOBound
		params["cache"] = strconv.FormatFloat(cache, 'g', -1, 64)
	}
}
