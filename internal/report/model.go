// Package report owns presenting conclusions: the comparison and the
// hardware tables in the terminal (colour on a TTY), Markdown, CSV, TSV,
// JSON and the reference's qps.abs / qps.rel TSV layout, and one
// self-contained HTML file with SVG charts. It formats what analysis
// computed and what the store holds; it computes no statistics of its own.
package report

import (
	"encoding/json"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
)

// Model is everything one report shows.
type Model struct {
	Title      string
	Generated  time.Time
	Comparison *analysis.Comparison   // BASE against OTHERS
	Metrics    []analysis.MetricTable // per test and thread count; may be empty
	Timelines  []Timeline             // per test and thread count; may be empty
	Hosts      []Host                 // the fingerprints of the hosts the labels ran on
	Configs    []Config               // each label's config, the base's first
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
