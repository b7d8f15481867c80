package engine

import (
	"context"
	"testing"
	"time"
)

type partsWorkload struct{}

func (partsWorkload) NewWorker(context.Context, int) (Worker, error) { return &partsWorker{}, nil }

type partsWorker struct{ parts []Part }

func (w *partsWorker) Close() error { return nil }

// Event has two timed parts, the second failing: a script's statements.
func (w *partsWorker) Event(ctx context.Context) (Outcome, error) {
	w.parts = append(w.parts[:0], Part{Kind: "s1", Time: 2 * time.Millisecond}, Part{Kind: "s2", Time: time.Millisecond, Failed: true})
	return Outcome{Statements: 2, Parts: w.parts}, nil
}

// An event's parts are operations of their own kinds, counted and timed,
// or counted as errors when they failed; the event itself has no kind.
func TestEventParts(t *testing.T) {
	res, err := Run(context.Background(), partsWorkload{}, Options{Threads: 2, Warmup: -1, Events: 100})
	if err != nil {
		t.Fatal(err)
	}
	s1, ok1 := res.Totals.Op("s1")
	s2, ok2 := res.Totals.Op("s2")
	if !ok1 || s1.Count != 100 || s1.Errors != 0 || s1.Response.P50 < 1900 || s1.Response.P50 > 2100 {
		t.Errorf("s1: %+v", s1)
	}
	if !ok2 || s2.Count != 0 || s2.Errors != 100 {
		t.Errorf("s2: %+v", s2)
	}
	if len(res.Totals.Ops) != 2 || res.Totals.Events != 100 {
		t.Errorf("%d events, ops %+v", res.Totals.Events, res.Totals.Ops)
	}
	var n int64
	for _, s := range res.Samples {
		for _, o := range s.Ops {
			if o.Kind == "s1" {
				n += o.Count
			}
		}
	}
	if n != 100 {
		t.Errorf("the samples hold %d of s1's 100", n)
	}
}
