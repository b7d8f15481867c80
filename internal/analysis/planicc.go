package analysis

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/qpslab/qpslab/internal/result"
)

// RepeatEffect is how alike the rounds of one repeat are, beyond chance,
// over many tests of one comparison at once: a one-way analysis of
// variance of each test's log ratios by repeat, its sums of squares
// pooled over the tests (each test keeps its own mean). One test's two or
// four repeats say almost nothing of a repeat effect; forty tests' do, if
// the effect is the same in each, as the host and the plan they share
// make it.
type RepeatEffect struct {
	Tests int     // tests with two repeats or more of two rounds or more
	DFB   float64 // the pooled between-repeat degrees of freedom, Σ(kᵢ − 1)
	DFW   float64 // the pooled within-repeat ones, Σ(Nᵢ − kᵢ)
	F     float64 // MSB / MSW
	P     float64 // the F test's p-value
	ICC   float64 // the intraclass correlation of a test's rounds within a repeat (0 when the estimate is not positive)
}

// MinRepeatDF is the fewest pooled between-repeat degrees of freedom from
// which a comparison's repeat effect is taken for all its tests (Paired
// otherwise judges each test's own, by its F test).
const MinRepeatDF = 10

// PlanRepeatEffect pools the rounds of each test (one []Round a test, its
// blocks the repeats) into one estimate of the repeat effect:
//
//	SSB = Σᵢ Σ_g n_ig (r̄_ig − r̄_i)²,  SSW = Σᵢ Σ_g Σ (r − r̄_ig)²,
//	MSB = SSB / Σ(kᵢ − 1),  MSW = SSW / Σ(Nᵢ − kᵢ),
//	n₀ = mean size of a repeat, σ²_b = (MSB − MSW) / n₀,  ICC = σ²_b / (σ²_b + MSW).
func PlanRepeatEffect(tests [][]Round) RepeatEffect {
	var e RepeatEffect
	var ssb, ssw, rounds, repeats float64
	for _, rounds0 := range tests {
		byBlock := map[int][]float64{}
		var all []float64
		for _, r := range rounds0 {
			if !positive(r.Base) || !positive(r.Other) {
				continue
			}
			l := logPos(r.Other) - logPos(r.Base)
			byBlock[r.Block] = append(byBlock[r.Block], l)
			all = append(all, l)
		}
		k, n := len(byBlock), len(all)
		if k < 2 || n <= k {
			continue
		}
		e.Tests++
		mean := meanOf(all)
		keys := make([]int, 0, k)
		for b := range byBlock {
			keys = append(keys, b)
		}
		sort.Ints(keys)
		for _, b := range keys {
			g := byBlock[b]
			gm := meanOf(g)
			ssb += float64(len(g)) * (gm - mean) * (gm - mean)
			for _, v := range g {
				ssw += (v - gm) * (v - gm)
			}
		}
		e.DFB += float64(k - 1)
		e.DFW += float64(n - k)
		rounds += float64(n)
		repeats += float64(k)
	}
	e.P, e.F = 1, math.NaN()
	if e.DFB == 0 || e.DFW == 0 {
		return e
	}
	msb, msw := ssb/e.DFB, ssw/e.DFW
	if msw > 0 {
		e.F = msb / msw
		e.P = 1 - distuv.F{D1: e.DFB, D2: e.DFW}.CDF(e.F)
	}
	n0 := rounds / repeats
	if sb2 := (msb - msw) / n0; sb2 > 0 && msw > 0 {
		e.ICC = sb2 / (sb2 + msw)
	}
	return e
}

func meanOf(v []float64) float64 { return result.Mean(v) }
