package tpcc

import (
	"context"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// A terminal's transactions allocate almost nothing once warm: the
// statements are prepared once, their arguments and rows reuse the
// terminal's buffers, the readers are made once.
func TestTerminalAllocations(t *testing.T) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			d := start(t, build)
			ctx := context.Background()
			p := configure(t, "warehouses", "1")
			if _, err := p.Steps[0].Task.Run(ctx, d.s, 2, 7, suite.TaskIO{Progress: func(int64, int64) {}, Sample: func(result.Sample) {}}); err != nil {
				t.Fatal(err)
			}
			wk, err := p.Steps[1].Drive.Workload(d.s, 7).NewWorker(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer wk.Close()
			for range 300 { // every statement prepared
				if _, err := wk.Event(ctx); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(500, func() {
				if _, err := wk.Event(ctx); err != nil {
					t.Fatal(err)
				}
			})
			t.Logf("%.2f allocations a transaction", allocs)
			if allocs > 0 { // AllocsPerRun's mean, rounded down: below one a transaction
				t.Errorf("%.2f allocations a transaction, want none", allocs)
			}
		})
	}
}
