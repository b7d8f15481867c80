package ycsb

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
			tb := Table{Dialect: testenv.DialectOf(p), StorageEngine: e, Records: 1000, FieldCount: 3, FieldLength: 7}
			fmt.Fprintf(&b, "-- ddl engine=%q\n%s\n", e, tb.ddl())
		}
	}
	testenv.SQLGolden(t, b.String())
}
