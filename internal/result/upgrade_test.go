package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/schema2.json is what `qpslab run sysbench --out` wrote before
// suites (schema 2): the load, point-query.pre, update-index and scan. It
// reads as schema 3, each run with its role, groups, order and series.
func TestReadSchema2(t *testing.T) {
	f, err := Read(filepath.Join("testdata", "schema2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.SchemaVersion != SchemaVersion || len(f.Runs) != 4 {
		t.Fatalf("schema %d, %d runs", f.SchemaVersion, len(f.Runs))
	}
	want := []struct {
		test, role, g5 string
		series         string
	}{
		{"load", RoleLoad, "", SeriesEvents},
		{"point-query.pre_range=100", RoleTest, "point-1", SeriesStatements},
		{"update-index_range=100", RoleTest, "writes", SeriesStatements},
		{"scan_range=100", RoleTest, "range-1", SeriesEvents}, // as sysbench's layout has it now (stored: range-2)
	}
	prev := -1
	for i, w := range want {
		r := f.Runs[i]
		g, _ := r.Placement("5")
		if r.Test != w.test || r.Role != w.role || g.Group != w.g5 || r.Totals.Series != w.series || r.Suite != "sysbench" || r.SchemaVersion != SchemaVersion {
			t.Errorf("run %d: %s role %q group %q series %q suite %q", i, r.Test, r.Role, g.Group, r.Totals.Series, r.Suite)
		}
		if r.Step <= prev {
			t.Errorf("%s: step %d after %d", r.Test, r.Step, prev)
		}
		prev = r.Step
	}
}

// A version this qpslab does not know is refused with one line.
func TestReadUnknownSchema(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(p, []byte(`{"schema_version": 9, "runs": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(p)
	if err == nil || !strings.Contains(err.Error(), "schema version 9") || strings.Contains(err.Error(), "\n") {
		t.Errorf("schema 9: %v", err)
	}
}

// A results file with a figure no measurement gives is refused whole, with
// the run and the figure named.
func TestReadRefusesImpossibleFigures(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"reported": -5, "reported_unit": "qps"}`, "reported is -5"},
		{`{"qps": 1e400}`, "runs[0].totals.qps: 1e400 is out of range"},
		{`{"response": {"p99_us": -1}}`, "response p99 is -1"},
	} {
		p := filepath.Join(t.TempDir(), "r.json")
		body := `{"schema_version": 3, "runs": [{"suite": "sysbench", "test": "point-query_range=100", "build": "b", "threads": 1, "status": "ok", "totals": ` + c.json + `}]}`
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.json, err, c.want)
		}
	}
}
