package bisect_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A bisection queued as a fleet job (what the dashboard's "bisect this"
// queues) is worked by an agent through qpslab bisect's own walk: on
// db_bench builds whose speeds are known, the regression planted at
// commit 6 of 8 is found there, the bisection is stored with the
// attention entry's key, and the job completes.
func TestAgentWorksBisectJob(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, dsn := testenv.FleetDatabase(t)
	e, _, errb := bisectEnv(t)
	e.Store = dsn
	st, err := store.Open(ctx, dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fl, err := fleet.Open(ctx, dsn, st.Where())
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	src, hs := speedRepo(t, []string{"1000", "1000", "1000", "1000", "1000", "1000", "750", "750", "750"})
	fb := &dbBenchBuilder{h: e.Home, compiled: map[string]int{}}
	done := make(chan error, 1)
	go func() {
		done <- app.Agent(ctx, e, app.AgentOptions{Name: "bisector", OnTerm: "abort", Heartbeat: time.Second, Builder: fb})
	}()
	testenv.WaitFor(t, time.Minute, "the agent registered", func() bool {
		hs, err := fl.Hosts(ctx)
		return err == nil && len(fleet.Live(hs)) == 1
	})
	o := fastOptions(src, nil)
	id, err := fl.SubmitBisect(
		ctx,
		fleet.BisectJob{Good: hs[0], Bad: hs[len(hs)-1], Src: src, Suite: o.Suite, Test: o.Test,
			Rounds: o.Rounds, Set: o.Set, Attention: "gkey", Retries: 2, Host: "bisector", Timeout: 600},
		1,
	)
	if err != nil {
		t.Fatal(err)
	}
	// The same entry again while its job is queued or running: refused.
	again, err := fl.SubmitBisect(
		ctx,
		fleet.BisectJob{Good: hs[0], Bad: hs[len(hs)-1], Src: src, Suite: o.Suite, Test: o.Test,
			Attention: "gkey", Host: "bisector", Timeout: 600, Who: "another"},
		1,
	)
	if !errors.Is(err, fleet.ErrBisecting) || again != id {
		t.Errorf("a second job of the entry: %d %v", again, err)
	}
	var job fleet.BisectInfo
	testenv.WaitFor(t, 5*time.Minute, "the bisection job finished", func() bool {
		js, err := fl.BisectJobs(ctx)
		if err != nil || len(js) != 1 {
			t.Fatalf("jobs: %v %v", js, err)
		}
		job = js[0]
		return job.Finished()
	})
	if job.ID != id || job.State != "completed" {
		t.Fatalf("job %+v\n%s", job, errb)
	}
	bs, err := st.Bisections(ctx)
	if err != nil || len(bs) != 1 {
		t.Fatalf("bisections %+v %v", bs, err)
	}
	b := bs[0]
	want := "first bad commit: " + hs[6][:8] + " commit 6: speed 750"
	if b.State != store.BisectFound || !strings.HasPrefix(b.Result, want) || b.Params["attention"] != "gkey" ||
		b.Good != hs[0] {
		t.Errorf("stored %+v, want %q", b, want)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the agent: %v", err)
	}
}
