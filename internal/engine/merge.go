package engine

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/qpslab/qpslab/internal/result"
)

// Merge makes one run of parts, runs of the session in the order they ran
// (a test's slices on one server): their measured windows laid end to end.
// Counts add up; rates are over the sum of the windows' seconds; the
// latency summaries come from the parts' HDR histograms merged; the
// samples follow each other, renumbered (a slice shorter than a second
// gives one partial second); fairness is over each worker's events in all
// the parts. The status is the worst of the parts' (failed, aborted,
// saturated, ok) with the first error. Parts the session did not return
// add their counts but nothing to fairness.
func (s *Session) Merge(parts []*result.Run) *result.Run {
	if len(parts) == 0 {
		return nil
	}
	first, last := parts[0], parts[len(parts)-1]
	out := *first
	out.Ended = last.Ended
	out.Samples, out.Verdicts = nil, nil
	out.Duration = 0
	t := &out.Totals
	*t = result.Totals{}
	lat, kinds := newLatencies(), &kindSet{}
	var perWorker []int64
	starved := 0
	window, inFlight := 0.0, 0.0 // the fairness windows' seconds; the events in flight at their ends
	status := result.OK
	next := 0 // the next sample's number
	for _, p := range parts {
		pt := p.Totals
		t.Seconds += pt.Seconds
		addCounts(t, pt)
		t.MaxBacklog = max(t.MaxBacklog, pt.MaxBacklog)
		out.Duration += p.Duration
		lat.add(pt.ServiceHist, pt.ResponseHist)
		for _, o := range pt.Ops {
			kinds.add(o.OpSample)
		}
		top := next
		for _, smp := range p.Samples {
			// The last second of a slice is cut short by its end.
			if left := pt.Seconds - float64(smp.Second); left > 0 && left < 1 {
				smp.Dur = left
			}
			smp.Second += next
			out.Samples = append(out.Samples, smp)
			top = max(top, smp.Second+1)
		}
		next = top
		out.Verdicts = append(out.Verdicts, p.Verdicts...)
		if worse(p.Status, status) {
			status = p.Status
		}
		if out.Error == "" && p.Error != "" {
			out.Error = p.Error
		}
		s.mu.Lock()
		f, ok := s.fair[p]
		s.mu.Unlock()
		if ok {
			if perWorker == nil {
				perWorker = make([]int64, len(f.perWorker))
			}
			for i, n := range f.perWorker {
				if i < len(perWorker) {
					perWorker[i] += n
				}
			}
			starved = max(starved, f.starvedMax)
			window += f.seconds
		}
		inFlight += pt.Figures[FigureInFlight]
	}
	out.Status = status
	if out.Status == result.OK {
		out.Error = ""
	}
	finishTotals(t, lat, kinds)
	if window > 0 && s.scheduled == 0 && perWorker != nil {
		t.Figures = Fairness(perWorker, window, starved)
	}
	if inFlight > 0 {
		if t.Figures == nil {
			t.Figures = map[string]float64{}
		}
		t.Figures[FigureInFlight] = inFlight
	}
	return &out
}

// addCounts adds pt's counts to t (not its seconds, backlog or headline,
// which a merge of slices and one of concurrent parts add differently).
func addCounts(t *result.Totals, pt result.Totals) {
	t.Events += pt.Events
	t.Statements += pt.Statements
	t.Rows += pt.Rows
	t.Errors += pt.Errors
	t.Retries += pt.Retries
	t.Late += pt.Late
}

// finishTotals sets t's latencies and per-kind figures from what was
// merged, and its rates over t.Seconds.
func finishTotals(t *result.Totals, lat *latencies, kinds *kindSet) {
	closed := !lat.open
	t.Service, t.ServiceHist, t.Response, t.ResponseHist = lat.out(closed)
	t.Ops = kinds.totals(closed, t.Seconds)
	if t.Seconds > 0 {
		t.TPS = float64(t.Events) / t.Seconds
		t.QPS = float64(t.Statements) / t.Seconds
		t.RowsPerSec = float64(t.Rows) / t.Seconds
	}
}

// latencies merges HDR histograms of service times and, in open loop, of
// response times (a part without its own counts its service times).
type latencies struct {
	svc, resp *hdrhistogram.Histogram
	open      bool // a part had response times of its own
}

func newLatencies() *latencies { return &latencies{svc: newHist(), resp: newHist()} }

func (l *latencies) add(svc, resp []byte) {
	mergeEncoded(l.svc, svc)
	if len(resp) > 0 {
		l.open = true
		mergeEncoded(l.resp, resp)
	} else {
		mergeEncoded(l.resp, svc)
	}
}

// out is the merged service and response latencies and histograms; in a
// closed loop the response is the service, with no histogram of its own.
func (l *latencies) out(closed bool) (svc result.Latency, svcHist []byte, resp result.Latency, respHist []byte) {
	svc, svcHist = summarize(l.svc), encode(l.svc)
	if closed {
		return svc, svcHist, svc, nil
	}
	return svc, svcHist, summarize(l.resp), encode(l.resp)
}

// kindSet merges the per-kind figures of runs or seconds, the kinds in
// the order they first appear.
type kindSet struct {
	by    map[string]*kindMerge
	order []string
}

type kindMerge struct {
	count, errors int64
	lat           *latencies
}

func (k *kindSet) add(o result.OpSample) {
	m := k.by[o.Kind]
	if m == nil {
		if k.by == nil {
			k.by = map[string]*kindMerge{}
		}
		m = &kindMerge{lat: newLatencies()}
		k.by[o.Kind] = m
		k.order = append(k.order, o.Kind)
	}
	m.count += o.Count
	m.errors += o.Errors
	m.lat.add(o.ServiceHist, o.ResponseHist)
}

func (k *kindSet) samples(closed bool) []result.OpSample {
	var out []result.OpSample
	for _, kind := range k.order {
		m := k.by[kind]
		o := result.OpSample{Kind: kind, Count: m.count, Errors: m.errors}
		o.Service, o.ServiceHist, o.Response, o.ResponseHist = m.lat.out(closed)
		out = append(out, o)
	}
	return out
}

func (k *kindSet) totals(closed bool, seconds float64) []result.OpTotals {
	var out []result.OpTotals
	for _, o := range k.samples(closed) {
		ot := result.OpTotals{OpSample: o}
		if seconds > 0 {
			ot.Rate = float64(o.Count) / seconds
		}
		out = append(out, ot)
	}
	return out
}

// worse says whether status a is worse than b: failed, aborted,
// saturated, ok.
func worse(a, b string) bool {
	rank := func(s string) int {
		switch s {
		case result.Failed:
			return 3
		case result.Aborted:
			return 2
		case result.Saturated:
			return 1
		}
		return 0
	}
	return rank(a) > rank(b)
}

// mergeEncoded adds an encoded histogram's counts to h; one that does not
// decode adds nothing.
func mergeEncoded(h *hdrhistogram.Histogram, b []byte) {
	if len(b) == 0 {
		return
	}
	d, err := hdrhistogram.Decode(b)
	if err != nil {
		return
	}
	h.Merge(d)
}
