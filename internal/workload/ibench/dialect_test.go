package ibench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/testenv"
)

// The SQL the suite writes for each protocol (its DDL, its indexes, its
// deletes and queries, the size it reads) is what it wrote before the
// dialect (testdata/sql.golden was written by the code that compared
// protocols): the dialect changed how it is chosen, not a byte of it.
func TestSQLIsTheDialects(t *testing.T) {
	var b strings.Builder
	for _, p := range []client.Protocol{client.MySQL, client.Postgres} {
		fmt.Fprintf(&b, "== %s\n", p)
		d := testenv.DialectOf(p)
		for _, e := range []string{"", "innodb", "rocksdb"} {
			fmt.Fprintf(&b, "-- createTable engine=%q\n%s\n", e, createTable(d, "pi1", e))
			fmt.Fprintf(&b, "-- createIndexes engine=%q\n%s\n", e, strings.Join(createIndexes(d, "pi1", e), "\n"))
		}
		fmt.Fprintf(&b, "-- afterCreate\n%s\n", strings.Join(afterCreate(d, "pi1"), "\n"))
		fmt.Fprintf(&b, "-- deleteOldest\n%s\n", deleteOldest(d, "pi1", 7, 50))
		for which := range 3 {
			fmt.Fprintf(&b, "-- rangeQuery %d\n%s\n", which, rangeQuery(d, "pi1", which, 10))
		}
		for _, n := range []int{1, 3} {
			fmt.Fprintf(&b, "-- pointQuery %d\n%s\n", n, pointQuery(d, "pi1", n))
		}
		fmt.Fprintf(&b, "-- dbSize\n%s\n", d.TablesBytes([]string{"pi1", "pi2"}))
		o := Options{Clients: 2, Deletes: true}
		fmt.Fprintf(&b, "-- liveVerdict order=1\n%s\n", o.liveVerdict(d, 1, []int64{100, 2100}).Detail)
	}
	// The MySQL family's queries with their values in the text (unprepared).
	fmt.Fprintf(&b, "== text\n")
	my := testenv.DialectOf(client.MySQL)
	for which := range 3 {
		before, after, _ := strings.Cut(rangeQuery(my, "pi1", which, 10), my.Placeholder(1))
		fmt.Fprintf(&b, "-- rangeQuery %d\n%s42%s\n", which, before, after)
	}
	fmt.Fprintf(&b, "-- pointQuery\n%s\n", appendPointText(nil, "pi1", []int64{5, 6, 7}))
	testenv.SQLGolden(t, b.String())
}
