package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/store"
)

type cpRow struct {
	Anchor, Kind, Class, Magnitude, Means, PValue, Arrived, Commit, Time, Before, Zoom, Compare, Triage string
}

type seriesView struct {
	Name, Anchor, Href, Order, Runs, ZoomOut, Why string
	Points                                        int
	Zoomed                                        bool
	Chart                                         template.HTML
	Changes                                       []cpRow
}

func (s *Server) pageHistory(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	suite, test := r.PathValue("suite"), r.PathValue("test")
	q := r.URL.Query()
	m, err := metricParam(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f, err := parseSeriesFilter(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	series, err := s.cache.history(ctx, suite, test, m.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data := struct {
		Suite, Test, Metric, All, JSON string
		Narrowed                       bool
		Metrics                        []string
		Series                         []seriesView
		Filter                         historyFilter
		// Overlay is the shown series on one chart (two or more, unless
		// view=multiples asks for a chart each); Lines lists them.
		Overlay          template.HTML
		Lines            []overlayLine
		Multiples, Total int
		MultiplesHref    string
	}{Suite: suite, Test: test, Metric: m.Name, Metrics: historyMetrics(suite, m.Name), Narrowed: f.any(),
		All:  withQuery(testHref(suite, test), url.Values{"metric": {m.Name}}),
		JSON: withQuery("/api/v1/history", mergeValues(url.Values{"suite": {suite}, "test": {test}}, q))}
	var shown []Series
	for _, sr := range series {
		if f.match(sr.Series) {
			shown = append(shown, sr)
		}
	}
	if len(shown) == 0 && f.any() {
		s.fail(w, r, notFound("no series of %s %s with metric %s matches these threads, config, flavor, host and cond: see %s", suite, test, m.Name, data.All))
		return
	}
	if _, err := clampWindow(q.Get("from"), q.Get("to"), math.MaxInt); err != nil {
		s.fail(w, r, err)
		return
	}
	view := q.Get("view")
	if view != "" && view != "overlay" && view != "multiples" {
		s.fail(w, r,
			badInput("view=%s: use overlay (one chart of every series shown, the default) or multiples (a chart each)", view))
		return
	}
	data.Filter, data.Total = newHistoryFilter(series, q), len(series)
	if len(shown) > 1 && view != "multiples" {
		labels := report.Distinguishing(seriesOf(shown))
		data.Filter.Builds = report.OverlayBuilds(seriesOf(shown))
		data.Overlay = report.OverlayChart(fmt.Sprintf("%s %s: %d series", test, m.Name, len(shown)), seriesOf(shown), labels,
			q.Get("first"), q.Get("last"))
		for i, sr := range shown {
			l := overlayLine{Name: labels[i], Full: sr.Name(), Colour: report.LabelColour(i), Href: seriesHref(suite,
				test, sr.Series), Points: len(sr.Points)}
			if n := len(sr.Points); n > 0 {
				l.Latest = strings.TrimSpace(report.Num(sr.Points[n-1].Value) + " " + sr.Unit)
			}
			if n := len(sr.Changes); n > 0 {
				c := sr.Changes[n-1]
				l.Change, l.Class, l.ChangeHref = changeLabel(c), "cp-"+c.Kind, changeHref(suite, test, sr.Series, c)
			}
			data.Lines = append(data.Lines, l)
		}
		mq := mergeValues(url.Values{"view": {"multiples"}}, q)
		data.MultiplesHref, data.Multiples = withQuery(testHref(suite, test), mq), len(shown)
		s.render(w, r, http.StatusOK, "history", page{Title: test + " " + m.Name, Data: data})
		return
	}
	triages, err := s.st.Triages(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var all []store.RunInfo // the test's runs, read once for every series' point links
	set := s.settings()
	for _, sr := range shown {
		win := window{0, len(sr.Points), len(sr.Points)}
		if len(shown) == 1 {
			if win, err = clampWindow(q.Get("from"), q.Get("to"), len(sr.Points)); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		href := seriesHref(suite, test, sr.Series)
		v := seriesView{Name: sr.Name(), Anchor: seriesAnchor(sr.Series), Href: href, Order: sr.Order,
			Points: len(sr.Points), Zoomed: win.From > 0 || win.To < win.N}
		rq := url.Values{"suite": {suite}, "test": {test}}
		if sr.Threads > 0 {
			rq.Set("threads", strconv.Itoa(sr.Threads))
		}
		if sr.Host != "" {
			rq.Set("host", sr.Host)
		}
		v.Runs = withQuery("/runs", rq)
		if v.Zoomed {
			span := win.To - win.From
			zq := seriesParams(sr.Series)
			zq.Set("from", strconv.Itoa(max(0, win.From-span/2)))
			zq.Set("to", strconv.Itoa(min(win.N, win.To+span/2)))
			v.ZoomOut = withQuery(testHref(suite, test), zq)
		}
		links := chartLinks{triage: func(c analysis.Change) string { return changeTriage(triages, sr.Series, c) }}
		links.noise, links.noiseWhat = s.noiseBand(sr, set)
		if win.To-win.From <= maxBuckets {
			if all == nil {
				if all, err = s.testRuns(ctx, suite, test); err != nil {
					s.fail(w, r, err)
					return
				}
			}
			if links.point, err = s.pointLinks(ctx, suite, sr.Series, all); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		v.Chart = historyChartLinked(sr, win, href, links)
		for _, c := range sr.Changes {
			row := cpRow{Anchor: cpAnchor(c), Kind: c.Kind, Class: "cp-" + c.Kind, Magnitude: fmt.Sprintf("%+.1f%%", 100*c.Magnitude),
				Means:  strings.TrimSpace(report.Num(c.MeanBefore) + " → " + report.Num(c.MeanAfter) + " " + sr.Unit),
				PValue: strings.TrimPrefix(strings.TrimPrefix(report.PValue(c.PValue), "p = "), "p "),
				Arrived: report.PointTick(c.Arrived,
					c.Order), Commit: c.Arrived.Commit, Time: pointTime(c.Arrived.Time), Before: report.PointTick(c.Before, c.Order)}
			if row.Commit == "" {
				row.Commit = "-" // none recorded: import with --commit, or a run's params.commit
			}
			zq := seriesParams(sr.Series)
			zq.Set("from", strconv.Itoa(max(0, c.Index-50)))
			zq.Set("to", strconv.Itoa(min(len(sr.Points), c.Index+50)))
			row.Zoom = withQuery(testHref(suite, test), zq) + "#" + url.PathEscape(row.Anchor)
			row.Compare = compareHref(suite, sr.Series, c)
			row.Triage = changeTriage(triages, sr.Series, c)
			if row.Triage == "" && c.Kind == "regression" {
				row.Triage = store.TriageOpen
			}
			v.Changes = append(v.Changes, row)
		}
		if len(v.Changes) == 0 {
			o := s.o.Settings.Options(s.o.Detect, sr.Test, sr.Metric)
			v.Why = fmt.Sprintf("p ≤ %g, magnitude ≥ %g, segments of %d points or more", o.PValue, o.MinMagnitude, max(o.MinSegment, 1))
			if need := analysis.Needs(sr.Series, s.o.Settings, s.o.Detect); need > 0 {
				v.Why = fmt.Sprintf("a change point needs %d points, this series has %d", need, len(sr.Points))
				// A few builds with repeats are compared with each other
				// instead (qpslab detect's few-builds verdicts).
				for _, b := range analysis.Builds([]history.Series{sr.Series}, s.settings(), s.o.Detect) {
					v.Why += fmt.Sprintf("; %s → %s: %s", b.From.Build, b.To.Build, b.Kind)
					if b.Tested {
						v.Why += fmt.Sprintf(" (%+.1f%%, p=%.2g)", 100*b.Magnitude, b.PValue)
					}
				}
			}
		}
		data.Series = append(data.Series, v)
	}
	s.render(w, r, http.StatusOK, "history", page{Title: test + " " + m.Name, Data: data})
}

// overlayLine is one series of the overlaid chart, as its table lists it.
type overlayLine struct {
	Name, Full, Colour, Href, Latest, Change, Class, ChangeHref string
	Points                                                      int
}

func seriesOf(ss []Series) []history.Series {
	out := make([]history.Series, len(ss))
	for i, s := range ss {
		out[i] = s.Series
	}
	return out
}

// historyFilter is the history page's filter: the thread counts, configs
// and hosts of the test's series of the metric, and those chosen.
type historyFilter struct {
	Threads              []int
	Configs, Hosts       []string
	Thr                  int
	Config, Host, Metric string
	View, Flavor, Cond   string
	// Builds are the overlaid chart's, First and Last the range of them
	// shown ("" for the ends).
	Builds      []string
	First, Last string
	HasCond     bool
}

func newHistoryFilter(series []Series, q url.Values) historyFilter {
	f := historyFilter{Config: q.Get("config"), Host: q.Get("host"), Metric: q.Get("metric"), View: q.Get("view"),
		Flavor: q.Get("flavor"),
		Cond:   q.Get("cond"), HasCond: q.Has("cond"), First: q.Get("first"), Last: q.Get("last")}
	f.Thr, _ = strconv.Atoi(q.Get("threads"))
	for _, sr := range series {
		if sr.Threads > 0 && !slices.Contains(f.Threads, sr.Threads) {
			f.Threads = append(f.Threads, sr.Threads)
		}
		if sr.Config != "" && !slices.Contains(f.Configs, sr.Config) {
			f.Configs = append(f.Configs, sr.Config)
		}
		if sr.Host != "" && !slices.Contains(f.Hosts, sr.Host) {
			f.Hosts = append(f.Hosts, sr.Host)
		}
	}
	slices.Sort(f.Threads)
	slices.Sort(f.Configs)
	slices.Sort(f.Hosts)
	return f
}

// noiseBand is the band a history chart draws around its segments'
// medians: the host's noise floor of the test (qpslab run --aa: the
// headline's, as detect uses it) where it has one, else the series' own
// spread around its medians.
func (s *Server) noiseBand(sr Series, set analysis.DetectSettings) (float64, string) {
	if set.Floors != nil && sr.Metric == history.HeadlineMetric && sr.HostID != "" {
		if f, ok := set.Floors(sr.HostID, sr.Suite, sr.Test, sr.Threads, sr.Conditions); ok && f > 0 {
			return f, "the host's noise floor, qpslab run --aa"
		}
	}
	if f := report.SeriesSpread(sr.Points, sr.Changes); f > 0 {
		return f, "the series' median spread; no noise floor of this host: qpslab run --aa measures one"
	}
	return 0, ""
}

// seriesAnchor is the id of a series' section on its test's page.
func seriesAnchor(s history.Series) string {
	h := sha256.Sum256([]byte(seriesParams(s).Encode()))
	return "s-" + hex.EncodeToString(h[:6])
}

// mergeValues is a with b's values for the keys a lacks.
func mergeValues(a, b url.Values) url.Values {
	out := url.Values{}
	for k, v := range b {
		out[k] = slices.Clone(v)
	}
	for k, v := range a {
		out[k] = slices.Clone(v)
	}
	return out
}
