package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/testenv"
)

var idRE = regexp.MustCompile(`^default@[0-9a-f]{12}$`)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// store is a Store whose configs folder does not exist yet.
func store(t *testing.T) config.Store {
	return config.Store{Dir: filepath.Join(t.TempDir(), "configs")}
}

func TestGetShippedDefault(t *testing.T) {
	tests := []struct {
		fam     config.Family
		setting string // a line the shipped default holds
	}{
		{config.MySQL, "[mysqld]"},
		{config.Postgres, "shared_buffers"},
	}
	for _, tt := range tests {
		t.Run(string(tt.fam), func(t *testing.T) {
			c, err := store(t).Get("default", tt.fam)
			if err != nil {
				t.Fatal(err)
			}
			if c.Source != "shipped" || c.Name != "default" || c.Family != tt.fam {
				t.Errorf("Get = %s %s from %s, want default %s from shipped", c.Name, c.Family, c.Source, tt.fam)
			}
			if !strings.Contains(string(c.Content), tt.setting) {
				t.Errorf("shipped default lacks %q:\n%s", tt.setting, c.Content)
			}
			if !idRE.MatchString(c.ID()) {
				t.Errorf("ID %q, want default@ and 12 hex digits", c.ID())
			}
			if !strings.HasPrefix(c.Hash(), strings.TrimPrefix(c.ID(), "default@")) || len(c.Hash()) != 64 {
				t.Errorf("Hash %q does not extend ID %q", c.Hash(), c.ID())
			}
		})
	}
	my, _ := store(t).Get("default", config.MySQL)
	pg, _ := store(t).Get("default", config.Postgres)
	if my.ID() == pg.ID() {
		t.Errorf("the MySQL and PostgreSQL defaults have the same ID %s", my.ID())
	}
}

func TestUserFileShadowsShipped(t *testing.T) {
	s := store(t)
	shipped, err := s.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, s.Dir, "default.cnf", "[mysqld]\ninnodb_buffer_pool_size=1G\n")
	mine, err := s.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if mine.Source != p || string(mine.Content) != "[mysqld]\ninnodb_buffer_pool_size=1G\n" {
		t.Errorf("Get = %q from %s, want the user's file %s", mine.Content, mine.Source, p)
	}
	if mine.Hash() == shipped.Hash() || mine.ID() == shipped.ID() {
		t.Errorf("user file has the shipped hash %s", mine.Hash())
	}
	if !idRE.MatchString(mine.ID()) {
		t.Errorf("ID %q, want default@ and 12 hex digits", mine.ID())
	}

	// An edited file is a different config.
	writeFile(t, s.Dir, "default.cnf", "[mysqld]\ninnodb_buffer_pool_size=4G\n")
	edited, err := s.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if edited.Hash() == mine.Hash() || edited.ID() == mine.ID() {
		t.Errorf("editing the file left the ID at %s", edited.ID())
	}

	// The same content is the same config.
	again, err := s.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID() != edited.ID() {
		t.Errorf("same content, ID %s then %s", edited.ID(), again.ID())
	}

	// The PostgreSQL default is not shadowed by a .cnf.
	pg, err := s.Get("default", config.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if pg.Source != "shipped" {
		t.Errorf("postgres default from %s, want shipped", pg.Source)
	}
}

func TestGetErrors(t *testing.T) {
	tests := []struct {
		name     string
		cfg      string
		fam      config.Family
		notFound bool
		wantSub  []string
	}{
		{"unknown name", "nosuch", config.MySQL, true, []string{`"nosuch"`, "qpslab configs add nosuch", "qpslab configs list"}},
		{"wrong family for a user file", "mine", config.Postgres, true, []string{`postgres config named "mine"`}},
		{"name with a dot", "a.b", config.MySQL, false, []string{`"a.b" is not valid`}},
		{"name with a space", "a b", config.MySQL, false, []string{`"a b" is not valid`}},
		{"path as name", "../default", config.MySQL, false, []string{`"../default" is not valid`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store(t)
			writeFile(t, s.Dir, "mine.cnf", "[mysqld]\n")
			_, err := s.Get(tt.cfg, tt.fam)
			testenv.WantErr(t, err, tt.wantSub...)
			if got := errors.Is(err, config.ErrNotFound); got != tt.notFound {
				t.Errorf("errors.Is(err, ErrNotFound) = %v, want %v", got, tt.notFound)
			}
		})
	}
}

func TestAdd(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		fam     config.Family
		wantFam config.Family
		wantDst string
	}{
		{"cnf is MySQL family", "my.cnf", "", config.MySQL, "x.cnf"},
		{"conf is PostgreSQL", "pg.conf", "", config.Postgres, "x.conf"},
		{"family given for a txt file", "settings.txt", config.Postgres, config.Postgres, "x.conf"},
		{"family given beats the extension", "my.cnf", config.Postgres, config.Postgres, "x.conf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store(t)
			content := "# " + tt.name + "\n"
			src := writeFile(t, t.TempDir(), tt.file, content)
			c, err := s.Add("x", src, tt.fam, false)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(s.Dir, tt.wantDst)
			if c.Name != "x" || c.Family != tt.wantFam || c.Source != dst || string(c.Content) != content {
				t.Errorf("Add = %+v, want x %s at %s", c, tt.wantFam, dst)
			}
			got, err := s.Get("x", tt.wantFam)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID() != c.ID() || got.Source != dst {
				t.Errorf("Get after Add = %s from %s, want %s from %s", got.ID(), got.Source, c.ID(), dst)
			}
			if _, err := os.Stat(dst + ".tmp"); !os.IsNotExist(err) {
				t.Errorf("Add left %s.tmp behind", dst)
			}
		})
	}
}

func TestAddReplace(t *testing.T) {
	s := store(t)
	dir := t.TempDir()
	first := writeFile(t, dir, "a.cnf", "[mysqld]\nmax_connections=10\n")
	second := writeFile(t, dir, "b.cnf", "[mysqld]\nmax_connections=20\n")
	c1, err := s.Add("mine", first, "", false)
	if err != nil {
		t.Fatal(err)
	}

	_, err = s.Add("mine", second, "", false)
	testenv.WantErr(t, err, `"mine"`, "exists", "--replace")
	if got, err := s.Get("mine", config.MySQL); err != nil || got.ID() != c1.ID() {
		t.Errorf("after a refused add, Get = %s, %v; want %s kept", got.ID(), err, c1.ID())
	}

	c2, err := s.Add("mine", second, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if c2.ID() == c1.ID() {
		t.Errorf("replaced config kept ID %s", c1.ID())
	}
	if got, err := s.Get("mine", config.MySQL); err != nil || got.ID() != c2.ID() {
		t.Errorf("after replace, Get = %s, %v; want %s", got.ID(), err, c2.ID())
	}

	// The same name in the other family is a different config.
	pg := writeFile(t, dir, "c.conf", "max_connections = 30\n")
	if _, err := s.Add("mine", pg, "", false); err != nil {
		t.Errorf("adding a postgres config named like a mysql one: %v", err)
	}
}

func TestAddErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     string
		file    string // created unless it starts with "missing"
		wantSub []string
	}{
		{"unknown extension", "x", "settings.txt", []string{"settings.txt", ".cnf", ".conf", "--family"}},
		{"no extension", "x", "settings", []string{"--family"}},
		{"name with a dot", "a.b", "my.cnf", []string{`"a.b" is not valid`}},
		{"name with a space", "a b", "my.cnf", []string{`"a b" is not valid`}},
		{"empty name", "", "my.cnf", []string{`"" is not valid`}},
		{"file missing", "x", "missing.cnf", []string{"missing.cnf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store(t)
			src := filepath.Join(t.TempDir(), tt.file)
			if !strings.HasPrefix(tt.file, "missing") {
				writeFile(t, filepath.Dir(src), tt.file, "[mysqld]\n")
			}
			_, err := s.Add(tt.cfg, src, "", false)
			testenv.WantErr(t, err, tt.wantSub...)
			if ents, _ := os.ReadDir(s.Dir); len(ents) != 0 {
				t.Errorf("a refused add left %d files in %s", len(ents), s.Dir)
			}
		})
	}
}

func TestList(t *testing.T) {
	s := store(t)
	writeFile(t, s.Dir, "zz.cnf", "[mysqld]\n")
	writeFile(t, s.Dir, "aa.conf", "work_mem = 8MB\n")
	writeFile(t, s.Dir, "bb.cnf", "[mysqld]\n")
	writeFile(t, s.Dir, "default.cnf", "[mysqld]\nmine=1\n") // shadows the shipped one
	writeFile(t, s.Dir, "half.cnf.tmp", "[mysqld]\n")        // an interrupted Add
	writeFile(t, s.Dir, "notes.txt", "hello")
	writeFile(t, s.Dir, "bad.name.cnf", "[mysqld]\n")
	if err := os.Mkdir(filepath.Join(s.Dir, "dir.cnf"), 0o755); err != nil {
		t.Fatal(err)
	}

	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		if c.Source == "shipped" && c.Name != "default" {
			continue // the other shipped configs (TestListWithoutConfigsFolder)
		}
		got = append(got, string(c.Family)+"/"+c.Name)
	}
	want := []string{"mysql/bb", "mysql/default", "mysql/zz", "postgres/aa", "postgres/default", "rocksdb/default"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("List = %q, want %q", got, want)
	}
	for _, c := range list {
		switch {
		case c.Family == config.MySQL && c.Name == "default":
			if c.Source != filepath.Join(s.Dir, "default.cnf") || string(c.Content) != "[mysqld]\nmine=1\n" {
				t.Errorf("mysql default from %s, want the user's file", c.Source)
			}
		case c.Family == config.Postgres && c.Name == "default":
			if c.Source != "shipped" {
				t.Errorf("postgres default from %s, want shipped", c.Source)
			}
		}
	}
}

func TestListWithoutConfigsFolder(t *testing.T) {
	list, err := store(t).List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		got = append(got, string(c.Family)+"/"+c.Name+" "+c.Source)
	}
	// Every shipped file, each once, defaults included.
	files, err := os.ReadDir("shipped")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Errorf("List = %q, want the %d shipped configs", got, len(files))
	}
	for _, want := range []string{"mysql/default shipped", "postgres/default shipped", "mysql/pool-of-threads shipped", "mysql/one-thread-per-connection shipped", "rocksdb/default shipped", "rocksdb/odirect shipped", "rocksdb/cra96k shipped", "rocksdb/cra512k shipped", "rocksdb/cra8m shipped", "mysql/myrocks shipped"} {
		if !strings.Contains(strings.Join(got, ","), want) {
			t.Errorf("List = %q, lacks %q", got, want)
		}
	}
}

func TestFamily(t *testing.T) {
	tests := []struct {
		flavor string
		want   config.Family
		ext    string
	}{
		{"postgres", config.Postgres, ".conf"},
		{"mariadb", config.MySQL, ".cnf"},
		{"mysql", config.MySQL, ".cnf"},
		{"rocksdb", config.RocksDB, ".flags"},
	}
	for _, tt := range tests {
		t.Run(tt.flavor, func(t *testing.T) {
			got := config.Family(build.Flavor(tt.flavor).Describe().Family)
			if got != tt.want {
				t.Errorf("%s's descriptor: family %q, want %q", tt.flavor, got, tt.want)
			}
			if got.Ext() != tt.ext {
				t.Errorf("%s.Ext() = %q, want %q", got, got.Ext(), tt.ext)
			}
		})
	}
}

// Lookup takes the family as the command line gives it: named, it is the
// only family looked in; left out, the name must be in one family only.
func TestLookup(t *testing.T) {
	s := store(t)
	writeFile(t, s.Dir, "mine.cnf", "[mysqld]\nmax_connections=7\n")
	for _, tt := range []struct {
		name, family string
		want         config.Family // "" when an error is wanted
		wantSub      []string
	}{
		{"mine", "", config.MySQL, nil},
		{"mine", "mariadb", config.MySQL, nil},
		{"default", "pg", config.Postgres, nil},
		{"default", "", "", []string{"--family mysql, --family postgres or --family rocksdb"}},
		{"mine", "postgres", "", []string{`postgres config named "mine"`}},
		{"mine", "oracle", "", []string{`unknown config family "oracle"`}},
	} {
		c, err := s.Lookup(tt.name, tt.family)
		if tt.want == "" {
			testenv.WantErr(t, err, tt.wantSub...)
			continue
		}
		if err != nil || c.Name != tt.name || c.Family != tt.want {
			t.Errorf("Lookup(%q, %q) = %s %s, %v; want %s %s", tt.name, tt.family, c.Name, c.Family, err, tt.name, tt.want)
		}
	}
}

// The shipped myrocks is default with MyRocks loaded beside InnoDB: its
// base is default, whose InnoDB settings it keeps, and its own options are
// the plugin's, each loose- so that a server without it still starts.
func TestShippedMyRocks(t *testing.T) {
	s := store(t)
	c, err := s.Get("myrocks", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	def, err := s.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if c.Base != "default" || c.Source != "shipped" {
		t.Errorf("myrocks: base %q, source %s", c.Base, c.Source)
	}
	for _, want := range []string{"plugin-load-add=ha_rocksdb.so", "innodb_buffer_pool_size=2G", "loose-rocksdb_block_cache_size=2G", "loose-rocksdb_flush_log_at_trx_commit=2"} {
		if !strings.Contains(string(c.Content), want) {
			t.Errorf("myrocks lacks %q:\n%s", want, c.Content)
		}
	}
	for _, l := range strings.Split(string(c.Own), "\n") {
		if strings.HasPrefix(l, "rocksdb") {
			t.Errorf("a MyRocks option without loose-: %s", l)
		}
	}
	if c.Hash() == def.Hash() {
		t.Error("myrocks has default's hash")
	}
}

// A config qpslab names itself is created once, kept when it holds the
// same settings, and never written over when the user made one of that
// name: one line says so.
func TestEnsureNeverOverwrites(t *testing.T) {
	cs := config.Store{Dir: t.TempDir()}
	mine := []byte("# qpslab: base=default\n")
	if _, err := cs.Ensure("demo", mine, config.MySQL); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Ensure("demo", mine, config.MySQL); err != nil {
		t.Fatalf("the same settings again: %v", err)
	}
	theirs := []byte("[mysqld]\ninnodb_buffer_pool_size=1G\n")
	if err := os.WriteFile(filepath.Join(cs.Dir, "demo.cnf"), theirs, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := cs.Ensure("demo", mine, config.MySQL)
	if err == nil || !strings.Contains(err.Error(), "qpslab did not write") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a user's config of that name: %v", err)
	}
	if have, _ := os.ReadFile(filepath.Join(cs.Dir, "demo.cnf")); string(have) != string(theirs) {
		t.Errorf("the user's config was written over: %q", have)
	}
}
