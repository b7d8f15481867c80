package main_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/testenv"
)

// The README's first steps run as they are written, so that the README
// cannot go stale: each ./bin/qpslab line of its "First steps" section
// (help, the suites, a 5-second run, the labels) exits 0 in a new home, in
// order; the run's label is then listed.
func TestReadmeFirstSteps(t *testing.T) {
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## First steps after the demo"
		case in && strings.HasPrefix(line, "    ./bin/qpslab"):
			cmds = append(cmds, strings.Fields(line)[1:])
		}
	}
	if len(cmds) < 3 {
		t.Fatalf("README.md's first steps hold %d ./bin/qpslab lines, want the help, the suites and a run", len(cmds))
	}
	h := newHome(t)
	testenv.Build(t, h, "mariadb-system")
	var last outcome
	for _, c := range cmds {
		last = qpslab(t, h, c...)
		if last.code != 0 {
			t.Fatalf("README.md's `qpslab %s`: exit %d\n%s%s", strings.Join(c, " "), last.code, last.stdout, last.stderr)
		}
	}
	if !strings.Contains(last.stdout, "mariadb-system.default") {
		t.Errorf("after the README's run, its last command does not list mariadb-system.default:\n%s", last.stdout)
	}
}
