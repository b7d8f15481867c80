package selector

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

func testRun(build, kernel string, engine string, qps float64) result.Run {
	r := result.Run{SchemaVersion: result.SchemaVersion, Suite: "s", Test: "t", Build: build, Config: "c@0123456789ab", Threads: 1, Status: result.OK,
		Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Host: json.RawMessage(`{"kernel":"` + kernel + `","cpus":2}`),
		Params: map[string]string{}, Totals: result.Totals{Reported: qps, ReportedUnit: "qps", QPS: qps}}
	if engine != "" {
		r.Params["engine"] = engine
	}
	return r
}

// A label's runs: its engine only, one host's with @HOST, each host's
// apart with ByHost; what matches nothing is NotFound, bad input is not.
func TestSets(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, x := range []struct {
		host string
		runs []result.Run
	}{{"alpha", []result.Run{testRun("b", "6.1", "", 1000), testRun("b", "6.1", "rocksdb", 500)}}, {"beta", []result.Run{testRun("b", "6.2", "", 900)}}} {
		if _, err := st.Import(ctx, x.runs, store.Meta{Source: "run", Hostname: x.host}); err != nil {
			t.Fatal(err)
		}
	}
	sets, err := Selection{}.Sets(ctx, st, []string{"b.c@alpha", "b.c:rocksdb", "b.c@beta"})
	if err != nil || len(sets) != 3 || len(sets[0].Runs) != 1 || len(sets[1].Runs) != 1 || sets[1].Runs[0].Totals.QPS != 500 || len(sets[2].Runs) != 1 || sets[2].Label != "b.c@beta" {
		t.Fatalf("sets: %+v %v", sets, err)
	}
	// b.c alone would pool the two hosts' runs (another kernel: hosts.go).
	if _, err := (Selection{}).Sets(ctx, st, []string{"b.c"}); err == nil || !strings.Contains(err.Error(), "differ in kernel") {
		t.Errorf("b.c over two kernels: %v", err)
	}
	sets, err = Selection{ByHost: true}.Sets(ctx, st, []string{"b.c"})
	if err != nil || len(sets) != 2 || sets[0].Label != "b.c@alpha" || sets[1].Label != "b.c@beta" || sets[0].Runs[0].Totals.QPS != 1000 {
		t.Fatalf("by host: %+v %v", sets, err)
	}
	var se *Error
	for _, c := range []struct {
		labels   []string
		notFound bool
		want     string
	}{
		{[]string{"x.c"}, true, "no ok results for x.c"},
		{[]string{"b.c:tokudb"}, true, "no ok results for b.c:tokudb"},
		{[]string{"b.c@"}, false, "names no host"},
		{[]string{"nodot"}, false, "build.config"},
	} {
		_, err := Selection{}.Sets(ctx, st, c.labels)
		if !errors.As(err, &se) || se.NotFound != c.notFound || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.labels, err)
		}
	}
	if _, _, err := (Selection{Host: "alpha"}).Compare(ctx, st, []string{"b.c"}, "", nil); err == nil || !strings.Contains(err.Error(), "BASE label") {
		t.Errorf("one label: %v", err)
	}
}
