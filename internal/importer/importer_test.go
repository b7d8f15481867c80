package importer

import (
	"context"
	"testing"
	"time"
)

var ctx = context.Background()

// The reference's build names carry their flavor and version; any other
// name carries neither.
func TestReferenceVersion(t *testing.T) {
	for _, c := range []struct{ name, flavor, version string }{
		{"ma100244_rel_withdbg", "mariadb", "10.2.44"},
		{"ma100433_rel", "mariadb", "10.4.33"},
		{"ma100524", "mariadb", "10.5.24"},
		{"ma101107_rel", "mariadb", "10.11.7"},
		{"ma110401_rel", "mariadb", "11.4.1"},
		{"ma120101_rel_withdbg", "mariadb", "12.1.1"},
		{"ma5568_rel", "mariadb", "5.5.68"},
		{"my8036_rel_o2nofp", "mysql", "8.0.36"},
		{"my5651_rel_o2nofp", "mysql", "5.6.51"},
		{"my8407_rel_o2nofp", "mysql", "8.4.7"},
		{"my9500_rel_o2nofp", "mysql", "9.5.0"},
		{"fbmy5635_202203072101", "mysql", "5.6.35"},
		{"pg1222_o2nofp", "postgres", "12.22"},
		{"pg178_o2nofp", "postgres", "17.8"},
		{"pg182", "postgres", "18.2"},
	} {
		f, v, ok := ReferenceVersion(c.name)
		if !ok || f != c.flavor || v != c.version {
			t.Errorf("%s: %q %q %v, want %s %s", c.name, f, v, ok, c.flavor, c.version)
		}
	}
	for _, name := range []string{"mariadb-system", "ma10024", "ma1002444", "my80", "pg9624", "pg1", "ma100244rel", "x.ma100244", "ma010244", "nightly", ""} {
		if f, v, ok := ReferenceVersion(name); ok {
			t.Errorf("%s: read as %s %s", name, f, v)
		}
	}
}

// A version given wins over the name; a name that says nothing leaves the
// version unknown, and every run of the import carries what is known.
func TestSourceResolve(t *testing.T) {
	s, ok := Source{Build: "ma100617_rel", Config: "cz11a"}.Resolve()
	if !ok || s.Flavor != "mariadb" || s.Version != "10.6.17" {
		t.Errorf("from the name: %+v %v", s, ok)
	}
	s, ok = Source{Build: "ma100617_rel", Version: "10.6.18"}.Resolve()
	if !ok || s.Flavor != "mariadb" || s.Version != "10.6.18" {
		t.Errorf("given: %+v %v", s, ok)
	}
	if s, ok := (Source{Build: "nightly"}).Resolve(); ok || s.Version != "" || s.Flavor != "" {
		t.Errorf("a name without a version: %+v %v", s, ok)
	}

	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	runs, err := Mytools(ctx, mytoolsDir, Source{Build: src.Build, Config: src.Config, Commit: "4a5b6c7", Time: at})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Flavor != "mysql" || r.Version != "8.0.43" || r.Params["commit"] != "4a5b6c7" || !r.Started.Equal(at) {
			t.Errorf("%s@%d: flavor %q version %q commit %q started %v", r.Test, r.Threads, r.Flavor, r.Version, r.Params["commit"], r.Started)
		}
	}
	r, err := Sysbench(ctx, "testdata/sysbench-1.0.20-point-select.txt", Source{Build: "nightly", Config: "default"}, "point-query_range=100")
	if err != nil || r.Version != "" || r.Flavor != "" || !r.Started.IsZero() || r.Params["commit"] != "" {
		t.Errorf("nothing known: %+v %v", r, err)
	}
}
