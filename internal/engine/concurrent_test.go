package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/qpslab/qpslab/internal/result"
)

// Two client "hosts" measuring at the same time, one fast and one slow
// (a host that cannot keep up): their runs merge into one whose counts,
// seconds and histograms are the parts' added, whose p99 comes from the
// merged histograms (not an average of the parts'), and whose parts show
// each host's own rate. The engine is below the client (it talks to no
// server), so the two workloads are fakes with known service times; the
// merge of real agents' runs is tested with the fleet.
func TestMergeConcurrent(t *testing.T) {
	fast := &fakeWorkload{service: time.Millisecond, stmts: 1}
	slow := &fakeWorkload{service: 20 * time.Millisecond, stmts: 1}
	parts := make([]*result.Run, 2)
	var wg sync.WaitGroup
	for i, w := range []*fakeWorkload{fast, slow} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Run(context.Background(), w, Options{Threads: 2, Warmup: -1, Duration: 2 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			r.Suite, r.Test, r.Status, r.Threads = "sysbench", "point-query_range=100", result.OK, 2
			r.Totals.Reported, r.Totals.ReportedUnit = r.Totals.QPS, "qps"
			parts[i] = r
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	m, err := MergeConcurrent(parts, []string{"client-a", "client-b"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := parts[0].Totals, parts[1].Totals
	if m.Totals.Events != a.Events+b.Events || m.Totals.Statements != a.Statements+b.Statements || m.Threads != 4 {
		t.Errorf("merged %d events %d statements %d threads, parts %d+%d events", m.Totals.Events, m.Totals.Statements, m.Threads, a.Events, b.Events)
	}
	if m.Totals.Reported != a.Reported+b.Reported || m.Totals.Seconds != max(a.Seconds, b.Seconds) {
		t.Errorf("merged %.1f %s over %.2f s, parts %.1f + %.1f", m.Totals.Reported, m.Totals.ReportedUnit, m.Totals.Seconds, a.Reported, b.Reported)
	}
	h, err := hdrhistogram.Decode(m.Totals.ServiceHist)
	if err != nil || h.TotalCount() != m.Totals.Events {
		t.Fatalf("the merged histogram holds %v events (%v), the run %d", h.TotalCount(), err, m.Totals.Events)
	}
	// The fast host made most events, in a few ms at most, the slow one 5 %
	// or more of them, each at least 20 ms: the merged p99 is the slow
	// host's, the p50 below it. An average of the parts' p99s would be
	// well below 20 ms.
	if m.Totals.Service.P50 >= b.Service.P50 || m.Totals.Service.P99 < 19900 {
		t.Errorf("merged p50 %.0f µs p99 %.0f µs; parts p99 %.0f and %.0f", m.Totals.Service.P50, m.Totals.Service.P99, a.Service.P99, b.Service.P99)
	}
	var sum int64
	for _, s := range m.Samples {
		var want int64
		for _, p := range parts {
			for _, ps := range p.Samples {
				if ps.Second == s.Second {
					want += ps.Events
				}
			}
		}
		if s.Events != want {
			t.Errorf("second %d: %d events, the parts' add up to %d", s.Second, s.Events, want)
		}
		if sh, err := hdrhistogram.Decode(s.ServiceHist); s.Events > 0 && (err != nil || sh.TotalCount() != s.Events) {
			t.Errorf("second %d's histogram: %v events, %v", s.Second, sh, err)
		}
		sum += s.Events
	}
	if sum != m.Totals.Events {
		t.Errorf("the merged seconds add up to %d events, the run %d", sum, m.Totals.Events)
	}
	if len(m.Parts) != 2 || m.Parts[0].Host != "client-a" || m.Parts[1].Events != b.Events || m.Parts[1].Reported >= m.Parts[0].Reported {
		t.Errorf("parts %+v", m.Parts)
	}

	// Refused, nothing merged: a missing part, another test, parts that
	// did not measure at the same time.
	if _, err := MergeConcurrent([]*result.Run{parts[0], nil}, []string{"client-a", "client-b"}); err == nil {
		t.Error("a missing part was merged")
	}
	other := *parts[1]
	other.Test = "read-only_range=10"
	if _, err := MergeConcurrent([]*result.Run{parts[0], &other}, []string{"client-a", "client-b"}); err == nil {
		t.Error("parts of two tests were merged")
	}
	late := *parts[1]
	late.Started = late.Started.Add(3 * time.Second)
	if _, err := MergeConcurrent([]*result.Run{parts[0], &late}, []string{"client-a", "client-b"}); err == nil {
		t.Error("parts 3 s apart were merged")
	}
}
