package recorder

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// qpslab import refuses a run whose figure is implausible (two runs of
// 1.7e308 queries a second, whose median once overflowed), naming the
// run and the field, and stores nothing of the import; plausible runs are
// stored.
func TestImportRefusesImplausibleFigures(t *testing.T) {
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "qpslab.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := func(i int, qps float64) result.Run {
		return result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "point-query", Build: "huge", Config: "default@0123456789ab", Threads: 1,
			Loop: "closed", Status: result.OK, Started: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC),
			Totals: result.Totals{Seconds: 10, Reported: qps, ReportedUnit: "qps", QPS: qps}}
	}
	var out, errw bytes.Buffer
	err = Import(ctx, st, []result.Run{run(0, 1000), run(1, 1.7e308)}, &out, &errw)
	if err == nil || !strings.Contains(err.Error(), "runs[1] (point-query): totals.reported = 1.7e+308 is above the plausible") {
		t.Fatalf("import of 1.7e308: %v", err)
	}
	if runs, err := st.Runs(ctx, store.Filter{}); err != nil || len(runs) != 0 {
		t.Fatalf("the refused import stored %d run(s): %v", len(runs), err)
	}
	if err := Import(ctx, st, []result.Run{run(0, 1000), run(1, 1e9)}, &out, &errw); err != nil {
		t.Fatalf("an import at the bound: %v", err)
	}
}
