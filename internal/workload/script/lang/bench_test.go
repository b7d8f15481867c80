package lang

import (
	"context"
	"testing"
	"time"
)

type nopExec struct{}

func (nopExec) Exec(context.Context, Statement, []Value) ([]string, []Value, error) {
	return nil, nil, nil
}
func (nopExec) Sleep(context.Context, time.Duration) error { return nil }

// BenchmarkRunTPCB is the language's own cost per tpcb-like transaction
// (four \set, seven statements), the database left out.
func BenchmarkRunTPCB(b *testing.B) {
	sc, err := Parse("builtin:tpcb-like", tpcb)
	if err != nil {
		b.Fatal(err)
	}
	st := NewState(1, 0, map[string]Value{"scale": int64(100)})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := sc.Run(ctx, st, nopExec{}); err != nil {
			b.Fatal(err)
		}
	}
}
