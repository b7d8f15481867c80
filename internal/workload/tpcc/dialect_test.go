package tpcc

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
		for _, e := range []string{"", "innodb", "rocksdb"} {
			fmt.Fprintf(&b, "-- tables engine=%q\n", e)
			for _, tb := range tables(testenv.DialectOf(p), e) {
				fmt.Fprintf(&b, "%s: %s\n", tb.Name, tb.DDL)
			}
		}
		fmt.Fprintf(&b, "-- statements\n")
		for k := range nStatements {
			fmt.Fprintf(&b, "%d: %s\n", k, statementSQL(testenv.DialectOf(p), k))
		}
	}
	testenv.SQLGolden(t, b.String())
}
