package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Seven reference-harness folders named the reference's way (10.2 … 11.4,
// testdata/history-step/README.md), imported out of order: the build names
// give the versions, so detect finds the 10.5 → 10.6 step in wKB/o and
// cpu/o and names both builds (wKB/o called; cpu/o, seven builds of one
// run 2–4 % apart, a lead at p 1.3e-05, short of a sweep's call at 1e-05,
// and called at --pvalue 0.01), and export keeps the version order
// without making up times. The same folders under names that give no
// version are in natural name order, and detect says so.
func TestImportHistoryInVersionOrder(t *testing.T) {
	dir := filepath.Join("testdata", "history-step")
	scrambled := []struct{ build, version string }{
		{"ma100433", "10.4.33"}, {"ma100244", "10.2.44"}, {"ma100524", "10.5.24"}, {"ma101107", "10.11.7"},
		{"ma100617", "10.6.17"}, {"ma100339", "10.3.39"}, {"ma110401", "11.4.1"},
	}
	h := newHome(t)
	for _, b := range scrambled {
		label := b.build + "_rel.cz11a"
		r := qpslab(t, h, "import", "mytools", filepath.Join(dir, label+".pk1"), "--label", label)
		if r.code != 0 || !strings.Contains(r.stdout, "(build "+b.build+"_rel: mariadb "+b.version+")") || r.stderr != "" {
			t.Fatalf("import %s: exit %d\n%s%s", label, r.code, r.stdout, r.stderr)
		}
	}
	r := qpslab(t, h, "detect", "--metric", "wKB/o,cpu/o")
	if r.code != 0 {
		t.Fatalf("detect: exit %d %s", r.code, r.stderr)
	}
	for m, kind := range map[string]string{"wKB/o": "improvement", "cpu/o": "unconfirmed improvement"} {
		want := "update-inlist_range=100 thr=1 config=cz11a " + m + ": " + kind + " -"
		if !strings.Contains(r.stdout, want) {
			t.Errorf("detect lacks %q", want)
		}
	}
	if strings.Count(r.stdout, "arrived in ma100617_rel 10.6.17, after ma100524_rel 10.5.24") != 2 ||
		!strings.Contains(r.stdout, "1 change point(s) and 1 unconfirmed in 2 series") || !strings.Contains(r.stdout, "a lead, short of a call") ||
		strings.Contains(r.stdout, "order:") {
		t.Errorf("detect:\n%s%s", r.stdout, r.stderr)
	}
	if r := qpslab(t, h, "detect", "--metric", "wKB/o,cpu/o", "--pvalue", "0.01"); r.code != 0 || !strings.Contains(r.stdout, "2 change point(s) in 2 series") {
		t.Errorf("detect --pvalue 0.01: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	out := t.TempDir()
	if r := qpslab(t, h, "export", "otava-csv", out, "--metric", "wKB/o,cpu/o"); r.code != 0 {
		t.Fatalf("export: exit %d %s", r.code, r.stderr)
	}
	csvs, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	if len(csvs) != 1 {
		t.Fatalf("exported %v", csvs)
	}
	b, _ := os.ReadFile(csvs[0])
	want := "time,build,version,commit,wKB/o,cpu/o\n" +
		",ma100244_rel,10.2.44,,90.665,0.006937\n,ma100339_rel,10.3.39,,89.534,0.007467\n,ma100433_rel,10.4.33,,91.588,0.007336\n" +
		",ma100524_rel,10.5.24,,90.21,0.007102\n,ma100617_rel,10.6.17,,33.077,0.004227\n,ma101107_rel,10.11.7,,33.099,0.004253\n" +
		",ma110401_rel,11.4.1,,32.22,0.00443\n"
	if string(b) != want {
		t.Errorf("otava csv:\n%s\nwant\n%s", b, want)
	}
	r = qpslab(t, h, "detect", "--input", csvs[0])
	if r.code != 0 || strings.Count(r.stdout, "arrived in ma100617_rel 10.6.17, after ma100524_rel 10.5.24") != 2 {
		t.Errorf("detect --input the export:\n%s%s", r.stdout, r.stderr)
	}
	// Nyrkiö orders by time, and these results have none: refused, not made up.
	r = qpslab(t, h, "export", "nyrkio-json", filepath.Join(out, "nyrkio"))
	if r.code == 0 || !strings.Contains(r.stderr, "has none (imported without --time)") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("nyrkio-json without times: exit %d %q", r.code, r.stderr)
	}

	// Names that give no version: rel5 … rel11, imported out of order. Each
	// import says so; history is in natural name order (rel9 after rel8,
	// where text order would put it after rel10), and detect says that too.
	h2 := newHome(t)
	inOrder := []string{"ma100244", "ma100339", "ma100433", "ma100524", "ma100617", "ma101107", "ma110401"}
	for _, i := range []int{4, 5, 6, 0, 1, 2, 3} {
		name := fmt.Sprintf("rel%d", 5+i)
		label := name + ".cz11a"
		r := qpslab(t, h2, "import", "mytools", filepath.Join(dir, inOrder[i]+"_rel.cz11a.pk1"), "--label", label)
		if r.code != 0 || !strings.HasPrefix(r.stderr, "build "+name+" has no version") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Fatalf("import %s: exit %d\n%s%s", label, r.code, r.stdout, r.stderr)
		}
	}
	r = qpslab(t, h2, "detect", "--metric", "wKB/o,cpu/o")
	if r.code != 0 || strings.Count(r.stdout, "arrived in rel9, after rel8") != 2 ||
		!strings.Contains(r.stdout, "order: 2 of 2 series are in build-name order (ma9 < ma10), as their builds have no version and no time: rel5, rel6, rel7, rel8, rel9, rel10 and 1 more") {
		t.Errorf("detect by name:\n%s%s", r.stdout, r.stderr)
	}
	// With --format json the note goes to standard error, the JSON stays whole.
	if r := qpslab(t, h2, "detect", "--metric", "wKB/o", "--format", "json"); r.code != 0 || !strings.HasPrefix(r.stdout, "{") || !strings.Contains(r.stderr, "order: ") {
		t.Errorf("detect --format json: %q %q", r.stdout, r.stderr)
	}
	// --version, --commit and --time go with the results; a bad one is one line.
	r = qpslab(t, h2, "import", "mytools", filepath.Join(dir, "ma110401_rel.cz11a.pk1"), "--label", "trunk.cz11a",
		"--version", "11.8.0", "--commit", "0a1b2c3", "--time", "2024-03-01 12:00:00")
	if r.code != 0 || !strings.Contains(r.stdout, "(build trunk: 11.8.0)") || r.stderr != "" {
		t.Fatalf("import with --version: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := qpslab(t, h2, "export", "otava-csv", filepath.Join(out, "mixed"), "--metric", "wKB/o"); r.code != 0 {
		t.Fatalf("export: exit %d %s", r.code, r.stderr)
	}
	csvs, _ = filepath.Glob(filepath.Join(out, "mixed", "*.csv"))
	if len(csvs) == 1 {
		b, _ = os.ReadFile(csvs[0])
	}
	if lines := strings.Split(string(b), "\n"); len(lines) < 3 || lines[1] != "2024-03-01 12:00:00 +0000,trunk,11.8.0,0a1b2c3,32.22" || !strings.HasPrefix(lines[2], ",rel5,,,90.665") {
		t.Errorf("the versioned build first, at its own time, then the rest by name:\n%s", b)
	}
	for _, bad := range [][]string{
		{"--version", "ten"}, {"--version", "10.6 beta"}, {"--time", "yesterday"},
	} {
		args := append([]string{"import", "mytools", filepath.Join(dir, "ma110401_rel.cz11a.pk1"), "--label", "x.cz11a"}, bad...)
		if r := qpslab(t, h2, args...); r.code == 0 || !strings.Contains(r.stderr, bad[0]) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d %q", bad, r.code, r.stderr)
		}
	}
}
