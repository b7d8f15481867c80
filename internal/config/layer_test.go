package config_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A chain user → mid → shipped default: the effective content holds every
// level's settings, later wins, the ID follows the effective content, and
// Own is the file.
func TestLayeredChain(t *testing.T) {
	s := store(t)
	def, err := s.Get("default", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if def.Base != "" || !bytes.Equal(def.Content, def.Own) || !slices.Equal(def.Chain, []string{"default"}) {
		t.Errorf("a config without a base must be its file as it is: base %q chain %q", def.Base, def.Chain)
	}
	midText := "# qpslab: base=default\n[mysqld]\ninnodb_flush_log_at_trx_commit=1\nmax_connections=500\n"
	writeFile(t, s.Dir, "mid.cnf", midText)
	writeFile(t, s.Dir, "top.cnf", "# qpslab: base=mid\nmax_connections=200\n")

	top, err := s.Get("top", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(top.Chain, []string{"top", "mid", "default"}) || top.Base != "mid" {
		t.Errorf("chain %q base %q, want top mid default, base mid", top.Chain, top.Base)
	}
	if string(top.Own) != "# qpslab: base=mid\nmax_connections=200\n" {
		t.Errorf("Own = %q, want the file", top.Own)
	}
	eff := string(top.Content)
	for _, want := range []string{
		"innodb_buffer_pool_size=2G\n",                   // default's, unmarked
		"innodb_flush_log_at_trx_commit=1  # from mid\n", // mid's over default's 2
		"max_connections=200  # from top\n",              // top's over mid's over default's
		"default, then mid, then top",                    // the header
	} {
		if !strings.Contains(eff, want) {
			t.Errorf("effective content lacks %q:\n%s", want, eff)
		}
	}
	for _, gone := range []string{"innodb_flush_log_at_trx_commit=2", "max_connections=1000", "max_connections=500", "qpslab: base="} {
		if strings.Contains(eff, gone) {
			t.Errorf("effective content still has %q:\n%s", gone, eff)
		}
	}
	if top.ID() == "top@"+hash12(top.Own) {
		t.Errorf("the ID hashes the file, not the effective content")
	}

	// Editing a base where the config overrides it changes the base's ID,
	// not the config's: the effective content is the same.
	midBefore, _ := s.Get("mid", config.MySQL)
	writeFile(t, s.Dir, "mid.cnf", strings.Replace(midText, "=500", "=600", 1))
	midAfter, _ := s.Get("mid", config.MySQL)
	if same, _ := s.Get("top", config.MySQL); same.ID() != top.ID() || midAfter.ID() == midBefore.ID() {
		t.Errorf("max_connections of mid edited: top %s → %s (want kept), mid %s → %s (want changed)", top.ID(), same.ID(), midBefore.ID(), midAfter.ID())
	}

	// Editing a base changes the ID of every config on it.
	writeFile(t, s.Dir, "mid.cnf", strings.Replace(midText, "commit=1", "commit=0", 1))
	top2, err := s.Get("top", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	if top2.ID() == top.ID() {
		t.Errorf("editing the base mid left top's ID at %s", top.ID())
	}
	if !bytes.Equal(top2.Own, top.Own) {
		t.Errorf("top's own file changed")
	}
	// And the same files give the same ID.
	if again, _ := s.Get("top", config.MySQL); again.ID() != top2.ID() {
		t.Errorf("same files, ID %s then %s", top2.ID(), again.ID())
	}
}

func hash12(b []byte) string {
	return config.Config{Content: b}.Hash()[:12]
}

func TestLayeredPostgres(t *testing.T) {
	s := store(t)
	writeFile(t, s.Dir, "pgv.conf", "# qpslab: base=default\nSHARED_BUFFERS = '4GB'\nfsync off\n")
	c, err := s.Get("pgv", config.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SHARED_BUFFERS = '4GB'  # from pgv\n", "fsync off  # from pgv\n", "max_wal_size = 16GB\n"} {
		if !strings.Contains(string(c.Content), want) {
			t.Errorf("effective content lacks %q:\n%s", want, c.Content)
		}
	}
	if strings.Contains(string(c.Content), "shared_buffers = 2GB") {
		t.Errorf("default's shared_buffers survived:\n%s", c.Content)
	}
}

func TestBaseErrors(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		get     string
		fam     config.Family
		wantSub []string
	}{
		{"missing base", map[string]string{"v.cnf": "# qpslab: base=nosuch\n"}, "v", config.MySQL,
			[]string{"config v is based on nosuch", `no mysql config named "nosuch"`, "qpslab configs list"}},
		{"base only in the other family", map[string]string{"v.conf": "# qpslab: base=mine\n", "mine.cnf": "a=1\n"}, "v", config.Postgres,
			[]string{`no postgres config named "mine"`}},
		{"missing base further down", map[string]string{"v.cnf": "# qpslab: base=w\n", "w.cnf": "# qpslab: base=gone\n"}, "v", config.MySQL,
			[]string{"config w is based on gone"}},
		{"cycle", map[string]string{"a.cnf": "# qpslab: base=b\n", "b.cnf": "# qpslab: base=c\n", "c.cnf": "# qpslab: base=a\n"}, "a", config.MySQL,
			[]string{"cycle", "a → b → c → a", "remove the base line"}},
		{"own name as base", map[string]string{"default.cnf": "# qpslab: base=default\n"}, "default", config.MySQL,
			[]string{"cycle", "default → default"}},
		{"a bad line in the config", map[string]string{"v.cnf": "# qpslab: base=default\n[mysqld\n"}, "v", config.MySQL,
			[]string{"config v (", "v.cnf): line 2:", "write [section]"}},
		{"a bad line in the base", map[string]string{"v.conf": "# qpslab: base=w\n", "w.conf": "a = 'x\n"}, "v", config.Postgres,
			[]string{"config w (", "the base of v", "line 1:", "opens a quote"}},
		{"a bad base line", map[string]string{"v.cnf": "# qpslab: base = a b\n"}, "v", config.MySQL,
			[]string{"v.cnf", "line 1:", "# qpslab: base=NAME"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store(t)
			for f, c := range tt.files {
				writeFile(t, s.Dir, f, c)
			}
			_, err := s.Get(tt.get, tt.fam)
			testenv.WantErr(t, err, tt.wantSub...)
			if errors.Is(err, config.ErrNotFound) {
				t.Errorf("a config that exists but does not resolve is not ErrNotFound: %v", err)
			}
		})
	}
}

func TestFind(t *testing.T) {
	s := store(t)
	writeFile(t, s.Dir, "mine.cnf", "a=1\n")
	writeFile(t, s.Dir, "pgonly.conf", "# qpslab: base=default\nwork_mem = 8MB\n")
	if c, err := s.Find("mine"); err != nil || c.Family != config.MySQL {
		t.Errorf("Find(mine) = %s %s, %v; want the mysql one", c.Name, c.Family, err)
	}
	c, err := s.Find("pgonly")
	if err != nil || c.Family != config.Postgres || !strings.Contains(string(c.Content), "shared_buffers") {
		t.Errorf("Find(pgonly) = %s %s, %v; want the postgres one, resolved", c.Name, c.Family, err)
	}
	_, err = s.Find("default")
	testenv.WantErr(t, err, `config named "default" in several families (mysql, postgres, rocksdb)`, "pass --family mysql, --family postgres or --family rocksdb")
	_, err = s.Find("nosuch")
	testenv.WantErr(t, err, `no config named "nosuch"`, "qpslab configs list")
	if !errors.Is(err, config.ErrNotFound) {
		t.Errorf("Find(nosuch) is not ErrNotFound: %v", err)
	}
	writeFile(t, s.Dir, "broken.cnf", "# qpslab: base=gone\n")
	_, err = s.Find("broken")
	testenv.WantErr(t, err, "based on gone")
}

func TestAddWith(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		opts     config.AddOptions
		wantBase string
		wantOwn  string // the stored file
	}{
		{"the default base is recorded", "[mysqld]\na=1\n", config.AddOptions{Base: "default", BaseIsDefault: true},
			"default", "# qpslab: base=default\n[mysqld]\na=1\n"},
		{"the file's base line beats a default", "# qpslab: base=other\na=1\n", config.AddOptions{Base: "default", BaseIsDefault: true},
			"other", "# qpslab: base=other\na=1\n"},
		{"the file's base line names none", "# qpslab: base=none\na=1\n", config.AddOptions{Base: "default", BaseIsDefault: true},
			"", "# qpslab: base=none\na=1\n"},
		{"a base given is recorded", "a=1\n", config.AddOptions{Base: "other"},
			"other", "# qpslab: base=other\na=1\n"},
		{"a base given that the file names too", "# qpslab: base=other\na=1\n", config.AddOptions{Base: "other"},
			"other", "# qpslab: base=other\na=1\n"},
		{"none", "a=1\n", config.AddOptions{Base: "none"},
			"", "a=1\n"},
		{"no options: the file as it is", "# qpslab: base=other\na=1\n", config.AddOptions{},
			"other", "# qpslab: base=other\na=1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store(t)
			writeFile(t, s.Dir, "other.cnf", "# qpslab: base=default\nb=2\n")
			src := writeFile(t, t.TempDir(), "v.cnf", tt.file)
			c, err := s.AddWith("v", src, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.Base != tt.wantBase || string(c.Own) != tt.wantOwn {
				t.Errorf("Add = base %q own %q, want %q %q", c.Base, c.Own, tt.wantBase, tt.wantOwn)
			}
			stored, err := os.ReadFile(filepath.Join(s.Dir, "v.cnf"))
			if err != nil || string(stored) != tt.wantOwn {
				t.Errorf("stored %q, %v; want %q", stored, err, tt.wantOwn)
			}
			got, err := s.Get("v", config.MySQL)
			if err != nil || got.ID() != c.ID() || !bytes.Equal(got.Content, c.Content) {
				t.Errorf("Get after Add = %s, %v; want %s", got.ID(), err, c.ID())
			}
			if tt.wantBase != "" && !strings.Contains(string(c.Content), "a=1  # from v") {
				t.Errorf("effective content lacks v's line:\n%s", c.Content)
			}
		})
	}
}

func TestAddWithErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     string
		file    string
		opts    config.AddOptions
		wantSub []string
	}{
		{"missing base", "v", "a=1\n", config.AddOptions{Base: "nosuch"}, []string{"based on nosuch", "qpslab configs list"}},
		{"file and --base disagree", "v", "# qpslab: base=other\n", config.AddOptions{Base: "default"}, []string{"names base other", "--base says default", "drop one"}},
		{"file names a base, --base none", "v", "# qpslab: base=other\n", config.AddOptions{Base: "none"}, []string{"names base other", "--base says none"}},
		{"own name", "default", "a=1\n", config.AddOptions{Base: "default", BaseIsDefault: true}, []string{"config default cannot be based on itself", "--base none"}},
		{"a cycle through an existing config", "v", "a=1\n", config.AddOptions{Base: "loop"}, []string{"cycle", "v → loop → v"}},
		{"a bad base name", "v", "a=1\n", config.AddOptions{Base: "../x"}, []string{`base "../x" is not a config name`}},
		{"a line that does not parse", "v", "[mysqld\n", config.AddOptions{Base: "default"}, []string{"line 2:", "write [section]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store(t)
			writeFile(t, s.Dir, "other.cnf", "b=2\n")
			writeFile(t, s.Dir, "loop.cnf", "# qpslab: base=v\n")
			src := writeFile(t, t.TempDir(), "in.cnf", tt.file)
			_, err := s.AddWith(tt.cfg, src, tt.opts)
			testenv.WantErr(t, err, tt.wantSub...)
			if ents, _ := os.ReadDir(s.Dir); len(ents) != 2 {
				t.Errorf("a refused add left %d files in %s, want the 2 there before", len(ents), s.Dir)
			}
		})
	}
}

func TestListLayered(t *testing.T) {
	s := store(t)
	writeFile(t, s.Dir, "good.cnf", "# qpslab: base=default\nmax_connections=10\n")
	writeFile(t, s.Dir, "orphan.cnf", "# qpslab: base=gone\n")
	writeFile(t, s.Dir, "badline.conf", "# qpslab: base=a b\n")
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]config.Config{}
	for _, c := range list {
		byName[string(c.Family)+"/"+c.Name] = c
	}
	good := byName["mysql/good"]
	if good.Err != nil || good.Base != "default" || !strings.Contains(string(good.Content), "innodb_buffer_pool_size=2G") {
		t.Errorf("good: base %q err %v content %q", good.Base, good.Err, good.Content)
	}
	if g, err := s.Get("good", config.MySQL); err != nil || g.ID() != good.ID() {
		t.Errorf("List and Get disagree on good: %s vs %s (%v)", good.ID(), g.ID(), err)
	}
	if o := byName["mysql/orphan"]; o.Err == nil || !strings.Contains(o.Err.Error(), "based on gone") || o.Content != nil {
		t.Errorf("orphan: err %v content %q, want a missing-base error and no content", o.Err, o.Content)
	}
	if b := byName["postgres/badline"]; b.Err == nil || !strings.Contains(b.Err.Error(), "badline.conf") {
		t.Errorf("badline: err %v, want one naming the file", b.Err)
	}
	if d := byName["mysql/default"]; d.Err != nil || d.Source != "shipped" {
		t.Errorf("default: %v from %s", d.Err, d.Source)
	}
}

func TestParseFamily(t *testing.T) {
	for in, want := range map[string]config.Family{"mysql": config.MySQL, "MariaDB": config.MySQL, "postgres": config.Postgres, "postgresql": config.Postgres, "pg": config.Postgres, "rocksdb": config.RocksDB, "db_bench": config.RocksDB} {
		if got, err := config.ParseFamily(in); err != nil || got != want {
			t.Errorf("ParseFamily(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := config.ParseFamily("oracle")
	testenv.WantErr(t, err, `unknown config family "oracle"`, "mysql", "postgres")
}
