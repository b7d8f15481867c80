package result

import "sort"

// StallFraction is what a second's rate must fall below, as a share of the
// run's median per-second rate, to count as a stall (the seeds' "checkpoint
// blues": seconds where throughput falls to nearly zero).
const StallFraction = 0.10

// Stalls finds the stalled seconds of a run: the whole seconds of its
// measured window (seconds without a sample count as zero) whose count of
// what the headline follows (series) is below frac of the median second.
// It returns the stalled seconds, in order, and the longest run of
// consecutive ones. A window shorter than 3 s has none: there is no median
// to speak of.
func Stalls(samples []Sample, series string, seconds, frac float64) (stalled []int, longest int) {
	n := int(seconds)
	for _, s := range samples {
		// A run of slices numbers its samples one after the other, those
		// shorter than a second with their length: each counts.
		if s.Dur > 0 && s.Second >= n {
			n = s.Second + 1
		}
	}
	if n < 3 {
		return nil, 0
	}
	per := make([]float64, n)
	for _, s := range samples {
		if s.Second >= 0 && s.Second < n {
			per[s.Second] = s.Rate(series)
		}
	}
	sorted := append([]float64{}, per...)
	sort.Float64s(sorted)
	med := sorted[n/2]
	if n%2 == 0 {
		med = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	if med <= 0 {
		return nil, 0
	}
	run := 0
	for i, v := range per {
		if v < frac*med {
			stalled = append(stalled, i)
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return stalled, longest
}

// FigureCatalog are the metrics every run may have beyond the catalogue's
// (Totals.Figures): its stalls, and the fairness between its connections.
// They follow Catalog in tables.
var FigureCatalog = []Metric{
	{Name: "stalls", Unit: "s", Per: "run", Class: ClassFigure, Verb: "%.0f", Of: figure("stalls"),
		Help: "seconds whose rate fell below 10 % of the run's median second"},
	{Name: "stall_max", Header: "longest stall", Unit: "s", Per: "run", Class: ClassFigure, Verb: "%.0f", Of: figure("stall_max"),
		Help: "the longest run of consecutive stalled seconds"},
	{Name: "jain", HigherIsBetter: true, Per: "run", Class: ClassFigure, Verb: "%.3f", Of: figure("jain"),
		Help: "Jain's fairness index of the connections' rates: 1 when all are served alike, 1/n when one gets everything"},
	{Name: "conn/s.min", Unit: "events/s", HigherIsBetter: true, Per: "connection", Class: ClassFigure, Verb: "%.1f", Of: figure("conn/s.min"),
		Help: "the slowest connection's events per second over the window"},
	{Name: "conn/s.p5", Unit: "events/s", HigherIsBetter: true, Per: "connection", Class: ClassFigure, Verb: "%.1f", Of: figure("conn/s.p5"),
		Help: "the 5th percentile of the connections' events per second"},
	{Name: "conn/s.median", Unit: "events/s", HigherIsBetter: true, Per: "connection", Class: ClassFigure, Verb: "%.1f", Of: figure("conn/s.median"),
		Help: "the median connection's events per second"},
	{Name: "conn/s.max", Unit: "events/s", HigherIsBetter: true, Per: "connection", Class: ClassFigure, Verb: "%.1f", Of: figure("conn/s.max"),
		Help: "the fastest connection's events per second"},
	{Name: "starved", Unit: "connections", Per: "run", Class: ClassFigure, Verb: "%.0f", Of: figure("starved"),
		Help: "connections that completed nothing in the whole window"},
	{Name: "starved_1s", Unit: "connections", Per: "s", Class: ClassFigure, Verb: "%.0f", Of: figure("starved_1s"),
		Help: "the most connections that completed nothing in one second"},
}
