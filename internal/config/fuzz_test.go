package config

import (
	"reflect"
	"testing"
)

// FuzzParseConfig feeds the fragment parser arbitrary text, as a base and as
// a config laid over it, in either family. The parser must never panic; what
// it accepts must come back with the same settings after rendering and
// parsing again; and layering must give what the server would read from the
// base followed by the config (later wins, cumulative options add up), marks
// and all.
func FuzzParseConfig(f *testing.F) {
	f.Add(true, "[mysqld]\ninnodb_buffer_pool_size=2G\nloose-skip-log-bin\n", "innodb_buffer_pool_size=4G # more\nlog_bin=ON\n[client]\nuser=x\n")
	f.Add(false, "shared_buffers = 2GB\nwork_mem = '4MB' # small\n", "Shared_Buffers='4GB'\ninclude_if_exists 'x.conf'\n")
	f.Add(true, "a=\"x#y\"\n!include /etc/x.cnf\n", "b='open # quote\n; comment\n# c\nplugin-load-add=a.so\n")
	f.Fuzz(func(t *testing.T, mysql bool, base, own string) {
		fam := Postgres
		if mysql {
			fam = MySQL
		}
		b, err := parse(fam, []byte(base), "base")
		if err != nil {
			return
		}
		again, err := parse(fam, b.render("", "base"), "base")
		if err != nil {
			t.Fatalf("rendered %q does not parse: %v", b.render("", "base"), err)
		}
		if got, want := again.settings(), b.settings(); !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %q: settings %q, want %q", base, got, want)
		}
		o, err := parse(fam, []byte(own), "own")
		if err != nil {
			return
		}
		layered := overlay(b, o).render("# header\n", "base")
		got, err := parse(fam, layered, "x")
		if err != nil {
			t.Fatalf("layered %q does not parse: %v", layered, err)
		}
		both := fragment{fam: fam, lines: append(append([]line(nil), b.lines...), o.lines...)}
		if g, w := got.settings(), both.settings(); !reflect.DeepEqual(g, w) {
			t.Fatalf("layering %q over %q:\n%s\nsettings %q, want %q", own, base, layered, g, w)
		}
	})
}
