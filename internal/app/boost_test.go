package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

func TestBoostStates(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // the states, or the error's start
	}{
		{"off,on", "[false true]"}, {"on", "[true]"}, {"on,off", "[true false]"},
		{"on,on", "--boost on,on: give each state once"}, {"off,on,off", "--boost off,on,off: give each state once"},
		{"turbo", `--boost "turbo": give on, off`},
	} {
		got, err := boostStates(strings.Split(c.in, ","))
		s := ""
		if err != nil {
			s = err.Error()
		} else {
			b, _ := json.Marshal(got)
			s = strings.ReplaceAll(strings.ReplaceAll(string(b), ",", " "), "\"", "")
		}
		if !strings.HasPrefix(s, c.want) {
			t.Errorf("--boost %s: %s, want %s", c.in, s, c.want)
		}
	}
}

// qpslab run --boost off,on over a host whose sysfs is a fixture tree with
// boost on (this machine has none to switch; the servers are real): two
// labels, each run recording its state's fingerprint, compared without a
// refusal though their hosts differ in boost; the boost file as it was
// afterwards, and no state left.
func TestRunBoost(t *testing.T) {
	ctx := context.Background()
	h := testenv.Home(t)
	t.Setenv("QPSLAB_HOME", h.Root)
	t.Cleanup(func() {
		sandbox.StopAll()
		if left := testenv.Processes(h.Root); len(left) > 0 {
			t.Errorf("processes left behind: %q", left)
		}
	})
	testenv.Build(t, h, "mariadb-system")
	r, file := testenv.BoostTree(t)
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	e := Env{Home: h, Out: &out, Err: &errb}
	given := map[string]string{"build": "mariadb-system", "config": "default", "rows": "1000", "read-secs": "1", "warmup": "0",
		"repeat": "2", "tests": "point-query.pre*"}
	if err := Run(ctx, e, s, given, RunOptions{Boost: []string{"off", "on"}, Roots: r}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if b, _ := os.ReadFile(file); string(b) != "1\n" {
		t.Errorf("the boost file is %q after the run, was 1", b)
	}
	if _, err := os.Stat(h.BoostState()); !os.IsNotExist(err) {
		t.Errorf("the boost state is left after the run: %v", err)
	}
	if !strings.Contains(errb.String(), "boost put back as it was: "+file+" = 1") {
		t.Errorf("the run does not say it put boost back:\n%s", errb.String())
	}
	st, err := store.Open(ctx, "", h.StoreFile())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	labels := []string{"mariadb-system.default-boost-off", "mariadb-system.default-boost-on"}
	cmp, sets, err := selector.Selection{}.Compare(ctx, st, labels, "", nil)
	if err != nil {
		t.Fatalf("compare %v: %v", labels, err)
	}
	if len(cmp.Rows) == 0 {
		t.Fatal("no row compared")
	}
	for i, set := range sets {
		for _, run := range set.Runs {
			var c host.Check
			json.Unmarshal(run.Host, &c)
			if c.Boost == nil || *c.Boost != (i == 1) || run.Params[host.StateParam] != []string{"boost=off", "boost=on"}[i] {
				t.Errorf("%s %s: host boost %v, state %q", set.Label, run.Test, c.Boost, run.Params[host.StateParam])
			}
			if run.Status != result.OK {
				t.Errorf("%s %s: %s %s", set.Label, run.Test, run.Status, run.Error)
			}
		}
	}
	// The one label of both states pools nothing: they are two labels.
	if _, err := (selector.Selection{}).Sets(ctx, st, []string{"mariadb-system.default"}); err == nil {
		t.Error("mariadb-system.default has runs, though --boost ran only its boost labels")
	}
}
