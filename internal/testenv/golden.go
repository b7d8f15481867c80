package testenv

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
)

var updateSQL = flag.Bool("update-sql", false, "rewrite testdata/sql.golden from the SQL the suite writes now")

// DialectOf is protocol p's dialect, as the plan chooses it for a server
// of p's own flavor (the zero Dialect for an unknown protocol).
func DialectOf(p client.Protocol) client.Dialect {
	d, _ := client.DialectOf(p)
	return d
}

// SQLGolden compares the SQL a suite writes (got) with the package's
// testdata/sql.golden, failing at the first line that differs; with
// -update-sql it rewrites the file instead.
func SQLGolden(t *testing.T, got string) {
	t.Helper()
	name := filepath.Join("testdata", "sql.golden")
	if *updateSQL {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (go test -run TestSQLIsTheDialects -update-sql writes it)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s line %d:\ngot  %q\nwant %q", name, i+1, g, w)
		}
	}
}
