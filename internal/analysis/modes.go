package analysis

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/qpslab/qpslab/internal/result"
)

// Modes are the two modes of a test's slices where they fall in two
// (a write test at 5 k/s in some 0.25 s slices and 67 k/s in others):
// each mode's median value and share of the slices. Such a test is
// unstable: its rate is a mix of two, and which share of each a run
// gets moves its figure more than its slices' noise says.
type Modes struct {
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
	LowShare  float64 `json:"low_share"`
	HighShare float64 `json:"high_share"`
	Slices    int     `json:"slices"`
}

// Bimodality thresholds: each mode holds at least MinModeShare of the
// slices, the high mode's median is at least ModeRatio times the low
// one's, and the split into two explains at least ModeSplit of the
// variance of the slices' logs (a gap between two clusters, not a spread
// that a split anywhere would halve). Chosen on synthetic slices: a
// lognormal of σ 0.3 (a noisy but single mode) is never split at these,
// 5 k and 67 k with ±10 % is always (TestModes).
const (
	MinModeShare = 0.1
	ModeRatio    = 2
	ModeSplit    = 0.8
)

// BimodalOf says whether values (slices' rates, > 0) fall in two modes,
// and which: the best split of their sorted logs into a low and a high
// group (the one leaving the least variance within them, Otsu's rule),
// kept where it meets the thresholds above. Hand-written: gonum has no
// clustering or mixture fit, and this one split is a dozen lines.
func BimodalOf(values []float64) (Modes, bool) {
	var logs []float64
	for _, v := range values {
		if positive(v) {
			logs = append(logs, math.Log(v))
		}
	}
	n := len(logs)
	if n < 10 {
		return Modes{}, false
	}
	sort.Float64s(logs)
	_, total := stat.PopMeanVariance(logs, nil)
	if !(total > 0) {
		return Modes{}, false
	}
	minN := int(math.Ceil(MinModeShare * float64(n)))
	best, at := math.Inf(1), -1
	for k := minN; k <= n-minN; k++ {
		_, vl := stat.PopMeanVariance(logs[:k], nil)
		_, vh := stat.PopMeanVariance(logs[k:], nil)
		if w := (float64(k)*vl + float64(n-k)*vh) / float64(n); w < best {
			best, at = w, k
		}
	}
	if at < 0 || 1-best/total < ModeSplit {
		return Modes{}, false
	}
	lo, hi := math.Exp(sortedMedian(logs[:at])), math.Exp(sortedMedian(logs[at:]))
	if hi < ModeRatio*lo {
		return Modes{}, false
	}
	return Modes{Low: lo, High: hi, LowShare: float64(at) / float64(n), HighShare: float64(n-at) / float64(n), Slices: n}, true
}

// sortedMedian is the median of sorted values.
func sortedMedian(s []float64) float64 { return (s[(len(s)-1)/2] + s[len(s)/2]) / 2 }

// modesOf are the modes of runs' slices (their rounds' headline values),
// nil where they do not fall in two.
func modesOf(runs []result.Run) *Modes {
	var v []float64
	for _, r := range runs {
		for _, rd := range r.Rounds {
			v = append(v, rd.Value)
		}
	}
	if m, ok := BimodalOf(v); ok {
		return &m
	}
	return nil
}
