package build_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/table"
	"github.com/qpslab/qpslab/internal/testenv"
)

// What qpslab builds list --available shows: a row per source and flavor,
// the newest five versions and how many older, and a fetch command; a
// source listing none says so with a dash. Then the real list: Debian's
// suites offer MySQL, and every row's fetch names its own flavor.
func TestAvailable(t *testing.T) {
	offers := []build.Offer{
		{Source: "maven", Flavor: "postgres", Where: "zonky", Versions: []string{"12.1", "13.1", "14.1", "15.1", "16.1", "17.1", "18.1"}, Example: "qpslab builds fetch postgres-18.1"},
		{Source: "tarball", Flavor: "mysql", Where: "cdn.mysql.com"},
	}
	var b bytes.Buffer
	if err := table.Render(&b, table.Text, build.AvailableTable(offers), table.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"14.1, 15.1, 16.1, 17.1, 18.1 and 2 older", "qpslab builds fetch postgres-18.1", "tarball  mysql     cdn.mysql.com  -"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	h := testenv.Home(t)
	got := build.Registry{Dir: h.Builds(), Cache: h.Cache}.Available(context.Background(), func(string, ...any) {})
	mysql, rocksdb := false, map[string]string{}
	for _, o := range got {
		mysql = mysql || o.Source == "debian" && o.Flavor == "mysql" && len(o.Versions) > 0
		if o.Source == "debian-src" && o.Flavor == "rocksdb" {
			rocksdb[o.Where] = strings.Join(o.Versions, ", ")
			if !strings.HasPrefix(o.Example, "qpslab builds source rocksdb=") || !strings.Contains(o.Example, " --suite ") {
				t.Errorf("rocksdb's source row offers %q", o.Example)
			}
			continue
		}
		if o.Example != "" && !strings.Contains(o.Example, " "+o.Flavor+"-") {
			t.Errorf("%s %s offers %q, a fetch of another flavor", o.Source, o.Flavor, o.Example)
		}
	}
	if !mysql {
		t.Errorf("no Debian suite offers MySQL: %+v", got)
	}
	// RocksDB's source in bookworm and trixie: the 7.8.3 and 9.10.0 the
	// readahead study compiles.
	for suite, want := range map[string]string{"bookworm": "7.8.3 (rocksdb=7.8.3-", "trixie": "9.10.0 (rocksdb=9.10.0-"} {
		where := "Debian " + suite + " (source: builds source, then builds compile its tarball)"
		if !strings.Contains(rocksdb[where], want) {
			t.Errorf("Debian %s's rocksdb source row %q, want %q", suite, rocksdb[where], want)
		}
	}
}
