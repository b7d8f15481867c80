package plan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
	_ "github.com/qpslab/qpslab/internal/workload" // every registered suite
)

// specOf is Parse's Spec of suite name with the parameters given.
func specOf(t *testing.T, name string, given map[string]string) *Runner {
	t.Helper()
	s, err := suite.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ValuesOf(s, given)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(s, v)
	if err != nil {
		t.Fatalf("%s %v: %v", name, given, err)
	}
	return p
}

// roundTrip checks that p's Spec comes back from its JSON whole, and that
// FromSpec makes a runner of the same Spec and the same steps.
func roundTrip(t *testing.T, what string, p *Runner) {
	t.Helper()
	raw, err := json.Marshal(p.Spec)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var back Spec
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(back, p.Spec) {
		t.Errorf("%s: the spec does not come back from its JSON:\n got %+v\nwant %+v", what, back, p.Spec)
	}
	q, err := FromSpec(raw, nil)
	if err != nil {
		t.Fatalf("%s: FromSpec: %v", what, err)
	}
	if !reflect.DeepEqual(q.Spec, p.Spec) || !reflect.DeepEqual(q.Design, p.Design) || len(q.Items()) != len(p.Items()) {
		t.Errorf("%s: FromSpec made another runner: %+v, %d items; want %+v, %d items", what, q.Spec, len(q.Items()), p.Spec, len(p.Items()))
	}
}

// Every registered suite's defaults round-trip, and so does a spec with
// every flag of the plan given.
func TestSpecRoundTrips(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "q.sql")
	if err := os.WriteFile(script, []byte("SELECT 1;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// What a suite needs beyond the plan's defaults to make a plan at all.
	needs := map[string]map[string]string{"script": {"file": script}}
	for _, s := range suite.All() {
		given := map[string]string{"build": "b1"}
		for k, x := range needs[s.Name()] {
			given[k] = x
		}
		p := specOf(t, s.Name(), given)
		if p.Spec.Suite != s.Name() || p.Version != SpecVersion || p.Given["seed"] == "" || len(p.Threads) == 0 {
			t.Errorf("%s: spec %+v: want its suite, version, seed and threads", s.Name(), p.Spec)
		}
		roundTrip(t, s.Name()+"'s defaults", p)
	}
	full := map[string]string{
		"build": "b1,b2", "config": "c1,c2", "engine": "innodb,rocksdb", "threads": "1,8,64",
		"repeat": "3", "until-decided": "true", "budget": "6m", "restore": "reload", "interleave": "test",
		"slices": "5", "seed": "42", "warmup": "2.5", "rate": "1000", "arrivals": "uniform", "max-backlog": "5000",
		"tcp": "true", "no-prepare": "true", "transport": "blocking", "device": "vdb", "report-interval": "1m",
		"server-cpus": "0", "client-cpus": "0", "set": "innodb_io_capacity=100,200", "allow-server-file": dir,
		"counters": "innodb_pages_created,blks_read", "pmp": "0.5", "perf": "true",
		"read-secs": "1m30s", "tests": "point-query,update-index",
	}
	p := specOf(t, "sysbench", full)
	if !reflect.DeepEqual(p.Spec.Builds, []string{"b1", "b2"}) || !reflect.DeepEqual(p.Spec.Configs, []string{"c1", "c2"}) ||
		!reflect.DeepEqual(p.Threads, []int{1, 8, 64}) || p.Repeat != 3 || !p.UntilDecided || p.Slices != 5 || p.Seed != 42 ||
		p.Restore != RestoreReload || p.Budget.Minutes() != 6 || p.Warmup.Seconds() != 2.5 || p.Rate != 1000 || !p.Client.TCP ||
		!p.Perf || len(p.Grid) != 1 || len(p.StorageEngines) != 2 || p.ReportInterval.Seconds() != 60 || p.Design.Looks != DefaultLooks {
		t.Errorf("the fully flagged spec: %+v", p.Spec)
	}
	if p.Given["read-secs"] != "90" || p.Given["budget"] != "360" {
		t.Errorf("durations are recorded in seconds, as typed in any form: given %v", p.Given)
	}
	roundTrip(t, "the fully flagged spec", p)
}

// A spec this qpslab cannot run as written is refused in one line: a
// newer version, a field its parameters do not make, a field it does not
// know.
func TestFromSpecRefuses(t *testing.T) {
	p := specOf(t, "sysbench", map[string]string{"build": "b1", "threads": "4"})
	raw, err := json.Marshal(p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) json.RawMessage {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // the seed is a uint64
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		raw  json.RawMessage
		want []string
	}{
		{edit(func(m map[string]any) { m["version"] = SpecVersion + 1 }), []string{"version 2", "upgrade this agent"}},
		{edit(func(m map[string]any) { m["version"] = 0 }), []string{"version 0"}},
		{edit(func(m map[string]any) { m["threads"] = []int{8} }), []string{"threads: [8], here [4]", "submit it again"}},
		{edit(func(m map[string]any) { m["novel"] = true }), []string{"cannot be read", "novel"}},
		{json.RawMessage(`{"version":1,"suite":"nope","given":{}}`), []string{"nope"}},
		{json.RawMessage(`[]`), []string{"cannot be read"}},
	} {
		_, err := FromSpec(c.raw, nil)
		testenv.WantErr(t, err, c.want...)
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("not one line: %q", err)
		}
	}
}
