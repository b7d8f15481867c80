package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/suite"
	_ "github.com/qpslab/qpslab/internal/workload"
)

// A plan is checked against each host before anything is queued: a build
// the host neither has nor can fetch, builds of two config families, a
// config it lacks are each refused with what it has and the fix.
func TestCheckHost(t *testing.T) {
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	h := fleet.Host{Name: "small",
		Builds:  []fleet.Build{{Name: "mariadb-system", Flavor: "mariadb"}, {Name: "postgres-system", Flavor: "postgres"}},
		Configs: []fleet.Config{{Name: "default", Family: "mysql", ID: "default@abc"}, {Name: "default", Family: "postgres", ID: "default@def"}}}
	planOf := func(kv ...string) *plan.Runner {
		given := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			given[kv[i]] = kv[i+1]
		}
		v, err := plan.ValuesOf(s, given)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Parse(s, v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ids, err := checkHost(h, planOf("build", "mariadb-system,mariadb-10.2.11"))
	if err != nil || ids["default"] != "default@abc" {
		t.Errorf("a build it has and one its agent fetches: %v %v", ids, err)
	}
	for _, c := range []struct {
		kv   []string
		want []string
	}{
		{[]string{"build", "mine"}, []string{"host small has no build mine", "it has mariadb-system, postgres-system", "qpslab builds add"}},
		{[]string{"build", "mariadb-system,postgres-system"}, []string{"different families", "two plans"}},
		{[]string{"build", "mariadb-system", "config", "cz11a_bee"}, []string{"host small has no mysql config cz11a_bee", "it has default", "qpslab configs add cz11a_bee FILE"}},
	} {
		_, err := checkHost(h, planOf(c.kv...))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want %q", c.kv, err, w)
			}
		}
	}
}

// A plan file that cannot be a plan is refused in one line before the
// fleet is opened: a field it does not know, no suite, a parameter the
// suite does not take (with the suite's why when it declines one).
func TestSubmitFileRefuses(t *testing.T) {
	dir := t.TempDir()
	var out, errw bytes.Buffer
	e := Env{Store: "postgres://nobody@127.0.0.1:1/none", Out: &out, Err: &errw}
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown field", "suite: sysbench\nhostz: [a]\n", "field hostz not found"},
		{"no suite", "hosts: [a]\n", "names no suite: add suite: NAME"},
		{"unknown suite", "suite: nosuch\n", `unknown suite "nosuch"`},
		{"declined", "suite: ibench\nparams:\n  build: mariadb-system\n  rate: 10\n", "the plan names --rate, which suite ibench does not take: its read+write steps pace their inserts at --rates"},
		{"unknown param", "suite: sysbench\nparams:\n  build: mariadb-system\n  clients: 4\n", "the plan names --clients, which suite sysbench does not take"},
		{"sandbox", "suite: sysbench\nparams:\n  sandbox: s1\n", "--sandbox runs on a server started on this machine"},
	} {
		path := filepath.Join(dir, c.name+".yaml")
		os.WriteFile(path, []byte(c.yaml), 0o644)
		err := SubmitFile(context.Background(), e, path, nil, SubmitOptions{Attempts: 3}, func(string) bool { return false })
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
	if err := SubmitFile(context.Background(), e, "x.yaml", []string{"sysbench"}, SubmitOptions{}, nil); err == nil || !strings.Contains(err.Error(), "give no suite sysbench") {
		t.Errorf("a plan file and a suite: %v", err)
	}
}

// A script the plan reads on the submitting machine travels with the job:
// the agent configures the plan from the job's copy, though its host has
// no such file; files above MaxJobFiles are refused, naming one.
func TestJobFilesCarryScripts(t *testing.T) {
	s, err := suite.Get("script")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a.sql")
	text := "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"
	if err := os.WriteFile(a, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	given := map[string]string{"build": "postgres-system", "file": a + "@2"}
	v, err := plan.ValuesOf(s, given)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Parse(s, v); err != nil {
		t.Fatal(err)
	}
	files, err := jobFiles(v)
	if err != nil || len(files) != 1 || string(files[a]) != text {
		t.Fatalf("the job's files: %q, %v; want %s", files, err, a)
	}

	// The agent's host has no a.sql: the job's copy is read.
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	at, err := plan.ValuesOf(s, given)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Parse(s, at); err == nil || !strings.Contains(err.Error(), "a.sql") {
		t.Fatalf("without the job's files, a missing script: %v", err)
	}
	if _, err := plan.Parse(s, at.WithFiles(files)); err != nil {
		t.Fatalf("with the job's files: %v", err)
	}

	big := filepath.Join(dir, "big.sql")
	if err := os.WriteFile(big, []byte("SELECT 1;\n"+strings.Repeat("-- padding\n", MaxJobFiles/10)), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err = plan.ValuesOf(s, map[string]string{"build": "postgres-system", "file": big})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Parse(s, v); err != nil {
		t.Fatal(err)
	}
	if _, err := jobFiles(v); err == nil || !strings.Contains(err.Error(), "big.sql") || !strings.Contains(err.Error(), "1024 KiB") {
		t.Errorf("a script above the bound: %v", err)
	}
}
