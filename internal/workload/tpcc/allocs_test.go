package tpcc

import (
	"context"
	"runtime"
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
			if err := p.Steps[1].Before(ctx, d.s); err != nil {
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
			// The exact count (AllocsPerRun rounds its mean down to a whole
			// number, which hides one allocation in ten transactions).
			const n = 2000
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range n {
				if _, err := wk.Event(ctx); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			allocs := float64(after.Mallocs-before.Mallocs) / n
			t.Logf("%.3f allocations a transaction", allocs)
			if allocs > 0.01 {
				t.Errorf("%.3f allocations a transaction, want none (at most 1 in 100)", allocs)
			}
		})
	}
}
