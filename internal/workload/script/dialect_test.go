package script

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
)

var updateSQL = flag.Bool("update-sql", false, "rewrite testdata/sql.golden from the SQL the suite writes now")

// The SQL the suite writes for each protocol is what it wrote before the
// dialect (testdata/sql.golden was written by the code that compared
// protocols): the dialect changed how it is chosen, not a byte of it.
func TestSQLIsTheDialects(t *testing.T) {
	var b strings.Builder
	for _, p := range []client.Protocol{client.MySQL, client.Postgres} {
		fmt.Fprintf(&b, "== %s\n", p)
		for _, name := range Builtins {
			text, _ := builtinText(name, dialectOf(p).End)
			fmt.Fprintf(&b, "-- builtin %s\n%s", name, text)
		}
		for _, e := range []string{"", "innodb", "rocksdb"} {
			for _, scale := range []int64{1, 20001} {
				fmt.Fprintf(&b, "-- tables engine=%q scale=%d\n", e, scale)
				for _, tb := range tables(dialectOf(p), e, scale) {
					fmt.Fprintf(&b, "%s: %s\n", tb.Name, tb.DDL)
				}
			}
		}
	}
	checkSQLGolden(t, b.String())
}

// dialectOf is protocol p's dialect, as the plan chooses it.
func dialectOf(p client.Protocol) client.Dialect {
	d, _ := client.DialectOf(p)
	return d
}

func checkSQLGolden(t *testing.T, got string) {
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
	if got != string(want) {
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
}
