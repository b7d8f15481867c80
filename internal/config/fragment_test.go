package config

import (
	"reflect"
	"strings"
	"testing"
)

// wantErr is testenv.WantErr, which this package's own tests cannot import
// (testenv imports config): a one-line error holding every substring.
func wantErr(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", subs)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

// layer lays own over base (as configs "b" and "v") and returns the text
// without a header, checking that it reads as base followed by own.
func layer(t *testing.T, fam Family, base, own string) string {
	t.Helper()
	b, err := parse(fam, []byte(base), "b")
	if err != nil {
		t.Fatal(err)
	}
	o, err := parse(fam, []byte(own), "v")
	if err != nil {
		t.Fatal(err)
	}
	out := string(overlay(b, o).render("", "b"))
	got, err := parse(fam, []byte(out), "x")
	if err != nil {
		t.Fatalf("the layered text does not parse: %v\n%s", err, out)
	}
	both := fragment{fam: fam, lines: append(append([]line(nil), b.lines...), o.lines...)}
	if g, w := got.settings(), both.settings(); !reflect.DeepEqual(g, w) {
		t.Errorf("the layered text reads as %q, want %q:\n%s", g, w, out)
	}
	return out
}

func TestOverlay(t *testing.T) {
	tests := []struct {
		name      string
		fam       Family
		base, own string
		want      string
	}{
		{"a shared option is replaced in place, a new one ends its section", MySQL,
			"[mysqld]\na=1\nb=2\n[client]\nc=3\n", "b=20\nd=4\n",
			"[mysqld]\na=1\nb=20  # from v\nd=4  # from v\n[client]\nc=3\n"},
		{"the same option in another section is another setting", MySQL,
			"[mysqld]\nport=1\n[client]\nport=2\n", "[client]\nport=3\n",
			"[mysqld]\nport=1\n[client]\nport=3  # from v\n"},
		{"section names are case-insensitive", MySQL,
			"[MySQLd]\na=1\n", "[mysqld]\na=2\n",
			"[MySQLd]\na=2  # from v\n"},
		{"options before any section are in [mysqld]", MySQL,
			"[mysqld]\na=1\n", "a=2\n",
			"[mysqld]\na=2  # from v\n"},
		{"options of [mysqld] join the base's options before any section", MySQL,
			"a=1\n[client]\nx=1\n", "[mysqld]\nb=2\n",
			"a=1\nb=2  # from v\n[client]\nx=1\n"},
		{"loose- names the same option", MySQL,
			"loose-innodb_redo_log_capacity=2G\n", "innodb_redo_log_capacity=4G\n",
			"innodb_redo_log_capacity=4G  # from v\n"},
		{"an option names the same option as its loose- form", MySQL,
			"innodb_log_file_size=1G\n", "loose-innodb-log-file-size=2G\n",
			"loose-innodb-log-file-size=2G  # from v\n"},
		{"dashes and underscores are the same", MySQL,
			"max-connections=10\n", "max_connections=20\n",
			"max_connections=20  # from v\n"},
		{"skip- sets the option it prefixes", MySQL,
			"loose-skip-log-bin\nsync_binlog=0\n", "log-bin=mysql-bin\n",
			"log-bin=mysql-bin  # from v\nsync_binlog=0\n"},
		{"option names are case-sensitive in the MySQL family", MySQL,
			"max_connections=10\n", "Max_Connections=20\n",
			"max_connections=10\nMax_Connections=20  # from v\n"},
		{"end comments are not values, a # in quotes is", MySQL,
			"a=1 # one\n", "a=\"x # y\" # two\n",
			"a=\"x # y\" # two  # from v\n"},
		{"comments right above a setting travel with it, others are dropped", MySQL,
			"a=1\n", "# qpslab: base=b\n# what v is\n\n# why\nb=2\n; alone\n\n",
			"a=1\n# why\nb=2  # from v\n"},
		{"a new section goes at the end", MySQL,
			"[mysqld]\na=1\n# the end\n", "[client]\nuser=x\n",
			"[mysqld]\na=1\n# the end\n[client]\nuser=x  # from v\n"},
		{"a new option goes after its section's last option, before a comment", MySQL,
			"[mysqld]\na=1\n\n# about client\n[client]\nuser=x\n", "b=2\n",
			"[mysqld]\na=1\nb=2  # from v\n\n# about client\n[client]\nuser=x\n"},
		{"an empty base gets a [mysqld]", MySQL,
			"# nothing\n", "a=1\n",
			"# nothing\n[mysqld]\na=1  # from v\n"},
		{"cumulative options add up", MySQL,
			"plugin-load-add=a.so\noptimizer_switch=mrr=on\n", "plugin_load_add=b.so\noptimizer_switch=index_merge=off\n",
			"plugin-load-add=a.so\noptimizer_switch=mrr=on\nplugin_load_add=b.so  # from v\noptimizer_switch=index_merge=off  # from v\n"},
		{"directives are kept, marked on a line above", MySQL,
			"!include /etc/a.cnf\n", "!include /etc/b.cnf\n",
			"!include /etc/a.cnf\n# from v:\n!include /etc/b.cnf\n"},
		{"a line ending inside a quote is marked on a line above", MySQL,
			"a=1\n", "a='x # y\n",
			"# from v:\na='x # y\n"},
		{"the later of two lines in the base is the one replaced", MySQL,
			"a=1\na=2\n", "a=3\n",
			"a=1\na=3  # from v\n"},
		{"the later of two lines in the config wins", MySQL,
			"a=1\n", "a=2\na=3\n",
			"a=3  # from v\n"},
		{"postgres names are case-insensitive", Postgres,
			"shared_buffers = 2GB\nwork_mem = 4MB\n", "Shared_Buffers='4GB'\n",
			"Shared_Buffers='4GB'  # from v\nwork_mem = 4MB\n"},
		{"postgres = is optional", Postgres,
			"fsync = on\n", "fsync off\n",
			"fsync off  # from v\n"},
		{"postgres end comments and quoted #", Postgres,
			"a = 'x # y' # c\n", "b = 1#c\n",
			"a = 'x # y' # c\nb = 1#c  # from v\n"},
		{"postgres includes add up", Postgres,
			"include 'a.conf'\nx = 1\n", "include 'b.conf'\n",
			"include 'a.conf'\nx = 1\ninclude 'b.conf'  # from v\n"},
		{"postgres custom names", Postgres,
			"auto_explain.log_min_duration = 10\n", "AUTO_EXPLAIN.log_min_duration = 20\n",
			"AUTO_EXPLAIN.log_min_duration = 20  # from v\n"},
		{"an empty postgres base", Postgres,
			"", "a = 1\n",
			"a = 1  # from v\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := layer(t, tt.fam, tt.base, tt.own); got != tt.want {
				t.Errorf("layered:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestMySQLKey(t *testing.T) {
	tests := []struct{ name, want string }{
		{"innodb_buffer_pool_size", "innodb_buffer_pool_size"},
		{"innodb-buffer-pool-size", "innodb_buffer_pool_size"},
		{"loose-innodb_buffer_pool_size", "innodb_buffer_pool_size"},
		{"loose_innodb-buffer_pool-size", "innodb_buffer_pool_size"},
		{"loose-skip-log-bin", "log_bin"},
		{"skip-name-resolve", "name_resolve"},
		{"skip_name_resolve", "name_resolve"},
		{"disable-log-bin", "log_bin"},
		{"enable-x", "x"},
		{"skip-skip-x", "skip_x"},
		{"maximum-x", "maximum_x"},
		{"loose-", "loose_"},
		{"skip-", "skip_"},
		{"Max_Connections", "Max_Connections"},
	}
	for _, tt := range tests {
		if got := mysqlKey(tt.name); got != tt.want {
			t.Errorf("mysqlKey(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestParseLines(t *testing.T) {
	tests := []struct {
		fam                Family
		text               string
		kind               lineKind
		section, key, name string
		value              string
	}{
		{MySQL, "  # c", blankLine, "mysqld", "", "", ""},
		{MySQL, "; c", blankLine, "mysqld", "", "", ""},
		{MySQL, "[ Client ] trailing", sectionLine, "client", "", "", ""},
		{MySQL, "  key = va lue  # c", settingLine, "mysqld", "key", "key", "va lue"},
		{MySQL, "key=", settingLine, "mysqld", "key", "key", ""},
		{MySQL, "flag # c", settingLine, "mysqld", "flag", "flag", ""},
		{MySQL, `k="a # b" # c`, settingLine, "mysqld", "k", "k", `"a # b"`},
		{MySQL, `k='it\'s # x'`, settingLine, "mysqld", "k", "k", `'it\'s # x'`},
		{MySQL, "k=a=b", settingLine, "mysqld", "k", "k", "a=b"},
		{MySQL, "! include  /etc/x.cnf ", directiveLine, "mysqld", "!include", "!include", "/etc/x.cnf"},
		{Postgres, "  # c", blankLine, "", "", "", ""},
		{Postgres, "Work_Mem = '4MB' # c", settingLine, "", "work_mem", "Work_Mem", "'4MB'"},
		{Postgres, "a 'it''s # x'", settingLine, "", "a", "a", "'it''s # x'"},
		{Postgres, `a = 'back\'slash'`, settingLine, "", "a", "a", `'back\'slash'`},
		{Postgres, "a=1#c", settingLine, "", "a", "a", "1"},
		{Postgres, "x.y = on", settingLine, "", "x.y", "x.y", "on"},
	}
	for _, tt := range tests {
		f, err := parse(tt.fam, []byte(tt.text), "c")
		if err != nil {
			t.Errorf("%s %q: %v", tt.fam, tt.text, err)
			continue
		}
		l := f.lines[0]
		if l.kind != tt.kind || l.section != tt.section || l.key != tt.key || l.name != tt.name || l.value != tt.value {
			t.Errorf("%s %q: kind %d section %q key %q name %q value %q; want %d %q %q %q %q",
				tt.fam, tt.text, l.kind, l.section, l.key, l.name, l.value, tt.kind, tt.section, tt.key, tt.name, tt.value)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		fam     Family
		text    string
		wantSub []string
	}{
		{MySQL, "[mysqld]\n[mysqld", []string{"line 2:", "write [section]"}},
		{MySQL, "[ ]", []string{"line 1:", "without a name"}},
		{MySQL, "a=1\n = 1", []string{"line 2:", "no option name"}},
		{Postgres, "a =", []string{"line 1:", "a has no value"}},
		{Postgres, "a = # c", []string{"a has no value"}},
		{Postgres, "= 1", []string{"does not start with a setting name"}},
		{Postgres, "1a = 1", []string{"does not start with a setting name"}},
		{Postgres, "a = 'x", []string{"opens a quote"}},
		{Postgres, "a = 'x''", []string{"opens a quote"}},
		{Postgres, "a = b c", []string{`"c" follows the value of a`, "quote"}},
		{Postgres, "a. = 1", []string{"dotted"}},
		{Postgres, "[mysqld]", []string{"does not start with a setting name"}},
	}
	for _, tt := range tests {
		_, err := parse(tt.fam, []byte(tt.text), "c")
		wantErr(t, err, tt.wantSub...)
	}
}

func TestBaseOf(t *testing.T) {
	tests := []struct {
		text    string
		want    string
		wantSub []string // an error
	}{
		{"# qpslab: base=default\n[mysqld]\n", "default", nil},
		{"[mysqld]\n#qpslab:base = cz11a_bee \n", "cz11a_bee", nil},
		{"; qpslab: base=x\n", "x", nil},
		{"# QPSLAB: Base=x\n", "x", nil},
		{"# qpslab: base=none\n", "none", nil},
		{"# qpslab: basement\n# qpslab: other=1\n", "", nil},
		{"a=1 # qpslab: base=x\n", "", nil},
		{"", "", nil},
		{"# qpslab: base default\n", "", []string{"line 1:", "# qpslab: base=NAME"}},
		{"# qpslab: base=a\n\n# qpslab: base=b\n", "", []string{"lines 1 and 3", "keep one"}},
		{"# qpslab: base=a.b\n", "", []string{`"a.b" is not a config name`}},
	}
	for _, tt := range tests {
		got, err := baseOf([]byte(tt.text))
		if tt.wantSub != nil {
			wantErr(t, err, tt.wantSub...)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("baseOf(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
}

// The marks never make the effective text of a chain read differently, and
// the deepest base's lines stay unmarked.
func TestRenderChainMarks(t *testing.T) {
	a, _ := parse(MySQL, []byte("[mysqld]\nx=1\ny=1\nz=1\n"), "default")
	b, _ := parse(MySQL, []byte("y=2\nz=2\n"), "mid")
	c, _ := parse(MySQL, []byte("z=3\n"), "top")
	out := string(overlay(overlay(a, b), c).render("# h\n", "default"))
	want := "# h\n[mysqld]\nx=1\ny=2  # from mid\nz=3  # from top\n"
	if out != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", out, want)
	}
	if strings.Count(out, "# from") != 2 {
		t.Errorf("want two marks:\n%s", out)
	}
}
