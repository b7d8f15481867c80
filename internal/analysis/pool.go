package analysis

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat"
)

// Pools of tests: the tests of one kind in one comparison share how
// their repeats vary (a write test runs on what the writes before it in
// its repeat left; a cached read does not), so what they say together
// of the repeats is asked of each. A run records whether its step writes
// (Params["writes"], result.Run.Writes); runs from before it did are
// pooled with no other test.
const (
	PoolReads  = "reads"
	PoolWrites = "writes"
)

// Pool is what the tests of one kind in one comparison (one label against
// the base) say together of their repeats: a one-way analysis of variance
// of each test's log ratios by repeat, its sums of squares pooled over the
// tests (each test keeps its own mean):
//
//	SSB = Σᵢ Σ_g n_ig (r̄_ig − r̄_i)²,  SSW = Σᵢ Σ_g Σ (r − r̄_ig)²,
//	MSB = SSB / Σ(kᵢ − 1),  MSW = SSW / Σ(Nᵢ − kᵢ),  F = MSB / MSW,
//	n₀ = mean size of a repeat, σ²_b = (MSB − MSW) / n₀,  ICC = σ²_b / (σ²_b + MSW).
//
// One test's six repeats say little of a repeat effect; twenty tests'
// say much, if the effect is the same in each, as the kind they share
// makes it. The F test and the components describe the pool (the legend,
// the budget: Components); what Paired takes from it is the prior of its
// tests' variances (PriorDF, PriorVar), which moderates each test's own.
type Pool struct {
	Name  string  `json:"name"`  // PoolReads or PoolWrites
	Tests int     `json:"tests"` // tests with two repeats or more, one of them of two rounds or more
	DFB   float64 `json:"dfb"`   // the pooled between-repeat degrees of freedom, Σ(kᵢ − 1)
	DFW   float64 `json:"dfw"`   // the pooled within-repeat ones, Σ(Nᵢ − kᵢ)
	F     float64 `json:"f"`     // MSB / MSW (NaN where it cannot be computed)
	P     float64 `json:"p"`     // the F test's p-value (1 where it cannot be computed)
	ICC   float64 `json:"icc"`   // the intraclass correlation of a test's rounds within a repeat (0 when the estimate is not positive)
	// Within is σ of one round's log ratio about its repeat's mean, and
	// Between σ of a repeat's own effect (0 when not positive): the
	// variance components of the budget (Budget).
	Within  float64 `json:"sigma_within"`
	Between float64 `json:"sigma_between"`
	// RoundsPerRepeat is n₀, the mean number of rounds of a repeat.
	RoundsPerRepeat float64 `json:"rounds_per_repeat"`
	// PriorDF and PriorVar are the empirical-Bayes prior of the pool's
	// tests' variances of their repeat values (Paired: d₀ and s₀², by
	// Smyth's moments; 0 where fewer than three tests have two repeats).
	// PriorDF is capped at the degrees of freedom the tests have between
	// them: a prior that says all variances are one is worth no more than
	// the data it rests on.
	PriorDF  float64 `json:"prior_df"`
	PriorVar float64 `json:"prior_var"`
	// FirstEffect is how far the first repeats' ratios lie from the later
	// repeats' over the pool's tests (a fraction), FirstP its t test's p,
	// and FirstOut says the first repeats are left out of the pool's
	// verdicts as a warm-up (FirstP ≤ FirstLevel; first.go).
	FirstEffect float64 `json:"first_effect"`
	FirstP      float64 `json:"first_p"`
	FirstOut    bool    `json:"first_out,omitempty"`
}

// Repeats says whether the pool's repeats carry variance of their own:
// its F test's p at or below PoolLevel.
func (p Pool) Repeats() bool { return p.DFB >= 1 && p.P <= PoolLevel }

// Says is the pool in a few words, for a verdict's evidence.
func (p Pool) Says() string {
	what := "no repeat effect"
	if p.Repeats() {
		what = fmt.Sprintf("a repeat effect (ICC %.2f)", p.ICC)
	}
	prior := "no prior"
	if p.PriorDF > 0 {
		prior = fmt.Sprintf("each test's variance moderated toward the pool's with %.0f prior df", p.PriorDF)
	}
	return fmt.Sprintf("%s, %d test(s): %s, F test p=%.2g; %s", p.Name, p.Tests, what, p.P, prior)
}

// priorOf is the empirical-Bayes prior (d₀, s₀²) of the tests' sample
// variances s²ᵢ of their repeat values (repeatValues) on dᵢ = Rᵢ − 1
// degrees of freedom, by Smyth's (2004) method of moments on
// eᵢ = ln s²ᵢ − ψ(dᵢ/2) + ln(dᵢ/2): ē estimates ln s₀² − ψ(d₀/2) + ln(d₀/2),
// and the variance of the eᵢ less the mean of ψ′(dᵢ/2) estimates ψ′(d₀/2).
// Where that is not positive the variances are as alike as their own
// sampling allows: d₀ is then the cap. ψ is gonum's mathext.Digamma and
// ψ′(x) its Hurwitz ζ(2, x); the inverse of ψ′ is Smyth's Newton
// iteration (no library has it).
func priorOf(tests [][]Round) (d0, s02 float64) {
	var e, tri []float64
	total := 0.0
	for _, rs := range tests {
		_, groups := logRatios(rs)
		if len(groups) < 2 {
			continue
		}
		ys := repeatValues(groups, bimodalRounds(rs))
		s2, d := stat.Variance(ys, nil), float64(len(ys)-1)
		if !(s2 > 0) || math.IsInf(s2, 0) {
			continue
		}
		e = append(e, math.Log(s2)-mathext.Digamma(d/2)+math.Log(d/2))
		tri = append(tri, trigamma(d/2))
		total += d
	}
	if len(e) < 3 {
		return 0, 0
	}
	em, ev := stat.MeanVariance(e, nil)
	v := ev - stat.Mean(tri, nil)
	d0 = total
	if v > 0 {
		d0 = math.Min(2*trigammaInverse(v), total)
	}
	s02 = math.Exp(em + mathext.Digamma(d0/2) - math.Log(d0/2))
	return d0, s02
}

// trigamma is ψ′(x) = ζ(2, x).
func trigamma(x float64) float64 { return mathext.Zeta(2, x) }

// trigammaInverse is y with ψ′(y) = x, by Smyth's Newton iteration
// (limma's trigammaInverse) on 1/ψ′, which is nearly linear.
func trigammaInverse(x float64) float64 {
	switch {
	case x > 1e7:
		return 1 / math.Sqrt(x)
	case x < 1e-6:
		return 1 / x
	}
	y := 0.5 + 1/x
	for range 50 {
		tri := trigamma(y)
		dif := tri * (1 - tri/x) / (-2 * mathext.Zeta(3, y))
		y += dif
		if -dif/y < 1e-8 {
			break
		}
	}
	return y
}

// PoolOf pools the rounds of each test of pool name (one []Round a test,
// its blocks the repeats).
func PoolOf(name string, tests [][]Round) Pool {
	p := Pool{Name: name, P: 1, F: math.NaN()}
	var ssb, ssw, rounds, repeats float64
	for _, rs := range tests {
		_, groups := logRatios(rs)
		a := anovaOf(groups)
		if a.dfb < 1 || a.dfw < 1 {
			continue
		}
		p.Tests++
		ssb += a.ssb
		ssw += a.ssw
		p.DFB += a.dfb
		p.DFW += a.dfw
		rounds += a.n
		repeats += float64(len(groups))
	}
	p.PriorDF, p.PriorVar = priorOf(tests)
	if p.DFB == 0 || p.DFW == 0 {
		return p
	}
	pooled := anova{ssb: ssb, ssw: ssw, dfb: p.DFB, dfw: p.DFW}
	p.P = pooled.p()
	msb, msw := ssb/p.DFB, ssw/p.DFW
	if msw > 0 {
		p.F = msb / msw
	}
	p.RoundsPerRepeat = rounds / repeats
	p.Within = math.Sqrt(msw)
	if sb2 := (msb - msw) / p.RoundsPerRepeat; sb2 > 0 {
		p.Between = math.Sqrt(sb2)
		if msw > 0 {
			p.ICC = sb2 / (sb2 + msw)
		}
	}
	return p
}

// TestComponents are one test's variance components as one comparison
// measured them (its rounds against the base's, by repeat): what the
// store keeps for --repeat auto to plan with (Components).
type TestComponents struct {
	Test       string
	Threads    int
	Conditions string
	Pool       string        // PoolReads or PoolWrites
	Slice      time.Duration // the rounds' mean measured length
	// Within is the rounds' noise as their trimmed interval sees it: the
	// σ of which that interval's standard error is σ/√n (trimmed, on the
	// rounds' deviations from their repeat's mean), so that a few wild
	// rounds do not make the plans of a host that mostly measures well
	// as long as their raw spread would.
	Within  float64
	Between float64 // σ of a repeat's own effect (0 when its estimate is not positive)
	Rounds  int
	Repeats int
}

// ComponentsOf are the variance components of each test other shares
// with base in sliced rounds of two repeats or more, one of them of two
// rounds or more (the load, unsliced tests and tests that do not say
// whether they write are left out).
func ComponentsOf(base, other Set) []TestComponents {
	bRuns, oRuns := runsByKey(base.Runs), runsByKey(other.Runs)
	keys := keysInOrder(bRuns)
	var out []TestComponents
	for _, k := range keys {
		bs, os := bRuns[k], oRuns[k]
		pool := poolOf(bs)
		if pool == "" || len(os) == 0 || bs[0].Role == result.RoleLoad || bs[0].Pairing != result.PairedSlices {
			continue
		}
		rounds, _ := PairRounds(HeadlineSide(bs), HeadlineSide(os))
		p := PoolOf(pool, [][]Round{rounds})
		if p.Tests == 0 {
			continue
		}
		var secs float64
		n := 0
		for _, r := range os {
			for _, rd := range r.Rounds {
				if rd.Seconds > 0 {
					secs += rd.Seconds
					n++
				}
			}
		}
		// The rounds' deviations from their repeat's mean, trimmed.
		_, means := logRatios(rounds)
		var dev []float64
		for _, g := range means {
			m := stat.Mean(g, nil)
			for _, v := range g {
				dev = append(dev, v-m)
			}
		}
		// The deviations from k repeats' means have N − k degrees of
		// freedom, not the N − 1 a sample's have: scaled back.
		_, se, _ := trimmed(dev, Trim)
		within := se * math.Sqrt(float64(len(dev))) * math.Sqrt(float64(len(dev)-1)/float64(max(len(dev)-len(means), 1)))
		if n == 0 || !(within > 0) || math.IsInf(within, 0) {
			continue
		}
		out = append(out, TestComponents{Test: k.test, Threads: k.threads, Conditions: k.cond, Pool: pool,
			Slice: time.Duration(secs / float64(n) * float64(time.Second)), Within: within, Between: p.Between,
			Rounds: len(rounds), Repeats: int(p.DFB) + 1})
	}
	return out
}

// keysInOrder are the keys of runs by test, then threads, then conditions:
// the order ComponentsOf and EffectsOf report their tests in.
func keysInOrder(runs map[key][]result.Run) []key {
	keys := make([]key, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.test != b.test {
			return a.test < b.test
		}
		if a.threads != b.threads {
			return a.threads < b.threads
		}
		return a.cond < b.cond
	})
	return keys
}
