package selector

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/store"
)

// DetectQuery is what qpslab detect asks: the series of the store (or of
// a history file, Input) and the settings to find their change points
// with.
type DetectQuery struct {
	History HistoryQuery
	// Input is a history file read instead of the store: Otava's CSV
	// (TimeColumn its time column) or Nyrkiö's JSON; Lower its metrics
	// where lower is better (nil: guessed from their names).
	Input, TimeColumn string
	Lower             []string
	// SettingsFile holds the settings (per-test overrides); Options and
	// Method are the command line's, each applied where Given says it was
	// given (analysis.DetectSettings.Resolve). FailOn is the CI gate
	// (regression or regression:N%), when given.
	SettingsFile   string
	Options        changepoint.Options
	Method, FailOn string
	// Given says which of the command's flags were given: a flag that
	// selects in the store does nothing with Input, and the reverse.
	Given func(flag string) bool
}

// Detection is what detect found: the series, their change points, the
// few builds' verdicts, and how many series are too short for either
// (Need: the most points one of them needs).
type Detection struct {
	Series      []history.Series
	Changes     []analysis.Change
	Builds      []analysis.BuildChange
	Short, Need int
	Gate        *analysis.Gate // --fail-on's, if given
}

// Detect reads q's series and finds their change points with the store's
// noise floors: the one detection of qpslab detect; the dashboard finds
// each test's with the same History and analysis.Detect.
func Detect(ctx context.Context, open func() (*store.Store, error), q DetectQuery) (Detection, error) {
	var d Detection
	given := q.Given
	if given == nil {
		given = func(string) bool { return false }
	}
	settings, err := analysis.LoadDetectSettings(q.SettingsFile, given("settings"))
	if err != nil {
		return d, err
	}
	if given("fail-on") {
		g, err := analysis.ParseGate(q.FailOn)
		if err != nil {
			return d, err
		}
		d.Gate = &g
	}
	o := q.Options
	base, err := settings.Resolve(analysis.Tuning{PValue: ifGiven(given, "pvalue", &o.PValue), Window: ifGiven(given, "window", &o.Window),
		MinMagnitude: ifGiven(given, "min-magnitude", &o.MinMagnitude), MinSegment: ifGiven(given, "min-segment", &o.MinSegment), Method: ifGiven(given, "method", &q.Method)}, q.SettingsFile)
	if err != nil {
		return d, err
	}
	if q.Input != "" {
		for _, name := range []string{"test", "threads", "host", "config", "suite"} {
			if given(name) {
				return d, bad("--%s selects results in the store; with --input it would do nothing: leave it out", name)
			}
		}
		lower := q.Lower
		if !given("lower-is-better") {
			lower = nil
		}
		if d.Series, err = history.Read(q.Input, q.TimeColumn, lower); err != nil {
			return d, err
		}
		if given("metric") {
			keep := history.OfMetrics(d.Series, q.History.Metrics)
			if len(keep) == 0 {
				return d, bad("--metric %s: %s has %s", strings.Join(q.History.Metrics, ","), q.Input, strings.Join(history.Metrics(d.Series), ", "))
			}
			d.Series = keep
		}
	} else {
		for _, name := range []string{"time-column", "lower-is-better"} {
			if given(name) {
				return d, bad("--%s is for --input files; the store knows its metrics", name)
			}
		}
		if err := q.History.Check(); err != nil {
			return d, err
		}
		st, err := open()
		if err != nil {
			return d, err
		}
		defer st.Close()
		if d.Series, err = History(ctx, st, q.History); err != nil {
			return d, err
		}
		// The noise floor of a calibrated host is a headline series'
		// minimum magnitude unless one is given; two builds measured side
		// by side are judged as qpslab compare judges them.
		if settings, err = Floors(ctx, st, settings); err != nil {
			return d, err
		}
		settings.MagnitudeGiven = given("min-magnitude")
		settings.Pair = new(Pairs).Judge(ctx, st)
	}
	if d.Changes, err = analysis.Detect(d.Series, settings, base); err != nil {
		return d, err
	}
	d.Builds = analysis.Builds(d.Series, settings, base)
	d.Short, d.Need = analysis.TooShort(d.Series, settings, base)
	return d, nil
}

// Pairs keeps the comparisons Judge made, by their labels and selection,
// so that the tests of two builds cost one comparison. Its zero value is
// empty and ready; it may be shared by goroutines.
type Pairs struct {
	mu  sync.Mutex
	cmp map[string]*analysis.Comparison
}

// Judge is qpslab compare's verdict on two builds of a headline series
// (analysis.DetectSettings.Pair): the comparison qpslab compare makes of
// their labels (BUILD.CONFIG, the series' engine) with the series' suite,
// thread count and host (Selection.Compare: the pools of tests, the noise
// floor, the looks of --until-decided), its row of the series' test and
// conditions; false where there is none.
func (p *Pairs) Judge(ctx context.Context, st *store.Store) func(s history.Series, from, to history.Point) (analysis.Verdict, bool) {
	return func(s history.Series, from, to history.Point) (analysis.Verdict, bool) {
		if s.Config == "" || from.Build == "" || to.Build == "" || from.Build == to.Build {
			return analysis.Verdict{}, false
		}
		labels := []string{label.Of(from.Build, s.Config, s.StorageEngine).String(), label.Of(to.Build, s.Config, s.StorageEngine).String()}
		sel := Selection{Suite: s.Suite, Threads: s.Threads, Host: s.Host}
		key := strings.Join(append(slices.Clone(labels), s.Suite, strconv.Itoa(s.Threads), s.Host), "\x00")
		p.mu.Lock()
		cmp, done := p.cmp[key]
		p.mu.Unlock()
		if !done {
			c, _, err := sel.Compare(ctx, st, labels, "", nil)
			if err != nil {
				c = nil // no comparison: the caller judges the points
			}
			cmp = c
			p.mu.Lock()
			if p.cmp == nil {
				p.cmp = map[string]*analysis.Comparison{}
			}
			p.cmp[key] = cmp
			p.mu.Unlock()
		}
		if cmp == nil {
			return analysis.Verdict{}, false
		}
		cond := labelConditions(s.Conditions)
		for _, row := range cmp.Rows {
			if row.Test == s.Test && row.Threads == s.Threads && row.Conditions == cond && len(row.Others) == 1 && !row.Others[0].Missing {
				return row.Others[0].Verdict, true
			}
		}
		return analysis.Verdict{}, false
	}
}

// labelConditions are a series' conditions as a comparison's rows name
// them (result.Run.LabelConditions: without the engine, which the label
// names).
func labelConditions(c string) string {
	var kv []string
	for _, x := range strings.Split(c, ",") {
		if x != "" && !strings.HasPrefix(x, "engine=") {
			kv = append(kv, x)
		}
	}
	return strings.Join(kv, ",")
}

// ifGiven is p when flag name was given, else nil.
func ifGiven[T any](given func(string) bool, name string, p *T) *T {
	if given(name) {
		return p
	}
	return nil
}

// TooShort is the line that says how many series are too short, or "".
func (d Detection) TooShort() string {
	if d.Short == 0 {
		return ""
	}
	rule := fmt.Sprintf("--min-segment %d on each side", d.Need/2)
	if d.Need == changepoint.SweepMin {
		rule = fmt.Sprintf("a sweep of %d builds", changepoint.SweepMin)
	}
	return fmt.Sprintf("%d of %d series have fewer than the %d points a change point needs (%s) and no builds to compare: run more builds, or lower --min-segment\n",
		d.Short, len(d.Series), d.Need, rule)
}
