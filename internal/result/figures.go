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
		med = Midpoint(sorted[n/2-1], sorted[n/2])
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
