// Package workload gathers the suites: each is a package under
// internal/workload that registers itself with the suite registry in init,
// and is imported here once, so that every command that imports this
// package knows every suite. Adding a suite is one new package and one line
// below.
package workload

import (
	_ "github.com/qpslab/qpslab/internal/workload/dbbench"  // RocksDB's db_bench
	_ "github.com/qpslab/qpslab/internal/workload/ibench"   // the Insert Benchmark
	_ "github.com/qpslab/qpslab/internal/workload/sysbench" // the sysbench microbenchmarks
)
