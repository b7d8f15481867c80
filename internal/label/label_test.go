package label

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Label{
		"ma100244_rel.cz11a_bee":                  {"ma100244_rel", "cz11a_bee", ""},
		"mariadb-10.2.11.default":                 {"mariadb-10.2.11", "default", ""},
		"mariadb-system.myrocks:rocksdb":          {"mariadb-system", "myrocks", "rocksdb"},
		"mariadb-system.myrocks:RocksDB":          {"mariadb-system", "myrocks", "rocksdb"},
		"mariadb-system.myrocks:innodb":           {"mariadb-system", "myrocks", ""}, // InnoDB's label has no engine
		"mariadb-system.myrocks:InnoDB":           {"mariadb-system", "myrocks", ""},
		"fbmy8028_rel.cza1_bee:rocksdb":           {"fbmy8028_rel", "cza1_bee", "rocksdb"},
		"percona-server-8.0.36-28.default:tokudb": {"percona-server-8.0.36-28", "default", "tokudb"},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v", in, got, err)
		}
		// A run of the label is labelled as the label reads back.
		if of := Of(got.Build, got.Config, got.StorageEngineFilter()); of != got || of.String() != got.String() {
			t.Errorf("%s: a run of it is labelled %s (%+v), the label reads back as %s", in, of, of, got)
		}
	}
	for _, bad := range []string{"nodot", ".x", "x.", "", "b.c:", "b.:rocksdb", "b.c:x:y"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "build.config") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// InnoDB's runs keep the label runs had before --engine, whether they
// record their engine or not; another engine's are labelled with it.
func TestOf(t *testing.T) {
	for _, c := range []struct{ engine, want string }{
		{"", "b.cfg"}, {"innodb", "b.cfg"}, {"rocksdb", "b.cfg:rocksdb"}, {"tokudb", "b.cfg:tokudb"},
	} {
		if got := Of("b", "cfg", c.engine).String(); got != c.want {
			t.Errorf("engine %q: %s, want %s", c.engine, got, c.want)
		}
	}
	if got := (Label{Build: "b", Config: "cfg", StorageEngine: InnoDB}).String(); got != "b.cfg" {
		t.Errorf("a Label with Engine innodb reads %s, want b.cfg", got)
	}
}
