package main_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reference harness's folder imported as two labels compares in the
// seeds' five groups: scan in range-1 (ranges without aggregation), so
// range-1's statistics include it; --summary seeds prints them as the
// seeds do; --groups FILE groups by a user's layout, and a bad file is one
// error line naming the problem.
func TestGroupsSeedsAndFile(t *testing.T) {
	h := newHome(t)
	dir := filepath.Join("..", "..", "internal", "importer", "testdata", "mytools", "x.my8043_rel_o2nofp.z12a_c8r32.pk1")
	for _, lb := range []string{"my8043_rel.a", "my8043_rel.b"} {
		if r := qpslab(t, h, "import", "mytools", dir, "--label", lb, "--version", "8.0.43"); r.code != 0 {
			t.Fatalf("import %s: exit %d %s", lb, r.code, r.stderr)
		}
	}
	r := qpslab(t, h, "compare", "my8043_rel.a", "my8043_rel.b", "--format", "csv")
	if r.code != 0 || !strings.Contains(r.stdout, "\nscan_range=100,1,") {
		t.Fatalf("compare: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row[0] == "scan_range=100" && row[3] != "range-1" {
			t.Errorf("scan's group: %s; want range-1", row[3])
		}
	}
	r = qpslab(t, h, "compare", "my8043_rel.a", "my8043_rel.b", "--summary", "seeds")
	want := "Relative QPS of my8043_rel.b to my8043_rel.a, 5-group layout\n" +
		"         min   max   avg   median  stddev\n" +
		"point-1  1.00  1.00  1.00  1.00    0.00\n" +
		"range-1  1.00  1.00  1.00  1.00    0.00\n" +
		"range-2  1.00  1.00  1.00  1.00    0.00\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("--summary seeds: exit %d\n%s%s\nwant\n%s", r.code, r.stdout, r.stderr, want)
	}
	r = qpslab(t, h, "compare", "my8043_rel.a", "my8043_rel.b", "--summary", "seeds", "--format", "json")
	var sums []struct {
		Groups []struct {
			Group string `json:"group"`
			N     int    `json:"n"`
		} `json:"groups"`
	}
	n := -1
	if err := json.Unmarshal([]byte(r.stdout), &sums); err == nil && len(sums) == 1 {
		for _, g := range sums[0].Groups {
			if g.Group == "range-1" {
				n = g.N
			}
		}
	}
	if r.code != 0 || n != 1 {
		t.Errorf("--summary seeds --format json: range-1 must hold scan alone:\n%s%s", r.stdout, r.stderr)
	}

	files := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("mine.yaml", "name: mine\ngroups:\n  - name: reads\n    members: [\"point-query*\", \"read-only*\"]\n  - name: scans\n    members: [scan_range=100]\n")
	r = qpslab(t, h, "compare", "my8043_rel.a", "my8043_rel.b", "--groups", good, "--summary", "seeds", "--format", "md")
	if r.code != 0 || !strings.Contains(r.stdout, "mine-group layout") || !strings.Contains(r.stdout, "| reads | 1.00 |") || !strings.Contains(r.stdout, "| scans | 1.00 |") {
		t.Errorf("--groups %s: exit %d\n%s%s", good, r.code, r.stdout, r.stderr)
	}
	if r := qpslab(t, h, "report", "my8043_rel.a", "my8043_rel.b", "--groups", good, "--html", filepath.Join(files, "r.html")); r.code != 0 {
		t.Errorf("report --groups FILE: exit %d %s", r.code, r.stderr)
	} else if b, err := os.ReadFile(filepath.Join(files, "r.html")); err != nil || !strings.Contains(string(b), "rel:scans") {
		t.Errorf("the report's charts are not of the file's groups: %v", err)
	}
	for _, c := range []struct{ file, want string }{
		{write("unknown.yaml", "name: x\ngroups:\n  - name: a\n    members: [point-query_range=1]\n"), "no test is named point-query_range=1"},
		{write("twice.yaml", "name: x\ngroups:\n  - name: a\n    members: [\"scan*\"]\n  - name: b\n    members: [\"s*\"]\n"), "scan_range=100 is in two groups"},
		{write("notyaml.yaml", "name: x\ngroups: [\n"), "is not a layout"},
		{write("control.yaml", "name: x\x07\n"), "control character"},
		{write("shipped.yaml", "name: \"5\"\ngroups:\n  - name: a\n    members: [\"scan*\"]\n"), "shipped layouts"},
		{filepath.Join(files, "nosuch.yaml"), "neither one of sysbench's layouts nor a file"},
	} {
		r := qpslab(t, h, "compare", "my8043_rel.a", "my8043_rel.b", "--groups", c.file)
		if r.code == 0 || !strings.HasPrefix(r.stderr, "qpslab: --groups ") || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("--groups %s: exit %d %q; want one line with %q", c.file, r.code, r.stderr, c.want)
		}
	}
}
