package engine

import (
	"fmt"
	"slices"
	"time"

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
	lat, kinds := newLatencies(), &kindSet{}
	var clientUs, clientOps float64
	status := result.OK
	for i, p := range parts {
		pt := p.Totals
		out.Threads += p.Threads
		out.Started = minTime(out.Started, p.Started)
		out.Ended = maxTime(out.Ended, p.Ended)
		out.Duration = max(out.Duration, p.Duration)
		t.Seconds = max(t.Seconds, pt.Seconds)
		addCounts(t, pt)
		t.MaxBacklog += pt.MaxBacklog
		t.Reported += pt.Reported
		lat.add(pt.ServiceHist, pt.ResponseHist)
		for _, o := range pt.Ops {
			kinds.add(o.OpSample)
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
	finishTotals(t, lat, kinds)
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

// mergeSeconds adds up each second of the parts: second s of every part
// began at the same time (the parts began together, within MaxSkew).
func mergeSeconds(parts []*result.Run) []result.Sample {
	type second struct {
		s     result.Sample
		lat   *latencies
		kinds kindSet
	}
	by := map[int]*second{}
	var order []int
	for _, p := range parts {
		for _, smp := range p.Samples {
			m := by[smp.Second]
			if m == nil {
				m = &second{s: result.Sample{Second: smp.Second}, lat: newLatencies()}
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
			m.lat.add(smp.ServiceHist, smp.ResponseHist)
			for _, o := range smp.Ops {
				m.kinds.add(o)
			}
		}
	}
	slices.Sort(order)
	out := make([]result.Sample, 0, len(order))
	for _, sec := range order {
		m := by[sec]
		s := m.s
		closed := !m.lat.open
		s.Service, s.ServiceHist, s.Response, s.ResponseHist = m.lat.out(closed)
		s.Ops = m.kinds.samples(closed)
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
