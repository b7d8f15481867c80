package analysis

import (
	"math"
	"slices"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// A db_bench run's per-op row carries the disk's request sizes (the median
// over repeats); a run without db_bench's figures, or without a measured
// disk, has none.
func TestMetricsDevice(t *testing.T) {
	run := func(figures map[string]float64, rareq float64, noDisk bool) result.Run {
		return result.Run{Test: "overwriteandwait.iobound", Threads: 1, Status: result.OK,
			Totals: result.Totals{Seconds: 10, Reported: 1000, Figures: figures},
			HW:     &result.HW{Samples: 10, OpsPerSec: 1000, NoDisk: noDisk, Avg: result.HWSecond{RareqSz: rareq, WareqSz: 100}}}
	}
	db := map[string]float64{"usec_op": 10, "ops_sec": 1000}
	tables, err := Metrics([]Set{
		{Label: "rx.default", Runs: []result.Run{run(db, 80, false), run(db, 90, false), run(db, 84.5, false)}},
		{Label: "rx.cra2m", Runs: []result.Run{run(db, 4.6, true)}},
		{Label: "my.default", Runs: []result.Run{run(nil, 50, false)}},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	rows := tables[0].Rows
	names := DeviceNames()
	rareq, wareq := slices.Index(names, "rareq-sz"), slices.Index(names, "wareq-sz")
	if len(rows) != 3 || rareq < 0 || wareq < 0 {
		t.Fatalf("rows %+v, device names %v", rows, names)
	}
	if rows[0].Device == nil || rows[0].Device[rareq] != 84.5 || rows[0].Device[wareq] != 100 {
		t.Errorf("db_bench row %+v", rows[0].Device)
	}
	if rows[1].Device != nil || rows[2].Device != nil {
		t.Errorf("rows without a measured disk or db_bench figures: %v %v", rows[1].Device, rows[2].Device)
	}
	if !math.IsNaN(rows[1].Abs[2]) {
		t.Errorf("r/o of a run without a disk: %v", rows[1].Abs[2])
	}
}
