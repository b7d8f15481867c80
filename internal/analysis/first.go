package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// The first repeat of a plan follows the servers' start and the load:
// its caches and the writes' background work are not yet as in the
// repeats after it (the demo's writes: a repeat effect of p = 0.021 that
// the first repeat carries). qpslab models it per pool: the first repeat's
// log ratio less the mean of the later repeats' values is one difference
// per test, and a one-sample t test over the pool's tests asks whether
// the first repeat differs. Where it does (p ≤ FirstLevel), the first
// repeat of every test of that pool is left out of the verdicts, as an
// unmeasured warm-up repeat; where it does not, it is kept (leaving it
// out always would cost every test a sixth of its repeats for nothing).

// FirstLevel is the p-value at or below which a pool's first repeats are
// said to differ and are left out.
const FirstLevel = 0.05

// MinFirstRepeats are the fewest repeats a test needs for its first to
// be left out: two remain to judge it on.
const MinFirstRepeats = 3

// splitFirst splits a side into the observations of each plan's first
// repeat and the rest (observations of no plan are the rest).
func splitFirst(s Side) (first, rest Side) {
	low := map[string]int{}
	for _, o := range s.Obs {
		if o.Plan == "" {
			continue
		}
		if r, ok := low[o.Plan]; !ok || o.Repeat < r {
			low[o.Plan] = o.Repeat
		}
	}
	first.Runs, rest.Runs = s.Runs, s.Runs
	for _, o := range s.Obs {
		if o.Plan != "" && o.Repeat == low[o.Plan] {
			first.Obs = append(first.Obs, o)
		} else {
			rest.Obs = append(rest.Obs, o)
		}
	}
	return first, rest
}

// withoutFirst is s without each plan's first repeat, where that leaves
// the test at least MinFirstRepeats − 1 repeats of other's to pair with.
func withoutFirst(base, other Side) (Side, Side, bool) {
	_, br := splitFirst(base)
	_, or := splitFirst(other)
	rounds, _ := PairRounds(br, or)
	_, groups := logRatios(rounds)
	if len(groups) < MinFirstRepeats-1 {
		return base, other, false
	}
	return br, or, true
}

// firstDiff is one test's first-repeat difference: the mean log ratio of
// its first repeats' rounds less the mean of its later repeats' values
// (repeatValues); ok where it has a first repeat and two later ones.
func firstDiff(base, other Side) (float64, bool) {
	bf, br := splitFirst(base)
	of, or := splitFirst(other)
	fr, _ := PairRounds(bf, of)
	rr, _ := PairRounds(br, or)
	fl, _ := logRatios(fr)
	_, groups := logRatios(rr)
	if len(fl) == 0 || len(groups) < MinFirstRepeats-1 {
		return 0, false
	}
	return stat.Mean(fl, nil) - stat.Mean(repeatValues(groups, bimodalRounds(rr)), nil), true
}

// firstEffect is the pool's first-repeat test over the tests' differences
// d: the mean difference as a ratio − 1, and the one-sample t test's
// two-sided p (1 with fewer than three tests).
func firstEffect(d []float64) (effect, p float64) {
	if len(d) < 3 {
		return 0, 1
	}
	m, sd := stat.MeanStdDev(d, nil)
	return math.Expm1(m), tTestP(m, sd/math.Sqrt(float64(len(d))), float64(len(d)-1))
}
