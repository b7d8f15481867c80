package main

// -mode sweeps: the calibration of changepoint.DetectSweep on sweeps of
// builds whose truth is known (docs/changepoint.md, "Sweeps"; run by
// bench/changepoint-calibrate.sh). Each build's runs are level × (1 +
// cv·e), e standard normal; a step or a dip multiplies the level of its
// builds. Markdown tables on standard output:
//
//   - what it sees: for n builds × runs per build × noise, the smallest
//     step (in the middle, and resting on the two newest builds) and the
//     shortest 25 % dip found at 80 % recall;
//   - false alarms on flat sweeps, by builds and runs, with the runs'
//     noise alone and with each build off by as much again;
//   - the goals: recall and precision on sweeps of 6 to 30 builds, 1 to 3
//     runs, steps and dips of 25 to 50 % at 3 to 5 % noise, dips of four
//     builds or more, changes at either end resting on two builds or on
//     one build of three runs.
//
// A change is found when a change point lies within one build of it; a
// dip when both its edges are; a change point within one build of no
// change is a false one.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/changepoint"
)

type sweepCase struct {
	n, runs int
	cv      float64
	// buildCV is each build's own deviation (0: the runs' noise alone).
	buildCV float64
}

// sweepTruth is a sweep's levels and its changes (the first build of each
// new level).
type sweepTruth struct {
	level []float64
	at    []int
}

func stepAt(n, at int, rel float64) sweepTruth {
	t := sweepTruth{level: make([]float64, n), at: []int{at}}
	for i := range t.level {
		t.level[i] = 1000
		if i >= at {
			t.level[i] *= 1 + rel
		}
	}
	return t
}

func dipAt(n, at, length int, rel float64) sweepTruth {
	t := sweepTruth{level: make([]float64, n), at: []int{at, at + length}}
	for i := range t.level {
		t.level[i] = 1000
		if i >= at && i < at+length {
			t.level[i] *= 1 + rel
		}
	}
	return t
}

func (c sweepCase) draw(r *rand.Rand, t sweepTruth) [][]float64 {
	out := make([][]float64, len(t.level))
	for i, l := range t.level {
		b := 1 + c.buildCV*r.NormFloat64()
		for range c.runs {
			out[i] = append(out[i], l*b*(1+c.cv*r.NormFloat64()))
		}
	}
	return out
}

// score counts the truth's changes found, and the change points near none.
func score(cps []changepoint.ChangePoint, at []int) (found int, all bool, false_ int) {
	near := func(a, b int) bool { return a-b <= 1 && b-a <= 1 }
	all = true
	for _, t := range at {
		ok := false
		for _, c := range cps {
			ok = ok || near(c.Index, t)
		}
		if ok {
			found++
		} else {
			all = false
		}
	}
	for _, c := range cps {
		ok := false
		for _, t := range at {
			ok = ok || near(c.Index, t)
		}
		if !ok {
			false_++
		}
	}
	return
}

// recall is the share of sweeps whose every change was found: as a
// change point, or (leads) as a change point, a lead or an unconfirmed
// change.
func recall(r *rand.Rand, c sweepCase, k int, leads bool, truth func() sweepTruth) float64 {
	hits := 0
	for range k {
		t := truth()
		res, err := changepoint.DetectSweep(c.draw(r, t), changepoint.Options{}, changepoint.HigherIsBetter)
		if err != nil {
			panic(err)
		}
		cps := res.ChangePoints
		if leads {
			cps = slices.Concat(cps, res.Leads, res.Unconfirmed)
		}
		if _, all, _ := score(cps, t.at); all {
			hits++
		}
	}
	return float64(hits) / float64(k)
}

var (
	sweepNs    = []int{4, 6, 8, 12, 18, 24, 30}
	sweepRuns  = []int{1, 2, 3, 5}
	sweepNoise = []float64{0.01, 0.02, 0.03, 0.05}
	stepSizes  = []float64{0.02, 0.03, 0.05, 0.07, 0.10, 0.15, 0.20, 0.25, 0.30, 0.40, 0.50}
	dipLengths = []int{2, 3, 4, 6, 8}
)

// sign is −1 or +1 at random.
func sign(r *rand.Rand) float64 { return float64(2*r.IntN(2) - 1) }

func runSweeps(k, flat int) {
	r := rand.New(rand.NewPCG(59, 1))
	fmt.Printf("What a sweep's detection sees: the smallest step found in %d of %d sweeps or more (80 %%), in the middle and resting on the two newest builds, and the shortest 25 %% dip found so (both its edges); \"-\" for none up to 50 %% (8 builds of a dip). Noise: each run's standard deviation. Found: a change point; then, in the second table, a change point, a lead or an unconfirmed change.\n", k*8/10, k)
	for _, leads := range []bool{false, true} {
		if leads {
			fmt.Printf("\nAs a change point, a lead or an unconfirmed change:\n")
		}
		fmt.Println("\n| builds | runs | " + strings.Join(func() []string {
			var h []string
			for _, cv := range sweepNoise {
				h = append(h, fmt.Sprintf("±%g %%: step / newest 2 / dip", 100*cv))
			}
			return h
		}(), " | ") + " |")
		fmt.Println("|---|---|" + strings.Repeat("---|", len(sweepNoise)))
		for _, n := range sweepNs {
			for _, runs := range sweepRuns {
				var cells []string
				for _, cv := range sweepNoise {
					c := sweepCase{n: n, runs: runs, cv: cv}
					smallest := func(at int) string {
						for _, s := range stepSizes {
							if recall(r, c, k, leads, func() sweepTruth { return stepAt(n, at, s*sign(r)) }) >= 0.8 {
								return strconv.FormatFloat(100*s, 'g', 3, 64) + " %"
							}
						}
						return "-"
					}
					dip := "-"
					for _, l := range dipLengths {
						if l+4 > n {
							break
						}
						if recall(r, c, k, leads, func() sweepTruth { return dipAt(n, 2+r.IntN(n-l-3), l, -0.25) }) >= 0.8 {
							dip = fmt.Sprint(l)
							break
						}
					}
					cells = append(cells, smallest(n/2)+" / "+smallest(n-2)+" / "+dip)
				}
				fmt.Printf("| %d | %d | %s |\n", n, runs, strings.Join(cells, " | "))
			}
		}
	}
	fmt.Printf("\nFalse alarms on flat sweeps: the share of %d flat sweeps with a change point (p 0.001), with the runs' noise alone (±3 %%) and with each build off by ±3 %% of its own besides (builds that vary more than their runs).\n\n", flat)
	fmt.Println("| builds | " + strings.Join(func() []string {
		var h []string
		for _, runs := range sweepRuns {
			h = append(h, fmt.Sprintf("%d run(s)", runs))
		}
		return h
	}(), " | ") + " |")
	fmt.Println("|---|" + strings.Repeat("---|", len(sweepRuns)))
	for _, n := range append(sweepNs, 45, 60) {
		var cells []string
		for _, runs := range sweepRuns {
			var rates []string
			for _, bcv := range []float64{0, 0.03} {
				c := sweepCase{n: n, runs: runs, cv: 0.03, buildCV: bcv}
				fa := 0
				for range flat {
					res, err := changepoint.DetectSweep(c.draw(r, stepAt(n, n, 0)), changepoint.Options{}, changepoint.HigherIsBetter)
					if err != nil {
						panic(err)
					}
					if len(res.ChangePoints) > 0 {
						fa++
					}
				}
				rates = append(rates, fmt.Sprintf("%.2f %%", 100*float64(fa)/float64(flat)))
			}
			cells = append(cells, strings.Join(rates, " / "))
		}
		fmt.Printf("| %d | %s |\n", n, strings.Join(cells, " | "))
	}
	goals(r, k)
}

// goals scores the goal region: recall (changes found) and
// precision (change points that are changes), and false alarms on flat
// sweeps of the same builds and runs.
func goals(r *rand.Rand, k int) {
	type shape struct {
		name  string
		truth func(n, runs int, size float64) (sweepTruth, bool)
	}
	shapes := []shape{
		{"step in the middle", func(n, _ int, s float64) (sweepTruth, bool) { return stepAt(n, n/2, s*sign(r)), true }},
		{"step, 2 newest builds", func(n, _ int, s float64) (sweepTruth, bool) { return stepAt(n, n-2, s*sign(r)), true }},
		{"step, 2 oldest builds", func(n, _ int, s float64) (sweepTruth, bool) { return stepAt(n, 2, s*sign(r)), true }},
		{"step, newest build (3 runs)", func(n, runs int, s float64) (sweepTruth, bool) { return stepAt(n, n-1, s*sign(r)), runs >= 3 }},
		{"dip of 4+ builds", func(n, _ int, s float64) (sweepTruth, bool) {
			if n < 8 {
				return sweepTruth{}, false
			}
			l := 4 + r.IntN(max(1, min(8, n-7)))
			return dipAt(n, 2+r.IntN(n-l-3), l, -s), true
		}},
	}
	fmt.Printf("\nThe goals: sweeps of 6 to 30 builds, 1 to 3 runs each, changes of 25 to 50 %% at ±3 to ±5 %% noise; %d sweeps per shape and cell (builds 6, 8, 12, 18, 24, 30 × runs 1, 2, 3 × noise 3, 5 %% × size 25, 50 %%).\n\n", k/4)
	fmt.Println("| shape | changes | found | recall | in view | change points | true | precision |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var tc, tf, tv, tp, ttrue int
	// The cells (shape, builds, runs, noise, size) where 80 % of the
	// changes are found: the sweeps that meet the table.
	var mc, mf, mv, mp, mtrue, cells, met int
	for _, sh := range shapes {
		var changes, found, seen, cps, true_ int
		for _, n := range []int{6, 8, 12, 18, 24, 30} {
			for _, runs := range []int{1, 2, 3} {
				for _, cv := range []float64{0.03, 0.05} {
					for _, size := range []float64{0.25, 0.5} {
						c := sweepCase{n: n, runs: runs, cv: cv}
						var cc, cf, cv, cp, ct int
						for range k / 4 {
							t, ok := sh.truth(n, runs, size)
							if !ok {
								break
							}
							res, err := changepoint.DetectSweep(c.draw(r, t), changepoint.Options{}, changepoint.HigherIsBetter)
							if err != nil {
								panic(err)
							}
							f, _, fa := score(res.ChangePoints, t.at)
							v, _, _ := score(slices.Concat(res.ChangePoints, res.Leads, res.Unconfirmed), t.at)
							cc += len(t.at)
							cf += f
							cv += v
							cp += len(res.ChangePoints)
							ct += len(res.ChangePoints) - fa
						}
						if cc == 0 {
							continue
						}
						changes, found, seen, cps, true_ = changes+cc, found+cf, seen+cv, cps+cp, true_+ct
						cells++
						if ratio(cf, cc) >= 0.8 {
							met++
							mc, mf, mv, mp, mtrue = mc+cc, mf+cf, mv+cv, mp+cp, mtrue+ct
						}
					}
				}
			}
		}
		fmt.Printf("| %s | %d | %d | %.3f | %.3f | %d | %d | %.3f |\n", sh.name, changes, found, ratio(found, changes), ratio(seen, changes), cps, true_, ratio(true_, cps))
		tc, tf, tv, tp, ttrue = tc+changes, tf+found, tv+seen, tp+cps, ttrue+true_
	}
	fmt.Printf("| all | %d | %d | %.3f | %.3f | %d | %d | %.3f |\n", tc, tf, ratio(tf, tc), ratio(tv, tc), tp, ttrue, ratio(ttrue, tp))
	fmt.Printf("| the %d of %d cells found at 80 %% | %d | %d | %.3f | %.3f | %d | %d | %.3f |\n", met, cells, mc, mf, ratio(mf, mc), ratio(mv, mc), mp, mtrue, ratio(mtrue, mp))
	flat, fa, leads := 0, 0, 0
	for _, n := range []int{6, 8, 12, 18, 24, 30} {
		for _, runs := range []int{1, 2, 3} {
			for _, cv := range []float64{0.03, 0.05} {
				c := sweepCase{n: n, runs: runs, cv: cv}
				for range k * 2 {
					res, err := changepoint.DetectSweep(c.draw(r, stepAt(n, n, 0)), changepoint.Options{}, changepoint.HigherIsBetter)
					if err != nil {
						panic(err)
					}
					flat++
					if len(res.ChangePoints) > 0 {
						fa++
					}
					if len(res.Leads) > 0 {
						leads++
					}
				}
			}
		}
	}
	fmt.Printf("\nFlat sweeps of the same builds, runs and noise: %d of %d with a change point (%.3f %%), %d with a lead.\n", fa, flat, 100*float64(fa)/float64(flat), leads)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// runFlat counts the false change points of DetectSweep at o on k flat
// sweeps per cell (6 to 30 builds × 1 to 3 runs × ±3 and ±5 % noise), of
// the generator seeded by seed: the per-sweep false-alarm rate on more
// sweeps than the goals' table holds, with the p-values of the false ones
// (docs/perf.md, "Change points on short sweeps").
func runFlat(k int, seed uint64, o changepoint.Options) {
	r := rand.New(rand.NewPCG(seed, 2))
	var n, fa, below, leads int
	for _, builds := range []int{6, 8, 12, 18, 24, 30} {
		for _, runs := range []int{1, 2, 3} {
			for _, cv := range []float64{0.03, 0.05} {
				c := sweepCase{n: builds, runs: runs, cv: cv}
				for range k {
					res, err := changepoint.DetectSweep(c.draw(r, stepAt(builds, builds, 0)), o, changepoint.HigherIsBetter)
					if err != nil {
						panic(err)
					}
					n++
					if len(res.ChangePoints) > 0 {
						fa++
						if res.ChangePoints[0].PValue < 1e-6 {
							below++
						}
					}
					if len(res.Leads) > 0 {
						leads++
					}
				}
			}
		}
	}
	fmt.Printf("Flat sweeps: %d of %d with a change point (%.2g per sweep), %d of them at p below 1e-6; %d with a lead (%.2g per sweep).\n", fa, n, float64(fa)/float64(n), below, leads, float64(leads)/float64(n))
}
