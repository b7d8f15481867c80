package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/testenv"
)

// The first command a new user runs: the demo, in miniature (few rows, a
// handful of tests, sub-second windows), from a fresh process, against a
// home that does not exist yet, as `make demo` does on a new machine.
// Only the registry's artifact cache is shared, so the build is not
// downloaded once per test run.
func TestDemoOnAFreshMachine(t *testing.T) {
	base := testenv.Home(t) // its cache; the home itself is not used
	root := filepath.Join(base.Root, "never", "made")
	cmd := exec.Command(bin, "demo", "--rows", "500", "--secs", "0.3", "--repeat", "2", "--tests", "point-query.pre*,update-index*,scan")
	cmd.Env = append(os.Environ(), "QPSLAB_HOME="+root, "QPSLAB_CACHE="+base.Cache)
	t.Cleanup(func() {
		if left := testenv.Processes(root); len(left) > 0 {
			t.Errorf("processes left behind: %q", left)
		}
	})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("qpslab demo on a fresh home: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{
		"== host check", "mariadb-10.2.11.demo", "mariadb-system.demo", "Relative QPS by group", "geomean col-1",
		"test-level interleaving: the 2 labels' servers up together", "Verdict for mariadb-system.demo against mariadb-10.2.11.demo: ",
		"paired rows (3 test-level, slices alternating between the servers",
		"update-index_range=100", "scan_range=100", "load", "The HTML report: ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, s)
		}
	}
	// The build's version stands beside a label that does not say it.
	if !regexp.MustCompile(`col-1: mariadb-system\.demo \(10\.\d+\.\d+\)`).MatchString(s) {
		t.Errorf("compare's header lacks mariadb-system's version:\n%s", s)
	}
	// Two repeats give no confidence interval: none is printed, and the
	// header says how many repeats one needs.
	if strings.Contains(s, "±∞") || !regexp.MustCompile(`where \d+ or more repeats give one`).MatchString(s) {
		t.Errorf("intervals:\n%s", s)
	}
	html := regexp.MustCompile(`The HTML report: (\S+)`).FindStringSubmatch(s)
	if html == nil {
		t.Fatal("no report path")
	}
	if b, err := os.ReadFile(html[1]); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("the report %s: %v", html[1], err)
	}
}

// On a home that does not exist, every command works or says what to do
// in one line, and the commands that only read create nothing; a --store
// that is neither a file nor PostgreSQL is refused, not made a file.
func TestFreshHomeReadOnly(t *testing.T) {
	base := testenv.Home(t)
	root := filepath.Join(base.Root, "never", "made")
	grid := []string{"run", "sysbench", "--list-tests", "--read-secs", "2", "--write-secs", "3", "--warmup", "1", "--tests", "point-query,update-index",
		"--config", "demo", "--set", "innodb_io_capacity=2000,20000", "--set", "innodb_flush_neighbors=0,1,2", "--repeat", "1"}
	design := []string{"run", "sysbench", "--list-tests", "--build", "a,b", "--read-secs", "3", "--write-secs", "3", "--warmup", "0", "--tests", "point-query,update-index"}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"labels"}, 0, "no results yet"},
		{[]string{"builds", "list"}, 0, "mariadb-system"},
		{[]string{"configs", "list"}, 0, "default"},
		{[]string{"server", "status"}, 0, "NAME"},
		{[]string{"suites"}, 0, "sysbench"},
		{[]string{"run", "sysbench", "--list-tests"}, 0, "point-query.pre_range=100"},
		{[]string{"run", "sysbench", "--list-tests", "--read-secs", "2", "--write-secs", "3", "--warmup", "1", "--tests", "point-query,update-index"}, 0, "5 run(s)"},
		{[]string{"run", "sysbench", "--list-tests", "--read-secs", "2", "--write-secs", "3", "--warmup", "1", "--tests", "point-query,update-index"}, 0, "13s of warmups and measured time"},
		// A 2×3 grid over one config: six configs, each named as the run
		// would derive it, and their total, without writing them.
		{grid, 0, "6 config(s): each of the 1 named at each of the grid's 6 point(s)"},
		{grid, 0, "demo-innodb_io_capacity-20000-innodb_flush_neighbors-2  (innodb_io_capacity=20000,innodb_flush_neighbors=2)"},
		{grid, 0, "30 run(s) (5 step(s) × thread counts × 1 build(s) × 6 config(s) × 1 repeat(s)): 1m18s of warmups and measured time"},
		// A comparison's design, from the defaults on a host with no
		// stored components: 6 repeats of two 0.25 s slices, each test's
		// smallest change found at 80 % power.
		{design, 0, "Each test's design (6 repeats; the slices per repeat by Kalibera and Jones's rule"},
		{design, 0, "writes  6 × 2             250ms  repeats      5"},
		{design, 0, "0.5         point-1    point"},
		{slices.Concat(design, []string{"--until-decided"}), 0, "--until-decided: then 3 more repeat(s) of the tests still undecided at each look, up to 4 looks"},
		{slices.Concat(design, []string{"--repeat", "0"}), 1, "--repeat 0: give a whole number from 1 to 1048576, or auto"},
		{slices.Concat(design, []string{"--budget", "60"}), 1, "--budget bounds the repeats --until-decided adds: give --until-decided too"},
		{slices.Concat(design, []string{"--restore", "tape"}), 1, "--restore"},
		{[]string{"compare", "a.b", "c.d"}, 1, "does not exist yet"},
		{[]string{"metrics", "a.b"}, 1, "does not exist yet"},
		{[]string{"detect"}, 1, "does not exist yet"},
		{[]string{"export", "otava-csv", filepath.Join(base.Root, "x")}, 1, "does not exist yet"},
		{[]string{"labels", "--store", "mysql://x@y/z"}, 1, "not in mysql"},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(os.Environ(), "QPSLAB_HOME="+root, "QPSLAB_CACHE="+base.Cache)
		cmd.Dir = base.Root
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("qpslab %s: exit %d, want %d with %q:\n%s", strings.Join(c.args, " "), code, c.code, c.want, out)
		}
		if c.code != 0 && strings.Count(strings.TrimSpace(string(out)), "\n") > 0 {
			t.Errorf("qpslab %s: not one line:\n%s", strings.Join(c.args, " "), out)
		}
	}
	if _, err := os.Stat(filepath.Dir(root)); !os.IsNotExist(err) {
		t.Errorf("read-only commands created %s (%v)", filepath.Dir(root), err)
	}
	if ents, _ := os.ReadDir(base.Root); len(ents) > 0 {
		t.Errorf("something was created beside the home: %v", ents)
	}
}
