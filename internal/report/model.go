// Package report owns presenting conclusions: the comparison and the
// hardware tables in the terminal (colour on a TTY), Markdown, CSV, TSV,
// JSON and the reference's qps.abs / qps.rel TSV layout, and one
// self-contained HTML file with SVG charts. It formats what analysis
// computed and what the store holds; it computes no statistics of its own.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
)

// Model is everything one report shows.
type Model struct {
	Title      string
	Generated  time.Time
	Comparison *analysis.Comparison   // BASE against OTHERS
	Findings   analysis.Findings      // what its numbers say (findings.go)
	Steps      []StepSection          // the reference's step tables, for a suite run in steps
	Sweeps     []analysis.Sweep       // tests run at several thread counts (analysis.MinSweep)
	Tails      []analysis.TailWarning // tests whose tails a label's runs cannot be trusted for
	Metrics    []analysis.MetricTable // per test and thread count; may be empty
	Timelines  []Timeline             // per test and thread count; may be empty
	Hosts      []Host                 // the fingerprints of the hosts the labels ran on
	Configs    []Config               // each label's config, the base's first
	Stacks     []StackSection         // the runs' stacks (--pmp, --perf), per test; may be empty
}

// Timeline is one test at one thread count, a series per label (the latest
// ok run of that label).
type Timeline struct {
	Test    string
	Threads int
	Series  []Series
}

// Series is one run's per-second samples: throughput (the run's unit:
// statements/s, or events/s for scan) and p99 response time in ms. Index i is
// second i of the measured window; NaN where a second has no sample.
type Series struct {
	Label string
	Unit  string
	Rate  []float64
	P99Ms []float64
	// Rows are the rows written per second of a run whose events are of
	// several kinds and whose headline counts something else (the Insert
	// Benchmark's inserts beside its queries); nil otherwise.
	Rows []float64
	// Stalls are the seconds whose rate fell below result.StallFraction of
	// the median second; WriteKB the disk's write KB/s in each second of
	// the window (nil when the disk was not measured), to see a stall
	// beside the writes of the same seconds.
	Stalls  []int
	WriteKB []float64
}

// Host is one host fingerprint (qpslab host check's JSON) and the labels
// whose results ran on it.
type Host struct {
	Labels      []string
	Fingerprint json.RawMessage
}

// Config is one label's config: its name@hash and content.
type Config struct {
	Label, Name, Content string
}

// NewModel gathers what a report shows of sets (loaded with their
// samples) and their comparison: the per-op tables, each test's latest
// timeline per label, the hosts the runs ran on (hostID names a
// fingerprint) and each label's config (content looks a config id up; ""
// when unknown, as for imports).
func NewModel(sets []analysis.Set, cmp *analysis.Comparison, hostID func(json.RawMessage) (string, error), content func(configID string) string, now time.Time) Model {
	m := Model{Title: "qpslab: " + strings.Join(cmp.Others, ", ") + " against " + cmp.Base, Generated: now, Comparison: cmp}
	m.Metrics, _ = analysis.Metrics(sets, "") // no metrics (imports without sb.met) is not an error here
	m.Sweeps = analysis.Sweeps(sets)
	m.Tails = analysis.Tails(sets)
	m.Findings = analysis.FindingsFor(cmp, sets)
	m.Stacks = StackSections(sets)
	latest := make([]map[string]result.Run, len(sets))
	hosts := map[string]*Host{}
	var hostOrder []string
	for i, s := range sets {
		latest[i] = map[string]result.Run{}
		for _, r := range s.Runs {
			latest[i][fmt.Sprintf("%s/%d", r.Test, r.Threads)] = r // runs come oldest first
			if len(r.Host) == 0 {
				continue
			}
			id, err := hostID(r.Host)
			if err != nil {
				continue
			}
			if _, ok := hosts[id]; !ok {
				hosts[id] = &Host{Fingerprint: r.Host}
				hostOrder = append(hostOrder, id)
			}
			if hs := hosts[id]; len(hs.Labels) == 0 || hs.Labels[len(hs.Labels)-1] != s.Label {
				hs.Labels = append(hs.Labels, s.Label)
			}
		}
		if len(s.Runs) > 0 {
			last := s.Runs[len(s.Runs)-1]
			m.Configs = append(m.Configs, Config{Label: s.Label, Name: last.Config, Content: content(last.Config)})
		}
	}
	for _, id := range hostOrder {
		m.Hosts = append(m.Hosts, *hosts[id])
	}
	for _, row := range cmp.Rows {
		tl := Timeline{Test: row.Test, Threads: row.Threads}
		for i, s := range sets {
			r, ok := latest[i][fmt.Sprintf("%s/%d", row.Test, row.Threads)]
			if !ok || len(r.Samples) == 0 {
				continue
			}
			tl.Series = append(tl.Series, seriesOf(s.Label, r))
		}
		if len(tl.Series) > 0 {
			m.Timelines = append(m.Timelines, tl)
		}
	}
	return m
}

// seriesOf is a run's per-second headline rate and p99 response time.
func seriesOf(label string, r result.Run) Series {
	s := Series{Label: label, Unit: r.Totals.Series + "/s"}
	switch {
	case r.Totals.Series == "":
		s.Unit = result.SeriesStatements + "/s"
	case strings.HasPrefix(r.Totals.Series, "op:"):
		s.Unit = r.Totals.ReportedUnit // one kind's events: the headline's unit (queries/s)
	}
	n := r.Samples[len(r.Samples)-1].Second + 1
	s.Rate, s.P99Ms = make([]float64, n), make([]float64, n)
	for i := range s.Rate {
		s.Rate[i], s.P99Ms[i] = math.NaN(), math.NaN()
	}
	for _, smp := range r.Samples {
		if smp.Second < 0 || smp.Second >= n {
			continue
		}
		s.Rate[smp.Second] = smp.Rate(r.Totals.Series)
		s.P99Ms[smp.Second] = smp.Response.P99 / 1000
	}
	s.Stalls, _ = result.Stalls(r.Samples, r.Totals.Series, r.Totals.Seconds, result.StallFraction)
	if r.HW.Measured() && !r.HW.NoDisk && len(r.HW.Series) > 0 {
		s.WriteKB = make([]float64, n)
		for i := range s.WriteKB {
			s.WriteKB[i] = math.NaN()
		}
		for _, hs := range r.HW.Series {
			if i := int(hs.T); i >= 0 && i < n {
				s.WriteKB[i] = hs.WriteKB
			}
		}
	}
	if len(r.Totals.Ops) > 0 && r.Totals.Series != result.SeriesRows && r.Totals.Rows > 0 {
		s.Rows = make([]float64, n)
		for i := range s.Rows {
			s.Rows[i] = math.NaN()
		}
		for _, smp := range r.Samples {
			if smp.Second >= 0 && smp.Second < n {
				s.Rows[smp.Second] = float64(smp.Rows)
			}
		}
	}
	return s
}
