package result

import (
	"fmt"
	"math"
)

// ServerCounters are what the server counted over a run's measured window:
// the change of each counter of its global status (the MySQL family) or
// statistics views (PostgreSQL) between the window's first and last read,
// and the mean of each level sampled once a second (threads running).
// Values are raw: per-op figures divide them by the window's ops, its o/s
// over its seconds (internal/counters's CounterMetric).
type ServerCounters struct {
	Source  string         `json:"source"`  // "global status", "statistics views"
	Seconds float64        `json:"seconds"` // between the first and the last read
	Values  []CounterValue `json:"values"`  // the curated set in its order, then the others asked for
	Notes   []string       `json:"notes,omitempty"`
}

// CounterValue is one counter over the window.
type CounterValue struct {
	Name  string  `json:"name"` // lower case, as the server names it: innodb_buffer_pool_reads, blks_hit
	Unit  string  `json:"unit,omitempty"`
	Value float64 `json:"value"` // a counter's change; a level's mean
	// Level: a level sampled each second (Value is its mean), not a
	// counter; its metric is NAME.avg, not NAME/o.
	Level bool `json:"level,omitempty"`
	// Extra: not in the flavor's curated set (asked for with --counters);
	// tables show it only when asked.
	Extra bool `json:"extra,omitempty"`
}

// Counter returns the value named name, if the run recorded it.
func (s *ServerCounters) Counter(name string) (CounterValue, bool) {
	if s == nil {
		return CounterValue{}, false
	}
	for _, v := range s.Values {
		if v.Name == name {
			return v, true
		}
	}
	return CounterValue{}, false
}

// ClassServer are the server's own counters per op, its memory (RSS and
// PSS), and the levels it reports (threads running).
const ClassServer = "server"

// The suffixes of server counter metrics: NAME/o is a counter per op,
// NAME.avg a level's mean over the window.
const (
	CounterSuffix = "/o"
	LevelSuffix   = ".avg"
)

// MetricOfCounter is the metric name of a recorded counter: NAME/o or
// NAME.avg.
func MetricOfCounter(v CounterValue) string {
	if v.Level {
		return v.Name + LevelSuffix
	}
	return v.Name + CounterSuffix
}

// checkServer refuses counters no measurement gives.
func (s *ServerCounters) check() error {
	if s == nil {
		return nil
	}
	if math.IsNaN(s.Seconds) || math.IsInf(s.Seconds, 0) || s.Seconds < 0 {
		return fmt.Errorf("server counters: seconds is %v", s.Seconds)
	}
	for _, v := range s.Values {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || v.Value < 0 {
			return fmt.Errorf("server counter %s is %v: a measured figure is finite and not negative", v.Name, v.Value)
		}
	}
	return nil
}

// Stacks are one source's thread stacks of the server over a run's window,
// collapsed as poor man's profiler does (function names only, identical
// stacks counted).
type Stacks struct {
	// Source: "pmp", every thread's stack every Interval seconds (on and
	// off CPU), or "perf", on-CPU samples at 1/Interval Hz per CPU.
	Source   string  `json:"source"`
	Tool     string  `json:"tool"` // eu-stack, gdb, perf
	Interval float64 `json:"interval_s"`
	Captures int     `json:"captures"` // pmp: captures taken; perf: samples
	// PauseMs are the pmp captures' wall times, each an upper bound of how
	// long the server's threads were stopped: mean and largest.
	PauseMeanMs float64  `json:"pause_mean_ms,omitempty"`
	PauseMaxMs  float64  `json:"pause_max_ms,omitempty"`
	Stacks      []Stack  `json:"stacks"` // most samples first
	Notes       []string `json:"notes,omitempty"`
}

// Stack is one distinct stack and how many samples it had.
type Stack struct {
	// Frames are the functions from the outermost (the thread's start) to
	// the innermost, ";"-joined as flamegraph.pl's folded format has them.
	Frames string `json:"frames"`
	// State is the thread's state when captured (R running, S sleeping,
	// D in uninterruptible wait, …; "" where unknown).
	State string `json:"state,omitempty"`
	Count int64  `json:"count"`
}

// Samples is the number of samples of all stacks.
func (s Stacks) Samples() int64 {
	var n int64
	for _, x := range s.Stacks {
		n += x.Count
	}
	return n
}

// StacksOf returns the run's stacks of source ("pmp" or "perf").
func (r Run) StacksOf(source string) (Stacks, bool) {
	for _, s := range r.Stacks {
		if s.Source == source {
			return s, true
		}
	}
	return Stacks{}, false
}
