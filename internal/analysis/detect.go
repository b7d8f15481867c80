package analysis

import (
	"fmt"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// DetectSettings are the detector's parameters: the defaults (built in,
// then the file's top level, then the command line), and per-test
// overrides from the file, which win for the tests they match.
type DetectSettings struct {
	Tuning `yaml:",inline"`
	Tests  []Override `yaml:"tests"`
	// Floors, if set, is the noise floor of a test's headline on a host
	// (qpslab run --aa): the minimum magnitude of a headline series of
	// one host where neither the command line (MagnitudeGiven) nor the
	// file sets one.
	Floors         func(hostID, suite, test string, threads int, conditions string) (float64, bool) `yaml:"-"`
	MagnitudeGiven bool                                                                             `yaml:"-"`
	// Pair, if set, is qpslab compare's verdict on two builds of a
	// headline series (its own comparison of their labels, from the
	// store), false when it has none: the judgement of two builds whose
	// runs pair (BuildChange, Change.Pair). Without it, Judge on the
	// points' observations.
	Pair func(s history.Series, from, to history.Point) (Verdict, bool) `yaml:"-"`
}

// seriesOptions are the detector's options for series sr: Options, with
// the host's noise floor as the minimum magnitude where nothing sets one;
// why says so, for the messages.
func (s DetectSettings) seriesOptions(base changepoint.Options, sr history.Series) (o changepoint.Options, why string) {
	o = s.Options(base, sr.Test, sr.Metric)
	if s.Floors == nil || s.MagnitudeGiven || s.MinMagnitude != nil || sr.Metric != history.HeadlineMetric || sr.HostID == "" {
		return o, ""
	}
	for _, ov := range s.Tests {
		if ok, _ := path.Match(ov.Match, sr.Test); ok && ov.MinMagnitude != nil {
			if ov.Metric == "" {
				return o, ""
			}
			if ok, _ := path.Match(ov.Metric, sr.Metric); ok {
				return o, ""
			}
		}
	}
	if f, ok := s.Floors(sr.HostID, sr.Suite, sr.Test, sr.Threads, sr.Conditions); ok {
		o.MinMagnitude = f
		return o, " (this host's noise floor for the test, from qpslab run --aa)"
	}
	return o, ""
}

// Override is the settings for the tests (and metrics) its globs match.
type Override struct {
	Match  string `yaml:"match"`  // glob over test labels
	Metric string `yaml:"metric"` // glob over metric names; "" for all
	Tuning `yaml:",inline"`
}

// LoadDetectSettings reads a settings file; a missing file is no settings.
func LoadDetectSettings(file string, mustExist bool) (DetectSettings, error) {
	var s DetectSettings
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) && !mustExist {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("detect settings: %w", err)
	}
	if err := yaml.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("detect settings %s: %w", file, err)
	}
	for i, o := range s.Tests {
		if o.Match == "" {
			return s, fmt.Errorf("detect settings %s: tests[%d] has no match: give a glob over test labels, e.g. \"scan*\"", file, i)
		}
		if _, err := path.Match(o.Match, ""); err != nil {
			return s, fmt.Errorf("detect settings %s: tests[%d] match %q: %v", file, i, o.Match, err)
		}
	}
	return s, nil
}

// apply sets in o the options t sets.
func (t Tuning) apply(o *changepoint.Options) {
	if t.Method != nil {
		o.Method = changepoint.Method(*t.Method)
	}
	if t.PValue != nil {
		o.PValue = *t.PValue
	}
	if t.Window != nil {
		o.Window = *t.Window
	}
	if t.MinMagnitude != nil {
		o.MinMagnitude = *t.MinMagnitude
	}
	if t.MinSegment != nil {
		o.MinSegment = *t.MinSegment
	}
}

// Options returns the options for one series: base (the built-in defaults
// with the command line applied by the caller over the file's top level),
// then the last override that matches.
func (s DetectSettings) Options(base changepoint.Options, test, metric string) changepoint.Options {
	o := base
	for _, ov := range s.Tests {
		if ok, _ := path.Match(ov.Match, test); !ok {
			continue
		}
		if ov.Metric != "" {
			if ok, _ := path.Match(ov.Metric, metric); !ok {
				continue
			}
		}
		ov.apply(&o)
	}
	return o
}

// Check tries the options of every per-test entry over base, so that a bad
// value is found before any series is analysed.
func (s DetectSettings) Check(base changepoint.Options) error {
	for i, ov := range s.Tests {
		o := base
		ov.apply(&o)
		if _, err := changepoint.Detect([]float64{1, 1, 1}, o, changepoint.HigherIsBetter); err != nil {
			return fmt.Errorf("tests[%d] (%s): %v", i, ov.Match, err)
		}
	}
	return nil
}

// Defaults applies the file's top level to o.
func (s DetectSettings) Defaults(o changepoint.Options) changepoint.Options {
	s.apply(&o)
	return o
}

// Tuning is the detector's options as the settings file's top level, a
// per-test entry or the command line sets them: each field is nil unless
// set there.
type Tuning struct {
	PValue       *float64 `yaml:"pvalue"`
	Window       *int     `yaml:"window"`
	MinMagnitude *float64 `yaml:"min_magnitude"`
	MinSegment   *int     `yaml:"min_segment"`
	Method       *string  `yaml:"method"`
}

// Resolve is the options every series starts from: the built-in defaults,
// then the settings file's top level, then the command line; it checks
// them and every per-test entry, so that a bad value is one error before
// any series is analysed. where names the settings file for the error.
func (s DetectSettings) Resolve(given Tuning, where string) (changepoint.Options, error) {
	o := s.Defaults(changepoint.Options{Window: changepoint.DefaultWindow, PValue: changepoint.DefaultPValue, MinSegment: changepoint.DefaultMinSegment, Method: changepoint.Calibrated})
	// The detector reads 0 as "its default": given on the command line, 0
	// is a value to refuse, never to replace silently.
	if given.Window != nil && *given.Window < 2 {
		return o, fmt.Errorf("--window %d: give 2 points or more", *given.Window)
	}
	if given.MinSegment != nil && *given.MinSegment < 1 {
		return o, fmt.Errorf("--min-segment %d: give 1 point or more", *given.MinSegment)
	}
	given.apply(&o)
	if _, err := changepoint.Detect([]float64{1, 1, 1}, o, changepoint.HigherIsBetter); err != nil {
		return o, fmt.Errorf("%v: fix --pvalue, --window, --min-magnitude, --min-segment or --method (or %s)", err, where)
	}
	if err := s.Check(o); err != nil {
		return o, fmt.Errorf("%v: fix it in %s", err, where)
	}
	return o, nil
}

// Change is one change point of one series, and where it arrived.
type Change struct {
	Series     string        `json:"series"`
	Suite      string        `json:"suite,omitempty"`
	Test       string        `json:"test"`
	Metric     string        `json:"metric"`
	Threads    int           `json:"threads,omitempty"`
	Config     string        `json:"config,omitempty"`
	Host       string        `json:"host,omitempty"`
	Kind       string        `json:"kind"` // regression or improvement; "unconfirmed regression" or "unconfirmed improvement" (Unconfirmed)
	Magnitude  float64       `json:"magnitude"`
	MeanBefore float64       `json:"mean_before"`
	MeanAfter  float64       `json:"mean_after"`
	PValue     float64       `json:"pvalue"`
	Index      int           `json:"index"`
	Points     int           `json:"points"`
	Order      string        `json:"order"`
	Arrived    history.Point `json:"arrived"` // the first point after the change
	Before     history.Point `json:"before"`  // the last point before it
	// Earliest and Latest bound where the change arrived, at 95 %
	// confidence: it is one of the points from Earliest to Latest.
	Earliest history.Point `json:"earliest"`
	Latest   history.Point `json:"latest"`
	// Last: the series' last change point, so its newest point is at the
	// new level. New: the newest point made it a change point (detect
	// does not find it without that point); what --fail-on looks at.
	Last    bool                `json:"last"`
	New     bool                `json:"new"`
	Options changepoint.Options `json:"options"`
	// Method is how it was found: ChangeSweep, ChangeWindows or
	// ChangeBuilds.
	Method string `json:"method"`
	// Unconfirmed: a change at either end of a sweep that rests on one
	// build (of fewer than changepoint.MinRuns runs, or whose runs vary
	// less than the builds do), or a lead (changepoint.SweepResult.Leads:
	// significant at a tenth of the p-value, short of a sweep's call at a
	// hundredth), significant as measured but no call (the gate and the
	// alerts pass it by); Confirm says what would confirm it.
	Unconfirmed bool   `json:"unconfirmed,omitempty"`
	Confirm     string `json:"confirm,omitempty"`
	// Pair is qpslab compare's verdict on the two builds either side of
	// the change where one plan measured them side by side (paired
	// rounds); Note says where it and the history give two answers, and
	// why.
	Pair *Verdict `json:"pair,omitempty"`
	Note string   `json:"note,omitempty"`
}

// How a change was found (Change.Method).
const (
	// ChangeSweep: the builds of a history of 4 to changepoint.SweepMax
	// builds and their runs (changepoint.DetectSweep).
	ChangeSweep = "sweep"
	// ChangeWindows: the windowed method over the points
	// (changepoint.Detect).
	ChangeWindows = "windows"
	// ChangeBuilds: two neighbouring builds of a history of two or three,
	// compared by their runs (BuildChange).
	ChangeBuilds = "builds"
)

// Detect finds the change points of every series long enough to have
// one: a sweep of builds (4 to changepoint.SweepMax, the calibrated
// method) by their runs, a longer history by the windowed method (Builds
// compares the builds of shorter ones).
func Detect(series []history.Series, settings DetectSettings, base changepoint.Options) ([]Change, error) {
	var out []Change
	for _, s := range series {
		o, _ := settings.seriesOptions(base, s)
		if isSweep(s, o) {
			cs, err := detectSweep(s, o, settings)
			if err != nil {
				return nil, err
			}
			out = append(out, cs...)
			continue
		}
		if shortOf(s, settings, base) > 0 {
			continue
		}
		vals := make([]float64, len(s.Points))
		for i, p := range s.Points {
			vals[i] = p.Value
		}
		dir := direction(s)
		e := scaleOf(vals)
		cps, err := changepoint.Detect(vals, o, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name(), err)
		}
		for k, cp := range cps {
			c := newChange(s, cp, e, o, ChangeWindows)
			c.Last = k == len(cps)-1
			if c.Last {
				// Established by the newest point: not found (anywhere in
				// its interval) without it.
				prev, err := changepoint.Detect(vals[:len(vals)-1], o, dir)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", s.Name(), err)
				}
				c.New = !slices.ContainsFunc(prev, func(p changepoint.ChangePoint) bool {
					return p.Regression == cp.Regression && p.Index >= cp.Lo && p.Index <= cp.Hi
				})
			}
			pairNote(&c, s, settings)
			out = append(out, c)
		}
	}
	return out, nil
}

func direction(s history.Series) changepoint.Direction {
	if s.HigherIsBetter {
		return changepoint.HigherIsBetter
	}
	return changepoint.LowerIsBetter
}

// newChange is change point cp of s, its means scaled back by 2^e.
func newChange(s history.Series, cp changepoint.ChangePoint, e int, o changepoint.Options, method string) Change {
	cp.MeanBefore, cp.MeanAfter = result.ClampFinite(math.Ldexp(cp.MeanBefore, e)), result.ClampFinite(math.Ldexp(cp.MeanAfter, e))
	cp.Magnitude = result.ClampFinite(cp.Magnitude) // a change from a mean near 0
	c := Change{Series: s.Name(), Suite: s.Suite, Test: s.Test, Metric: s.Metric, Threads: s.Threads, Config: s.Config, Host: s.Host,
		Kind: "improvement", Magnitude: cp.Magnitude, MeanBefore: cp.MeanBefore, MeanAfter: cp.MeanAfter, PValue: cp.PValue,
		Index: cp.Index, Points: len(s.Points), Order: s.Order, Arrived: s.Points[cp.Index], Options: o,
		Earliest: s.Points[cp.Lo], Latest: s.Points[cp.Hi], Method: method}
	if cp.Index > 0 {
		c.Before = s.Points[cp.Index-1]
	}
	if cp.Regression {
		c.Kind = "regression"
	}
	return c
}

// buildsOrder says whether s's points are builds (in version, commit or
// name order), not runs.
func buildsOrder(s history.Series) bool {
	switch s.Order {
	case history.OrderVersion, history.OrderCommit, history.OrderName, history.OrderVersionName:
		return true
	}
	return false
}

// calibrated says whether o asks for the calibrated method.
func calibrated(o changepoint.Options) bool {
	return o.Method == "" || o.Method == changepoint.Calibrated
}

// isSweep says whether s is a sweep for the calibrated method: 4 to
// changepoint.SweepMax builds.
func isSweep(s history.Series, o changepoint.Options) bool {
	return calibrated(o) && buildsOrder(s) && len(s.Points) >= changepoint.SweepMin && len(s.Points) <= changepoint.SweepMax
}

// sweepRuns are the runs of s's builds (a point without them: its value).
func sweepRuns(s history.Series) [][]float64 {
	runs := make([][]float64, len(s.Points))
	for i, p := range s.Points {
		runs[i] = p.Values
		if len(runs[i]) == 0 {
			runs[i] = []float64{p.Value}
		}
	}
	return runs
}

// detectSweep finds the changes of sweep s (changepoint.DetectSweep),
// confirmed and unconfirmed, in index order.
func detectSweep(s history.Series, o changepoint.Options, settings DetectSettings) ([]Change, error) {
	runs := sweepRuns(s)
	var all []float64
	for _, r := range runs {
		all = append(all, r...)
	}
	e := scaleOf(slices.Clone(all))
	if e != 0 {
		for i, r := range runs {
			runs[i] = make([]float64, len(r))
			for j, v := range r {
				runs[i][j] = math.Ldexp(result.ClampFinite(v), -e)
			}
		}
	}
	dir := direction(s)
	res, err := changepoint.DetectSweep(runs, o, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name(), err)
	}
	var prev []changepoint.ChangePoint
	if len(runs)-1 >= changepoint.SweepMin {
		p, err := changepoint.DetectSweep(runs[:len(runs)-1], o, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name(), err)
		}
		prev = p.ChangePoints
	}
	var out []Change
	for k, cp := range res.ChangePoints {
		c := newChange(s, cp, e, o, ChangeSweep)
		c.Last = k == len(res.ChangePoints)-1
		c.New = c.Last && !slices.ContainsFunc(prev, func(p changepoint.ChangePoint) bool {
			return p.Regression == cp.Regression && p.Index >= cp.Lo && p.Index <= cp.Hi
		})
		pairNote(&c, s, settings)
		out = append(out, c)
	}
	for _, cp := range res.Unconfirmed {
		c := newChange(s, cp, e, o, ChangeSweep)
		c.Unconfirmed, c.Kind = true, "unconfirmed "+c.Kind
		c.Last = cp.Index == len(s.Points)-1
		odd, side := c.Arrived, "after"
		if !c.Last {
			odd, side = c.Before, "before"
		}
		if odd.N >= changepoint.MinRuns {
			c.Confirm = fmt.Sprintf("it rests on one build, %s, of %s, and the builds vary more than their runs: another build at its level %s it would confirm it",
				pointWords(odd), runWords(odd.N), side)
		} else {
			c.Confirm = fmt.Sprintf("it rests on one build, %s, of %s: another build at its level %s it, or %d runs of it (qpslab run --repeat %d), would confirm it",
				pointWords(odd), runWords(odd.N), side, changepoint.MinRuns, changepoint.MinRuns)
		}
		out = append(out, c)
	}
	for k, cp := range res.Leads {
		c := newChange(s, cp, e, o, ChangeSweep)
		c.Unconfirmed, c.Kind = true, "unconfirmed "+c.Kind
		c.Last = k == len(res.Leads)-1 && !slices.ContainsFunc(res.ChangePoints, func(p changepoint.ChangePoint) bool { return p.Index > cp.Index })
		c.Confirm = fmt.Sprintf("a lead, short of a call (p below %.2g for a sweep): more runs of the builds either side, %s and %s (qpslab run --repeat %d), would confirm it or clear it",
			changepoint.SweepLevel(o), pointWords(c.Before), pointWords(c.Arrived), changepoint.MinRuns)
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b Change) int { return a.Index - b.Index })
	return out, nil
}

// pointWords names a build's point: its build name, and its version
// when that says more.
func pointWords(p history.Point) string {
	if p.Version != "" && p.Version != p.Build {
		return p.Build + " " + p.Version
	}
	return p.Build
}

func runWords(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", max(n, 1))
}

// pairNote gives change c compare's verdict on the builds either side of
// it where one plan measured them side by side (their rounds pair), and
// says so where the two answers differ: a paired run of two builds can be
// undecided where the builds around them make the change certain.
func pairNote(c *Change, s history.Series, settings DetectSettings) {
	if !buildsOrder(s) || c.Index == 0 || !paired(c.Before, c.Arrived) {
		return
	}
	v := judgePair(s, c.Before, c.Arrived, settings)
	c.Pair = &v
	regression := strings.HasSuffix(c.Kind, "regression")
	if v.Changed() && (v.Kind == KindWorse) == regression {
		return
	}
	what := "undecided"
	switch {
	case v.Changed():
		what = "the opposite, " + verdictWords(v)
	case v.Kind != KindSame:
		what = verdictWords(v)
	}
	c.Note = fmt.Sprintf("compare of %s and %s (paired rounds of one plan) says %s", pointWords(c.Before), pointWords(c.Arrived), what)
	if why := verdictWhy(v); why != "" {
		c.Note += " (" + why + ")"
	}
	c.Note += ": the history's change rests on the builds around them too, the paired verdict on these two alone"
}

// scaleOf scales vals in place by a power of two when they are so large
// (or so small) that the detection's sums of squares would overflow (or
// underflow): a series of 1e300 values is detected as one of values near
// 1, which changes no relative figure (a power of two scales exactly).
// It returns the exponent to scale the means back by (0: not scaled).
func scaleOf(vals []float64) int {
	hi, lo := 0.0, math.Inf(1)
	for _, v := range vals {
		if a := math.Abs(v); a > 0 && !math.IsInf(a, 0) {
			hi, lo = math.Max(hi, a), math.Min(lo, a)
		}
	}
	if hi == 0 || (hi < 0x1p400 && lo > 0x1p-400) {
		return 0
	}
	_, e := math.Frexp(hi)
	for i, v := range vals {
		vals[i] = math.Ldexp(result.ClampFinite(v), -e)
	}
	return e
}

// Series makes the history series of runs for each named metric: per
// suite, test (those matching the glob testPattern; "" for all), host,
// config and thread count.
func Series(runs []result.Run, testPattern string, metrics []string, hostOf func(result.Run) string) ([]history.Series, error) {
	if testPattern != "" {
		if _, err := path.Match(testPattern, ""); err != nil {
			return nil, fmt.Errorf("--test %q is not a valid glob: %v", testPattern, err)
		}
	}
	var ms []result.Metric
	for _, name := range metrics {
		m, err := result.MetricNamed(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	var kept []result.Run
	for _, r := range runs {
		if ok, _ := path.Match(testPattern, r.Test); testPattern == "" || ok {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("no results match --test %s", testPattern)
	}
	var out []history.Series
	for _, m := range ms {
		out = append(out, history.FromRuns(kept, m, hostOf)...)
	}
	return out, nil
}

// TooShort counts the series too short for any change point under their
// options that Builds does not compare either (a series of one build's
// runs, or of builds without versions): a change needs MinSegment points
// on each side (at least 2 in all, whatever MinSegment is). need is the
// most points any of them needs.
func TooShort(series []history.Series, settings DetectSettings, base changepoint.Options) (n, need int) {
	for _, s := range series {
		if want := shortOf(s, settings, base); want > 0 && !comparesBuilds(s, want) {
			n++
			need = max(need, want)
		}
	}
	return n, need
}

// Needs returns the points a change point in s needs if s has fewer, else
// 0 (a sweep of changepoint.SweepMin builds, or MinSegment points on each
// side of a history of runs).
func Needs(s history.Series, settings DetectSettings, base changepoint.Options) int {
	return shortOf(s, settings, base)
}

// shortOf returns the points a change point in s needs if s has fewer,
// else 0: changepoint.SweepMin builds for the calibrated method, else
// MinSegment points on each side (at least 2 in all).
func shortOf(s history.Series, settings DetectSettings, base changepoint.Options) int {
	o := settings.Options(base, s.Test, s.Metric)
	want := 2 * max(o.MinSegment, 1)
	if calibrated(o) && buildsOrder(s) {
		want = changepoint.SweepMin
	}
	if len(s.Points) < want {
		return want
	}
	return 0
}
