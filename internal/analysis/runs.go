package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/qpslab/qpslab/internal/result"
)

// Between-run variance: a paired comparison's interval covers the ratio
// of the rounds it measured, but another run of the same labels on the
// same host lands elsewhere by the run's own effect (the instances' data
// files, the host's state that hour). The floor is a margin (the smallest
// change worth calling); this variance belongs in the interval. It is
// estimated per test and host from the A/A plans the store keeps (each
// plan's log ratio and its standard error, store.RunEffect) by the method
// of moments,
//
//	σ²_run = max(0, Var(ln rᵖ) − mean(SEᵖ²)),
//
// over at least MinRunEffects plans; with fewer, DefaultRunSigma. The
// interval of a test measured in P plans then has
//
//	SE² = SE²_repeats + σ²_run / P,
//
// each plan one draw of the run effect: the runs stay a level when a
// comparison pools several runs of the same labels.

// MinRunEffects are the fewest A/A plans a test's between-run variance is
// estimated from.
const MinRunEffects = 3

// DefaultRunSigma is σ_run of a test's log ratio where no A/A plans of it
// are stored on its host: 0.02 (2 %), of the order of the A/A floors of
// the reads at the demo's budget. Measured on the project's VM
// (docs/perf.md, "The between-run σ on this host"): about 0, and 1 % or
// less, on a quiet host; not to be told from 0 or 10 % under load, where
// a test's own standard error is 12–14 %. qpslab run --aa measures a
// host's own.
const DefaultRunSigma = 0.02

// BetweenRuns is σ_run from A/A plans' log ratios and their standard
// errors; ok where there are at least MinRunEffects of them.
func BetweenRuns(logs, ses []float64) (sigma float64, ok bool) {
	if len(logs) < MinRunEffects || len(ses) != len(logs) {
		return 0, false
	}
	v := stat.Variance(logs, nil)
	var s2 float64
	for _, s := range ses {
		s2 += s * s
	}
	return math.Sqrt(math.Max(0, v-s2/float64(len(ses)))), true
}

// withRuns widens a paired result's interval by σ_run over plans plans
// (SE² + σ²/plans), at level, on the Welch–Satterthwaite degrees of
// freedom of the sum,
//
//	df = (SE² + σ²/P)² / (SE⁴/df_SE + (σ²/P)²/df_run),
//
// df_run the A/A plans' count less one (runDF; ≤ 0: the default σ, taken
// as known, which adds no term), so that a σ known from many plans
// widens the interval by itself, not multiplied by a t quantile of the
// test's few repeats.
func withRuns(res PairedResult, sigma float64, plans int, runDF, level float64) PairedResult {
	if !(sigma > 0) || plans < 1 || !(res.DF >= 1) || math.IsNaN(res.SE) {
		return res
	}
	mean := math.Log(res.Ratio)
	se2, r2 := res.SE*res.SE, sigma*sigma/float64(plans)
	den := se2 * se2 / res.DF
	if runDF > 0 {
		den += r2 * r2 / runDF
	}
	if den > 0 {
		res.DF = math.Min((se2+r2)*(se2+r2)/den, 1e6)
	} else {
		res.DF = 1e6
	}
	res.SE = math.Sqrt(se2 + r2)
	res.P = tTestP(mean, res.SE, res.DF)
	if level > 0 && level < 1 {
		half := tQuantile(1-level/2, res.DF) * res.SE
		res.Lo, res.Hi = math.Exp(mean-half), math.Exp(mean+half)
		res.Significant = res.Lo > 1 || res.Hi < 1
	}
	return res
}

// plansOf counts the plans of a side's paired observations.
func plansOf(s Side) int {
	seen := map[string]bool{}
	for _, o := range s.Obs {
		if o.Plan != "" && o.Pairing != "" {
			seen[o.Plan] = true
		}
	}
	return len(seen)
}

// TestEffect is one test's A/A ratio in one plan: the log of its paired
// relative value and the standard error of that log.
type TestEffect struct {
	Test       string
	Threads    int
	Conditions string
	LogRatio   float64
	SE         float64
}

// EffectsOf are the A/A run effects other and base (one plan, the same
// build and config as two labels) measured of each test they share in
// paired rounds of two repeats or more (the load left out), judged on
// their repeats alone (no pool, no run variance).
func EffectsOf(base, other Set) []TestEffect {
	bRuns, oRuns := runsByKey(base.Runs), runsByKey(other.Runs)
	keys := keysInOrder(bRuns)
	var out []TestEffect
	for _, k := range keys {
		bs, os := bRuns[k], oRuns[k]
		if len(os) == 0 || bs[0].Role == result.RoleLoad {
			continue
		}
		rounds, _ := PairRounds(HeadlineSide(bs), HeadlineSide(os))
		res := Paired(rounds, 0.05, nil)
		if res.Blocks < 2 || !(res.SE >= 0) || !(res.Ratio > 0) || math.IsInf(res.Ratio, 0) {
			continue
		}
		out = append(out, TestEffect{Test: k.test, Threads: k.threads, Conditions: k.cond, LogRatio: math.Log(res.Ratio), SE: res.SE})
	}
	return out
}
