package ibench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/result"
)

// stallConn stands in for a server that stalls once: a real server cannot
// be made to hold one INSERT for a chosen time. Every statement takes a
// millisecond; the stallAt-th INSERT takes stallFor.
type stallConn struct {
	inserts  *atomic.Int64
	stallAt  int64
	stallFor time.Duration
}

func (c stallConn) Exec(ctx context.Context, q string, _ ...any) (int64, error) {
	d := time.Millisecond
	if len(q) > 6 && q[:6] == "INSERT" && c.inserts.Add(1) == c.stallAt {
		d = c.stallFor
	}
	select {
	case <-time.After(d):
		return 50, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
func (c stallConn) Query(context.Context, string, ...any) (int64, error) {
	time.Sleep(time.Millisecond) // the statement's time, as every statement here takes
	return 10, nil
}
func (c stallConn) Prepare(context.Context, string) (client.Stmt, error) { return nil, nil }
func (c stallConn) Begin(context.Context) error                          { return nil }
func (c stallConn) Commit(context.Context) error                         { return nil }
func (c stallConn) Rollback(context.Context) error                       { return nil }
func (c stallConn) Close() error                                         { return nil }

// stalled runs 3 s of inserts at 500 rows/s (10 statements/s) beside a
// range-query thread, on a server whose 6th INSERT takes 1.5 s.
func stalled(t *testing.T, pacing Pacing) *result.Run {
	t.Helper()
	var n atomic.Int64
	wl := &workload{
		d: client.MySQLDialect, tables: []string{"pi1"}, seed: 1,
		ph: phase{rows: 1500, perCommit: 50, rate: 500, queries: 1, perQuery: 10, pacing: pacing},
		dial: func(context.Context) (client.Conn, error) {
			return stallConn{inserts: &n, stallAt: 6, stallFor: 1500 * time.Millisecond}, nil
		},
		scalar: func(context.Context, client.Conn, string) (int64, error) { return 1, nil },
	}
	res, err := engine.Run(context.Background(), wl, engine.Options{Threads: wl.ph.workers(), Warmup: -1, UntilScheduled: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Smooth pacing: the statements the stall held up are late, not lost: all
// rows go in, the step lasts about its 3 s, the late statements' response
// time counts from when they were due, and the seconds the server fell
// behind in are counted as missed.
func TestSmoothPacingCountsMissedSeconds(t *testing.T) {
	res := stalled(t, Smooth)
	if res.Totals.Rows != 1500 {
		t.Fatalf("%d rows, want 1500", res.Totals.Rows)
	}
	if s := res.Totals.Seconds; s < 2.9 || s > 4 {
		t.Errorf("the step took %.2f s, want about 3 (the late statements catch up)", s)
	}
	ins, _ := res.Totals.Op(KindInsert)
	if ins.Response.Max < 1_400_000 {
		t.Errorf("insert response max %.0f µs: the stall is not in the response time", ins.Response.Max)
	}
	if ins.Service.P50 > 100_000 {
		t.Errorf("insert service p50 %.0f µs: a second stall?", ins.Service.P50)
	}
	v, share := SLA(500, res.Totals, res.Samples)
	if share >= 100 || share <= 0 {
		t.Errorf("%.0f%% of seconds at the target: the stalled second should be missed and the others met (%s)", share, v.Detail)
	}
	if res.Totals.Late == 0 {
		t.Errorf("no late statements")
	}
}

// Reference pacing: a burst at the start of each second, and a second the
// server overran is never made up: the stall in the first second's burst
// (1.5 s) pushes every later round back by the 0.5 s it overran, so the
// step takes 3.5 s instead of 3 and misses its SLA on average.
func TestReferencePacingNeverMakesUp(t *testing.T) {
	res := stalled(t, Reference)
	if res.Totals.Rows != 1500 {
		t.Fatalf("%d rows, want 1500", res.Totals.Rows)
	}
	if s := res.Totals.Seconds; s < 3.4 || s > 4.2 {
		t.Errorf("the step took %.2f s, want about 3.5 (the overrun not made up)", s)
	}
	v, _ := SLA(500, res.Totals, res.Samples)
	if v.OK {
		t.Errorf("SLA met: %s", v.Detail)
	}
}

// The SLA rule on known per-second series: the average over the step
// against 95 % of the target, and the share of whole seconds at 95 %.
func TestSLA(t *testing.T) {
	secs := func(rows ...int64) []result.Sample {
		var out []result.Sample
		for i, r := range rows {
			out = append(out, result.Sample{Second: i, Rows: r})
		}
		return out
	}
	for _, c := range []struct {
		name   string
		rows   []int64
		secs   float64
		target float64
		ok     bool
		share  float64
	}{
		{"every second at the target", []int64{100, 100, 100, 100}, 4, 100, true, 100},
		{"one short second, average met", []int64{100, 100, 90, 100, 100, 100, 100, 100, 100, 100}, 10, 100, true, 90},
		{"average at 94 %", []int64{94, 94, 94, 94}, 4, 100, false, 0},
		{"exactly 95 %", []int64{95, 95}, 2, 100, true, 100},
		{"a stall: zero seconds count", []int64{200, 0, 0, 200}, 4, 100, true, 50},
		{"a partial last second is left out", []int64{100, 100, 10}, 2.1, 100, true, 100},
	} {
		var total int64
		for _, r := range c.rows {
			total += r
		}
		v, share := SLA(c.target, result.Totals{Rows: total, Seconds: c.secs}, secs(c.rows...))
		if v.OK != c.ok || share != c.share {
			t.Errorf("%s: ok %v share %.0f, want %v %.0f (%s)", c.name, v.OK, share, c.ok, c.share, v.Detail)
		}
	}
}

// The reference's per-second rate percentiles: the rate that x % of
// seconds beat, from the descending sort at round(x/100·n).
func TestRatePercentiles(t *testing.T) {
	var samples []result.Sample
	for i := 0; i < 100; i++ {
		samples = append(samples, result.Sample{Second: i, Rows: int64(i + 1), Ops: []result.OpSample{{Kind: KindQuery, Count: 1000}}})
	}
	p := RatePercentiles(samples, 100)
	if p["insert/s@p50"] != 51 || p["insert/s@p99"] != 2 || p["insert/s@p90"] != 11 {
		t.Errorf("insert percentiles %v", p)
	}
	if p["query/s@p99"] != 1000 {
		t.Errorf("query percentiles %v", p)
	}
	if _, ok := p["delete/s@p50"]; ok {
		t.Errorf("a kind without events has percentiles: %v", p)
	}
}
