package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/qpslab/qpslab/internal/result"
)

// MaxSkew is how far apart the parts of a concurrent merge may have begun
// measuring: parts started further apart were not recorded at the same
// time, and their seconds would not add up.
const MaxSkew = time.Second

// MergeConcurrent makes one run of parts measured at the same time against
// one server, each from its own client host (hosts[i] is part i's): a
// test's load spread over several load generators. Unlike Session.Merge
// (slices of one session, one after another), the windows lie on top of
// each other: counts add up; each second's counts add up with the same
// second of every part, and its latencies come from the parts' HDR
// histograms of that second merged (never an average of percentiles);
// the totals' latencies from the parts' whole histograms merged; rates
// are the counts over the longest part's seconds; the threads are the
// parts' together. What the parts' hosts measured of themselves (their
// client CPU, their own rate and p99) is kept per part (Run.Parts), so a
// client host that was the limit shows. Fairness over the connections
// cannot be rebuilt from the parts and is left out.
//
// It refuses, merging nothing, a part that is missing, of another test or
// thread count role, or that began measuring more than MaxSkew from the
// others. The status is the worst part's, its error named by its host.
func MergeConcurrent(parts []*result.Run, hosts []string) (*result.Run, error) {
	if len(parts) == 0 || len(parts) != len(hosts) {
		return nil, fmt.Errorf("merge: %d parts from %d hosts", len(parts), len(hosts))
	}
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("merge: host %s's part is missing: nothing is merged", hosts[i])
		}
	}
	first := parts[0]
	for i, p := range parts[1:] {
		switch {
		case p.Test != first.Test || p.Suite != first.Suite:
			return nil, fmt.Errorf("merge: host %s ran %s %s and host %s %s %s: parts of one run run one test", hosts[0], first.Suite, first.Test, hosts[i+1], p.Suite, p.Test)
		case absDur(p.Started.Sub(first.Started)) > MaxSkew:
			return nil, fmt.Errorf("merge: host %s began measuring %s from host %s, more than %s: the parts were not recorded at the same time", hosts[i+1], p.Started.Sub(first.Started).Round(time.Millisecond), hosts[0], MaxSkew)
		}
	}
	out := *first
	out.Samples, out.Verdicts, out.Parts = nil, nil, nil
	out.Threads = 0
	t := &out.Totals
	*t = result.Totals{ReportedUnit: first.Totals.ReportedUnit, Series: first.Totals.Series}
	svc, resp := newHist(), newHist()
	ops := map[string]*opMerge{}
	var kinds []string
	closed := true
	var clientUs, clientOps float64
	status := result.OK
	for i, p := range parts {
		pt := p.Totals
		out.Threads += p.Threads
		out.Started = minTime(out.Started, p.Started)
		out.Ended = maxTime(out.Ended, p.Ended)
		out.Duration = max(out.Duration, p.Duration)
		t.Seconds = max(t.Seconds, pt.Seconds)
		t.Events += pt.Events
		t.Statements += pt.Statements
		t.Rows += pt.Rows
		t.Errors += pt.Errors
		t.Retries += pt.Retries
		t.Late += pt.Late
		t.MaxBacklog += pt.MaxBacklog
		t.Reported += pt.Reported
		mergeEncoded(svc, pt.ServiceHist)
		if len(pt.ResponseHist) > 0 {
			closed = false
			mergeEncoded(resp, pt.ResponseHist)
		} else {
			mergeEncoded(resp, pt.ServiceHist)
		}
		for _, o := range pt.Ops {
			m := ops[o.Kind]
			if m == nil {
				m = &opMerge{svc: newHist(), resp: newHist()}
				ops[o.Kind] = m
				kinds = append(kinds, o.Kind)
			}
			m.add(o.OpSample)
		}
		part := result.Part{Host: hosts[i], Threads: p.Threads, Events: pt.Events, Statements: pt.Statements,
			Seconds: pt.Seconds, Reported: pt.Reported, P99: pt.Service.P99, Status: p.Status, Error: p.Error, NoClientCPU: true}
		if p.HW.Measured() && !p.HW.NoCPUTime {
			part.ClientCPUUsOp, part.ClientCPU, part.NoClientCPU = p.HW.ClientCPUUsOp, p.HW.Avg.ClientCPU, false
			clientUs += p.HW.ClientCPUUsOp * p.HW.OpsPerSec
			clientOps += p.HW.OpsPerSec
		}
		out.Parts = append(out.Parts, part)
		if worse(p.Status, status) {
			status = p.Status
		}
		if out.Error == "" && p.Error != "" {
			out.Error = hosts[i] + ": " + p.Error
		}
		out.Verdicts = append(out.Verdicts, p.Verdicts...)
	}
	out.Status = status
	if status == result.OK {
		out.Error = ""
	}
	out.Samples = mergeSeconds(parts)
	t.Service, t.ServiceHist = summarize(svc), encode(svc)
	if closed {
		t.Response = t.Service
	} else {
		t.Response, t.ResponseHist = summarize(resp), encode(resp)
	}
	for _, k := range kinds {
		t.Ops = append(t.Ops, ops[k].totals(k, closed, t.Seconds))
	}
	if t.Seconds > 0 {
		t.TPS = float64(t.Events) / t.Seconds
		t.QPS = float64(t.Statements) / t.Seconds
		t.RowsPerSec = float64(t.Rows) / t.Seconds
	}
	// The hardware: only the clients' CPU per op adds up over hosts (each
	// host's us, sy, cs and disk are its own); the server's host is not
	// one of them.
	out.HW = nil
	if first.HW != nil {
		hw := &result.HW{Op: first.HW.Op, OpsPerSec: t.Reported, Seconds: t.Seconds, Samples: first.HW.Samples, NoDisk: true,
			Remote: true, CPUs: first.HW.CPUs,
			Notes: []string{fmt.Sprintf("load from %d client hosts: each one's client CPU is in the run's parts; the server's host is measured only by an agent on it", len(parts))}}
		if clientOps > 0 {
			hw.ClientCPUUsOp = clientUs / clientOps
		} else {
			hw.NoCPUTime = true
		}
		out.HW = hw
	}
	return &out, nil
}

// opMerge is one operation kind's counts and histograms over parts.
type opMerge struct {
	count, errors int64
	svc, resp     *hdrhistogram.Histogram
	open          bool
}

func (m *opMerge) add(o result.OpSample) {
	m.count += o.Count
	m.errors += o.Errors
	mergeEncoded(m.svc, o.ServiceHist)
	if len(o.ResponseHist) > 0 {
		m.open = true
		mergeEncoded(m.resp, o.ResponseHist)
	} else {
		mergeEncoded(m.resp, o.ServiceHist)
	}
}

func (m *opMerge) sample(k string, closed bool) result.OpSample {
	o := result.OpSample{Kind: k, Count: m.count, Errors: m.errors, Service: summarize(m.svc), ServiceHist: encode(m.svc)}
	if closed {
		o.Response = o.Service
	} else {
		o.Response, o.ResponseHist = summarize(m.resp), encode(m.resp)
	}
	return o
}

func (m *opMerge) totals(k string, closed bool, seconds float64) result.OpTotals {
	ot := result.OpTotals{OpSample: m.sample(k, closed)}
	if seconds > 0 {
		ot.Rate = float64(ot.Count) / seconds
	}
	return ot
}

// mergeSeconds adds up each second of the parts: second s of every part
// began at the same time (the parts began together, within MaxSkew).
func mergeSeconds(parts []*result.Run) []result.Sample {
	type second struct {
		s         result.Sample
		svc, resp *hdrhistogram.Histogram
		open      bool
		ops       map[string]*opMerge
		kinds     []string
	}
	by := map[int]*second{}
	var order []int
	for _, p := range parts {
		for _, smp := range p.Samples {
			m := by[smp.Second]
			if m == nil {
				m = &second{s: result.Sample{Second: smp.Second}, svc: newHist(), resp: newHist(), ops: map[string]*opMerge{}}
				by[smp.Second] = m
				order = append(order, smp.Second)
			}
			s := &m.s
			s.Events += smp.Events
			s.Statements += smp.Statements
			s.Rows += smp.Rows
			s.Errors += smp.Errors
			s.Retries += smp.Retries
			s.Late += smp.Late
			s.Backlog += smp.Backlog
			s.Dur = max(s.Dur, smp.Dur)
			mergeEncoded(m.svc, smp.ServiceHist)
			if len(smp.ResponseHist) > 0 {
				m.open = true
				mergeEncoded(m.resp, smp.ResponseHist)
			} else {
				mergeEncoded(m.resp, smp.ServiceHist)
			}
			for _, o := range smp.Ops {
				om := m.ops[o.Kind]
				if om == nil {
					om = &opMerge{svc: newHist(), resp: newHist()}
					m.ops[o.Kind] = om
					m.kinds = append(m.kinds, o.Kind)
				}
				om.add(o)
			}
		}
	}
	slices.Sort(order)
	out := make([]result.Sample, 0, len(order))
	for _, sec := range order {
		m := by[sec]
		s := m.s
		s.Service, s.ServiceHist = summarize(m.svc), encode(m.svc)
		if m.open {
			s.Response, s.ResponseHist = summarize(m.resp), encode(m.resp)
		} else {
			s.Response = s.Service
		}
		for _, k := range m.kinds {
			s.Ops = append(s.Ops, m.ops[k].sample(k, !m.open))
		}
		out = append(out, s)
	}
	return out
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
