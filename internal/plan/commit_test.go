package plan

import (
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/suite"
)

// A run of a build compiled from a commit carries the commit, its time
// (RFC 3339) and the build's flags in its params; a run of another build
// carries none of them.
func TestStartRecordsTheBuildsCommit(t *testing.T) {
	at := time.Date(2024, 7, 23, 12, 30, 0, 0, time.FixedZone("x", 3600))
	p := &Runner{
		Suite: testSuite{},
		Steps: &suite.Plan{Steps: []suite.Step{driven("q")}},
		Builds: []build.Build{{Name: "pg1518_240723_2ee061c2", Flavor: build.Postgres, Commit: "2ee061c2aabbccdd", CommitTime: at, Flags: "CFLAGS=-O2"},
			{Name: "postgres-system", Flavor: build.Postgres}},
		Configs: []config.Config{{Name: "x"}}, Spec: Spec{Threads: []int{1}, Interleave: InterleavePass}, Design: Design{Repeat: 1},
	}
	its := p.Items()
	r := p.start(its[0], p.Steps.Steps[0], 1)
	if r.Params["commit"] != "2ee061c2aabbccdd" || r.Params["commit_time"] != "2024-07-23T11:30:00Z" || r.Params["build_flags"] != "CFLAGS=-O2" {
		t.Errorf("commit build's run params: %v", r.Params)
	}
	o := p.start(its[1], p.Steps.Steps[0], 1)
	if _, ok := o.Params["commit"]; ok || o.Params["commit_time"] != "" || o.Params["build_flags"] != "" {
		t.Errorf("a packaged build's run params: %v", o.Params)
	}
}
