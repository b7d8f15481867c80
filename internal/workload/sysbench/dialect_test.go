package sysbench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/testenv"
)

// The SQL the suite writes for each protocol (its DDL, its tests'
// statements, its inserts) is what it wrote before the dialect
// (testdata/sql.golden was written by the code that compared protocols):
// the dialect changed how it is chosen, not a byte of it.
func TestSQLIsTheDialects(t *testing.T) {
	var b strings.Builder
	for _, p := range []client.Protocol{client.MySQL, client.Postgres} {
		fmt.Fprintf(&b, "== %s\n", p)
		for _, e := range []string{"", "innodb", "rocksdb"} {
			fmt.Fprintf(&b, "-- createTable engine=%q\n%s\n", e, createTable(testenv.DialectOf(p), 3, e))
		}
		fmt.Fprintf(&b, "-- createIndex\n%s\n", createIndex(3))
		fmt.Fprintf(&b, "-- insertText\n%s\n", insertText(testenv.DialectOf(p), 3, 42, "c-value", "pad-value"))
		fmt.Fprintf(&b, "-- insertRows\n%s\n", Target{Dialect: testenv.DialectOf(p)}.insertRows(3, 3))
		seen := map[string]bool{}
		for _, list := range [][]Test{Order2024(), OrderHEAD()} {
			for _, tt := range list {
				if seen[tt.Label()] {
					continue
				}
				seen[tt.Label()] = true
				fmt.Fprintf(&b, "-- %s\n%s\n", tt.Label(), strings.Join(tt.Queries(testenv.DialectOf(p), 3), "\n"))
			}
		}
	}
	testenv.SQLGolden(t, b.String())
}
