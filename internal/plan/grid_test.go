package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A 2×2 grid over the default config: four configs, named by their
// settings, stored like any config (each layered over default with its two
// settings), every build running with each; the runs record their point.
func TestGrid(t *testing.T) {
	h := testenv.Home(t)
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	v := suite.Defaults(Common, s.Params()).With("build", "mariadb-system").
		With("set", "innodb_io_capacity=2000,20000,innodb_flush_neighbors=0,1")
	p, err := New(context.Background(), h, s, v)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.Configs {
		names = append(names, c.Name)
		if !strings.Contains(string(c.Content), "innodb_buffer_pool_size") {
			t.Errorf("%s is not layered over default:\n%s", c.Name, c.Content)
		}
	}
	want := "default-innodb_io_capacity-2000-innodb_flush_neighbors-0 default-innodb_io_capacity-2000-innodb_flush_neighbors-1 " +
		"default-innodb_io_capacity-20000-innodb_flush_neighbors-0 default-innodb_io_capacity-20000-innodb_flush_neighbors-1"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("configs %s", got)
	}
	c3 := p.Configs[3]
	if !strings.Contains(string(c3.Content), "innodb_io_capacity=20000") || !strings.Contains(string(c3.Content), "innodb_flush_neighbors=1") ||
		strings.Contains(string(c3.Content), "innodb_io_capacity=2000\n") {
		t.Errorf("the last point's content:\n%s", c3.Content)
	}
	if _, err := os.Stat(filepath.Join(h.Configs(), c3.Name+".cnf")); err != nil {
		t.Errorf("the derived config is not stored: %v", err)
	}
	if got := p.start(p.Items()[len(p.Items())-1], p.Steps.Steps[0], 1).Params["set"]; got != "innodb_io_capacity=20000,innodb_flush_neighbors=1" {
		t.Errorf("the run records set=%q", got)
	}
	// Deriving again finds the same configs; a config of a grid point's
	// name with other content is someone's own: refused, left as it was.
	if _, err := New(context.Background(), h, s, v); err != nil {
		t.Fatalf("the same grid again: %v", err)
	}
	mine := filepath.Join(h.Configs(), c3.Name+".cnf")
	if err := os.WriteFile(mine, []byte("[mysqld]\nmax_connections=10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), h, s, v)
	testenv.WantErr(t, err, c3.Name, "does not overwrite")
	if b, _ := os.ReadFile(mine); string(b) != "[mysqld]\nmax_connections=10\n" {
		t.Errorf("the user's config was changed: %q", b)
	}
}

func TestParseSets(t *testing.T) {
	g, err := config.ParseSets([]string{"a=1", "2", "b=x"})
	if err != nil || len(g) != 2 || len(g[0].Values) != 2 || len(g.Combinations()) != 2 {
		t.Fatalf("%v %+v", err, g)
	}
	for _, bad := range [][]string{{"1"}, {"a=1", "a=2"}, {"a b=1"}, {"a=1", "1"}, {"a=x#y"}} {
		if _, err := config.ParseSets(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	f := filepath.Join(t.TempDir(), "g.yaml")
	os.WriteFile(f, []byte("innodb_io_capacity: [2000, 20000]\ninnodb_flush_neighbors: [0, 1]\n"), 0o644)
	g, err = config.ReadGrid(f)
	if err != nil || len(g.Combinations()) != 4 || g[0].Name != "innodb_io_capacity" {
		t.Fatalf("%v %+v", err, g)
	}
}

// A --set, --grid or config setting that points the servers outside their
// sandboxes is refused before anything runs, and before a derived config
// is written: at Parse for the grid, at Resolve for a config of the home,
// and again at Resolve against the list then in force (a fleet agent's
// own). --allow-server-file lets it through.
func TestServerFilesRefusedByThePlan(t *testing.T) {
	h := testenv.Home(t)
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	v := suite.Defaults(Common, s.Params()).With("build", "mariadb-system")
	_, err = New(context.Background(), h, s, v.With("set", "init_file=/etc/shadow"))
	testenv.WantErr(t, err, "--set/--grid sets init_file=/etc/shadow", "--allow-server-file /etc/shadow")
	if ents, _ := os.ReadDir(h.Configs()); len(ents) > 0 {
		t.Errorf("a refused grid wrote configs: %v", ents)
	}
	p, err := New(context.Background(), h, s, v.With("set", "init_file=/etc/shadow").With("allow-server-file", "/etc"))
	if err != nil || len(p.Configs) != 1 || !strings.Contains(string(p.Configs[0].Content), "init_file=/etc/shadow") {
		t.Fatalf("allowed: %v", err)
	}
	// The same plan where another list is in force (an agent's): refused
	// before the grid is derived.
	q, err := Parse(s, v.With("set", "ssl_key=/root/k.pem").With("allow-server-file", "/root"))
	if err != nil {
		t.Fatal(err)
	}
	q.ServerFiles = nil
	testenv.WantErr(t, q.Resolve(context.Background(), h), "ssl_key=/root/k.pem")
	if _, err := os.Stat(filepath.Join(h.Configs(), "default-ssl_key-_root_k_pem.cnf")); err == nil {
		t.Error("the refused grid point was written")
	}

	if _, err := (config.Store{Dir: h.Configs()}).AddContent("keyed", []byte("# qpslab: base=default\n[mysqld]\nssl-ca = '/etc/ssl/ca.pem'\n"), config.MySQL, false); err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), h, s, v.With("config", "keyed"))
	testenv.WantErr(t, err, "config keyed sets ssl-ca='/etc/ssl/ca.pem'", "--allow-server-file /etc/ssl/ca.pem")
	if _, err := New(context.Background(), h, s, v.With("config", "keyed").With("allow-server-file", "/etc/ssl/ca.pem")); err != nil {
		t.Errorf("allowed: %v", err)
	}
}
