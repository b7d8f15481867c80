package analysis

import (
	"math"
	"time"
)

// MinRepeats are the fewest repeats --repeat auto plans: an interval on
// repeats then has 5 degrees of freedom (a t quantile of 2.57; two
// repeats' 1 degree has 12.7).
const MinRepeats = 6

// Components are what a pool of tests varies by on this host, the inputs
// of a budget (Kalibera and Jones: the variance at each level of
// repetition): σ of one round's log ratio about its repeat's mean as the
// rounds' trimmed interval sees it (the σ of which its standard error is
// σ/√n: TestComponents), for slices of Slice, and σ of a repeat's own
// effect.
type Components struct {
	Within  float64       `json:"sigma_within"`
	Slice   time.Duration `json:"slice"`
	Between float64       `json:"sigma_between"`
	Source  string        `json:"source"` // where they come from, in words
}

// DefaultComponents are a pool's components where this host has stored
// none (qpslab keeps them from every comparison it runs: store
// VarianceComponents), measured on a 2-core VM with slices of a quarter
// second (docs/perf.md): round noise as the trimmed interval sees it of σ
// 0.1 for reads (the median of 12 read tests of an A/A run; their rounds'
// plain standard deviation was 0.03 to 0.45, a few wild rounds making the
// difference) and 0.25 for writes (the verdicts issue's 0.17 to 0.3), no
// repeat effect on reads once every repeat starts from the state after the
// load, and 0.116 on writes (the intraclass correlation of 0.31).
func DefaultComponents(pool string) Components {
	c := Components{Within: 0.1, Slice: 250 * time.Millisecond, Source: "the default (no comparison of this host stored yet)"}
	if pool == PoolWrites {
		c.Within, c.Between = 0.25, 0.116
	}
	return c
}

// WithinAt is σ_within at slices of s: its variance in inverse proportion
// to the slice's length, as a mean of events whose noise is independent
// from one event to the next. bench/verdicts.sh measures how far that
// holds on a host (docs/perf.md).
func (c Components) WithinAt(s time.Duration) float64 {
	if c.Slice <= 0 || s <= 0 {
		return c.Within
	}
	return c.Within * math.Sqrt(c.Slice.Seconds()/s.Seconds())
}

// Design is how one test of a comparison is measured: its repeats, its
// slices per repeat and their length, the units its interval will rest on
// and what it can then tell.
type Design struct {
	Repeats int           `json:"repeats"`
	Slices  int           `json:"slices"` // per repeat
	Slice   time.Duration `json:"slice"`
	Unit    string        `json:"unit"` // UnitRounds or UnitRepeats
	DF      float64       `json:"df"`
	// SE is the standard error of the mean log ratio the design gives,
	// MDE the smallest change (a fraction: 0.1 for 10 %) its test finds
	// with 80 % power at the level it was planned with.
	SE  float64 `json:"se"`
	MDE float64 `json:"mde"`
}

// Power is the power MDE is planned for.
const Power = 0.8

// DesignOf is the design of one test measured for measured (per label, over
// all repeats) in repeats repeats of slices slices each, with components
// c, judged at level as Paired judges it: on its repeats (each the median
// of its slices' log ratios), or, one repeat, on its rounds' trimmed mean,
//
//	repeats: SE² = (σ_b² + m_K·σ_w(s)²/K) / R,  df = R − 1,
//	rounds:  SE² = σ_w(s)² / K,                  df = h − 1 (h the trimmed mean's kept rounds),
//
// s = measured/(R·K) the slice, m_K the variance of a median of K normal
// values over their mean's (1 for K ≤ 2, about 1.2 for more: 1.19 at
// K = 4, π/2 as K grows; 1.2 is what a plan needs), and
// MDE = exp((t(1 − level/2) + t(Power))·SE) − 1 with the t quantiles on df
// (the normal approximation of the non-central t's power, a little
// generous at few degrees of freedom). The degrees of freedom the pool's
// prior adds (Paired) are not known when a plan is made: the design is
// planned without them, which errs on the side of more.
func DesignOf(measured time.Duration, repeats, slices int, c Components, level float64) Design {
	d := Design{Repeats: max(repeats, 1), Slices: max(slices, 1)}
	units := float64(d.Repeats * d.Slices)
	d.Slice = time.Duration(float64(measured) / units)
	w := c.WithinAt(d.Slice)
	if d.Repeats >= 2 {
		m := 1.0
		if d.Slices > 2 {
			m = 1.2
		}
		d.Unit, d.DF = UnitRepeats, float64(d.Repeats-1)
		d.SE = math.Sqrt((c.Between*c.Between + m*w*w/float64(d.Slices)) / float64(d.Repeats))
	} else {
		// The trimmed mean's degrees of freedom (trimmed).
		n := int(units)
		d.Unit, d.DF = UnitRounds, float64(n-2*int(math.Floor(Trim*float64(n)))-1)
		d.SE = w / math.Sqrt(units)
	}
	d.MDE = math.NaN()
	if d.DF >= 1 && level > 0 && level < 1 {
		d.MDE = math.Expm1((tQuantile(1-level/2, d.DF) + tQuantile(Power, d.DF)) * d.SE)
	}
	return d
}

// SlicesPerRepeat is Kalibera and Jones's count of repetitions at the
// lower level for each at the level above (rounds, for each repeat),
//
//	n = ⌈√((c_repeat / c_round) · (σ_w² / σ_b²))⌉,
//
// c_round what a round costs (its slice and the switch warm-up before
// it, on every label), c_repeat what a repeat costs beyond its rounds (the
// test's share of restoring the tables, its first slice's longer warm-up),
// σ_w a round's noise, σ_b a repeat's: many rounds where repeats are
// dear or alike, few where they differ. It is kept within [2, most]: two
// rounds a repeat at least, so that a repeat's rounds show its noise (the
// pool's F test), and most, the slices the test's time allows (one, where
// it allows no second slice of the shortest length).
func SlicesPerRepeat(c Components, slice time.Duration, round, repeat time.Duration, most int) int {
	most = max(most, 1) // one, where the test's time holds no second slice
	if !(c.Between > 0) || round <= 0 || most < 2 {
		return most
	}
	w := c.WithinAt(slice)
	n := math.Ceil(math.Sqrt(repeat.Seconds() / round.Seconds() * (w * w) / (c.Between * c.Between)))
	if math.IsNaN(n) || n > float64(most) {
		return most
	}
	return max(int(n), 2)
}
