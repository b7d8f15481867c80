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
	svc, resp := newHist(), newHist()
	ops := map[string]*[2]*hdrhistogram.Histogram{}
	var kinds []string
	opCount := map[string][2]int64{}
	closed := true
	var perWorker []int64
	starved := 0
	status := result.OK
	next := 0 // the next sample's number
	for _, p := range parts {
		pt := p.Totals
		t.Seconds += pt.Seconds
		t.Events += pt.Events
		t.Statements += pt.Statements
		t.Rows += pt.Rows
		t.Errors += pt.Errors
		t.Retries += pt.Retries
		t.Late += pt.Late
		t.MaxBacklog = max(t.MaxBacklog, pt.MaxBacklog)
		out.Duration += p.Duration
		mergeEncoded(svc, pt.ServiceHist)
		if len(pt.ResponseHist) > 0 {
			closed = false
			mergeEncoded(resp, pt.ResponseHist)
		} else {
			mergeEncoded(resp, pt.ServiceHist)
		}
		for _, o := range pt.Ops {
			h := ops[o.Kind]
			if h == nil {
				h = &[2]*hdrhistogram.Histogram{newHist(), newHist()}
				ops[o.Kind] = h
				kinds = append(kinds, o.Kind)
			}
			mergeEncoded(h[0], o.ServiceHist)
			if len(o.ResponseHist) > 0 {
				mergeEncoded(h[1], o.ResponseHist)
			} else {
				mergeEncoded(h[1], o.ServiceHist)
			}
			c := opCount[o.Kind]
			opCount[o.Kind] = [2]int64{c[0] + o.Count, c[1] + o.Errors}
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
		}
	}
	out.Status = status
	if out.Status == result.OK {
		out.Error = ""
	}
	t.Service, t.ServiceHist = summarize(svc), encode(svc)
	if closed {
		t.Response = t.Service
	} else {
		t.Response, t.ResponseHist = summarize(resp), encode(resp)
	}
	for _, k := range kinds {
		h := ops[k]
		ot := result.OpTotals{OpSample: result.OpSample{Kind: k, Count: opCount[k][0], Errors: opCount[k][1], Service: summarize(h[0]), ServiceHist: encode(h[0])}}
		if closed {
			ot.Response = ot.Service
		} else {
			ot.Response, ot.ResponseHist = summarize(h[1]), encode(h[1])
		}
		if t.Seconds > 0 {
			ot.Rate = float64(ot.Count) / t.Seconds
		}
		t.Ops = append(t.Ops, ot)
	}
	if t.Seconds > 0 {
		t.TPS = float64(t.Events) / t.Seconds
		t.QPS = float64(t.Statements) / t.Seconds
		t.RowsPerSec = float64(t.Rows) / t.Seconds
		if s.scheduled == 0 && perWorker != nil {
			t.Figures = Fairness(perWorker, t.Seconds, starved)
		}
	}
	return &out
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
