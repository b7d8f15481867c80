package main_test

import "testing"

// qpslab run ycsb's bad input: each a line naming the flag and the fix, a
// non-zero exit, before any server starts; a RocksDB build is refused
// with where to go.
func TestRunYCSBBadInput(t *testing.T) {
	h := newHome(t)
	run := []string{"run", "ycsb", "--build", "mariadb-system"}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no records", []string{"--records", "0"}, []string{"--records 0", "give a whole number from 1 to 2147483647"}},
		{"huge records", []string{"--records", "99999999999"}, []string{"--records 99999999999", "from 1 to 2147483647"}},
		{"unknown test", []string{"--tests", "workloadg"}, []string{"--tests workloadg matches no workload", "workloada … workloadf"}},
		{"unknown distribution", []string{"--distribution", "hotspot"}, []string{"--distribution hotspot", "use zipfian, uniform, latest"}},
		{"no fields", []string{"--fieldcount", "0"}, []string{"--fieldcount 0", "from 1 to 100"}},
		{"long fields", []string{"--fieldlength", "20000"}, []string{"--fieldlength 20000", "from 1 to 10000"}},
		{"no-load without a server", []string{"--no-load"}, []string{"--no-load keeps the usertable", "--sandbox or --target"}},
	} {
		t.Run(tc.name, func(t *testing.T) { oneErrorLine(t, h, append(run, tc.args...), tc.want) })
	}
	t.Run("rocksdb build", func(t *testing.T) {
		oneErrorLine(t, h, []string{"run", "ycsb", "--build", "rocksdb-system", "--records", "2000", "--secs", "5"}, []string{"suite ycsb needs one",
			"qpslab run db_bench --build rocksdb-system --ycsb workloada,workloadb,workloadc,workloade,workloadf --size 0.002 --seconds 5 --fieldcount 10 --fieldlength 100;",
			"workloadd has no db_bench benchmark"})
	})
	t.Run("rocksdb build, workloadd", func(t *testing.T) {
		oneErrorLine(t, h, []string{"run", "ycsb", "--build", "rocksdb-system", "--tests", "workloadd"}, []string{"suite ycsb needs one",
			"workloadd has no db_bench benchmark (no read-latest distribution, no inserts beside reads): run it on MyRocks"})
	})
}
