package app

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
	_ "github.com/qpslab/qpslab/internal/workload"
)

// --repeat auto on a comparison of sliced tests: at the demo's 3 s, 6
// repeats, each test's seconds spread over them, two 0.25 s slices a
// repeat; more time, more repeats where they are cheap; one label, or a
// given --repeat, keeps its repeats. --until-decided takes as many looks as
// its budget holds, fixed before the first (one: judged at α).
func TestDesign(t *testing.T) {
	s, err := suite.Get("sysbench")
	if err != nil {
		t.Fatal(err)
	}
	e := Env{Home: testenv.Home(t), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	planOf := func(kv ...string) *plan.Runner {
		given := map[string]string{"read-secs": "3", "write-secs": "3", "warmup": "0", "tests": "point-query*,update-index*"}
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
	p := planOf("build", "a,b")
	ds := design(context.Background(), e, p, "")
	if p.Design.Repeat != analysis.MinRepeats || p.Design.Slices != 2 || p.Design.WriteSlices != 2 || len(ds) == 0 {
		t.Fatalf("repeat %d, slices %d/%d, %d designs", p.Design.Repeat, p.Design.Slices, p.Design.WriteSlices, len(ds))
	}
	for _, d := range ds {
		if d.Design.Repeats != 6 || d.Design.Slices != 2 || d.Design.Slice != 250*time.Millisecond || !(d.Design.MDE > 0) {
			t.Errorf("%s: %+v", d.Test, d.Design)
		}
	}
	for _, st := range p.Steps.Steps {
		if st.Test == "point-query_range=100" && st.Seconds != 500*time.Millisecond {
			t.Errorf("point-query's seconds per repeat %s, want 3 s over 6", st.Seconds)
		}
	}
	// More time: the writes' repeat effect (the default's σ 0.116) asks
	// for more repeats of two slices each, at most MaxAutoRepeats, where a
	// repeat costs little beyond its rounds; a long warm-up before each
	// repeat makes repeats dear, and the time goes into slices instead.
	for _, c := range []struct {
		secs, warmup string
		repeats      int
		reads        string // the read tests' seconds, where not secs
	}{{"6", "0", 8, ""}, {"12", "0", MaxAutoRepeats, ""}, {"48", "0", MaxAutoRepeats, ""}, {"12", "5", analysis.MinRepeats, ""},
		// Short read tests beside long writes: no more repeats than leave
		// the reads two slices of 0.25 s each (3 s: 6).
		{"12", "0", analysis.MinRepeats, "3"}} {
		reads := c.secs
		if c.reads != "" {
			reads = c.reads
		}
		p := planOf("build", "a,b", "read-secs", reads, "write-secs", c.secs, "warmup", c.warmup)
		ds := design(context.Background(), e, p, "")
		if p.Design.Repeat != c.repeats || len(ds) == 0 {
			t.Errorf("%s s a test, --warmup %s: %d repeats, want %d", c.secs, c.warmup, p.Design.Repeat, c.repeats)
		}
		for _, d := range ds {
			if d.Design.Repeats != p.Design.Repeat || d.Design.Slice < 250*time.Millisecond {
				t.Errorf("%s s, --warmup %s, %s: %+v", c.secs, c.warmup, d.Test, d.Design)
			}
		}
	}
	if p := planOf("build", "a"); design(context.Background(), e, p, "") != nil || p.Design.Repeat != 1 {
		t.Errorf("one label: repeat %d", p.Design.Repeat)
	}
	if p := planOf("build", "a,b", "repeat", "3"); design(context.Background(), e, p, "") == nil || p.Design.Repeat != 3 {
		t.Errorf("--repeat 3: repeat %d", p.Design.Repeat)
	}
	for _, c := range []struct {
		budget string
		looks  int
	}{{"", 4}, {"1", 1}, {"75", 2}, {"3600", 4}} {
		kv := []string{"build", "a,b", "until-decided", "true"}
		if c.budget != "" {
			kv = append(kv, "budget", c.budget)
		}
		p := planOf(kv...)
		design(context.Background(), e, p, "")
		if p.Design.Looks != c.looks || !p.UntilDecided || p.Design.Step != 3 || p.Design.Budget <= 0 {
			t.Errorf("budget %q: looks %d, step %d, budget %s; want %d looks", c.budget, p.Design.Looks, p.Design.Step, p.Design.Budget, c.looks)
		}
	}
}
