package plan

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/suite"
	_ "github.com/qpslab/qpslab/internal/workload" // every registered suite
)

var updateRecorded = flag.Bool("update-recorded", false, "rewrite testdata/recorded.golden from what the runs record now")

// What a run records of its plan (its parameters, seed, threads, plan
// pairing) is byte-identical for the same flags: testdata/recorded.golden
// was written from the code before the Spec and the Runner, and is the
// record of every item's start for a few flag sets.
func TestRecordedParamsAreTheFlags(t *testing.T) {
	var b strings.Builder
	for _, c := range []struct {
		suite string
		given map[string]string
	}{
		{"sysbench", map[string]string{"build": "b1,b2", "config": "c1", "engine": "innodb,rocksdb", "threads": "1,8",
			"repeat": "2", "seed": "42", "tests": "point-query,update-index", "read-secs": "1m", "server-cpus": "0", "tcp": "true"}},
		{"sysbench", map[string]string{"build": "b1,b2", "threads": "4", "repeat": "3", "seed": "7", "until-decided": "true",
			"tests": "point-query", "set": "innodb_io_capacity=100,200", "interleave": "pass"}},
		{"ibench", map[string]string{"build": "b1", "seed": "9", "clients": "2"}},
		{"tpcc", map[string]string{"build": "b1,b2", "seed": "11", "repeat": "2"}},
		{"ycsb", map[string]string{"build": "b1", "seed": "13", "rate": "500", "arrivals": "uniform"}},
	} {
		s, err := suite.Get(c.suite)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ValuesOf(s, c.given)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(s, v)
		if err != nil {
			t.Fatalf("%s %v: %v", c.suite, c.given, err)
		}
		p.ID = "plan-1"
		fmt.Fprintf(&b, "== %s %v\n", c.suite, c.given)
		for _, it := range p.Items() {
			st := p.Steps.Steps[it.Step]
			r := p.start(it, st, p.seedOf(st, it))
			r.Started, r.QpslabVersion = time.Time{}, "" // the clock's and the release's
			j, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s\n", j)
		}
	}
	got := b.String()
	const golden = "testdata/recorded.golden"
	if *updateRecorded {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestRecordedParamsAreTheFlags -update-recorded writes it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d differs:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gl), len(wl))
	}
}
