package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/arch"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// A suite is what it declares, and nothing outside it: the toy suite
// (toy_test.go, the one file that names it) is listed by qpslab suites
// with its condition, its figure and its layout; qpslab run toy --help
// shows its long help and its flags' usage beside the usage every suite
// shares (defined once for every suite; the usage test walks
// its commands too); its condition keys its runs; and the suites' layer
// rule checks it as it checks the registered suites. The commands are
// those of the binary, built from the registry (newRoot), in this test
// binary, where the toy is registered.
func TestAToySuiteDeclaresItself(t *testing.T) {
	qpslab := func(args ...string) string {
		t.Helper()
		var b bytes.Buffer
		root := newRoot()
		root.SetOut(&b)
		root.SetErr(&b)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("qpslab %s: %v\n%s", strings.Join(args, " "), err, b.String())
		}
		return b.String()
	}
	toy, err := suite.Get(toyName)
	if err != nil {
		t.Fatal(err)
	}

	// qpslab suites: among the others, with what it declares.
	if all := qpslab("suites"); !strings.Contains(all, "\n"+toyName+": "+toy.Summary()) || !strings.Contains(all, "sysbench: ") {
		t.Errorf("qpslab suites does not list the toy beside the others:\n%s", all)
	}
	listed := qpslab("suites", toyName)
	for _, want := range []string{
		"conditions (params its runs must share to be repeats, beside the plan's): " + toyCondition,
		"layout toy (the toy's one group): selects",
		toyFigure, "select-one",
		"(its own flags: --" + toyCondition + " --secs)",
	} {
		if !strings.Contains(listed, want) {
			t.Errorf("qpslab suites %s lacks %q:\n%s", toyName, want, listed)
		}
	}
	var js []struct {
		Name       string   `json:"name"`
		Conditions []string `json:"conditions"`
	}
	if err := json.Unmarshal([]byte(qpslab("suites", toyName, "--format", "json")), &js); err != nil || len(js) != 1 || !slices.Equal(js[0].Conditions, []string{toyCondition}) {
		t.Errorf("qpslab suites %s --format json: %+v (%v)", toyName, js, err)
	}

	// qpslab run toy --help: its long help, its flags with their usage,
	// and the flags every suite's run has, with the usage they share.
	help := qpslab("run", toyName, "--help")
	var aa string // the usage of --aa, which every suite's run shares
	if sc, _, err := newRoot().Find([]string{"run", "sysbench"}); err == nil && sc.Flags().Lookup("aa") != nil {
		aa = sc.Flags().Lookup("aa").Usage
	}
	if aa == "" {
		t.Fatal("qpslab run sysbench has no --aa with a usage")
	}
	for _, want := range []string{toyHelpMarker, "--" + toyCondition, toy.Params()[0].Usage, "--build", "--aa", aa} {
		if !strings.Contains(help, want) {
			t.Errorf("qpslab run %s --help lacks %q:\n%s", toyName, want, help)
		}
	}
	for _, cmd := range [][]string{{"study", toyName, "--help"}, {"fleet", "submit", toyName, "--help"}} {
		if h := qpslab(cmd...); !strings.Contains(h, "--"+toyCondition) {
			t.Errorf("qpslab %s lacks --%s:\n%s", strings.Join(cmd, " "), toyCondition, h)
		}
	}

	// Its condition: recorded by its plan, it keys its runs and no
	// other suite's.
	v, err := plan.ValuesOf(toy, map[string]string{toyCondition: "7"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := toy.Configure(v)
	if err != nil {
		t.Fatal(err)
	}
	run := result.Run{Suite: toyName, Test: "select-one", Threads: 1, Params: p.Params}
	other := run
	other.Params = map[string]string{toyCondition: "8"}
	if c := run.Conditions(); !strings.Contains(c, toyCondition+"=7") || c == other.Conditions() {
		t.Errorf("the toy's runs with %s=7 and =8: conditions %q and %q", toyCondition, c, other.Conditions())
	}
	sb := result.Run{Suite: "sysbench", Params: map[string]string{toyCondition: "7"}}
	if strings.Contains(sb.Conditions(), toyCondition) {
		t.Errorf("a sysbench run is keyed by the toy's condition: %s", sb.Conditions())
	}

	// The suites' layer rule: of the suites' layer, reaching no sandbox,
	// store, plan or sampler; a test's toy is checked by its file.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if problems := arch.CheckSuite(root, toy); len(problems) > 0 {
		t.Errorf("the toy breaks the suites' rule: %q", problems)
	}
}
