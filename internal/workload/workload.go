// Package workload gathers the suites: each is a package under
// internal/workload that registers itself with the suite registry in init,
// declaring all it is (its flags and help, tests, layouts, figures and
// conditions), and is imported here once, so that every command that
// imports this package knows every suite. Adding a suite is one new
// package, one line below and its page in docs/ (docs/architecture.md).
//
// It also gathers the metric registry (result.Register): each suite
// registers its own figures, and the packages below register every run's
// (the engine its rates and latencies, internal/metrics the hardware cost
// per op, internal/counters the server's counters), so that a binary or a
// test that imports this package knows every figure.
package workload

import (
	_ "github.com/qpslab/qpslab/internal/counters"          // the server's counters per op (COUNTER/o, LEVEL.avg)
	_ "github.com/qpslab/qpslab/internal/engine"            // rates, latencies, stalls, fairness, per-kind figures
	_ "github.com/qpslab/qpslab/internal/metrics"           // hardware cost per op, the server tree's memory
	_ "github.com/qpslab/qpslab/internal/workload/dbbench"  // RocksDB's db_bench
	_ "github.com/qpslab/qpslab/internal/workload/ibench"   // the Insert Benchmark
	_ "github.com/qpslab/qpslab/internal/workload/script"   // pgbench-style script files
	_ "github.com/qpslab/qpslab/internal/workload/sysbench" // the sysbench microbenchmarks
	_ "github.com/qpslab/qpslab/internal/workload/tpcc"     // TPC-C
	_ "github.com/qpslab/qpslab/internal/workload/ycsb"     // YCSB's core workloads
)
