package script

import (
	"fmt"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/testenv"
)

// The SQL the suite writes for each protocol is what it wrote before the
// dialect (testdata/sql.golden was written by the code that compared
// protocols): the dialect changed how it is chosen, not a byte of it.
func TestSQLIsTheDialects(t *testing.T) {
	var b strings.Builder
	for _, p := range []client.Protocol{client.MySQL, client.Postgres} {
		fmt.Fprintf(&b, "== %s\n", p)
		for _, name := range Builtins {
			text, _ := builtinText(name, testenv.DialectOf(p).End)
			fmt.Fprintf(&b, "-- builtin %s\n%s", name, text)
		}
		for _, e := range []string{"", "innodb", "rocksdb"} {
			for _, scale := range []int64{1, 20001} {
				fmt.Fprintf(&b, "-- tables engine=%q scale=%d\n", e, scale)
				for _, tb := range tables(testenv.DialectOf(p), e, scale) {
					fmt.Fprintf(&b, "%s: %s\n", tb.Name, tb.DDL)
				}
			}
		}
	}
	testenv.SQLGolden(t, b.String())
}
