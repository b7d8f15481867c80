package selector

import (
	"context"
	"fmt"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/history"
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
	// Settings and Base are the settings file's and the options every
	// series starts from (analysis.DetectSettings.Resolve).
	Settings analysis.DetectSettings
	Base     changepoint.Options
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
	settings := q.Settings
	if q.Input != "" {
		for _, name := range []string{"test", "threads", "host", "config", "suite"} {
			if given(name) {
				return d, bad("--%s selects results in the store; with --input it would do nothing: leave it out", name)
			}
		}
		var err error
		if d.Series, err = history.Read(q.Input, q.TimeColumn, q.Lower); err != nil {
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
		if q.History.Threads < 0 {
			return d, bad("--threads %d: give a thread count of 1 or more, or leave it out for all", q.History.Threads)
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
		// minimum magnitude unless one is given.
		if settings, err = Floors(ctx, st, settings); err != nil {
			return d, err
		}
		settings.MagnitudeGiven = given("min-magnitude")
	}
	var err error
	if d.Changes, err = analysis.Detect(d.Series, settings, q.Base); err != nil {
		return d, err
	}
	d.Builds = analysis.Builds(d.Series, settings, q.Base)
	d.Short, d.Need = analysis.TooShort(d.Series, settings, q.Base)
	return d, nil
}

// TooShort is the line that says how many series are too short, or "".
func (d Detection) TooShort() string {
	if d.Short == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d series have fewer than the %d points a change point needs (--min-segment %d on each side) and no builds to compare: run more builds, or lower --min-segment\n",
		d.Short, len(d.Series), d.Need, d.Need/2)
}
