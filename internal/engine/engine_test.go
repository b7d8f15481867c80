package engine

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// fakeWorkload stands in for a server where a real one cannot show the
// behaviour: an injected stall at a chosen moment, a connection lost on cue.
// The engine's work against real servers is tested with the sysbench suite.
type fakeWorkload struct {
	service  time.Duration // each event takes this long
	stmts    int
	stallAt  int64         // the event number that stalls (0: none)
	stallFor time.Duration // for this long
	failAt   int64         // the event number that returns failErr
	failErr  error
	events   atomic.Int64
}

func (f *fakeWorkload) NewWorker(context.Context, int) (Worker, error) { return fakeWorker{f}, nil }

// Classify: the fake's io.ErrUnexpectedEOF is a lost connection, as a
// driver's would be; errRetry is retryable.
func (f *fakeWorkload) Classify(err error) ErrorClass {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ConnectionLost
	case errors.Is(err, errRetry):
		return Retryable
	}
	return Fatal
}

var errRetry = errors.New("deadlock")

type fakeWorker struct{ f *fakeWorkload }

func (w fakeWorker) Event(ctx context.Context) (Outcome, error) {
	n := w.f.events.Add(1)
	d := w.f.service
	if n == w.f.stallAt {
		d = w.f.stallFor
	}
	if n == w.f.failAt {
		return Outcome{}, w.f.failErr
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
	return Outcome{Statements: w.f.stmts, Rows: 1}, nil
}
func (fakeWorker) Close() error { return nil }

type recordWindow struct {
	mu            sync.Mutex
	opens, closes int
	open, close   time.Time
}

func (w *recordWindow) Open()  { w.mu.Lock(); w.opens++; w.open = time.Now(); w.mu.Unlock() }
func (w *recordWindow) Close() { w.mu.Lock(); w.closes++; w.close = time.Now(); w.mu.Unlock() }

func TestClosedLoopCountsAndSamples(t *testing.T) {
	f := &fakeWorkload{service: 2 * time.Millisecond, stmts: 3}
	var lines []string
	var mu sync.Mutex
	win := &recordWindow{}
	t0 := time.Now()
	var streamed []result.Sample // OnSample runs on the collector, before Run returns
	res, err := Run(context.Background(), f, Options{Threads: 2, Warmup: 300 * time.Millisecond, Duration: 3 * time.Second,
		ReportInterval: time.Second, Progress: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }, Window: win,
		OnSample: func(s result.Sample) { streamed = append(streamed, s) }})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Totals
	// The hardware window opens after the warmup and closes at the end of
	// the measured time, once each.
	win.mu.Lock()
	if win.opens != 1 || win.closes != 1 || win.open.Sub(t0) < 300*time.Millisecond || win.close.Sub(win.open) < 3*time.Second-50*time.Millisecond {
		t.Errorf("window opened %d time(s) %v after the start, closed %d time(s) %v after opening", win.opens, win.open.Sub(t0), win.closes, win.close.Sub(win.open))
	}
	win.mu.Unlock()
	if res.Status != result.OK || res.Loop != "closed" {
		t.Errorf("status %s loop %s", res.Status, res.Loop)
	}
	if tot.Events == 0 || tot.Statements != 3*tot.Events || tot.Rows != tot.Events {
		t.Errorf("events %d statements %d rows %d", tot.Events, tot.Statements, tot.Rows)
	}
	// Warmup events are run but not counted.
	if f.events.Load() <= tot.Events {
		t.Errorf("warmup events were counted: ran %d, measured %d", f.events.Load(), tot.Events)
	}
	var sum int64
	for i, s := range res.Samples {
		if s.Second != i {
			t.Errorf("sample %d is second %d", i, s.Second)
		}
		sum += s.Events
		if s.Events > 0 && len(s.ServiceHist) == 0 {
			t.Errorf("second %d has no histogram", s.Second)
		}
	}
	if sum != tot.Events {
		t.Errorf("samples add up to %d events, totals say %d", sum, tot.Events)
	}
	if len(res.Samples) < 3 {
		t.Errorf("%d samples for a 3 s run", len(res.Samples))
	}
	if len(streamed) != len(res.Samples) || streamed[0].Events != res.Samples[0].Events {
		t.Errorf("OnSample saw %d samples, the result has %d", len(streamed), len(res.Samples))
	}
	if tot.Service.P50 < 2000 || tot.Response != tot.Service {
		t.Errorf("service %+v response %+v", tot.Service, tot.Response)
	}
	if tot.QPS <= 0 || tot.TPS <= 0 || tot.QPS != 3*tot.TPS || tot.Reported != 0 {
		t.Errorf("rates: qps %.1f tps %.1f reported %.1f (the headline is the caller's)", tot.QPS, tot.TPS, tot.Reported)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "[ 1s ] thds: 2 tps: ") {
		t.Errorf("progress lines: %q", lines)
	}
}

func TestEventCount(t *testing.T) {
	f := &fakeWorkload{service: time.Millisecond, stmts: 1}
	res, err := Run(context.Background(), f, Options{Threads: 3, Warmup: -1, Events: 200})
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals.Events != 200 || f.events.Load() != 200 {
		t.Errorf("%d events measured, %d run: want exactly 200 of each (an event count is claimed before each event starts)", res.Totals.Events, f.events.Load())
	}
}

// A session's workers serve several runs (the slices of a test), each
// bounded by an event count, and Merge lays them end to end: counts add
// up, the samples follow each other, fairness covers every slice, the
// latency comes from the merged histograms.
func TestSessionSlices(t *testing.T) {
	f := &fakeWorkload{service: time.Millisecond, stmts: 2}
	ctx := context.Background()
	s, err := Open(ctx, f, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var parts []*result.Run
	for i := 0; i < 3; i++ {
		res, err := s.Run(ctx, Options{Warmup: -1, Events: 50})
		if err != nil {
			t.Fatal(err)
		}
		if res.Totals.Events != 50 {
			t.Errorf("slice %d: %d events, want 50", i, res.Totals.Events)
		}
		parts = append(parts, res)
	}
	if _, err := s.Run(ctx, Options{Threads: 3, Warmup: -1, Events: 1}); err == nil {
		t.Error("a session of 2 workers ran 3 threads")
	}
	m := s.Merge(parts)
	tot := m.Totals
	if tot.Events != 150 || tot.Statements != 300 || f.events.Load() != 150 {
		t.Errorf("merged: %d events, %d statements (%d run), want 150 and 300", tot.Events, tot.Statements, f.events.Load())
	}
	want := parts[0].Totals.Seconds + parts[1].Totals.Seconds + parts[2].Totals.Seconds
	if math.Abs(tot.Seconds-want) > 1e-9 || math.Abs(tot.TPS-150/want) > 1e-6 {
		t.Errorf("merged seconds %.3f tps %.1f, want %.3f and %.1f", tot.Seconds, tot.TPS, want, 150/want)
	}
	if tot.Service.Count != 150 || tot.Service.Mean < 1000 {
		t.Errorf("merged service latency %+v", tot.Service)
	}
	var sum int64
	for i, smp := range m.Samples {
		sum += smp.Events
		if i > 0 && smp.Second <= m.Samples[i-1].Second {
			t.Errorf("samples not renumbered: %d after %d", smp.Second, m.Samples[i-1].Second)
		}
	}
	if sum != 150 || len(m.Samples) < 3 {
		t.Errorf("merged samples: %d of them, %d events", len(m.Samples), sum)
	}
	// Each slice (well under a second) is one sample covering its length.
	for i, smp := range m.Samples {
		if want := parts[i].Totals.Seconds; len(m.Samples) == 3 && math.Abs(smp.Dur-want) > 1e-9 {
			t.Errorf("sample %d covers %v s, want its slice's %v", i, smp.Dur, want)
		}
		if r := smp.Rate(result.SeriesEvents); math.Abs(r-float64(smp.Events)/smp.Dur) > 1e-6 || r < 100 {
			t.Errorf("sample %d: rate %v of %d events in %v s", i, r, smp.Events, smp.Dur)
		}
	}
	if tot.Figures["jain"] < 0.5 || tot.Figures["starved"] != 0 {
		t.Errorf("merged fairness %v", tot.Figures)
	}
	if m.Started != parts[0].Started || m.Ended != parts[2].Ended || m.Status != result.OK {
		t.Errorf("merged span %v–%v status %s", m.Started, m.Ended, m.Status)
	}
}

// Open loop: a stall of one event delays the events queued behind it. Their
// response time (from the intended start) shows the stall; their service time
// (from the actual send) does not. Closed loop would hide it.
func TestOpenLoopRecordsQueueing(t *testing.T) {
	f := &fakeWorkload{service: time.Millisecond, stmts: 1, stallAt: 300, stallFor: time.Second}
	res, err := Run(context.Background(), f, Options{Threads: 1, Warmup: -1, Duration: 4 * time.Second,
		Rate: 200, Arrivals: Uniform})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Totals
	if res.Loop != "open" || tot.Late == 0 {
		t.Errorf("loop %s, late %d", res.Loop, tot.Late)
	}
	// About 200 events queue behind the 1 s stall: well over 1 % of ~800.
	if tot.Response.P99 < 500_000 {
		t.Errorf("response p99 %.0f µs does not show the 1 s stall", tot.Response.P99)
	}
	if tot.Service.P99 > 200_000 {
		t.Errorf("service p99 %.0f µs: the queued events' service time should not include the stall", tot.Service.P99)
	}
	if tot.Service.Max < 900_000 {
		t.Errorf("service max %.0f µs: the stalled event itself took 1 s", tot.Service.Max)
	}
	if tot.MaxBacklog < 100 {
		t.Errorf("max backlog %d, want the ~200 events that queued", tot.MaxBacklog)
	}
}

func TestOpenLoopBacklogCapEndsRun(t *testing.T) {
	f := &fakeWorkload{service: 20 * time.Millisecond, stmts: 1}
	res, err := Run(context.Background(), f, Options{Threads: 1, Warmup: -1, Duration: 10 * time.Second,
		Rate: 1000, MaxBacklog: 50})
	if err == nil || !strings.Contains(err.Error(), "backlog reached 50") {
		t.Fatalf("want a backlog error, got %v", err)
	}
	if res == nil || res.Status != result.Failed || res.Totals.Events == 0 {
		t.Fatalf("want the partial result kept: %+v", res)
	}
}

func TestCancelKeepsSamples(t *testing.T) {
	f := &fakeWorkload{service: time.Millisecond, stmts: 1}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	res, err := Run(ctx, f, Options{Threads: 2, Warmup: -1, Duration: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if res.Status != result.Aborted || len(res.Samples) < 1 || res.Totals.Events == 0 {
		t.Errorf("aborted run lost its samples: status %s, %d samples, %d events", res.Status, len(res.Samples), res.Totals.Events)
	}
	if res.Duration > 3 {
		t.Errorf("duration %.1f s recorded for a run cancelled at 1.5 s", res.Duration)
	}
}

// Cancelled in the warmup: the hardware window is closed but never opened.
// Cancelled in the window: it closes then, not at the planned end.
func TestCancelClosesTheWindow(t *testing.T) {
	f := &fakeWorkload{service: time.Millisecond, stmts: 1}
	for _, c := range []struct {
		after time.Duration
		opens int
	}{{200 * time.Millisecond, 0}, {1500 * time.Millisecond, 1}} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(c.after, cancel)
		win := &recordWindow{}
		t0 := time.Now()
		Run(ctx, f, Options{Threads: 2, Warmup: time.Second, Duration: time.Minute, Window: win})
		win.mu.Lock()
		if win.opens != c.opens || win.closes != 1 || time.Since(t0) > 5*time.Second {
			t.Errorf("cancelled after %v: opened %d, closed %d time(s)", c.after, win.opens, win.closes)
		}
		win.mu.Unlock()
	}
}

func TestLostConnectionEndsRunKeepsResult(t *testing.T) {
	f := &fakeWorkload{service: time.Millisecond, stmts: 1, failAt: 500, failErr: io.ErrUnexpectedEOF}
	res, err := Run(context.Background(), f, Options{Threads: 2, Warmup: -1, Duration: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "lost its connection") {
		t.Fatalf("want a lost-connection error, got %v", err)
	}
	if res.Status != result.Failed || res.Totals.Events < 400 || res.Totals.Errors != 1 {
		t.Errorf("status %s events %d errors %d", res.Status, res.Totals.Events, res.Totals.Errors)
	}
}

func TestPacers(t *testing.T) {
	u := newPacer(Uniform, 100, 1)
	for k := 0; k < 5; k++ {
		if got, want := u.next(), time.Duration(k)*10*time.Millisecond; got != want {
			t.Errorf("uniform arrival %d at %v, want %v", k, got, want)
		}
	}
	p := newPacer(Poisson, 1000, 42)
	var last time.Duration
	n := 20000
	for i := 0; i < n; i++ {
		last = p.next()
	}
	// The mean gap of an exponential with rate 1000/s is 1 ms.
	if mean := last.Seconds() / float64(n); mean < 0.00095 || mean > 0.00105 {
		t.Errorf("poisson mean gap %.5f s, want 0.001", mean)
	}
	q := newPacer(Poisson, 1000, 42)
	r := newPacer(Poisson, 1000, 42)
	for i := 0; i < 100; i++ {
		if q.next() != r.next() {
			t.Fatal("the same seed gave different arrivals")
		}
	}
}

// With Poisson arrivals the last arrival falls short of the end: the workers
// must still stop at the end, not wait for an arrival that never comes.
func TestOpenLoopPoissonEnds(t *testing.T) {
	f := &fakeWorkload{service: time.Millisecond, stmts: 1}
	done := make(chan *result.Run, 1)
	go func() {
		res, err := Run(context.Background(), f, Options{Threads: 2, Warmup: -1, Duration: time.Second, Rate: 50, Arrivals: Poisson, Seed: 7})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		if res.Totals.Events < 20 || res.Totals.Events > 100 {
			t.Errorf("%d events for 1 s at 50/s", res.Totals.Events)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("an open-loop run with Poisson arrivals did not end")
	}
}

// kindWorkload's events alternate between inserts (1 ms) and queries
// (3 ms); every fifth query fails once with a retryable error.
type kindWorkload struct{ n atomic.Int64 }

func (k *kindWorkload) NewWorker(context.Context, int) (Worker, error) { return kindWorker{k}, nil }
func (k *kindWorkload) Classify(err error) ErrorClass {
	if errors.Is(err, errRetry) {
		return Retryable
	}
	return Fatal
}

type kindWorker struct{ k *kindWorkload }

func (w kindWorker) Event(ctx context.Context) (Outcome, error) {
	n := w.k.n.Add(1)
	if n%2 == 0 {
		time.Sleep(time.Millisecond) // the insert's work: its time is what its latency measures
		return Outcome{Statements: 1, Rows: 1, Kind: "insert"}, nil
	}
	if n%10 == 1 {
		return Outcome{Kind: "query"}, errRetry
	}
	time.Sleep(3 * time.Millisecond) // the query's work, likewise
	return Outcome{Statements: 1, Rows: 10, Kind: "query"}, nil
}
func (kindWorker) Close() error { return nil }

func TestKindsKeptApart(t *testing.T) {
	res, err := Run(context.Background(), &kindWorkload{}, Options{Threads: 2, Warmup: -1, Duration: 2 * time.Second, RetryErrors: true})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Totals
	ins, ok1 := tot.Op("insert")
	qry, ok2 := tot.Op("query")
	if !ok1 || !ok2 || len(tot.Ops) != 2 {
		t.Fatalf("ops %+v, want insert and query", tot.Ops)
	}
	if ins.Count+qry.Count != tot.Events {
		t.Errorf("insert %d + query %d != %d events", ins.Count, qry.Count, tot.Events)
	}
	if qry.Errors == 0 || qry.Errors != tot.Errors || ins.Errors != 0 {
		t.Errorf("errors: query %d insert %d total %d; want all on query", qry.Errors, ins.Errors, tot.Errors)
	}
	// Each kind has its own distribution: inserts take 1 ms, queries 3.
	if !(ins.Service.P50 < qry.Service.P50) || qry.Service.P50 < 3000 {
		t.Errorf("p50 insert %.0f µs, query %.0f µs", ins.Service.P50, qry.Service.P50)
	}
	if len(ins.ServiceHist) == 0 || ins.Rate <= 0 || math.Abs(ins.Rate-float64(ins.Count)/tot.Seconds) > 1e-9 {
		t.Errorf("insert rate %.1f over %.2f s for %d, histogram %d bytes", ins.Rate, tot.Seconds, ins.Count, len(ins.ServiceHist))
	}
	var perSec int64
	for _, s := range res.Samples {
		for _, o := range s.Ops {
			if o.Kind == "insert" {
				perSec += o.Count
			}
		}
	}
	if perSec != ins.Count {
		t.Errorf("per-second inserts add up to %d, totals %d", perSec, ins.Count)
	}
}

func TestNoKindsNoOps(t *testing.T) {
	res, err := Run(context.Background(), &fakeWorkload{service: time.Millisecond, stmts: 1}, Options{Threads: 1, Warmup: -1, Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Totals.Ops) != 0 || len(res.Samples) == 0 || len(res.Samples[0].Ops) != 0 {
		t.Errorf("a workload without kinds got per-kind figures: %+v", res.Totals.Ops)
	}
}

// An open loop the server cannot follow is saturated, with a verdict that
// says by how much; one it follows is ok, with the same verdict met.
func TestOpenLoopSaturation(t *testing.T) {
	// One worker at 5 ms an event manages about 200/s: 1000/s is far
	// beyond it, 50/s well within.
	slow, err := Run(context.Background(), &fakeWorkload{service: 5 * time.Millisecond, stmts: 1},
		Options{Threads: 1, Warmup: -1, Duration: 3 * time.Second, Rate: 1000, Arrivals: Uniform, MaxBacklog: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if slow.Status != result.Saturated || len(slow.Verdicts) != 1 || slow.Verdicts[0].OK ||
		!strings.Contains(slow.Verdicts[0].Detail, "target 1000/s") || slow.Totals.Late == 0 {
		t.Errorf("an unfollowed open loop: status %s verdicts %+v late %d", slow.Status, slow.Verdicts, slow.Totals.Late)
	}
	last := slow.Samples[len(slow.Samples)-1]
	if last.Backlog <= slow.Samples[0].Backlog {
		t.Errorf("the backlog did not grow: %d then %d", slow.Samples[0].Backlog, last.Backlog)
	}
	easy, err := Run(context.Background(), &fakeWorkload{service: time.Millisecond, stmts: 1},
		Options{Threads: 2, Warmup: -1, Duration: 2 * time.Second, Rate: 50, Arrivals: Uniform})
	if err != nil {
		t.Fatal(err)
	}
	if easy.Status != result.OK || len(easy.Verdicts) != 1 || !easy.Verdicts[0].OK {
		t.Errorf("a followed open loop: status %s verdicts %+v", easy.Status, easy.Verdicts)
	}
	closed, _ := Run(context.Background(), &fakeWorkload{service: time.Millisecond, stmts: 1}, Options{Threads: 1, Warmup: -1, Duration: 300 * time.Millisecond})
	if closed.Status != result.OK || len(closed.Verdicts) != 0 {
		t.Errorf("a closed loop has no rate to sustain: %s %+v", closed.Status, closed.Verdicts)
	}
}

// schedWorkload: worker 0 keeps a schedule of n events every gap (one of
// which stalls), the others read closed loop until it is done.
type schedWorkload struct {
	n        int
	gap      time.Duration
	stallAt  int
	stallFor time.Duration
}

type schedWorker struct {
	w     *schedWorkload
	t0    time.Time
	i     int
	ran   int
	query bool
}

func (s *schedWorkload) NewWorker(_ context.Context, id int) (Worker, error) {
	if id == 0 {
		return &schedWorker{w: s}, nil
	}
	return &readerWorker{}, nil
}

func (w *schedWorker) Next(ctx context.Context) (time.Time, bool) {
	if w.i >= w.w.n {
		return time.Time{}, false
	}
	if w.t0.IsZero() {
		w.t0 = time.Now()
	}
	at := w.t0.Add(time.Duration(w.i) * w.w.gap)
	w.i++
	select {
	case <-time.After(time.Until(at)):
		return at, true
	case <-ctx.Done():
		return time.Time{}, false
	}
}

func (w *schedWorker) Event(ctx context.Context) (Outcome, error) {
	w.ran++
	if w.ran == w.w.stallAt {
		time.Sleep(w.w.stallFor) // the injected stall the test is about
	}
	return Outcome{Statements: 1, Rows: 10, Kind: "insert"}, nil
}

func (w *schedWorker) Close() error { return nil }

type readerWorker struct{}

func (readerWorker) Event(ctx context.Context) (Outcome, error) {
	select {
	case <-time.After(time.Millisecond):
		return Outcome{Statements: 1, Kind: "query"}, nil
	case <-ctx.Done():
		return Outcome{Kind: "query"}, ctx.Err()
	}
}

func (readerWorker) Close() error { return nil }

// A scheduled worker's run ends as planned when its schedule is done, the
// closed-loop readers beside it are stopped then, and a stall shows in the
// scheduled events' response time (from the intended start), not in their
// service time alone.
func TestUntilScheduled(t *testing.T) {
	w := &schedWorkload{n: 40, gap: 10 * time.Millisecond, stallAt: 5, stallFor: 200 * time.Millisecond}
	res, err := Run(context.Background(), w, Options{Threads: 2, Warmup: -1, UntilScheduled: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != result.OK {
		t.Fatalf("status %s (%s), want ok", res.Status, res.Error)
	}
	ins, ok := res.Totals.Op("insert")
	if !ok || ins.Count != 40 {
		t.Fatalf("inserts %+v, want 40", ins)
	}
	if q, ok := res.Totals.Op("query"); !ok || q.Count == 0 {
		t.Fatalf("no queries beside the inserts: %+v", res.Totals.Ops)
	}
	// The events queued behind the stall waited: their response time is
	// well above their service time.
	if ins.Response.Max < 150_000 || ins.Response.P95 <= ins.Service.P95 {
		t.Fatalf("insert response %+v, service %+v: the stall's queueing is not in the response time", ins.Response, ins.Service)
	}
	if res.Totals.Seconds <= 0 {
		t.Fatalf("no measured seconds: %+v", res.Totals)
	}
}

func TestUntilScheduledNeedsAScheduler(t *testing.T) {
	_, err := Run(context.Background(), &fakeWorkload{service: time.Millisecond}, Options{Threads: 1, UntilScheduled: true})
	if err == nil || !strings.Contains(err.Error(), "scheduled") {
		t.Fatalf("err %v, want one about scheduled workers", err)
	}
}

// Open-loop workers keep their second's data while they wait for an
// arrival; when the wait outlasts the second, the collector takes it. No
// event is lost or counted twice, whether arrivals come thick (many per
// worker per second) or sparse (seconds without an event for a worker).
func TestOpenLoopLosesNoSample(t *testing.T) {
	for _, c := range []struct {
		threads int
		rate    float64
	}{{16, 2000}, {4, 3}, {3, 40}} {
		f := &fakeWorkload{service: 100 * time.Microsecond, stmts: 1}
		res, err := Run(context.Background(), f, Options{Threads: c.threads, Warmup: -1, Duration: 3 * time.Second,
			Rate: c.rate, Arrivals: Uniform})
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for i, s := range res.Samples {
			sum += s.Events
			if s.Second != i {
				t.Errorf("%d threads at %.0f/s: sample %d is of second %d", c.threads, c.rate, i, s.Second)
			}
		}
		ran := f.events.Load()
		if sum != res.Totals.Events || res.Totals.Events > ran || ran-res.Totals.Events > int64(c.threads) {
			t.Errorf("%d threads at %.0f/s: %d events ran, %d in the totals, %d in the samples", c.threads, c.rate, ran, res.Totals.Events, sum)
		}
		if want := int64(3 * c.rate); res.Totals.Events < want*95/100 {
			t.Errorf("%d threads at %.0f/s: %d events in 3 s, want about %d", c.threads, c.rate, res.Totals.Events, want)
		}
		if len(res.Samples) != 3 {
			t.Errorf("%d threads at %.0f/s: %d samples in 3 s", c.threads, c.rate, len(res.Samples))
		}
	}
}

// sleepWorkload's events sleep a while and allocate nothing: the engine's
// own memory shows.
type sleepWorkload struct{ d time.Duration }

func (s sleepWorkload) NewWorker(context.Context, int) (Worker, error) { return sleepWorker(s), nil }

type sleepWorker sleepWorkload

func (s sleepWorker) Event(context.Context) (Outcome, error) {
	time.Sleep(s.d) // the event's work: a wait that allocates nothing
	return Outcome{Statements: 1, Rows: 1}, nil
}
func (sleepWorker) Close() error { return nil }

// A worker costs the engine little memory however many there are: its
// second's times are values, not histograms of its own (which took about
// 400 KB a worker).
func TestMemoryPerWorker(t *testing.T) {
	const workers = 1000
	for _, rate := range []float64{0, 20000} {
		runtime.GC()
		var before, peak runtime.MemStats
		runtime.ReadMemStats(&before)
		var mu sync.Mutex
		res, err := Run(context.Background(), sleepWorkload{2 * time.Millisecond}, Options{Threads: workers, Warmup: -1, Duration: 3 * time.Second, Rate: rate,
			OnSample: func(result.Sample) {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				mu.Lock()
				if m.HeapInuse+m.StackInuse > peak.HeapInuse+peak.StackInuse {
					peak = m
				}
				mu.Unlock()
			}})
		if err != nil {
			t.Fatal(err)
		}
		grew := int64(peak.HeapInuse+peak.StackInuse) - int64(before.HeapInuse+before.StackInuse)
		t.Logf("rate %.0f: %d events, heap and stacks grew %d KB, %.1f KB a worker", rate, res.Totals.Events, grew>>10, float64(grew)/1024/workers)
		if res.Totals.Events < 50_000 || len(res.Samples) < 2 {
			t.Fatalf("rate %.0f: %d events in %d samples", rate, res.Totals.Events, len(res.Samples))
		}
		if grew > workers*32<<10 {
			t.Errorf("rate %.0f: the engine's heap and stacks grew %.1f KB a worker, want at most 32", rate, float64(grew)/1024/workers)
		}
	}
}

// Fairness, known answers: four connections alike give Jain's index 1;
// one with everything gives 1/n; the rates' spread by nearest rank.
func TestFairness(t *testing.T) {
	f := Fairness([]int64{100, 100, 100, 100}, 10, 0)
	if f["jain"] != 1 || f["conn/s.min"] != 10 || f["conn/s.max"] != 10 || f["starved"] != 0 {
		t.Errorf("equal: %v", f)
	}
	f = Fairness([]int64{400, 0, 0, 0}, 10, 4)
	if math.Abs(f["jain"]-0.25) > 1e-12 || f["starved"] != 3 || f["starved_1s"] != 4 || f["conn/s.median"] != 0 {
		t.Errorf("one takes all: %v", f)
	}
	// 20 connections at 1..20 events/s: p5 is the smallest (rank 1), the
	// median 10.5, Jain (Σx)²/(n·Σx²) = 210²/(20·2870).
	var per []int64
	for i := 1; i <= 20; i++ {
		per = append(per, int64(i))
	}
	f = Fairness(per, 1, 0)
	if f["conn/s.p5"] != 1 || f["conn/s.median"] != 10.5 || math.Abs(f["jain"]-210.0*210/(20*2870)) > 1e-12 {
		t.Errorf("1..20: %v", f)
	}
}

// Jain's index never leaves [1/n, 1], whatever rounding does: equal
// counts give exactly 1 (sum²/(n·Σx²) gave 1.0000000000000002 for some,
// which the figure's registered bound refuses), nearly equal ones just
// under 1, one connection with everything exactly 1/n.
func TestJain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		n := 1 + rng.IntN(64)
		c := 1 + rng.Int64N(1<<40)
		equal := make([]int64, n)
		near := make([]int64, n)
		for i := range equal {
			equal[i] = c
			near[i] = c + rng.Int64N(3) - 1
		}
		if j, ok := Jain(equal); !ok || j != 1 {
			t.Fatalf("%d connections of %d events each: jain %v", n, c, j)
		}
		j, ok := Jain(near)
		if !ok || j > 1 || j < 1/float64(n) {
			t.Fatalf("%v: jain %v, outside [1/%d, 1]", near, j, n)
		}
		if j < 1-1e-9 {
			t.Fatalf("%v: jain %v for nearly equal counts", near, j)
		}
	}
	if j, _ := Jain([]int64{7, 0, 0}); math.Abs(j-1.0/3) > 1e-15 || j < 1.0/3 {
		t.Errorf("one with everything: jain %v, want 1/3", j)
	}
	if _, ok := Jain([]int64{0, 0}); ok {
		t.Error("no events: a jain index")
	}
	// Equal rates that are not whole numbers of events per second.
	f := Fairness([]int64{1001, 1001, 1001}, 1.4999, 0)
	if f["jain"] != 1 {
		t.Errorf("three alike connections: jain %v", f["jain"])
	}
}

// A closed-loop run records its fairness figures, from its connections'
// own counts: within their ranges, whatever the scheduler gave each
// (a loaded host serves three alike connections unevenly).
func TestRunRecordsFairness(t *testing.T) {
	res, err := Run(context.Background(), &fakeWorkload{service: time.Millisecond}, Options{Threads: 3, Warmup: -1, Events: 300})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Totals.Figures
	if j, ok := f["jain"]; !ok || j < 1.0/3 || j > 1 {
		t.Errorf("jain %v (recorded: %v) for three connections, outside [1/3, 1]: %v", j, ok, f)
	}
	lo, med, hi := f["conn/s.min"], f["conn/s.median"], f["conn/s.max"]
	if !(0 <= lo && lo <= med && med <= hi && hi > 0) {
		t.Errorf("conn/s min %v, median %v, max %v", lo, med, hi)
	}
	// The connections' rates add up to the run's: 300 events over its
	// seconds, within the rates' three roundings.
	if sum := res.Totals.Seconds * (lo + med + hi); math.Abs(sum-300) > 1e-6 {
		t.Errorf("the connections' rates make %v events, the run 300: %v", sum, f)
	}
}

// A run bounded by events with a guard ends by its events, however long
// they take in all (here 160 events of 50 ms on two workers, about 4 s,
// against a guard of 2.5 s: a loaded host makes slices that long), and
// fails, naming its guard, only when no event completes within it (an
// injected stall: a server that stopped answering).
func TestGuardEndsOnlyAStalledRun(t *testing.T) {
	res, err := Run(context.Background(), &fakeWorkload{service: 50 * time.Millisecond}, Options{Threads: 2, Warmup: -1, Events: 160, Guard: 2500 * time.Millisecond})
	if err != nil || res.Status != result.OK || res.Totals.Events != 160 {
		t.Fatalf("events %d, status %s, err %v", res.Totals.Events, res.Status, err)
	}
	stalled := &fakeWorkload{service: time.Millisecond, stallAt: 20, stallFor: time.Hour}
	res, err = Run(context.Background(), stalled, Options{Threads: 1, Warmup: -1, Events: 100, Guard: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no event completed in 300ms") || res.Status != result.Failed {
		t.Fatalf("a stalled run: status %s, err %v", res.Status, err)
	}
	if _, err := Run(context.Background(), stalled, Options{Threads: 1, Warmup: -1, Duration: time.Second, Guard: time.Second}); err == nil {
		t.Error("a guard on a timed run was taken")
	}
}

// retryInEvent's workers try each event's work twice within the event
// (a TPC-C terminal's retry after a deadlock), and say so in Retries.
type retryInEvent struct{}

func (retryInEvent) NewWorker(context.Context, int) (Worker, error) { return retryInEvent{}, nil }
func (retryInEvent) Event(ctx context.Context) (Outcome, error) {
	return Outcome{Statements: 2, Kind: "tx", Retries: 1}, nil
}
func (retryInEvent) Close() error { return nil }

// Tries that failed within an event count as errors of its kind and as
// retries, as events the engine restarts do.
func TestRetriesWithinAnEvent(t *testing.T) {
	res, err := Run(context.Background(), retryInEvent{}, Options{Threads: 1, Warmup: -1, Events: 500})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Totals
	tx, _ := tot.Op("tx")
	if tot.Events != 500 || tot.Retries != 500 || tot.Errors != 500 || tx.Errors != 500 || tx.Count != 500 {
		t.Errorf("events %d, retries %d, errors %d, tx %d with %d errors: want 500 of each", tot.Events, tot.Retries, tot.Errors, tx.Count, tx.Errors)
	}
}

// A slice (a window with no warm-up) keeps its tail: an operation that
// stalls for longer than the slice, in flight when the slice ends, is
// counted with the time it took, not dropped; its connection, which
// completed nothing in the window, is counted starved. Before, the
// largest latency a slice could record was its length.
func TestSliceKeepsInFlight(t *testing.T) {
	const slice, stall = 200 * time.Millisecond, time.Second
	f := &fakeWorkload{service: time.Millisecond, stmts: 1, stallAt: 1, stallFor: stall}
	ctx := context.Background()
	s, err := Open(ctx, f, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(ctx, Options{Warmup: -1, Duration: slice})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Totals
	if got := time.Duration(tot.Service.Max) * time.Microsecond; got < stall {
		t.Errorf("largest latency %v, want the stalled operation's %v or more", got, stall)
	}
	if tot.Figures[FigureInFlight] < 1 {
		t.Errorf("events in flight at the end counted: %v, want at least the stalled one: %v", tot.Figures[FigureInFlight], tot.Figures)
	}
	if tot.Figures["starved"] < 1 {
		t.Errorf("starved %v: the stalled connection completed nothing in the window", tot.Figures["starved"])
	}
	// The second the stalled operation completed in lies after the window:
	// it holds no connection's work in the window, and starves none.
	if tot.Figures["starved_1s"] > 1 {
		t.Errorf("starved_1s %v: the second after the window counted as starving both connections", tot.Figures["starved_1s"])
	}
	// The run's time is until its last event completed: the rate is over
	// the time its events took.
	if tot.Seconds < stall.Seconds() || res.Duration != slice.Seconds() {
		t.Errorf("seconds %v, duration %v: want at least the stall's %v, and the slice's %v", tot.Seconds, res.Duration, stall.Seconds(), slice.Seconds())
	}
	if math.Abs(tot.TPS-float64(tot.Events)/tot.Seconds) > 1e-6 || tot.Service.Count != tot.Events {
		t.Errorf("tps %v of %d events in %v s, %d latencies", tot.TPS, tot.Events, tot.Seconds, tot.Service.Count)
	}
	var sum int64
	for _, smp := range res.Samples {
		sum += smp.Events
	}
	if sum != tot.Events {
		t.Errorf("samples hold %d events, the totals %d", sum, tot.Events)
	}
	// Merged with a second slice, the tail and the count stay.
	res2, err := s.Run(ctx, Options{Warmup: -1, Duration: slice})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Merge([]*result.Run{res, res2}).Totals
	if m.Service.Max < tot.Service.Max || m.Figures[FigureInFlight] < tot.Figures[FigureInFlight]+1 || m.Events != tot.Events+res2.Totals.Events {
		t.Errorf("merged: max %v (slice 1: %v), in flight %v, events %d", m.Service.Max, tot.Service.Max, m.Figures[FigureInFlight], m.Events)
	}
}

// A window after a warm-up counts its events by their completion (what is
// in flight at its start, from the warm-up, makes up for what is in
// flight at its end): an event in flight at its end is not counted.
func TestWarmedWindowCountsByCompletion(t *testing.T) {
	f := &fakeWorkload{service: time.Millisecond, stmts: 1, stallAt: 1 << 40}
	res, err := Run(context.Background(), f, Options{Threads: 1, Warmup: 50 * time.Millisecond, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Totals.Seconds != 0.1 || res.Totals.Figures[FigureInFlight] != 0 {
		t.Errorf("seconds %v, in flight %v: want the window's 0.1 and none", res.Totals.Seconds, res.Totals.Figures[FigureInFlight])
	}
}
