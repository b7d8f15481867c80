package fleet

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// The spread's coordination in a real store: two parts claim and start an
// item together, each keeps its run, part 0 reads both back; a spread
// whose second part is never claimed fails whole at its start, naming the
// host, and a part that comes later is refused; a part claimed twice (a
// retried attempt) is refused.
func TestSpreadCoordination(t *testing.T) {
	f, _ := open(t)
	ctx := context.Background()
	submit := func(id string, within time.Duration) Spread {
		t.Helper()
		clock, err := f.Clock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sp := Spread{ID: id, Parts: 2, StartBy: time.Now().Add(clock.Offset).Add(within), Hosts: []string{"load-a", "load-b"}, Target: []byte(`{}`)}
		var jobs []Job
		for i, h := range sp.Hosts {
			part := sp
			part.Part = i
			jobs = append(jobs, Job{Suite: "sysbench", Host: h, Timeout: 60, Batch: id, Spread: &part})
		}
		if _, err := f.SubmitSpread(ctx, jobs); err != nil {
			t.Fatal(err)
		}
		return sp
	}
	part := func(sp Spread, i int) Spread { sp.Part = i; return sp }

	sp := submit("spread-ok", time.Minute)
	var wg sync.WaitGroup
	starts := make([]time.Time, 2)
	errs := make([]error, 2)
	for i, h := range sp.Hosts {
		wg.Go(func() {
			if errs[i] = f.Claim(ctx, part(sp, i), h); errs[i] != nil {
				return
			}
			if starts[i], errs[i] = f.Ready(ctx, part(sp, i), "point-query_range=100@4#1", time.Second); errs[i] != nil {
				return
			}
			errs[i] = f.PutRun(ctx, part(sp, i), "point-query_range=100@4#1", []byte(`{"part":`+string(rune('0'+i))+`}`))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if starts[0].IsZero() || starts[1].IsZero() {
		t.Errorf("starts %v", starts)
	}
	runs, err := f.Runs(ctx, sp, "point-query_range=100@4#1")
	if err != nil || string(runs[0]) != `{"part":0}` || string(runs[1]) != `{"part":1}` {
		t.Fatalf("runs %q %v", runs, err)
	}
	if err := f.Claim(ctx, part(sp, 1), "load-c"); err == nil || !strings.Contains(err.Error(), "claimed once") {
		t.Errorf("a part claimed twice: %v", err)
	}
	if err := f.Finish(ctx, sp.ID); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := f.SpreadState(ctx, sp.ID); st != SpreadDone {
		t.Errorf("state %s", st)
	}

	late := submit("spread-late", 500*time.Millisecond)
	err = f.Claim(ctx, part(late, 0), "load-a")
	if !errors.Is(err, ErrSpreadFailed) || !strings.Contains(err.Error(), "load-b had not claimed") {
		t.Fatalf("the part whose other part was never claimed: %v", err)
	}
	if err := f.Claim(ctx, part(late, 1), "load-b"); !errors.Is(err, ErrSpreadFailed) {
		t.Errorf("a part claimed after the spread failed: %v", err)
	}
	if st, why, _ := f.SpreadState(ctx, late.ID); st != SpreadFailed || !strings.Contains(why, "load-b") {
		t.Errorf("state %s: %s", st, why)
	}
	if err := f.Finish(ctx, late.ID); !errors.Is(err, ErrSpreadFailed) {
		t.Errorf("a failed spread finished: %v", err)
	}
}
