// Package engine owns running a workload: workers on dedicated connections,
// warmup, a duration or an event count, closed loop (--threads) or open loop
// (--rate, with intended start times), per-second samples with HDR
// histograms, merged totals, progress lines, and stopping cleanly on
// cancellation with what was measured kept. It knows nothing of SQL or of
// sandboxes: a Workload supplies the events, and the result is a result.Run.
package engine

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/qpslab/qpslab/internal/result"
)

// Options say how to run a workload.
type Options struct {
	Threads  int           // workers, each with its own connection
	Warmup   time.Duration // run but not measured (default 5 s; negative for none)
	Duration time.Duration // measured time; 0 with Events set for an event count
	Events   int64         // stop after this many measured events (0: no limit)
	// Guard, with Events and no Duration, is the longest the run may go
	// without completing an event: it then fails, naming the guard (a
	// server that stopped answering). Otherwise the run ends by its
	// events, however long a loaded host makes them take: a run bounded
	// by events is never cut short by time, so that every server given
	// the same events takes the same writes.
	Guard time.Duration
	// UntilScheduled ends the run, as planned, when every worker that is a
	// Scheduler has no more events: the others (closed-loop readers beside
	// paced writers) are stopped then. Duration may be 0 with it.
	UntilScheduled bool
	// Open loop: Rate events/s arrive by Arrivals whatever the server does;
	// each event carries its intended start time. Rate 0 is closed loop.
	Rate     float64
	Arrivals Arrivals
	// MaxBacklog caps the events waiting for a free worker in open loop;
	// reaching it ends the run with a clear error and the partial result.
	MaxBacklog int
	// RetryErrors retries events whose error the workload classifies as
	// Retryable (a deadlock, a lock-wait timeout), counted as errors and
	// retries, as sysbench does by default.
	RetryErrors bool
	// Progress, if set, gets a line every ReportInterval (default 10 s).
	Progress       func(line string)
	ReportInterval time.Duration
	Seed           uint64 // for the arrival process
	// OnSample, if set, gets each second's sample as soon as it is whole
	// (to store a run as it goes). It is called from the collector and must
	// not block.
	OnSample func(result.Sample)
	// Window, if set, is opened when the measured window begins (after the
	// warmup) and closed when it ends: the hardware sampler, which must
	// see neither the warmup nor what follows the window.
	Window Window
	// Mux, if set, runs the workers instead of a goroutine each: several
	// on each OS thread (the client's Loops).
	Mux Mux
}

// Mux runs workers several to an OS thread.
type Mux interface {
	// Run calls work(ctx, i) for i in 0..n-1 and returns when all have
	// returned; the ctx each call gets carries its place.
	Run(ctx context.Context, n int, work func(ctx context.Context, i int)) error
	// SleepUntil waits until t, or until ctx ends, within a worker of
	// Run, letting the others run; false if ctx is not a worker's.
	SleepUntil(ctx context.Context, t time.Time) bool
	// Completed is when the last statement of ctx's worker completed, as
	// the thread that serves it saw it: an event's end is stamped then,
	// not when the worker runs again (after others served by its thread).
	Completed(ctx context.Context) (time.Time, bool)
}

// Window is told when the measured window opens and closes. Close may come
// without Open (a run cancelled in its warmup); both are called once.
type Window interface {
	Open()
	Close()
}

// gcMemoryLimit is the heap size at which the garbage collector runs during a
// measured run (it is otherwise off). The client allocates about 1 KB per
// statement, so at 50,000 statements/s this is a collection every ~10 s.
const gcMemoryLimit = 512 << 20

// lateThreshold is how far past its intended start an event may begin before
// it counts as late (open loop).
const lateThreshold = time.Millisecond

// histogram bounds: 1 µs to one hour, 3 significant digits.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 3_600_000_000, 3) }

var histPool = sync.Pool{New: func() any { return newHist() }}

func getHist() *hdrhistogram.Histogram { return histPool.Get().(*hdrhistogram.Histogram) }
func putHist(h *hdrhistogram.Histogram) {
	h.Reset()
	histPool.Put(h)
}

// secData is one second's data: counts, and the events' service and
// response times. A worker's holds each event's times as values (µs, in
// svcV and respV); the collector records them into the second's HDR
// histograms (svc and resp), which only it holds. A histogram per worker
// per second (about 190 KB each, service and response, and again per
// kind) cost hundreds of KB of RSS per connection, 1.8 GB at 1,024
// connections, and a reset of each every second; values cost 4 bytes per
// event.
type secData struct {
	sec                                        int
	worker                                     int // the worker that measured it (merged data: any)
	events, stmts, rows, errors, retries, late int64
	overrun                                    int64                   // a worker's: of its events, those that completed after the window (keepInFlight)
	svcV, respV                                []uint32                // a worker's: µs per event; respV only when response time is not service time
	resp, svc                                  *hdrhistogram.Histogram // the collector's
	ops                                        map[string]*opData      // per event kind; nil when events have none
}

// opData is one event kind's part of a secData.
type opData struct {
	count, errors int64
	svcV, respV   []uint32
	resp, svc     *hdrhistogram.Histogram
}

// maxUs is the largest time the histograms hold (one hour), in µs.
const maxUs = 3_600_000_000

// us is d in µs as a histogram value: at least 1, at most maxUs.
func us(d time.Duration) uint32 { return uint32(min(max(d.Microseconds(), 1), maxUs)) }

var secPool = sync.Pool{New: func() any { return new(secData) }}

// newSecData is a worker's data for second sec, its value buffers reused.
func newSecData(sec int) *secData {
	d := secPool.Get().(*secData)
	d.sec = sec
	return d
}

// newSecHists is the collector's data for second sec, with histograms.
func newSecHists(sec int) *secData { return &secData{sec: sec, resp: getHist(), svc: getHist()} }

// op returns kind's data, made on first use (with histograms in the
// collector's data).
func (d *secData) op(kind string) *opData {
	if d.ops == nil {
		d.ops = map[string]*opData{}
	}
	o := d.ops[kind]
	if o == nil {
		o = &opData{}
		if d.svc != nil {
			o.resp, o.svc = getHist(), getHist()
		}
		d.ops[kind] = o
	}
	return o
}

// record adds one event's times: service always, response when it differs.
func (d *secData) record(svc, resp uint32, both bool) {
	d.svcV = append(d.svcV, svc)
	if both {
		d.respV = append(d.respV, resp)
	}
}

// parts adds an event's timed parts (Outcome.Parts), each as an operation
// of its kind: its time is both its service and response time.
func (d *secData) parts(ps []Part, both bool) {
	for _, p := range ps {
		o := d.op(p.Kind)
		if p.Failed {
			o.errors++
			continue
		}
		o.count++
		t := us(p.Time)
		o.record(t, t, both)
	}
}

func (o *opData) record(svc, resp uint32, both bool) {
	o.svcV = append(o.svcV, svc)
	if both {
		o.respV = append(o.respV, resp)
	}
}

// release gives d's histograms back to the pool, or a worker's d itself,
// its value buffers kept for the next second.
func (d *secData) release() {
	if d.svc != nil {
		putHist(d.resp)
		putHist(d.svc)
		for _, o := range d.ops {
			putHist(o.resp)
			putHist(o.svc)
		}
		return
	}
	svcV, respV := d.svcV[:0], d.respV[:0]
	clear(d.ops)
	*d = secData{svcV: svcV, respV: respV, ops: d.ops}
	secPool.Put(d)
}

// Run runs w under o and returns what was measured. The error is non-nil when
// the run did not end as planned (cancelled, a lost connection, a failing
// statement, a backlog overflow); the result is returned all the same, with
// Status and Error set and every sample taken until then.
func Run(ctx context.Context, w Workload, o Options) (*result.Run, error) {
	if o.Threads < 1 {
		return nil, fmt.Errorf("threads must be at least 1")
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	s, err := Open(ctx, w, o.Threads)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, o)
}

// check refuses options no run can follow.
func (o Options) check() error {
	if o.Duration <= 0 && o.Events <= 0 && !o.UntilScheduled {
		return fmt.Errorf("give a duration or an event count")
	}
	if o.Guard < 0 || o.Guard > 0 && (o.Events <= 0 || o.Duration > 0) {
		return fmt.Errorf("a guard bounds a run of an event count without a duration")
	}
	return nil
}

// Session is a workload's workers, each on its own connection, kept open
// over several runs. Test-level interleaving runs a test as short slices
// that alternate between servers: each server's slices are runs of one
// session, so a slice opens no connection and prepares no statement, and
// each worker's random stream goes on where the last slice left it, the
// same on every server when the slices are bounded by an event count.
// Merge makes one run of a session's slices.
type Session struct {
	workers   []Worker
	scheduled int
	classify  func(error) ErrorClass
	// per run the session returned: each worker's events and the most
	// workers that completed nothing in one second (fairness, for Merge)
	mu   sync.Mutex
	fair map[*result.Run]fairness
}

type fairness struct {
	perWorker  []int64
	starvedMax int
	seconds    float64 // the measured window's (without the events in flight at its end)
}

// Open starts threads workers of w. Close them with Close.
func Open(ctx context.Context, w Workload, threads int) (*Session, error) {
	if threads < 1 {
		return nil, fmt.Errorf("threads must be at least 1")
	}
	s := &Session{fair: map[*result.Run]fairness{}}
	for i := 0; i < threads; i++ {
		wk, err := w.NewWorker(ctx, i)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("start worker %d: %w", i, err)
		}
		s.workers = append(s.workers, wk)
		if _, ok := wk.(Scheduler); ok {
			s.scheduled++
		}
	}
	if c, ok := w.(Classifier); ok {
		s.classify = c.Classify
	} else {
		s.classify = func(error) ErrorClass { return Fatal }
	}
	return s, nil
}

// Close closes every worker's connection.
func (s *Session) Close() {
	for _, wk := range s.workers {
		wk.Close()
	}
	s.workers = nil
}

// Threads is how many workers the session has.
func (s *Session) Threads() int { return len(s.workers) }

// Run runs the session's workers under o (o.Threads is theirs: 0 or the
// session's count) and returns what was measured, as the package's Run.
func (s *Session) Run(ctx context.Context, o Options) (*result.Run, error) {
	if o.Threads != 0 && o.Threads != len(s.workers) {
		return nil, fmt.Errorf("the session has %d workers, not %d", len(s.workers), o.Threads)
	}
	if len(s.workers) == 0 {
		return nil, fmt.Errorf("the session is closed")
	}
	o.Threads = len(s.workers)
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Warmup == 0 {
		o.Warmup = 5 * time.Second
	} else if o.Warmup < 0 {
		o.Warmup = 0
	}
	if o.ReportInterval <= 0 {
		o.ReportInterval = 10 * time.Second
	}
	if o.Rate > 0 && o.MaxBacklog <= 0 {
		o.MaxBacklog = max(1000, int(o.Rate*10))
	}
	if o.Arrivals == "" {
		o.Arrivals = Poisson
	}

	// No garbage collection while measuring, unless the heap reaches
	// gcMemoryLimit: a collection stops the world, which would show up as
	// client latency, and waits for connections that wait on the server
	// outside the runtime's view (client.Blocking, up to 50 ms).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	debug.SetMemoryLimit(gcMemoryLimit)

	r := &runner{o: o, n: len(s.workers), scheduled: s.scheduled, classify: s.classify}
	if o.UntilScheduled && r.scheduled == 0 {
		return nil, fmt.Errorf("the run ends when its scheduled workers are done, but the workload has none")
	}
	r.schedLeft.Store(int64(r.scheduled))
	res, f, err := r.run(ctx, s.workers)
	s.mu.Lock()
	s.fair[res] = f
	s.mu.Unlock()
	return res, err
}

type runner struct {
	o     Options
	n     int
	t0    time.Time // run start (warmup begins)
	mt0   time.Time // measured window start
	end   time.Time // measured window end (zero: none)
	flush chan *secData
	// Per worker: the last second for which it will send no more data, and
	// what it holds while it waits for an open-loop arrival (nil while it
	// is not waiting; see park).
	done []atomic.Int64
	held []atomic.Pointer[secData]

	claimed atomic.Int64 // measured events started, for Options.Events
	// scheduled is how many workers keep their own schedule; schedLeft how
	// many of them still have events (Options.UntilScheduled).
	scheduled int
	schedLeft atomic.Int64
	backlog   atomic.Int64
	maxBack   atomic.Int64
	sched     *schedule // open loop's arrivals
	rawSleep  bool      // wait for an arrival in a raw sleep (see run)

	failMu   sync.Mutex
	failErr  error
	cancel   context.CancelFunc
	classify func(error) ErrorClass
}

func (r *runner) fail(err error) {
	r.failMu.Lock()
	if r.failErr == nil {
		r.failErr = err
	}
	r.failMu.Unlock()
	r.cancel()
}

// closed says whether every event starts when its worker is free (closed
// loop): response time is then service time.
func (r *runner) closed() bool { return r.o.Rate == 0 && r.scheduled == 0 }

// keepInFlight says whether the events in flight when the measured window
// ends are counted, each in full when it completes, the run's time then
// running until the last of them has: when the window had no warm-up
// before it (a slice, which its own warm-up run has left with nothing in
// flight). A window that starts with nothing in flight and drops what is
// in flight at its end drops the longest events (one in flight at a given
// moment is the more likely the longer it takes) and never records one
// longer than the window: at 4,096 connections and 0.25 s slices the
// largest latency recorded was the slice's length, against 1.9 s for
// p99 in a whole run (issue 59). Counting every event that starts in the
// window counts each event once over a run's slices, as a window with a
// warm-up counts each by its completion (what is in flight at its start
// makes up for what is in flight at its end); the time until the last
// one completes is the time those events took, so the rate is not
// inflated by them (N connections each in an event of L at the end: N
// more events, and up to L more seconds). The alternative, waiting for
// them uncounted, is what dropped them: the workers already waited.
func (r *runner) keepInFlight() bool { return r.o.Warmup == 0 && r.sched == nil }

func (r *runner) sec(t time.Time) int {
	d := t.Sub(r.mt0)
	if d < 0 {
		return -1
	}
	return int(d / time.Second)
}

func (r *runner) run(parent context.Context, workers []Worker) (*result.Run, fairness, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.cancel = cancel
	r.flush = make(chan *secData, 4*r.n+16)
	r.done = make([]atomic.Int64, r.n)
	r.held = make([]atomic.Pointer[secData], r.n)
	for i := range r.done {
		r.done[i].Store(-1)
	}
	r.t0 = time.Now()
	r.mt0 = r.t0.Add(r.o.Warmup)
	end := time.Time{}
	if r.o.Duration > 0 {
		end = r.mt0.Add(r.o.Duration)
	}
	r.end = end

	win := r.o.Window
	if win == nil {
		win = noWindow{}
	}
	openTimer := time.AfterFunc(r.o.Warmup, win.Open)
	var closeOnce sync.Once
	closeWindow := func() { closeOnce.Do(func() { openTimer.Stop(); win.Close() }) }
	if !end.IsZero() && !r.keepInFlight() {
		// At the end, not when the last worker returns: an event that
		// ends after the window is not counted, nor is its cost.
		closeTimer := time.AfterFunc(time.Until(end), closeWindow)
		defer closeTimer.Stop()
	}
	res := &result.Run{
		// No Threads: what a thread count is to a suite (a client of the
		// Insert Benchmark is three workers) is the plan's to say.
		SchemaVersion: result.SchemaVersion, Loop: "closed",
		Warmup: r.o.Warmup.Seconds(), Duration: r.o.Duration.Seconds(), Started: r.t0.UTC(),
	}

	if r.o.Rate > 0 {
		res.Loop, res.Rate, res.Arrivals = "open", r.o.Rate, string(r.o.Arrivals)
		r.sched = newSchedule(newPacer(r.o.Arrivals, r.o.Rate, r.o.Seed))
		// A worker may wait for its arrival in a raw sleep, keeping its
		// thread and P, when every worker has a P of its own (the
		// blocking transport reserves them): no trip through Go's
		// scheduler per event.
		r.rawSleep = runtime.GOMAXPROCS(0) > r.n
	}

	col := newCollector(r)
	colDone := make(chan struct{})
	go func() { col.loop(ctx); close(colDone) }()

	if r.o.Mux != nil {
		if err := r.o.Mux.Run(ctx, len(workers), func(ctx context.Context, i int) { r.work(ctx, i, workers[i], end) }); err != nil {
			r.fail(err)
		}
	} else {
		var wg sync.WaitGroup
		for i, wk := range workers {
			wg.Go(func() { r.work(ctx, i, wk, end) })
		}
		wg.Wait()
	}
	ended := time.Now()
	closeWindow()
	close(r.flush)
	<-colDone

	res.Ended = ended.UTC()
	res.Samples = col.samples
	t := &res.Totals
	*t = col.totals
	t.MaxBacklog = r.maxBack.Load()
	window := 0.0 // the measured window's seconds, for the connections' rates
	if ended.After(r.mt0) {
		t.Seconds = ended.Sub(r.mt0).Seconds()
		window = t.Seconds
		switch {
		case end.IsZero() || ended.Before(end):
			res.Duration = t.Seconds
		case r.keepInFlight():
			// Until the last event in flight at the end completed: the
			// time its events took (keepInFlight).
			window = r.o.Duration.Seconds()
		default:
			t.Seconds = r.o.Duration.Seconds()
			window = t.Seconds
		}
	}
	if t.Seconds > 0 {
		t.TPS = float64(t.Events) / t.Seconds
		t.QPS = float64(t.Statements) / t.Seconds
		t.RowsPerSec = float64(t.Rows) / t.Seconds
	}
	for i := range t.Ops {
		if t.Seconds > 0 {
			t.Ops[i].Rate = float64(t.Ops[i].Count) / t.Seconds
		}
	}

	if r.scheduled == 0 && window > 0 && len(col.samples) > 0 {
		t.Figures = Fairness(col.workerTotal, window, col.starvedMax)
	}
	if col.overrun > 0 {
		if t.Figures == nil {
			t.Figures = map[string]float64{}
		}
		t.Figures[FigureInFlight] = float64(col.overrun)
	}
	f := fairness{perWorker: col.workerTotal, starvedMax: col.starvedMax, seconds: window}
	res.Status = result.OK
	if r.o.Rate > 0 {
		v := sustained(r.o.Rate, t, res.Samples)
		res.Verdicts = append(res.Verdicts, v)
		if !v.OK {
			res.Status = result.Saturated
		}
	}
	r.failMu.Lock()
	err := r.failErr
	r.failMu.Unlock()
	switch {
	case err != nil:
		res.Status, res.Error = result.Failed, err.Error()
	case parent.Err() != nil:
		err = parent.Err()
		res.Status, res.Error = result.Aborted, "interrupted"
	}
	return res, f, err
}

// Fairness are the figures of how evenly the connections were served
// (the seeds' thread-pool question): per connection, the events it
// completed per second of the window (min, p5, median, max); Jain's
// fairness index of those rates (jain); the connections that completed
// nothing in the whole window ("starved"), and the most that completed
// nothing in one second ("starved_1s").
func Fairness(perWorker []int64, seconds float64, starvedMax int) map[string]float64 {
	n := len(perWorker)
	if n == 0 || seconds <= 0 {
		return nil
	}
	rates := make([]float64, n)
	starved := 0
	for i, e := range perWorker {
		rates[i] = float64(e) / seconds
		if e == 0 {
			starved++
		}
	}
	jain, ok := Jain(perWorker)
	sort.Float64s(rates)
	// The p-th percentile by nearest rank: the ceil(p·n)-th smallest.
	pick := func(p float64) float64 { return rates[max(0, int(math.Ceil(p*float64(n)))-1)] }
	f := map[string]float64{
		"conn/s.min": rates[0], "conn/s.p5": pick(0.05), "conn/s.median": median(rates), "conn/s.max": rates[n-1],
		"starved": float64(starved), "starved_1s": float64(starvedMax),
	}
	if ok {
		f["jain"] = jain
	}
	return f
}

// Jain is Jain's fairness index of the connections' event counts,
// (Σx)² / (n·Σx²): 1 when all are equal, 1/n when one got everything;
// false when none completed anything. It is computed in the
// better-conditioned form 1 / (1 + s²/m²), with m the mean and s² the
// variance about it (the same quantity: n·Σx² = (Σx)² + n²·s²), so that
// equal counts give exactly 1 (their deviations are exactly 0) and
// rounding cannot take it above 1; the result is then kept within
// [1/n, 1], the index's range, which the registered figure's bounds check
// (a results file holding 1.0000000000000002 would be refused).
func Jain(counts []int64) (float64, bool) {
	n := float64(len(counts))
	var sum float64
	for _, c := range counts {
		sum += float64(c)
	}
	if len(counts) == 0 || sum <= 0 {
		return 0, false
	}
	m := sum / n
	var ss float64
	for _, c := range counts {
		d := float64(c) - m
		ss += d * d
	}
	j := 1 / (1 + ss/n/(m*m))
	return min(max(j, 1/n), 1), true
}

// median of sorted values.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// growingFor is how many closing seconds of growing backlog say that an
// open-loop run was falling behind when it ended.
const growingFor = 3

// sustained judges an open-loop run: it sustained its target rate if it
// achieved at least result.SustainedShare of it and its backlog was not
// still growing over its last growingFor seconds.
func sustained(rate float64, t *result.Totals, samples []result.Sample) result.Verdict {
	v := result.Verdict{Name: "sustained rate", OK: true}
	achieved := t.TPS
	v.Detail = fmt.Sprintf("target %.0f/s, achieved %.0f/s (%.1f%%), %d late, backlog up to %d", rate, achieved, 100*achieved/rate, t.Late, t.MaxBacklog)
	if achieved < result.SustainedShare*rate {
		v.OK = false
	}
	if n := len(samples); n > growingFor {
		growing := true
		for i := n - growingFor; i < n; i++ {
			growing = growing && samples[i].Backlog > samples[i-1].Backlog
		}
		if growing && samples[n-1].Backlog > max(10, int64(rate/100)) {
			v.OK = false
			v.Detail += fmt.Sprintf(", still growing at the end (%d queued)", samples[n-1].Backlog)
		}
	}
	return v
}

// noteBacklog records the open loop's backlog (arrivals due that no
// worker has taken); reaching MaxBacklog means the server (or the worker
// count) cannot keep up: the run ends, counted and said.
func (r *runner) noteBacklog(b int) bool {
	r.backlog.Store(int64(b))
	for m := r.maxBack.Load(); int64(b) > m && !r.maxBack.CompareAndSwap(m, int64(b)); m = r.maxBack.Load() {
	}
	if b > r.o.MaxBacklog {
		r.fail(fmt.Errorf("open loop backlog reached %d queued events at %.0f events/s: the server or %d threads cannot keep up; lower --rate, add --threads or raise --max-backlog", r.o.MaxBacklog, r.o.Rate, r.n))
		return false
	}
	return true
}

// sleepUntil waits until t or until ctx ends.
func (r *runner) sleepUntil(ctx context.Context, t time.Time, timer **time.Timer) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	if d <= spinBelow {
		// Due within a sleep's own cost: wait on the clock (vDSO, no
		// system call) rather than pay a sleep and a wake-up for it.
		for time.Now().Before(t) {
		}
		return
	}
	if r.o.Mux != nil && r.o.Mux.SleepUntil(ctx, t) {
		return
	}
	if r.rawSleep {
		for ctx.Err() == nil {
			d := time.Until(t)
			if d <= 0 {
				return
			}
			rawSleep(min(d, rawSleepMax))
		}
		return
	}
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	select {
	case <-ctx.Done():
	case <-(*timer).C:
	}
}

// spinBelow is the wait under which an open-loop worker spins on the
// clock instead of sleeping: a sleep and its wake-up cost about 7–9 µs of
// CPU on the 2-core VM this was measured on (a raw nanosleep of 5–100 µs,
// 20,000 times), so a shorter wait costs less spun than slept, and starts
// on time, where a sleep ends up to the thread's timer slack (50 µs) late.
const spinBelow = 8 * time.Microsecond

// rawSleepMax bounds one raw sleep: a garbage collection, which must stop
// every P, waits for it (as for the blocking transport's raw poll).
const rawSleepMax = 50 * time.Millisecond

// rawSleep is nanosleep(2) without the runtime's entersyscall/exitsyscall
// (see client's rawRead): the thread keeps its P.
func rawSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// work is one worker's loop.
func (r *runner) work(ctx context.Context, id int, wk Worker, end time.Time) {
	var cur *secData
	flush := func(doneUpTo int) {
		if cur != nil {
			r.flush <- cur
			cur = nil
		}
		r.done[id].Store(int64(doneUpTo))
	}
	defer func() { flush(1 << 40) }()
	sch, _ := wk.(Scheduler)
	var timer *time.Timer // open loop's, reused

	for {
		if ctx.Err() != nil {
			return
		}
		var intended time.Time
		if sch != nil {
			// Before waiting for its next intended start, send what it holds
			// of earlier seconds and promise nothing more for them; this
			// second's data stays until the next event (at most the
			// schedule's gap later), so a paced worker flushes once a
			// second, not once an event.
			if s := r.sec(time.Now()); cur != nil && cur.sec < s {
				flush(s - 1)
			} else if cur == nil && r.done[id].Load() < int64(s-1) {
				r.done[id].Store(int64(s - 1))
			}
			at, more := sch.Next(ctx)
			if !more {
				if r.schedLeft.Add(-1) == 0 && r.o.UntilScheduled && ctx.Err() == nil {
					r.cancel() // the scheduled work is done: the run ends as planned
				}
				return
			}
			intended = at
		} else if r.sched != nil {
			// Before waiting for an arrival, send what it holds of earlier
			// seconds and promise nothing more for them. This second's data
			// is parked where the collector can take it if the wait
			// outlasts the second: an open-loop worker flushes once a
			// second, not once an event (each flush takes histograms from
			// the pool and resets them, hundreds of KB).
			now := time.Now()
			if s := r.sec(now); cur != nil && cur.sec < s {
				flush(s - 1)
			} else if cur == nil && r.done[id].Load() < int64(s-1) {
				r.done[id].Store(int64(s - 1))
			}
			at, backlog := r.sched.claim(now.Sub(r.t0), r.o.MaxBacklog)
			if !r.noteBacklog(backlog) {
				return
			}
			intended = r.t0.Add(at)
			last := !end.IsZero() && !intended.Before(end)
			if last {
				// No arrival is due before the end: wait for the end
				// itself, so that the measured window is whole.
				intended = end
			}
			if intended.After(now) {
				r.park(id, cur)
				r.sleepUntil(ctx, intended, &timer)
				cur = r.unpark(id)
			}
			if last || ctx.Err() != nil {
				return
			}
		}
		start := time.Now()
		if !end.IsZero() && !start.Before(end) {
			return
		}
		if r.sched == nil && sch == nil {
			intended = start
		}
		// An event count is claimed before each measured event starts, not
		// counted after it ends: exactly Events events run in the window,
		// and none is cut short by a cancellation (a slice that writes
		// leaves every server's tables alike, and its connections usable).
		claimed := r.o.Events > 0 && !start.Before(r.mt0)
		if claimed && r.claimed.Add(1) > r.o.Events {
			return
		}
		// Data of an earlier second would otherwise wait in this worker for
		// as long as the coming event takes.
		if s := r.sec(start); cur != nil && cur.sec < s {
			flush(s - 1)
		} else if cur == nil && s > 0 && r.done[id].Load() < int64(s-1) {
			r.done[id].Store(int64(s - 1))
		}
		out, err := wk.Event(ctx)
		stop := time.Now()
		if r.o.Mux != nil {
			if t, ok := r.o.Mux.Completed(ctx); ok && t.After(start) && t.Before(stop) {
				stop = t
			}
		}
		s := r.sec(stop)
		if err != nil && ctx.Err() != nil {
			return // cancelled mid-event: not an event
		}
		overran := false
		if !end.IsZero() && !stop.Before(end) {
			if !r.keepInFlight() || err != nil {
				return // ended after the measured window: not counted in it
			}
			// In flight at the end of a window nothing was in flight at
			// the start of: counted, with the time it took (keepInFlight).
			overran = true
		}
		if s >= 0 && (cur == nil || cur.sec != s) {
			flush(s - 1)
			cur = newSecData(s)
			cur.worker = id
		}
		if cur != nil && out.Retries > 0 {
			cur.errors += int64(out.Retries)
			cur.retries += int64(out.Retries)
			if out.Kind != "" {
				cur.op(out.Kind).errors += int64(out.Retries)
			}
		}
		if err != nil {
			class := r.classify(err)
			if cur != nil {
				cur.errors++
				if out.Kind != "" {
					cur.op(out.Kind).errors++
				}
				if s >= 0 {
					cur.parts(out.Parts, !r.closed())
				}
			}
			if r.o.RetryErrors && class == Retryable {
				if cur != nil {
					cur.retries++
				}
				if claimed {
					r.claimed.Add(-1) // the retry is the same event
				}
				continue
			}
			if class == ConnectionLost {
				r.fail(fmt.Errorf("worker %d lost its connection: %w", id, err))
			} else {
				r.fail(fmt.Errorf("worker %d: %w", id, err))
			}
			return
		}
		if s < 0 {
			continue // warmup
		}
		cur.events++
		if overran {
			cur.overrun++
		}
		cur.stmts += int64(out.Statements)
		cur.rows += out.Rows
		svc, resp := us(stop.Sub(start)), us(stop.Sub(intended))
		both := !r.closed()
		cur.record(svc, resp, both)
		if out.Kind != "" {
			op := cur.op(out.Kind)
			op.count++
			op.record(svc, resp, both)
		}
		cur.parts(out.Parts, both)
		if start.Sub(intended) > lateThreshold {
			cur.late++
		}
	}
}

// waiting marks a worker that waits for an arrival holding no data.
var waiting = &secData{sec: -1 << 40}

// park says that worker id waits for an arrival, holding d (nil for none).
// While it waits, the collector may take d (finalizing its second) and
// leave waiting in its place.
func (r *runner) park(id int, d *secData) {
	if d == nil {
		d = waiting
	}
	r.held[id].Store(d)
}

// unpark ends the wait and returns what the worker still holds: its parked
// data, or nil if the collector took it.
func (r *runner) unpark(id int) *secData {
	d := r.held[id].Swap(nil)
	if d == waiting {
		return nil
	}
	return d
}

type noWindow struct{}

func (noWindow) Open()  {}
func (noWindow) Close() {}
