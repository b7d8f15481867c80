package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// copyTree copies the folder src to a temporary one.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// An Insert Benchmark folder of the reference harness imports through
// `import mytools` (told from a sysbench one by its files) as ibench runs
// that compare and metrics read; a folder that is neither, or a broken one,
// is one error line and stores nothing.
func TestImportIbench(t *testing.T) {
	h := newHome(t)
	dir := "../../internal/importer/testdata/ibench/ma100433_rel.cz11a_c8r32"
	r := qpslab(t, h, "import", "mytools", dir, "--label", "ma100433_rel.cz11a_c8r32")
	if r.code != 0 || !strings.Contains(r.stdout, "imported 10 result(s)") {
		t.Fatalf("import: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	// A second build whose qr100 took 20 s rather than 21: np.sh's IPS is
	// then 4000/20 = 200.0 and its QPS 73010/20 = 3650.5.
	other := copyTree(t, dir)
	p := filepath.Join(other, "qr100.L1", "o.res.dop2")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("21 seconds, 190.4 rows-per-second"), []byte("20 seconds, 200.0 rows-per-second"), 1)
	b = bytes.Replace(b, []byte("3476.6 queries-per-second"), []byte("3650.5 queries-per-second"), 1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := qpslab(t, h, "import", "mytools", other, "--label", "ma100620_rel.cz11a_c8r32"); r.code != 0 {
		t.Fatalf("import of the second build: exit %d %s", r.code, r.stderr)
	}

	r = qpslab(t, h, "compare", "ma100433_rel.cz11a_c8r32", "ma100620_rel.cz11a_c8r32")
	if r.code != 0 {
		t.Fatalf("compare: exit %d %s", r.code, r.stderr)
	}
	for _, want := range []string{"[load]", "[read+write]", "8333 rows/s", "40020 rows/s", "2029 queries/s", "qp1000"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("compare lacks %q:\n%s", want, r.stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^qr100 +2 +3477 queries/s +3650 +1\.05±\d+% ~$`).MatchString(r.stdout) {
		t.Errorf("compare: want qr100 3477 against 3650 (1.05):\n%s", r.stdout)
	}
	r = qpslab(t, h, "metrics", "ma100433_rel.cz11a_c8r32", "ma100620_rel.cz11a_c8r32", "--test", "qr1000")
	if r.code != 0 || !strings.Contains(r.stdout, "0.019175") || !strings.Contains(r.stdout, "7.507") || !strings.Contains(r.stdout, "CPU µs per query") {
		t.Errorf("metrics: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	neither := t.TempDir()
	os.WriteFile(filepath.Join(neither, "notes.txt"), []byte("nothing here\n"), 0o644)
	broken := copyTree(t, dir)
	os.Remove(filepath.Join(broken, "qp500.L4", "o.ib.dop2.2"))
	for _, c := range []struct{ dir, want string }{
		{neither, "neither sysbench nor Insert Benchmark results"},
		{broken, "o.res.dop2:1: 2 processes, but there is no o.ib.dop2.2"},
	} {
		r := qpslab(t, h, "import", "mytools", c.dir, "--label", "ma110401_rel.cz11a_c8r32")
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("import %s: exit %d, want one error line with %q: %q", c.dir, r.code, c.want, r.stderr)
		}
	}
	if r := qpslab(t, h, "labels"); strings.Contains(r.stdout, "ma110401") {
		t.Errorf("a failed import stored runs:\n%s", r.stdout)
	}
}
