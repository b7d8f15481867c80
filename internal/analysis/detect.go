package analysis

import (
	"fmt"
	"math"
	"os"
	"path"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// DetectSettings are the detector's parameters: the defaults (built in,
// then the file's top level, then the command line), and per-test
// overrides from the file, which win for the tests they match.
type DetectSettings struct {
	PValue       *float64   `yaml:"pvalue"`
	Window       *int       `yaml:"window"`
	MinMagnitude *float64   `yaml:"min_magnitude"`
	MinSegment   *int       `yaml:"min_segment"`
	Method       *string    `yaml:"method"`
	Tests        []Override `yaml:"tests"`
	// Floors, if set, is the noise floor of a test's headline on a host
	// (qpslab run --aa): the minimum magnitude of a headline series of
	// one host where neither the command line (MagnitudeGiven) nor the
	// file sets one.
	Floors         func(hostID, suite, test string, threads int, conditions string) (float64, bool) `yaml:"-"`
	MagnitudeGiven bool                                                                             `yaml:"-"`
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
	Match        string   `yaml:"match"`  // glob over test labels
	Metric       string   `yaml:"metric"` // glob over metric names; "" for all
	PValue       *float64 `yaml:"pvalue"`
	Window       *int     `yaml:"window"`
	MinMagnitude *float64 `yaml:"min_magnitude"`
	MinSegment   *int     `yaml:"min_segment"`
	Method       *string  `yaml:"method"`
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

func apply(o *changepoint.Options, p *float64, w *int, m *float64, seg *int, method *string) {
	if method != nil {
		o.Method = changepoint.Method(*method)
	}
	if p != nil {
		o.PValue = *p
	}
	if w != nil {
		o.Window = *w
	}
	if m != nil {
		o.MinMagnitude = *m
	}
	if seg != nil {
		o.MinSegment = *seg
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
		apply(&o, ov.PValue, ov.Window, ov.MinMagnitude, ov.MinSegment, ov.Method)
	}
	return o
}

// Check tries the options of every per-test entry over base, so that a bad
// value is found before any series is analysed.
func (s DetectSettings) Check(base changepoint.Options) error {
	for i, ov := range s.Tests {
		o := base
		apply(&o, ov.PValue, ov.Window, ov.MinMagnitude, ov.MinSegment, ov.Method)
		if _, err := changepoint.Detect([]float64{1, 1, 1}, o, changepoint.HigherIsBetter); err != nil {
			return fmt.Errorf("tests[%d] (%s): %v", i, ov.Match, err)
		}
	}
	return nil
}

// Defaults applies the file's top level to o.
func (s DetectSettings) Defaults(o changepoint.Options) changepoint.Options {
	apply(&o, s.PValue, s.Window, s.MinMagnitude, s.MinSegment, s.Method)
	return o
}

// Given are the detector options given on the command line: each field is
// nil unless its flag was set.
type Given struct {
	PValue       *float64
	Window       *int
	MinMagnitude *float64
	MinSegment   *int
	Method       *string
}

// Resolve is the options every series starts from: the built-in defaults,
// then the settings file's top level, then the command line; it checks
// them and every per-test entry, so that a bad value is one error before
// any series is analysed. where names the settings file for the error.
func (s DetectSettings) Resolve(given Given, where string) (changepoint.Options, error) {
	o := s.Defaults(changepoint.Options{Window: changepoint.DefaultWindow, PValue: changepoint.DefaultPValue, MinSegment: changepoint.DefaultMinSegment, Method: changepoint.Calibrated})
	// The detector reads 0 as "its default": given on the command line, 0
	// is a value to refuse, never to replace silently.
	if given.Window != nil && *given.Window < 2 {
		return o, fmt.Errorf("--window %d: give 2 points or more", *given.Window)
	}
	if given.MinSegment != nil && *given.MinSegment < 1 {
		return o, fmt.Errorf("--min-segment %d: give 1 point or more", *given.MinSegment)
	}
	apply(&o, given.PValue, given.Window, given.MinMagnitude, given.MinSegment, given.Method)
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
	Kind       string        `json:"kind"` // regression or improvement
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
}

// Detect finds the change points of every series long enough to have
// one (Builds compares the builds of shorter ones).
func Detect(series []history.Series, settings DetectSettings, base changepoint.Options) ([]Change, error) {
	var out []Change
	for _, s := range series {
		if shortOf(s, settings, base) > 0 {
			continue
		}
		o, _ := settings.seriesOptions(base, s)
		vals := make([]float64, len(s.Points))
		for i, p := range s.Points {
			vals[i] = p.Value
		}
		dir := changepoint.HigherIsBetter
		if !s.HigherIsBetter {
			dir = changepoint.LowerIsBetter
		}
		e := scaleOf(vals)
		cps, err := changepoint.Detect(vals, o, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name(), err)
		}
		for k, cp := range cps {
			cp.MeanBefore, cp.MeanAfter = result.ClampFinite(math.Ldexp(cp.MeanBefore, e)), result.ClampFinite(math.Ldexp(cp.MeanAfter, e))
			cp.Magnitude = result.ClampFinite(cp.Magnitude) // a change from a mean near 0
			c := Change{Series: s.Name(), Suite: s.Suite, Test: s.Test, Metric: s.Metric, Threads: s.Threads, Config: s.Config, Host: s.Host,
				Kind: "improvement", Magnitude: cp.Magnitude, MeanBefore: cp.MeanBefore, MeanAfter: cp.MeanAfter, PValue: cp.PValue,
				Index: cp.Index, Points: len(vals), Order: s.Order, Arrived: s.Points[cp.Index], Options: o,
				Earliest: s.Points[cp.Lo], Latest: s.Points[cp.Hi], Last: k == len(cps)-1}
			if cp.Index > 0 {
				c.Before = s.Points[cp.Index-1]
			}
			if cp.Regression {
				c.Kind = "regression"
			}
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
			out = append(out, c)
		}
	}
	return out, nil
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

// shortOf returns the points a change point in s needs if s has fewer, else 0.
func shortOf(s history.Series, settings DetectSettings, base changepoint.Options) int {
	o := settings.Options(base, s.Test, s.Metric)
	if want := 2 * max(o.MinSegment, 1); len(s.Points) < want {
		return want
	}
	return 0
}
