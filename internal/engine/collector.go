package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/qpslab/qpslab/internal/result"
)

// collector merges the workers' per-second data into samples. A second is
// final once every worker has promised to send nothing more for it (or
// waits for an open-loop arrival, its data of the second taken); then its histograms are summarised, encoded, merged into the totals
// and given back, so memory stays flat however long the run.
type collector struct {
	r       *runner
	pending map[int]*secData
	samples []result.Sample
	tot     *secData // the whole measured window
	totals  result.Totals
	// fairness between connections: each pending second's events per
	// worker, each worker's events over the window, and the seconds in
	// which the most workers completed nothing
	perWorker   map[int][]int64
	workerTotal []int64
	starvedMax  int
	overrun     int64 // events in flight at the window's end, counted (keepInFlight)
	// progress over the current report interval
	iv       *secData
	ivFrom   int
	lastLine time.Time
	// when a worker last sent completed events (Options.Guard)
	lastEvent time.Time
}

func newCollector(r *runner) *collector {
	return &collector{r: r, pending: map[int]*secData{}, tot: &secData{resp: newHist(), svc: newHist()}, iv: newSecHists(0),
		perWorker: map[int][]int64{}, workerTotal: make([]int64, r.n)}
}

func (c *collector) loop(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case d, ok := <-c.r.flush:
			if !ok {
				c.finalize(1 << 40)
				c.finish()
				return
			}
			c.add(d)
		case now := <-tick.C:
			// A run bounded by events fails when none completed for its
			// guard: each worker sends its events at least once a second
			// while it completes any.
			since := c.r.mt0
			if c.lastEvent.After(since) {
				since = c.lastEvent
			}
			if g := c.r.o.Guard; g > 0 && now.Sub(since) > g && ctx.Err() == nil {
				c.r.fail(fmt.Errorf("no event completed in %s: the server stopped answering", g))
			}
			// The backlog, while every worker may be busy; arrivals end
			// with the measured window.
			if c.r.sched != nil && (c.r.end.IsZero() || now.Before(c.r.end)) && ctx.Err() == nil {
				c.r.noteBacklog(c.r.sched.backlog(now.Sub(c.r.t0), c.r.o.MaxBacklog))
			}
			c.finalize(c.minDone())
		}
	}
}

// add takes a worker's data into its second's.
func (c *collector) add(d *secData) {
	if d.events > 0 {
		c.lastEvent = time.Now()
	}
	if d.worker >= 0 && d.worker < c.r.n {
		pw := c.perWorker[d.sec]
		if pw == nil {
			pw = make([]int64, c.r.n)
			c.perWorker[d.sec] = pw
		}
		// A connection's events in the window: one in flight at its end
		// (counted, keepInFlight) was not completed in it.
		pw[d.worker] += d.events - d.overrun
	}
	c.overrun += d.overrun
	p := c.pending[d.sec]
	if p == nil {
		p = newSecHists(d.sec)
		c.pending[d.sec] = p
	}
	p.merge(d)
	d.release()
}

// merge adds d's counts to a's, and d's times to a's histograms: a
// worker's values recorded one by one, a collector's histograms merged.
func (a *secData) merge(d *secData) {
	a.events += d.events
	a.stmts += d.stmts
	a.rows += d.rows
	a.errors += d.errors
	a.retries += d.retries
	a.late += d.late
	mergeTimes(a.svc, d.svc, d.svcV)
	mergeTimes(a.resp, d.resp, d.respV)
	for k, o := range d.ops {
		ao := a.op(k)
		ao.count += o.count
		ao.errors += o.errors
		mergeTimes(ao.svc, o.svc, o.svcV)
		mergeTimes(ao.resp, o.resp, o.respV)
	}
}

func mergeTimes(h, from *hdrhistogram.Histogram, values []uint32) {
	if from != nil {
		h.Merge(from)
	}
	for _, v := range values {
		h.RecordValue(int64(v))
	}
}

// kinds are d's event kinds, sorted.
func (d *secData) kinds() []string {
	ks := make([]string, 0, len(d.ops))
	for k := range d.ops {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// minDone is the last second no worker will send more data for.
func (c *collector) minDone() int {
	now := c.r.sec(time.Now()) - 1
	m := now
	for i := range c.r.done {
		// A worker waiting for an arrival: its next event ends after now,
		// and what it holds of a second to finalize is taken from it. If
		// it stopped waiting before it could be, it is a busy worker.
		if h := c.r.held[i].Load(); h != nil {
			if h == waiting || h.sec > m {
				continue
			}
			if c.r.held[i].CompareAndSwap(h, waiting) {
				c.add(h)
				continue
			}
		}
		if d := int(c.r.done[i].Load()); d < m {
			m = d
		}
	}
	// Everything sent before the workers' promises was sent before we read
	// them: take it in before finalizing.
	for {
		select {
		case d, ok := <-c.r.flush:
			if !ok {
				return m
			}
			c.add(d)
			continue
		default:
		}
		break
	}
	return m
}

func (c *collector) finalize(upTo int) {
	secs := make([]int, 0, len(c.pending))
	for s := range c.pending {
		if s <= upTo {
			secs = append(secs, s)
		}
	}
	sort.Ints(secs)
	for _, s := range secs {
		d := c.pending[s]
		delete(c.pending, s)
		closed := c.r.closed()
		smp := result.Sample{
			Second: s, Events: d.events, Statements: d.stmts, Rows: d.rows,
			Errors: d.errors, Retries: d.retries, Late: d.late,
			Service: summarize(d.svc), ServiceHist: encode(d.svc),
		}
		if !closed {
			smp.Backlog = c.r.backlog.Load()
		}
		if closed {
			smp.Response = smp.Service
		} else {
			smp.Response, smp.ResponseHist = summarize(d.resp), encode(d.resp)
		}
		for _, k := range d.kinds() {
			o := d.ops[k]
			os := result.OpSample{Kind: k, Count: o.count, Errors: o.errors, Service: summarize(o.svc), ServiceHist: encode(o.svc)}
			if closed {
				os.Response = os.Service
			} else {
				os.Response, os.ResponseHist = summarize(o.resp), encode(o.resp)
			}
			smp.Ops = append(smp.Ops, os)
		}
		pw := c.perWorker[s]
		delete(c.perWorker, s)
		starved := 0
		for i := range c.workerTotal {
			var n int64
			if pw != nil {
				n = pw[i]
			}
			c.workerTotal[i] += n
			if n == 0 {
				starved++
			}
		}
		// A second after the window holds only events that were in flight
		// at its end (keepInFlight): no connection's work in the window.
		if c.r.end.IsZero() || c.r.mt0.Add(time.Duration(s)*time.Second).Before(c.r.end) {
			c.starvedMax = max(c.starvedMax, starved)
		}
		c.samples = append(c.samples, smp)
		if c.r.o.OnSample != nil {
			c.r.o.OnSample(smp)
		}
		c.tot.merge(d)
		c.progress(d)
		d.release()
	}
}

// progress prints a line like sysbench's --report-interval every interval.
func (c *collector) progress(d *secData) {
	if c.r.o.Progress == nil {
		return
	}
	iv := int(c.r.o.ReportInterval / time.Second)
	if iv < 1 {
		iv = 1
	}
	c.iv.events += d.events
	c.iv.stmts += d.stmts
	c.iv.errors += d.errors
	if c.r.closed() { // response time is service time, and only service time is kept
		c.iv.resp.Merge(d.svc)
	} else {
		c.iv.resp.Merge(d.resp)
	}
	if (d.sec+1)%iv != 0 {
		return
	}
	secs := float64(d.sec + 1 - c.ivFrom)
	var b strings.Builder
	// Which latency: in closed loop response and service time are one; in
	// open loop the line shows the response time, from each event's
	// intended start, which includes the wait in the backlog.
	which := "latency"
	if !c.r.closed() {
		which = "response (from intended start)"
	}
	fmt.Fprintf(&b, "[ %ds ] thds: %d tps: %.2f qps: %.2f %s ms p95: %.2f p99: %.2f err/s: %.2f",
		d.sec+1, c.r.n, float64(c.iv.events)/secs, float64(c.iv.stmts)/secs, which,
		float64(c.iv.resp.ValueAtQuantile(95))/1000, float64(c.iv.resp.ValueAtQuantile(99))/1000, float64(c.iv.errors)/secs)
	if c.r.o.Rate > 0 {
		fmt.Fprintf(&b, " target: %.0f/s backlog: %d", c.r.o.Rate, c.r.backlog.Load())
	}
	c.r.o.Progress(b.String())
	c.ivFrom = d.sec + 1
	c.iv.events, c.iv.stmts, c.iv.errors = 0, 0, 0
	c.iv.resp.Reset()
}

func (c *collector) finish() {
	d, t := c.tot, &c.totals
	t.Events, t.Statements, t.Rows = d.events, d.stmts, d.rows
	t.Errors, t.Retries, t.Late = d.errors, d.retries, d.late
	t.Service, t.ServiceHist = summarize(d.svc), encode(d.svc)
	if c.r.closed() {
		t.Response = t.Service
	} else {
		t.Response, t.ResponseHist = summarize(d.resp), encode(d.resp)
	}
	for _, k := range d.kinds() {
		o := d.ops[k]
		ot := result.OpTotals{OpSample: result.OpSample{Kind: k, Count: o.count, Errors: o.errors, Service: summarize(o.svc), ServiceHist: encode(o.svc)}}
		if c.r.closed() {
			ot.Response = ot.Service
		} else {
			ot.Response, ot.ResponseHist = summarize(o.resp), encode(o.resp)
		}
		t.Ops = append(t.Ops, ot)
	}
}

func summarize(h *hdrhistogram.Histogram) result.Latency {
	if h.TotalCount() == 0 {
		return result.Latency{}
	}
	return result.Latency{
		Count: h.TotalCount(), Min: float64(h.Min()), Mean: h.Mean(),
		P50: float64(h.ValueAtQuantile(50)), P90: float64(h.ValueAtQuantile(90)), P95: float64(h.ValueAtQuantile(95)),
		P99: float64(h.ValueAtQuantile(99)), P999: float64(h.ValueAtQuantile(99.9)), Max: float64(h.Max()),
	}
}

func encode(h *hdrhistogram.Histogram) []byte {
	if h.TotalCount() == 0 {
		return nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil
	}
	return b
}
