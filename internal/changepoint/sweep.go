package changepoint

import (
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"
)

// A sweep is a short history of builds (4 to SweepMax of them, one to a
// few runs each), as the reference posts measure a version range: 10.2.1
// to 10.2.30, three runs of each. The windowed split of Detect is made
// for long series of single points, and fails on these in ways the
// issue that brought DetectSweep measured: its split test compares a
// candidate with the whole rest of the window (a dip and its recovery
// average out), its hierarchy stops at the first failure, its outlier
// clipping overwrites the middle of short dips, its minimum segment rules
// out changes near either end, and it ignores the runs behind a point.
// DetectSweep searches every segmentation of the builds instead, tests
// each change against its neighbouring segments only, and measures the
// noise with both the spread of the builds around their levels and the
// spread of the runs inside a build (docs/changepoint.md, "Sweeps").

// SweepMax is the most builds DetectSweep takes: longer histories are
// Detect's (its windows see no more than Window points at a time anyway,
// and its cost is linear where DetectSweep's search is quadratic).
const SweepMax = 60

// SweepMin is the fewest builds DetectSweep takes: with fewer, the
// neighbouring builds are compared pair by pair (internal/analysis).
const SweepMin = 4

// MinRuns is how many runs one build needs to stand for a level by
// itself at either end of a sweep: a change at an end that rests on one
// build of fewer runs is reported as unconfirmed.
const MinRuns = 3

// sweepPoolLevel: the runs of the builds are pooled with the builds'
// spread around their levels (one noise, the runs as units) unless the
// builds vary more than their runs say at this level (the "sometimes
// pool" rule of nested designs, Bancroft 1964; at 0.1 rather than the
// customary 0.25, which costs 6-build sweeps of 2 or 3 runs a tenth of
// their recall: docs/changepoint.md, "Sweeps").
const sweepPoolLevel = 0.1

// sweepStrictness: a sweep's changes are called at PValue / 100, and
// those significant at PValue / 10 (sweepLeadStrictness) but not at that
// are leads (SweepResult.Leads). Detect's p-value is a change's, and its
// false changes are about one in 100,000 points of noise at PValue 0.001;
// a sweep's is the whole sweep's (every comparison the search could have
// made is counted), and its false calls are about its level per sweep,
// measured: at PValue / 10 they were 1.2 in 10,000 flat sweeps of 6 to 30
// builds and 1 to 3 runs, at PValue / 100 about 1 in 100,000. The search's
// count is close to the real number of comparisons at these levels (a
// tenth of the level gives about a tenth of the false calls), so the
// level alone decides how often a flat sweep is called changed, and a
// stricter one costs the changes that rest on few degrees of freedom
// (one run a build, short sweeps) their calls: those it finds at
// PValue / 10 and not at PValue / 100 stay in view as leads, with what
// would decide them (docs/changepoint.md, "Sweeps"). Unconfirmed end
// changes and setting odd builds aside keep the weak level.
const sweepStrictness = 100

// sweepLeadStrictness: a change significant at PValue / 10 but not at
// PValue / sweepStrictness is a lead.
const sweepLeadStrictness = 10

// SweepResult is what DetectSweep finds.
type SweepResult struct {
	// ChangePoints are the confirmed changes, in index order; an index is
	// a build's (the first build at the new level).
	ChangePoints []ChangePoint
	// Unconfirmed are changes at either end of the sweep that rest on one
	// build: of fewer than MinRuns runs, or whose runs the builds' spread
	// says too little about (the builds vary more than their runs), and
	// significant at the weak level (10 × PValue) as measured: one build
	// cannot tell a new level from an odd build. Another build at the new
	// level, or MinRuns runs of that build, would confirm one. Each is the
	// newest build (Index n−1) or the oldest (Index 1: the builds after it
	// differ from it).
	Unconfirmed []ChangePoint
	// Outliers are interior builds set aside as single odd builds: off
	// both neighbours' levels, on one side, alone, by more than the noise
	// allows at PValue (times the builds it could have been). Such a
	// build is neither a change nor noise around one.
	Outliers []int
	// Leads are changes significant at PValue / 10 but short of a call
	// (PValue / 100 for a sweep): seen, and about as often in flat
	// sweeps as one in 10,000, so not called; more runs of the builds
	// either side would decide one. In index order, none where a change
	// point or an unconfirmed change is.
	Leads []ChangePoint
	// Pooled says the runs were the units of the noise (the builds vary
	// no more than their runs say); else the builds were, and Runs is
	// ignored beyond each build's value.
	Pooled bool
}

// ErrSweepSize is returned for a sweep of fewer than SweepMin or more
// than SweepMax builds, or a build without runs.
var ErrSweepSize = errors.New("changepoint: a sweep is 4 to 60 builds of one run or more each")

// sweepBuild is one build of a sweep: its runs' mean (of the logarithms
// when every value is positive), their sum of squares about it, and
// whether it counts.
type sweepBuild struct {
	runs     int
	mean, ss float64
	used     bool
}

type sweeper struct {
	c      config
	p      float64 // the level the search keeps a change at: PValue / sweepLeadStrictness, then PValue / sweepStrictness for the calls
	b      []sweepBuild
	log    bool
	minSeg int     // builds of an interior segment (and of an end one of fewer than MinRuns runs)
	beta   float64 // the candidates' penalty per change

	// Over the used builds, kept by prep while used is unchanged: counts,
	// sums of values and of squares (about ref) before each build, the
	// first and last used build; and the comparisons' count, made when
	// first asked for.
	dirty        bool
	cnt          []int
	s1, s2       []float64
	ref          float64
	first, last  int
	nComparisons [2][2]int
	counted      bool // nComparisons is of the used builds
}

// setUsed sets aside (or takes back) build i.
func (s *sweeper) setUsed(i int, used bool) {
	if s.b[i].used != used {
		s.b[i].used, s.dirty = used, true
	}
}

// prep brings the prefix sums up to date with the used builds.
func (s *sweeper) prep() {
	if !s.dirty && s.cnt != nil {
		return
	}
	n := len(s.b)
	s.cnt, s.s1, s.s2 = resize(s.cnt, n+1), resize(s.s1, n+1), resize(s.s2, n+1)
	s.first, s.last = -1, -1
	s.ref = 0
	for _, b := range s.b {
		if b.used {
			s.ref = b.mean
			break
		}
	}
	for i, b := range s.b {
		s.cnt[i+1], s.s1[i+1], s.s2[i+1] = s.cnt[i], s.s1[i], s.s2[i]
		if b.used {
			d := b.mean - s.ref
			s.cnt[i+1]++
			s.s1[i+1] += d
			s.s2[i+1] += d * d
			if s.first < 0 {
				s.first = i
			}
			s.last = i
		}
	}
	s.dirty, s.counted = false, false
}

// DetectSweep finds the changes of a sweep: runs[i] are the values of
// build i's runs, builds in order. Options' PValue / 100 is the
// significance of a change and PValue / 10 of a lead (sweepStrictness;
// a p-value counts the comparisons the search could have made),
// MinMagnitude the smallest relative change kept; MinSegment 1 allows
// single builds as levels anywhere (no outlier builds), any other value
// asks for two builds, or one build of MinRuns runs at either end. Window
// and Method are not used.
func DetectSweep(runs [][]float64, o Options, dir Direction) (SweepResult, error) {
	var res SweepResult
	c, err := resolve(o, dir)
	if err != nil {
		return res, err
	}
	n := len(runs)
	if n < SweepMin || n > SweepMax {
		return res, ErrSweepSize
	}
	s := &sweeper{c: c, log: true, minSeg: 2, p: c.p / sweepLeadStrictness}
	if c.minSeg == 1 {
		s.minSeg = 1
	}
	for _, r := range runs {
		if len(r) == 0 {
			return res, ErrSweepSize
		}
		for _, v := range r {
			if math.IsInf(v, 0) {
				return res, ErrInfinite
			}
			if !math.IsNaN(v) && !(v > 0) {
				s.log = false
			}
		}
	}
	s.b = make([]sweepBuild, n)
	for i, r := range runs {
		var sum float64
		k := 0
		for _, v := range r {
			if !math.IsNaN(v) {
				sum += s.val(v)
				k++
			}
		}
		if k == 0 {
			return res, ErrSweepSize
		}
		m := sum / float64(k)
		var ss float64
		for _, v := range r {
			if !math.IsNaN(v) {
				d := s.val(v) - m
				ss += d * d
			}
		}
		s.b[i] = sweepBuild{runs: k, mean: m, ss: ss, used: true}
	}
	s.penalty()
	return s.detect(), nil
}

func (s *sweeper) val(v float64) float64 {
	if s.log {
		return math.Log(v)
	}
	return v
}

func (s *sweeper) unval(v float64) float64 {
	if s.log {
		return math.Exp(v)
	}
	return v
}

// penalty sets the candidates' penalty per change, 2σ² (Akaike's, for a
// level and a place: lenient, as the candidates need only hold the true
// changes and the tests decide), σ the standard deviation of a build's
// value: from the differences of neighbouring builds (their median, which
// a step or an odd build barely moves), or from the runs' spread inside
// the builds where that says more (five degrees of freedom or more, and
// a larger value).
func (s *sweeper) penalty() {
	d := make([]float64, 0, len(s.b))
	for i := 1; i < len(s.b); i++ {
		d = append(d, math.Abs(s.b[i].mean-s.b[i-1].mean))
	}
	slices.Sort(d)
	sigma := 1.4826 * medianSorted(d) / math.Sqrt2
	var ssw, dfw, inv float64
	for _, b := range s.b {
		ssw += b.ss
		dfw += float64(b.runs - 1)
		inv += 1 / float64(b.runs)
	}
	if dfw >= 5 {
		sigma = max(sigma, math.Sqrt(ssw/dfw*inv/float64(len(s.b))))
	}
	s.beta = 2 * sigma * sigma
}

// oddK: a build is a candidate outlier when it differs from both its
// neighbours, the same way, by more than oddK robust standard deviations
// of a difference (√2 σ); confirm then decides.
const oddK = 5.0

// odd sets aside the builds that differ from both neighbours the same way
// by far (oddK), before the search: an odd build in a segment inflates its
// noise and can hide a change (as next to a step it can move it), and the
// search alone finds an odd build only where it is a segment of its own.
// It returns them, for outliers to confirm after the search.
func (s *sweeper) odd() []int {
	q := s.oddScale()
	if !(q > 0) {
		return nil
	}
	var out []int
	lim := oddK * math.Sqrt2 * q
	for i := 1; i+1 < len(s.b); i++ {
		l, r := s.b[i].mean-s.b[i-1].mean, s.b[i].mean-s.b[i+1].mean
		if l*r > 0 && math.Abs(l) > lim && math.Abs(r) > lim {
			out = append(out, i)
		}
	}
	for _, i := range out {
		s.setUsed(i, false)
	}
	return out
}

// oddEnds sets aside, before the search, the newest and the oldest build
// when it has fewer than MinRuns runs and differs from the build next to
// it by more than oddK robust standard deviations of a difference (a
// change resting on that one build, or an odd build); detect then keeps
// it aside as an unconfirmed change, or takes it back.
func (s *sweeper) oddEnds() []int {
	q := s.oddScale()
	if !(q > 0) {
		return nil
	}
	lim := oddK * math.Sqrt2 * q
	n := len(s.b)
	var out []int
	for _, e := range [][2]int{{n - 1, n - 2}, {0, 1}} {
		if b := s.b[e[0]]; b.used && b.runs < MinRuns && s.b[e[1]].used && math.Abs(b.mean-s.b[e[1]].mean) > lim {
			out = append(out, e[0])
		}
	}
	for _, i := range out {
		s.setUsed(i, false)
	}
	return out
}

// oddScale is a robust standard deviation of a build's value for odd and
// oddEnds, from the lower quartile of the differences' sizes (0.3186 √2 σ
// for Gaussian noise): an odd build makes two large differences and a
// step one, which move a median of a dozen differences noticeably. 0:
// none (too few builds, or single builds allowed as levels).
func (s *sweeper) oddScale() float64 {
	if s.minSeg < 2 || len(s.b) < 5 {
		return 0
	}
	d := make([]float64, 0, len(s.b))
	for i := 1; i < len(s.b); i++ {
		d = append(d, math.Abs(s.b[i].mean-s.b[i-1].mean))
	}
	slices.Sort(d)
	return d[(len(d)-1)/4] / (0.3186 * math.Sqrt2)
}

// confirm takes back each build odd set aside that is no outlier of the
// final segmentation cps (outlier, against the level of the segment it
// lies in, at the weak level 10 × PValue: odd found it far off both its
// neighbours already, and one left in inflates the noise of its segment
// and hides changes); it reports whether it took one back.
func (s *sweeper) confirm(cps []int, odd []int) bool {
	back := false
	for _, i := range odd {
		j := 0
		for j < len(cps) && cps[j] <= i {
			j++
		}
		a, c := segment(cps, j, len(s.b))
		m, k, _ := s.level(a, c)
		s.setUsed(i, true)
		if k == 0 || !s.outlier(cps, i, i+1, s.b[i].mean-m, k, a, c, i, s.c.weakP) {
			back = true
			continue
		}
		s.setUsed(i, false)
	}
	return back
}

// detect runs the search: candidates, merge, settle; then the ends.
func (s *sweeper) detect() SweepResult {
	var res SweepResult
	n := len(s.b)
	// Odd builds, inside and at either end, are set aside before the
	// search (one left in inflates the noise of its segment and can hide
	// every change), and each is taken back after it unless the final
	// segmentation confirms it: an interior one as an outlier, an end one
	// as an unconfirmed change.
	odd := s.odd()
	ends := s.oddEnds()
	cps := s.merge(s.candidates())
	back := s.confirm(cps, odd)
	var unconf []ChangePoint
	var aside []int
	for _, end := range ends {
		s.setUsed(end, true)
		if cp, ok := s.endChange(cps, end); ok {
			unconf = append(unconf, cp)
			aside = append(aside, end)
			s.setUsed(end, false)
		} else {
			back = true
		}
	}
	if back {
		cps = s.merge(s.candidates())
	}
	// An end build on its own (fewer than MinRuns runs) that differs from
	// the level next to it is an unconfirmed change: set it aside and
	// search again without it, so that it biases nothing.
	if s.minSeg > 1 {
		for _, end := range []int{n - 1, 0} {
			if slices.Contains(aside, end) {
				continue
			}
			if cp, ok := s.endChange(cps, end); ok {
				unconf = append(unconf, cp)
				aside = append(aside, end)
				s.setUsed(end, false)
				cps = s.merge(s.candidates())
			}
		}
	}
	slices.SortFunc(unconf, func(a, b ChangePoint) int { return a.Index - b.Index })
	res.Unconfirmed = unconf
	// The calls: the changes that stand at the sweep's level, the search's
	// segmentation merged again at it; the rest are leads.
	leads := s.result(cps)
	s.p = s.c.p / sweepStrictness
	calls := s.merge(slices.Clone(cps))
	for i := 1; i < n-1; i++ {
		if !s.b[i].used && !slices.Contains(aside, i) {
			res.Outliers = append(res.Outliers, i)
		}
	}
	_, _, res.Pooled = s.noise(calls)
	res.ChangePoints = s.result(calls)
	for _, l := range leads {
		if !slices.ContainsFunc(res.ChangePoints, func(c ChangePoint) bool { return abs(c.Index-l.Index) <= 1 }) &&
			!slices.ContainsFunc(unconf, func(c ChangePoint) bool { return abs(c.Index-l.Index) <= 1 }) {
			res.Leads = append(res.Leads, l)
		}
	}
	return res
}

// usedIn counts the used builds of [a, c) and, when there is one, its
// runs (else 0).
func (s *sweeper) usedIn(a, c int) (k, runs int) {
	s.prep()
	k = s.cnt[c] - s.cnt[a]
	if k == 1 {
		switch {
		case a == 0 || s.cnt[a] == 0:
			runs = s.b[s.first].runs
		case c == len(s.b) || s.cnt[c] == s.cnt[len(s.b)]:
			runs = s.b[s.last].runs
		default:
			for i := a; i < c; i++ {
				if s.b[i].used {
					runs = s.b[i].runs
				}
			}
		}
	}
	return
}

// valid says whether [a, c) can be a segment: minSeg used builds, or one
// used build of MinRuns runs or more at either end of the sweep.
func (s *sweeper) valid(a, c int) bool {
	s.prep()
	k := s.cnt[c] - s.cnt[a]
	if k >= s.minSeg {
		return true
	}
	if k != 1 || !(s.cnt[a] == 0 || s.cnt[c] == s.cnt[len(s.b)]) {
		return false
	}
	_, runs := s.usedIn(a, c)
	return runs >= MinRuns
}

// level is the mean of the used builds' values in [a, c), their count
// and their sum of squares about it.
func (s *sweeper) level(a, c int) (mean float64, k int, sse float64) {
	s.prep()
	k = s.cnt[c] - s.cnt[a]
	if k == 0 {
		return 0, 0, 0
	}
	d1, d2 := s.s1[c]-s.s1[a], s.s2[c]-s.s2[a]
	m := d1 / float64(k)
	return s.ref + m, k, max(d2-d1*m, 0)
}

// candidates is the segmentation of the used builds that minimises the
// sum of squares of the builds' values about their segments' levels plus
// beta per change, segments of one build or more (optimal partitioning,
// O(n²); Jackson et al. 2005). Its changes are indexes of builds, each
// the first used build of its segment.
func (s *sweeper) candidates() []int {
	var idx []int
	for i, b := range s.b {
		if b.used {
			idx = append(idx, i)
		}
	}
	m := len(idx)
	if m < 2 {
		return nil
	}
	p1, p2 := make([]float64, m+1), make([]float64, m+1)
	ref := s.b[idx[0]].mean
	for j, i := range idx {
		v := s.b[i].mean - ref
		p1[j+1], p2[j+1] = p1[j]+v, p2[j]+v*v
	}
	sse := func(a, c int) float64 { // used positions [a, c)
		k := float64(c - a)
		d := p1[c] - p1[a]
		return max(p2[c]-p2[a]-d*d/k, 0)
	}
	f := make([]float64, m+1)
	from := make([]int, m+1)
	f[0] = -s.beta
	for c := 1; c <= m; c++ {
		f[c] = math.Inf(1)
		for a := 0; a < c; a++ {
			if v := f[a] + s.beta + sse(a, c); v < f[c] {
				f[c], from[c] = v, a
			}
		}
	}
	var cps []int
	for c := m; c > 0; c = from[c] {
		if from[c] > 0 {
			cps = append(cps, idx[from[c]])
		}
	}
	slices.Reverse(cps)
	return cps
}

// around are the neighbours of change j of cps (in a series of n points):
// the start of its left segment and the end of its right one.
func around(cps []int, j, n int) (a, c int) {
	a, c = 0, n
	if j > 0 {
		a = cps[j-1]
	}
	if j+1 < len(cps) {
		c = cps[j+1]
	}
	return
}

// segment is the j-th segment of cps: from cps[j−1] (0 for the first) to
// cps[j] (n for the last).
func segment(cps []int, j, n int) (a, c int) {
	a, c = 0, n
	if j > 0 {
		a = cps[j-1]
	}
	if j < len(cps) {
		c = cps[j]
	}
	return
}

// noise is the noise model of the segmentation cps: the variance of the
// value of a build of m runs, v(m), with its degrees of freedom. The
// builds' spread about their segments' levels measures σ_b² + σ_w²/m
// (a build's own deviation and its runs' noise), the runs' spread inside
// each build σ_w². Where the builds vary no more than their runs say (F
// test at sweepPoolLevel), both are one noise with the runs as units:
// v(m) = σ²/m on all the degrees of freedom. Else the builds are the
// units: v(m) = σ_b² + σ_w²/m on the builds' degrees of freedom. With a
// run per build, the builds' spread is all there is; with every segment
// one build (of MinRuns runs or more), the runs' spread is.
func (s *sweeper) noise(cps []int) (v func(m int) float64, df float64, pooled bool) {
	n := len(s.b)
	var ssb, ssbw, ssw, dfw, inv float64
	var used, segs int
	for j := 0; j <= len(cps); j++ {
		a, c := segment(cps, j, n)
		mean, k, _ := s.level(a, c)
		if k == 0 {
			continue
		}
		segs++
		for i := a; i < c; i++ {
			b := s.b[i]
			if !b.used {
				continue
			}
			used++
			d := b.mean - mean
			ssb += d * d
			ssbw += float64(b.runs) * d * d
			ssw += b.ss
			dfw += float64(b.runs - 1)
			inv += 1 / float64(b.runs)
		}
	}
	dfb := float64(used - segs)
	none := func(int) float64 { return math.NaN() }
	switch {
	case dfb < 1 && dfw < 1:
		return none, 0, false
	case dfw < 1:
		s2 := ssb / dfb
		return func(int) float64 { return s2 }, dfb, false
	case dfb < 1:
		s2 := ssw / dfw
		return func(m int) float64 { return s2 / float64(m) }, dfw, true
	}
	sw2 := ssw / dfw
	msb := ssbw / dfb // E = m·σ_b² + σ_w² (equal runs)
	if !(sw2 > 0) || fTail(msb/sw2, dfb, dfw) > sweepPoolLevel {
		s2 := (ssbw + ssw) / (dfb + dfw)
		return func(m int) float64 { return s2 / float64(m) }, dfb + dfw, true
	}
	mh := float64(used) / inv // the runs of a build, harmonic mean
	sb2 := max(ssb/dfb-sw2/mh, 0)
	return func(m int) float64 { return sb2 + sw2/float64(m) }, dfb, false
}

// fTail is P(F ≥ f) for F with d1 and d2 degrees of freedom.
func fTail(f, d1, d2 float64) float64 {
	switch {
	case math.IsNaN(f):
		return 1
	case f <= 0:
		return 1
	case math.IsInf(f, 1):
		return 0
	}
	return mathext.RegIncBeta(d2/2, d1/2, d2/(d2+d1*f))
}

// comparisons counts the comparisons the search could have made of the
// shape of a change between a and c: the places τ between them that
// leave two valid segments, over every left bound the search could have
// chosen when a is another change (0 when it is the start of the sweep)
// and every right bound when c is (the end when it is the end). A
// change's p-value is multiplied by it (Bonferroni): one step in a sweep
// counts the places between its ends, as Detect does, but in a short
// sweep the search chooses the neighbours too (a dip is a short segment
// it picked), and counting only the places between them leaves several
// times PValue false changes in flat sweeps (docs/changepoint.md,
// "Sweeps").
func (s *sweeper) comparisons(a, c int) int {
	s.prep()
	if !s.counted {
		s.countComparisons()
		s.counted = true
	}
	k := s.nComparisons[b2i(a > 0)][b2i(c < len(s.b))]
	return max(k, 1)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countComparisons fills nComparisons[leftFree][rightFree].
func (s *sweeper) countComparisons() {
	n := len(s.b)
	bs := []int{0} // bounds: the start, each used build after the first, the end
	for i, b := range s.b {
		if b.used && i > s.first {
			bs = append(bs, i)
		}
	}
	bs = append(bs, n)
	s.nComparisons = [2][2]int{}
	for x := 0; x < len(bs); x++ {
		for z := x + 2; z < len(bs); z++ {
			a, c := bs[x], bs[z]
			k := 0
			for y := x + 1; y < z; y++ {
				if s.valid(a, bs[y]) && s.valid(bs[y], c) {
					k++
				}
			}
			if k == 0 {
				continue
			}
			atStart, atEnd := a == 0, c == n
			for lf := 0; lf < 2; lf++ {
				for rf := 0; rf < 2; rf++ {
					if (lf == 1 || atStart) && (rf == 1 || atEnd) {
						s.nComparisons[lf][rf] += k
					}
				}
			}
		}
	}
}

// sweepStats are the statistics of a change between two segments.
type sweepStats struct {
	p, mag   float64
	mb, ma   float64 // levels (of the values the test is on)
	nb, na   int     // used builds
	t, df, d float64
}

// test is the significance of change j of cps: the difference of the
// levels of its two segments against the noise (noise), two-sided
// Student t, times the comparisons the search could have made and the
// ways it could have set builds aside (Bonferroni: it chose the
// best-looking ones).
func (s *sweeper) test(cps []int, j int, v func(int) float64, df float64) sweepStats {
	a, c := around(cps, j, len(s.b))
	tau := cps[j]
	var st sweepStats
	st.mb, st.nb, _ = s.level(a, tau)
	st.ma, st.na, _ = s.level(tau, c)
	st.d = st.ma - st.mb
	st.mag = magnitude(s.unval(st.mb), s.unval(st.ma))
	st.df = df
	st.p = 1
	if st.nb == 0 || st.na == 0 || df < 1 {
		return st
	}
	var vd float64
	for i := a; i < c; i++ {
		if !s.b[i].used {
			continue
		}
		k := st.nb
		if i >= tau {
			k = st.na
		}
		vd += v(s.b[i].runs) / float64(k*k)
	}
	switch {
	case math.IsNaN(vd):
		return st
	case !(vd > 0):
		if st.d != 0 {
			st.p = 0
		}
		return st
	}
	st.t = st.d / math.Sqrt(vd)
	st.p = pValue(st.t*st.t, df) * float64(s.comparisons(a, c)) * s.asideChoices()
	return st
}

// asideChoices counts the ways the search could have set builds aside as
// it did: each end build aside could have stayed, and the interior builds
// aside are k of the n−2 it could have chosen.
func (s *sweeper) asideChoices() float64 {
	n := len(s.b)
	f := 1.0
	k := 0
	for i, b := range s.b {
		if b.used {
			continue
		}
		if i == 0 || i == n-1 {
			f *= 2
			continue
		}
		k++
	}
	for j := 0; j < k; j++ {
		f *= float64(n-2-j) / float64(j+1)
	}
	return f
}

// merge removes candidates until every change stands: first, segments too
// short to be a level (an interior one build: an outlier build, set
// aside, when it is off both neighbours' levels on one side by more than
// sweepOutlierK robust standard deviations; else it joins the nearer
// neighbour; one build of fewer than MinRuns runs at an end joins its
// neighbour, and the end is looked at again after the merge); then the
// least significant while its p-value is at least the sweep's level; then the
// smallest while its magnitude is at most MinMagnitude. Then the changes
// are placed where the values between their neighbours put them, and
// tested again.
func (s *sweeper) merge(cps []int) []int {
	for {
		cps = s.dropEmpty(cps)
		if j, ok := s.shortest(cps); ok {
			cps = s.collapse(cps, j)
			continue
		}
		if len(cps) == 0 {
			return cps
		}
		s.place(cps) // keeps every segment valid
		v, df, _ := s.noise(cps)
		worst, worstP, weakest, weakestMag := -1, 0.0, -1, 0.0
		for j := range cps {
			st := s.test(cps, j, v, df)
			if st.p >= s.p && (worst < 0 || st.p > worstP) {
				worst, worstP = j, st.p
			}
			if st.mag <= s.c.minMag && (weakest < 0 || st.mag < weakestMag) {
				weakest, weakestMag = j, st.mag
			}
		}
		if worst < 0 {
			worst = weakest
		}
		if worst < 0 {
			return cps
		}
		cps = slices.Delete(cps, worst, worst+1)
	}
}

// dropEmpty removes changes whose segment on either side holds no used
// build (after a build was set aside).
func (s *sweeper) dropEmpty(cps []int) []int {
	for j := 0; j <= len(cps); j++ {
		a, c := segment(cps, j, len(s.b))
		if k, _ := s.usedIn(a, c); k == 0 && len(cps) > 0 {
			d := j
			if d == len(cps) {
				d--
			}
			cps = slices.Delete(cps, d, d+1)
			j = -1
		}
	}
	return cps
}

// shortest is the first of the shortest segments that cannot be a level
// (index j: the segment that ends at cps[j], len(cps) for the last).
func (s *sweeper) shortest(cps []int) (int, bool) {
	best, bestK := -1, 0
	for j := 0; j <= len(cps); j++ {
		a, c := segment(cps, j, len(s.b))
		if s.valid(a, c) {
			continue
		}
		if k, _ := s.usedIn(a, c); best < 0 || k < bestK {
			best, bestK = j, k
		}
	}
	return best, best >= 0
}

// collapse resolves segment j (too short): an end segment joins its
// neighbour; an interior one joins the neighbour whose level is nearer,
// and is set aside first when it is one build off both levels on one
// side by more than sweepOutlierK robust standard deviations.
func (s *sweeper) collapse(cps []int, j int) []int {
	n := len(s.b)
	if j == 0 {
		return cps[1:]
	}
	if j == len(cps) {
		return cps[:len(cps)-1]
	}
	a, c := cps[j-1], cps[j]
	pa := 0
	if j > 1 {
		pa = cps[j-2]
	}
	nc := n
	if j+1 < len(cps) {
		nc = cps[j+1]
	}
	ms, k, _ := s.level(a, c)
	ml, kl, _ := s.level(pa, a)
	mr, kr, _ := s.level(c, nc)
	joined := slices.Delete(slices.Clone(cps), j, j+1) // joins the right
	near, nk, na, nb := mr, kr, c, nc
	if math.Abs(ms-ml) <= math.Abs(mr-ms) {
		joined = slices.Delete(slices.Clone(cps), j-1, j) // joins the left
		near, nk, na, nb = ml, kl, pa, a
	}
	if k == 1 && s.minSeg > 1 && (ms-ml)*(ms-mr) > 0 && s.outlier(joined, a, c, ms-near, nk, na, nb, -1, s.c.p) {
		for i := a; i < c; i++ {
			s.setUsed(i, false)
		}
	}
	return joined
}

// outlier says whether the one used build of [a, c), d off the level of
// the nk used builds of [na, nb) next to it, is off by more than the
// noise of the other builds allows (segmented as cps, where it has joined
// its neighbour; the build itself set aside, lest its own deviation hide
// it): a two-sided t test at level, times the used builds it could have
// been.
func (s *sweeper) outlier(cps []int, a, c int, d float64, nk int, na, nb, skip int, level float64) bool {
	used, _ := s.usedIn(0, len(s.b))
	i := a
	for !s.b[i].used {
		i++
	}
	runs := s.b[i].runs
	s.setUsed(i, false)
	v, df, _ := s.noise(cps)
	s.setUsed(i, true)
	if df < 1 || nk == 0 {
		return false
	}
	vd := v(runs)
	for j := na; j < nb; j++ {
		if s.b[j].used && j != skip {
			vd += v(s.b[j].runs) / float64(nk*nk)
		}
	}
	if math.IsNaN(vd) {
		return false
	}
	if !(vd > 0) {
		return d != 0
	}
	return pValue(d*d/vd, df)*float64(used) < level
}

// place moves each change to the split of the builds between its
// neighbours with the least sum of squares about the two levels (ties:
// the nearest to where it is), so that a change is where the values put
// it whatever the candidates' penalty did. It reports whether one moved.
func (s *sweeper) place(cps []int) bool {
	moved := false
	for pass := 0; pass < len(s.b); pass++ {
		any := false
		for j := range cps {
			a, c := around(cps, j, len(s.b))
			best, bestSSE := cps[j], math.Inf(1)
			for t := a + 1; t < c; t++ {
				if !s.b[t].used || !s.valid(a, t) || !s.valid(t, c) {
					continue
				}
				_, _, l := s.level(a, t)
				_, _, r := s.level(t, c)
				if e := l + r; e < bestSSE-1e-12*math.Abs(bestSSE) || (e <= bestSSE+1e-12*math.Abs(bestSSE) && abs(t-cps[j]) < abs(best-cps[j])) {
					best, bestSSE = t, e
				}
			}
			if best != cps[j] && !math.IsInf(bestSSE, 1) {
				cps[j], any, moved = best, true, true
			}
		}
		if !any {
			break
		}
	}
	return moved
}

// endChange looks at the build at end (the oldest or the newest) where it
// is not a segment of its own (fewer than MinRuns runs, or a change its
// runs could not confirm): if it differs from the level next to it (its
// segment's other builds), with the noise of the final segmentation,
// at the weak level (10 × PValue, as the split's; two-sided, times the
// two ends), it is an unconfirmed change: a lead, not a call. Its index
// is 1 for the oldest build (the level after it differs from it).
func (s *sweeper) endChange(cps []int, end int) (ChangePoint, bool) {
	n := len(s.b)
	b := s.b[end]
	if !b.used {
		return ChangePoint{}, false
	}
	// The segment the end build is in, without it.
	a, c := 0, n
	if len(cps) > 0 {
		if end == 0 {
			c = cps[0]
		} else {
			a = cps[len(cps)-1]
		}
	}
	s.setUsed(end, false)
	defer s.setUsed(end, true)
	ml, k, _ := s.level(a, c)
	if k < s.minSeg {
		return ChangePoint{}, false
	}
	v, df, _ := s.noise(cps)
	if df < 1 {
		return ChangePoint{}, false
	}
	var vd float64
	for i := a; i < c; i++ {
		if s.b[i].used {
			vd += v(s.b[i].runs) / float64(k*k)
		}
	}
	vd += v(b.runs)
	d := b.mean - ml
	var p float64
	switch {
	case math.IsNaN(vd):
		return ChangePoint{}, false
	case !(vd > 0):
		if d == 0 {
			return ChangePoint{}, false
		}
	default:
		p = 2 * pValue(d*d/vd, df) // either end
	}
	mb, ma := ml, b.mean
	idx := end
	if end == 0 {
		mb, ma, idx = b.mean, ml, 1
	}
	mag := magnitude(s.unval(mb), s.unval(ma))
	if !(p < s.c.weakP) || mag <= s.c.minMag {
		return ChangePoint{}, false
	}
	cp := ChangePoint{Index: idx, Lo: idx, Hi: idx, PValue: min(p, 1), MeanBefore: s.unval(mb), MeanAfter: s.unval(ma)}
	s.c.finish(&cp)
	return cp, true
}

// result turns the final changes into ChangePoints, with the levels of
// their segments (the geometric means of the runs, build by build, when
// every value is positive; else the means) and the interval that holds
// where each arrived with 95 % probability.
func (s *sweeper) result(cps []int) []ChangePoint {
	if len(cps) == 0 {
		return nil
	}
	v, df, _ := s.noise(cps)
	out := make([]ChangePoint, 0, len(cps))
	for j, tau := range cps {
		a, c := around(cps, j, len(s.b))
		st := s.test(cps, j, v, df)
		cp := ChangePoint{Index: tau, PValue: min(st.p, 1), MeanBefore: s.unval(st.mb), MeanAfter: s.unval(st.ma)}
		cp.StdBefore, cp.StdAfter = s.spread(a, tau), s.spread(tau, c)
		cp.Lo, cp.Hi = s.interval(a, tau, c, v)
		s.c.finish(&cp)
		out = append(out, cp)
	}
	return out
}

// spread is the population standard deviation of the used builds' values
// in [a, c), in the values' units.
func (s *sweeper) spread(a, c int) float64 {
	var xs []float64
	for i := a; i < c; i++ {
		if s.b[i].used {
			xs = append(xs, s.unval(s.b[i].mean))
		}
	}
	if len(xs) == 0 {
		return 0
	}
	_, vr := meanVar(xs)
	return math.Sqrt(vr)
}

// interval is the shortest run of positions around tau that holds where
// the change between a and c arrived with probability credible: the
// posterior of each split τ' of the used builds is ∝ exp(−SSE(τ')/2σ²),
// σ² the variance of a build's value (the mean of v over the builds), as
// locate does for Detect. Lo is the first build after the used build
// before the earliest split, so that a build set aside between two
// levels is in the interval.
func (s *sweeper) interval(a, tau, c int, v func(int) float64) (lo, hi int) {
	var ts []int
	var sse []float64
	var s2 float64
	k := 0
	for i := a; i < c; i++ {
		if s.b[i].used {
			s2 += v(s.b[i].runs)
			k++
		}
	}
	s2 /= float64(max(k, 1))
	best := -1
	for t := a + 1; t < c; t++ {
		if !s.b[t].used || !s.valid(a, t) || !s.valid(t, c) {
			continue
		}
		_, _, l := s.level(a, t)
		_, _, r := s.level(t, c)
		ts, sse = append(ts, t), append(sse, l+r)
		if t == tau {
			best = len(ts) - 1
		}
	}
	if best < 0 || !(s2 > 0) || math.IsNaN(s2) {
		return s.prevUsed(tau) + 1, tau
	}
	w := make([]float64, len(ts))
	var total float64
	for i := range ts {
		w[i] = math.Exp(-(sse[i] - sse[best]) / (2 * s2))
		total += w[i]
	}
	l, r := best, best
	mass := w[best]
	for mass < credible*total {
		wl, wr := -1.0, -1.0
		if l > 0 {
			wl = w[l-1]
		}
		if r+1 < len(w) {
			wr = w[r+1]
		}
		if wl < 0 && wr < 0 {
			break
		}
		if wl >= wr {
			l--
			mass += wl
		} else {
			r++
			mass += wr
		}
	}
	return s.prevUsed(ts[l]) + 1, ts[r]
}

// prevUsed is the last used build before i (−1 for none).
func (s *sweeper) prevUsed(i int) int {
	for j := i - 1; j >= 0; j-- {
		if s.b[j].used {
			return j
		}
	}
	return -1
}

// SweepLevel is the p-value a sweep's change is called at: o's PValue (or
// its default) / sweepStrictness; NaN for options DetectSweep refuses.
func SweepLevel(o Options) float64 {
	c, err := resolve(o, HigherIsBetter)
	if err != nil {
		return math.NaN()
	}
	return c.p / sweepStrictness
}
