package ibench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/suite"
	"github.com/qpslab/qpslab/internal/testenv"
)

// Once warm, an inserter's event and a querier's (range and point
// queries) allocate nothing on the lean path, on each protocol, on the
// blocking transport and on io_uring where this kernel allows it (a ring
// per connection, and inside a loop worker), with
// prepared statements and as text: the INSERT and MySQL's query texts are
// built in reused buffers and sent without a copy.
func TestEventsAllocateNothing(t *testing.T) {
	trs := []client.Transport{client.Blocking}
	if client.UringWorks() {
		trs = append(trs, client.Uring, client.Loop)
	}
	for _, name := range []string{"mariadb-system", "postgres-system"} {
		t.Run(name, func(t *testing.T) {
			srv, _ := testenv.StartServer(t, name)
			ep := srv.Endpoint()
			ctx := context.Background()
			s := &suite.Server{Protocol: ep.Protocol, Dialect: ep.Dialect(), Log: func(string) {}, Dial: func(ctx context.Context) (client.Conn, error) {
				return client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
			}}
			o := Options{Clients: 1, MR1: 0.001, MR2: 0.001, QuerySecs: time.Second, Rates: []int{100}, RowsPerQuery: 10, Pacing: Smooth}
			if err := o.create(ctx, s); err != nil {
				t.Fatal(err)
			}
			for _, q := range createIndexes(ep.Dialect(), "pi1", "") {
				if _, _, err := client.Query(ctx, ep, false, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for _, tr := range trs {
				for _, noPrep := range []bool{false, true} {
					for _, point := range []bool{false, true} {
						wl := &workload{d: ep.Dialect(), tables: o.Tables(), seed: 3,
							ph: phase{rows: 1 << 20, perCommit: 10, queries: 1, point: point, perQuery: 10}}
						wl.dial = func(ctx context.Context) (client.Conn, error) {
							return client.Dial(ctx, ep, client.Options{Transport: tr, NoPrepare: noPrep})
						}
						label := fmt.Sprintf("%s, text %v", tr, noPrep)
						ins, err := wl.NewWorker(ctx, 0)
						if err != nil {
							t.Fatal(err)
						}
						insert := func(ctx context.Context) error {
							if _, ok := ins.(engine.Scheduler).Next(ctx); !ok {
								return fmt.Errorf("%s: the inserter has no statement left", label)
							}
							if _, err := ins.Event(ctx); err != nil {
								return fmt.Errorf("%s: insert: %v", label, err)
							}
							return nil
						}
						if err := insert(ctx); err != nil { // rows for the queries to find
							t.Fatal(err)
						}
						if a := allocsOn(t, ctx, tr, 20, insert); a != 0 {
							t.Errorf("%s: %.1f allocations per insert, want 0", label, a)
						}
						q, err := wl.NewWorker(ctx, 1)
						if err != nil {
							t.Fatal(err)
						}
						// The first point query reads the highest id, as every
						// 100th does (through the driver): the runs below fall
						// between.
						query := func(ctx context.Context) error {
							if _, err := q.Event(ctx); err != nil {
								return fmt.Errorf("%s, point %v: query: %v", label, point, err)
							}
							return nil
						}
						if err := query(ctx); err != nil {
							t.Fatal(err)
						}
						if a := allocsOn(t, ctx, tr, 50, query); a != 0 {
							t.Errorf("%s, point %v: %.1f allocations per query, want 0", label, point, a)
						}
						ins.Close()
						q.Close()
					}
				}
			}
		})
	}
}

// allocsOn is testing.AllocsPerRun of f on tr: on the loop transport
// inside the one worker of a loop on one thread, f given that worker's
// context (derived from ctx), so that the statements go through the
// loop's ring. A failing f fails the test.
func allocsOn(t *testing.T, ctx context.Context, tr client.Transport, runs int, f func(ctx context.Context) error) float64 {
	t.Helper()
	var a float64
	var failed error
	measure := func(ctx context.Context) {
		a = testing.AllocsPerRun(runs, func() {
			if err := f(ctx); err != nil && failed == nil {
				failed = err
			}
		})
	}
	if tr != client.Loop {
		measure(ctx)
	} else {
		if err := (client.Loops{Threads: 1}).Run(ctx, 1, func(ctx context.Context, _ int) {
			if !client.OnLoop(ctx) {
				failed = fmt.Errorf("%s: the loop's worker is not on its loop", tr)
				return
			}
			measure(ctx)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if failed != nil {
		t.Fatal(failed)
	}
	return a
}
