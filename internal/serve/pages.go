package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/*
var staticFS embed.FS

// pages are the page templates, each the layout with its content.
var pages = func() map[string]*template.Template {
	layout := template.Must(template.New("layout").Funcs(templateFuncs).ParseFS(templateFS, "templates/layout.html"))
	out := map[string]*template.Template{}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".html")
		if base == "layout" {
			continue
		}
		out[base] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, n))
	}
	return out
}()

type staticFile struct {
	body  []byte
	ctype string
}

// staticFiles are the style sheets (the report's and serve's own) and the
// script, served from /static/.
func staticFiles() (map[string]staticFile, error) {
	css, err := report.HTMLStyle()
	if err != nil {
		return nil, err
	}
	out := map[string]staticFile{"report.css": {[]byte(css), "text/css; charset=utf-8"},
		"charts.js": {[]byte(report.ChartsScript()), "text/javascript; charset=utf-8"}}
	for name, ctype := range map[string]string{"serve.css": "text/css; charset=utf-8", "serve.js": "text/javascript; charset=utf-8"} {
		b, err := staticFS.ReadFile("static/" + name)
		if err != nil {
			return nil, fmt.Errorf("serve: static %s: %w", name, err)
		}
		out[name] = staticFile{b, ctype}
	}
	return out, nil
}

func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	f, ok := s.static[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.ctype)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(f.body)
}

// page is what the layout shows around a page's data.
type page struct {
	Title  string
	Cookie bool   // logged in with the cookie: offer to log out
	CSRF   string // the token of the page's forms: {{template "csrf" .}} (csrf.go)
	Data   any
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	t, ok := pages[name]
	if !ok {
		s.serverError(w, r, fmt.Errorf("no page template %s", name))
		return
	}
	_, err := r.Cookie(sessionCookie)
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", page{Title: title, Cookie: err == nil, CSRF: s.csrfToken(w, r), Data: data}); err != nil {
		s.serverError(w, r, fmt.Errorf("page %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", http.StatusText(status), msg)
}

// serverError answers 500, saying no more than that: the why goes to the
// log.
func (s *Server) serverError(w http.ResponseWriter, r *http.Request, err error) {
	s.logf("error: %s %s: %v", r.Method, r.URL.EscapedPath(), err)
	msg := "internal error: the server's log says why"
	if isAPI(r) {
		apiError(w, http.StatusInternalServerError, msg)
		return
	}
	t := pages["error"]
	var b bytes.Buffer
	if t == nil || t.ExecuteTemplate(&b, "layout", page{Title: "error", Data: msg}) != nil {
		http.Error(w, msg, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write(b.Bytes())
}

// fail answers an error: 404 for what the store does not hold, 400 for a
// request that cannot be answered as it is, else 500.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := status(err)
	if code == 0 {
		s.serverError(w, r, err)
		return
	}
	if isAPI(r) {
		apiError(w, code, err.Error())
		return
	}
	s.errorPage(w, r, code, err.Error())
}

// parseStored reads a time as the store keeps it (zero for none).
func parseStored(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// suiteHref, testHref and the others are the stable addresses of pages.
func suiteHref(suite string) string { return "/suites/" + url.PathEscape(suite) }

func testHref(suite, test string) string {
	return suiteHref(suite) + "/tests/" + url.PathEscape(test)
}

func withQuery(p string, v url.Values) string {
	if len(v) == 0 {
		return p
	}
	return p + "?" + v.Encode()
}

func seriesHref(suite, test string, s history.Series) string {
	return withQuery(testHref(suite, test), seriesParams(s))
}

func runHref(id string) string  { return "/runs/" + url.PathEscape(id) }
func hostHref(id string) string { return "/hosts/" + url.PathEscape(id) }

// cpAnchor is the id of a change point's row on its history page: the
// build where it arrived (or its time), stable as the history grows.
func cpAnchor(c analysis.Change) string {
	if c.Order == history.OrderTime && !c.Arrived.Time.IsZero() {
		return "cp-" + c.Arrived.Time.UTC().Format("20060102T150405")
	}
	return "cp-" + c.Arrived.Build
}

// changeHref is the address of a change point: its series' page, zoomed
// around it when the history is long, at its row.
func changeHref(suite, test string, s history.Series, c analysis.Change) string {
	v := seriesParams(s)
	if len(s.Points) > maxBuckets {
		from, to := max(0, c.Index-100), min(len(s.Points), c.Index+100)
		v.Set("from", strconv.Itoa(from))
		v.Set("to", strconv.Itoa(to))
	}
	return withQuery(testHref(suite, test), v) + "#" + url.PathEscape(cpAnchor(c))
}

// metric checks a metric parameter (default qps).
func metricParam(q url.Values) (result.Metric, error) {
	name := q.Get("metric")
	if name == "" {
		name = "qps"
	}
	m, err := result.MetricNamed(name)
	if err != nil {
		return m, badInput("metric=%s: use one of %s", name, result.MetricNames())
	}
	return m, nil
}

// ---- home

type suiteLine struct {
	Name, Href, Last    string
	Tests, Runs, Labels int
}

func (s *Server) pageHome(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tests, err := s.st.Tests(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	labels, err := s.cache.labelInfos(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var data struct {
		Attention attentionView
		Suites    []suiteLine
		Labels    int // listed on /labels (labels.go)
	}
	data.Attention = s.attentionView(r)
	idx := map[string]int{}
	for _, t := range tests {
		i, ok := idx[t.Suite]
		if !ok {
			i = len(data.Suites)
			idx[t.Suite] = i
			data.Suites = append(data.Suites, suiteLine{Name: t.Suite, Href: suiteHref(t.Suite), Last: "-"})
		}
		sl := &data.Suites[i]
		sl.Tests++
		sl.Runs += t.Runs
		if l := fmtTime(t.Last); !t.Last.IsZero() && (sl.Last == "-" || l > sl.Last) {
			sl.Last = l
		}
	}
	data.Labels = len(labels)
	for _, l := range labels {
		if i, ok := idx[l.Suite]; ok {
			data.Suites[i].Labels++
		}
	}
	s.render(w, r, http.StatusOK, "home", "suites", data)
}

// ---- suite

type changeView struct {
	Label, Class, Href string
}

type suiteRow struct {
	Test, Href, Cond, Config, Host, HostHref string
	Threads, Points                          int
	Latest, Value, Unit, Prev, Rel, RelClass string
	Change                                   *changeView
}

// relColour is the report's colour of a relative value, turned round for
// a metric that is better lower, so that red is always worse.
func relColour(rel float64, higher bool) string {
	if !higher && rel != 0 {
		return analysis.Colour(1 / rel)
	}
	return analysis.Colour(rel)
}

func (s *Server) pageSuite(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	suite := r.PathValue("suite")
	m, err := metricParam(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tests, err := s.st.Tests(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data := struct {
		Suite, Metric, Worse, Better string
		Higher                       bool
		Metrics                      []string
		Rows                         []suiteRow
		// AsOf: the oldest store read of the tests shown with their
		// previous answer while the newest is found; Pending: the tests
		// with none yet.
		AsOf    string
		Pending []string
	}{Suite: suite, Metric: m.Name, Higher: m.HigherIsBetter, Metrics: result.Names(),
		Worse: strconv.FormatFloat(analysis.Worse, 'f', 2, 64), Better: strconv.FormatFloat(analysis.Better, 'f', 2, 64)}
	found := false
	// The page waits at most PageWait in all for tests whose answers are
	// being found.
	until := time.Now().Add(s.o.PageWait)
	var asOf time.Time
	for _, t := range tests {
		if t.Suite != suite {
			continue
		}
		found = true
		wait := time.Duration(-1)
		if s.o.PageWait >= 0 {
			wait = max(0, time.Until(until))
		}
		a, err := s.cache.lookup(ctx, suite, t.Test, m.Name, wait)
		if status(err) == http.StatusNotFound {
			continue
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if a.pending {
			data.Pending = append(data.Pending, t.Test)
		}
		if a.stale && (asOf.IsZero() || a.asOf.Before(asOf)) {
			asOf = a.asOf
		}
		for _, sr := range a.series {
			data.Rows = append(data.Rows, s.suiteRow(suite, sr))
		}
	}
	if !found {
		s.fail(w, r, notFound("no suite %s has ok results: see / for the suites", suite))
		return
	}
	if !asOf.IsZero() {
		data.AsOf = fmtTime(asOf)
	}
	s.render(w, r, http.StatusOK, "suite", suite, data)
}

func (s *Server) suiteRow(suite string, sr Series) suiteRow {
	row := suiteRow{Test: sr.Test, Href: seriesHref(suite, sr.Test, sr.Series), Config: sr.Config, Host: sr.Host, Threads: sr.Threads, Points: len(sr.Points), Unit: sr.Unit, Rel: "-"}
	if sr.Host != "" {
		row.HostHref = hostHref(sr.Host)
	}
	if sr.Mixed {
		row.Cond = sr.Conditions
	}
	if sr.MixedFlavor { // two flavors under one config name: two rows
		row.Config += " (" + sr.Flavor + ")"
	}
	if n := len(sr.Points); n > 0 {
		last := sr.Points[n-1]
		row.Latest, row.Value = pointName(last, sr.Order), report.Num(last.Value)
		if n > 1 {
			prev := sr.Points[n-2]
			row.Prev = report.Num(prev.Value)
			if prev.Value != 0 {
				rel := last.Value / prev.Value
				row.Rel, row.RelClass = strconv.FormatFloat(rel, 'f', 2, 64), relColour(rel, sr.HigherIsBetter)
			}
		}
	}
	if k := len(sr.Changes); k > 0 {
		c := sr.Changes[k-1]
		row.Change = &changeView{Label: changeLabel(c), Class: "cp-" + c.Kind, Href: changeHref(suite, sr.Test, sr.Series, c)}
	}
	return row
}

// ---- history

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
		s.render(w, r, http.StatusOK, "history", test+" "+m.Name, data)
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
	s.render(w, r, http.StatusOK, "history", test+" "+m.Name, data)
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

// ---- compare

// compareQuery is a comparison's parameters, as qpslab compare takes them.
type compareQuery struct {
	Base    string
	Others  []string
	Suite   string
	Threads int
	Host    string
	Groups  string
	ByHost  bool // by-host=1: each label once per host that ran it
}

func parseCompare(q url.Values) (compareQuery, error) {
	c := compareQuery{Base: strings.TrimSpace(q.Get("base")), Suite: q.Get("suite"), Host: q.Get("host"), Groups: q.Get("groups")}
	c.Others = listParam(q["other"])
	var err error
	if c.Threads, err = threadsParam(q); err != nil {
		return c, err
	}
	if c.ByHost, err = byHostParam(q); err != nil {
		return c, err
	}
	if c.Base == "" || len(c.Others) == 0 && !c.ByHost {
		return c, badInput("name the labels to compare: base=BUILD.CONFIG and other=BUILD.CONFIG (one or more; see /api/v1/labels), or one base with by-host=1 to put its hosts side by side")
	}
	return c, nil
}

// byHostParam reads by-host=1 (or true): each label once per host that
// ran it, as the commands' --by-host.
func byHostParam(q url.Values) (bool, error) {
	switch v := q.Get("by-host"); v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	default:
		return false, badInput("by-host=%.40q: give by-host=1 to put each label's hosts apart, or leave it out", v)
	}
}

// asParams words a selector's error as a request gives its parameters
// (suite=, groups=, by-host=1 for the commands' --suite, --groups,
// --by-host).
func asParams(err error) error {
	var se *selector.Error
	if errors.As(err, &se) {
		r := strings.NewReplacer("--suite", "suite=", "--groups ", "groups=", "--by-host", "by-host=1")
		return &selector.Error{NotFound: se.NotFound, Msg: r.Replace(se.Msg)}
	}
	return err
}

// compare loads the labels' runs and compares them: selector's one
// comparison, which qpslab compare makes too.
func (s *Server) compare(ctx context.Context, c compareQuery) (*analysis.Comparison, []analysis.Set, error) {
	sel := selector.Selection{Suite: c.Suite, Threads: c.Threads, Host: c.Host, ByHost: c.ByHost, See: "/api/v1/labels"}
	cmp, sets, err := sel.Compare(ctx, s.st, append([]string{c.Base}, c.Others...), c.Groups, nil)
	if err != nil {
		return nil, nil, asParams(err)
	}
	return cmp, sets, nil
}

func (s *Server) pageCompare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data := struct {
		Base, Others, Suite, Threads, Host, Groups, Error, JSON string
		ByHost                                                  bool
		Labels                                                  []string
		Head, Report                                            template.HTML
	}{Base: q.Get("base"), Others: strings.Join(q["other"], ","), Suite: q.Get("suite"), Threads: q.Get("threads"), Host: q.Get("host"), Groups: q.Get("groups")}
	data.ByHost, _ = byHostParam(q)
	if ls, err := s.cache.labelInfos(r.Context()); err == nil {
		for _, l := range ls {
			if !slices.Contains(data.Labels, l.Label) {
				data.Labels = append(data.Labels, l.Label)
			}
		}
	}
	title := "compare"
	code := http.StatusOK
	if q.Has("base") || q.Has("other") {
		c, err := parseCompare(q)
		var cmp *analysis.Comparison
		var sets []analysis.Set
		if err == nil {
			cmp, sets, err = s.compare(r.Context(), c)
		}
		switch {
		case err != nil && status(err) != 0:
			code, data.Error = status(err), err.Error()
		case err != nil:
			s.serverError(w, r, err)
			return
		default:
			m := report.NewModel(sets, cmp, store.HostID, selector.Content(r.Context(), s.st), s.o.Now().UTC())
			if m.Steps, err = report.StepSections(sets, cmp.Suite); err != nil {
				s.serverError(w, r, err)
				return
			}
			var head, body bytes.Buffer
			if err := report.HTMLHead(&head, m); err != nil {
				s.serverError(w, r, err)
				return
			}
			if err := report.HTMLSections(&body, m); err != nil {
				s.serverError(w, r, err)
				return
			}
			data.Head, data.Report = template.HTML(head.String()), template.HTML(body.String()) // the report's template escaped them
			data.JSON = withQuery("/api/v1/compare", q)
			title = strings.Join(c.Others, ", ") + " against " + c.Base
			if len(c.Others) == 0 {
				title = c.Base + " by host"
			}
		}
	}
	s.render(w, r, code, "compare", title, data)
}

// ---- runs

type runLine struct {
	Href, Started, Suite, Test, Label, Status, Error, Value, Unit, Host, HostHref, Source string
	Threads                                                                               int
}

var statuses = []string{"", result.OK, result.Failed, result.Aborted, result.Saturated, "running"}

// runQuery reads the runs' filter: suite, label (or build and config),
// test, threads, status, host.
func runQuery(q url.Values) (store.RunQuery, string, error) {
	rq := store.RunQuery{Suite: q.Get("suite"), Test: q.Get("test"), Status: q.Get("status"), Host: q.Get("host"), Build: q.Get("build"), Config: q.Get("config")}
	label := strings.TrimSpace(q.Get("label"))
	if label != "" {
		lb, host, err := selector.ParseLabel(label)
		if err != nil {
			return rq, label, err
		}
		rq.Build, rq.Config, rq.Engine = lb.Build, lb.Config, lb.EngineFilter()
		if host != "" {
			rq.Host = host
		}
	}
	var err error
	if rq.Threads, err = threadsParam(q); err != nil {
		return rq, label, err
	}
	if !slices.Contains(statuses, rq.Status) {
		return rq, label, badInput("status=%s: use one of %s", rq.Status, strings.Join(statuses[1:], ", "))
	}
	return rq, label, nil
}

const runsPerPage = 100

func (s *Server) pageRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rq, label, err := runQuery(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pg := 0
	if p := q.Get("page"); p != "" {
		if pg, err = strconv.Atoi(p); err != nil || pg < 0 {
			s.fail(w, r, badInput("page=%s: give a page number from 0", p))
			return
		}
	}
	rq.Limit, rq.Offset = runsPerPage, pg*runsPerPage
	runs, total, err := s.st.RunList(r.Context(), rq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data := struct {
		Q                  store.RunQuery
		Label              string
		Statuses           []string
		Runs               []runLine
		Total, First, Last int
		Prev, Next         string
	}{Q: rq, Label: label, Statuses: statuses, Total: total, First: rq.Offset + 1, Last: rq.Offset + len(runs)}
	for _, ri := range runs {
		l := runLine{Href: runHref(ri.ID), Started: fmtTime(ri.Started), Suite: ri.Suite, Test: ri.Test, Label: ri.Label(), Status: ri.Status, Error: ri.Error,
			Value: report.Num(ri.Reported), Unit: ri.Unit, Host: ri.HostID, Source: ri.Source, Threads: ri.Threads}
		if ri.Reported == 0 && ri.Status != result.OK {
			l.Value = "-"
		}
		if ri.HostID != "" {
			l.HostHref = hostHref(ri.HostID)
			if ri.Hostname != "" {
				l.Host = ri.Hostname + "/" + ri.HostID
			}
		}
		data.Runs = append(data.Runs, l)
	}
	page := func(n int) string {
		v := mergeValues(url.Values{"page": {strconv.Itoa(n)}}, q)
		return withQuery("/runs", v)
	}
	if pg > 0 {
		data.Prev = page(pg - 1)
	}
	if rq.Offset+len(runs) < total {
		data.Next = page(pg + 1)
	}
	s.render(w, r, http.StatusOK, "runs", "runs", data)
}

type fact struct{ K, V, Href, Class string }

type verdictView struct{ Text, Class string }

var allStatuses = []string{result.OK, result.Failed, result.Aborted, result.Saturated, "running"}

// loadRun reads a run (with its samples) and its row.
func (s *Server) loadRun(r *http.Request, id string) (result.Run, store.RunInfo, error) {
	infos, _, err := s.st.RunList(r.Context(), store.RunQuery{ID: id})
	if err != nil {
		return result.Run{}, store.RunInfo{}, err
	}
	if len(infos) == 0 {
		return result.Run{}, store.RunInfo{}, notFound("no run %s: see /runs", id)
	}
	runs, err := s.st.Runs(r.Context(), store.Filter{ID: id, Status: allStatuses, Samples: true})
	if err != nil {
		return result.Run{}, store.RunInfo{}, err
	}
	if len(runs) == 0 {
		return result.Run{}, store.RunInfo{}, notFound("no run %s: see /runs", id)
	}
	return runs[0], infos[0], nil
}

func (s *Server) pageRun(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, info, err := s.loadRun(r, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	label := info.Label()
	facts := []fact{
		{K: "run", V: info.ID},
		{K: "suite", V: run.Suite, Href: suiteHref(run.Suite)},
		{K: "test", V: run.Test, Href: withQuery(testHref(run.Suite, run.Test), url.Values{"threads": {strconv.Itoa(run.Threads)}, "config": {info.Config}})},
		{K: "label", V: label, Href: withQuery("/runs", url.Values{"label": {label}})},
		{K: "build", V: strings.TrimSpace(run.Build + " " + run.Flavor + " " + run.Version)},
		{K: "config", V: run.Config},
		{K: "threads", V: strconv.Itoa(run.Threads)},
		{K: "status", V: run.Status, Class: "status " + run.Status},
	}
	if run.Error != "" {
		facts = append(facts, fact{K: "error", V: run.Error, Class: "error"})
	}
	loop := run.Loop
	if run.Rate > 0 {
		loop += fmt.Sprintf(" at %s/s (%s)", report.Num(run.Rate), run.Arrivals)
	}
	facts = append(facts,
		fact{K: run.Totals.ReportedUnit, V: report.Num(run.Totals.Reported)},
		fact{K: "loop", V: loop},
		fact{K: "started", V: fmtTime(run.Started)},
		fact{K: "ended", V: fmtTime(run.Ended)},
		fact{K: "measured", V: unknownZero(run.Totals.Seconds, fmt.Sprintf("%s s after %s s of warm-up", report.Num(run.Totals.Seconds), report.Num(run.Warmup)))},
		fact{K: "events, statements, errors", V: unknownZero(float64(run.Totals.Events), fmt.Sprintf("%d, %d, %d", run.Totals.Events, run.Totals.Statements, run.Totals.Errors))},
		fact{K: "p99 response time", V: unknownZero(run.Totals.Response.P99, report.Num(run.Totals.Response.P99)+" µs")},
		fact{K: "source", V: info.Source},
		fact{K: "qpslab", V: run.QpslabVersion},
	)
	if info.HostID != "" {
		facts = append(facts, fact{K: "host", V: strings.TrimPrefix(info.Hostname+"/"+info.HostID, "/"), Href: hostHref(info.HostID)})
	}
	links, err := s.runLinks(ctx, info)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	facts = append(facts, links...)
	data := struct {
		Title    string
		Facts    []fact
		Verdicts []verdictView
		Params   []fact
		Against  *struct{ Label, Href string }
		Report   template.HTML
	}{Title: fmt.Sprintf("%s %s, %d thread(s)", run.Test, label, run.Threads), Facts: facts}
	for _, v := range run.Verdicts {
		cls := "cp-improvement"
		if !v.OK {
			cls = "cp-regression"
		}
		data.Verdicts = append(data.Verdicts, verdictView{Text: v.Name + ": " + v.Detail, Class: cls})
	}
	var keys []string
	for k := range run.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		data.Params = append(data.Params, fact{K: k, V: run.Params[k]})
	}
	m := report.Model{Title: data.Title}
	if sr := report.RunSeries(label, run); sr != nil {
		m.Timelines = []report.Timeline{{Test: run.Test, Threads: run.Threads, Series: []report.Series{*sr}}}
	}
	if len(run.Host) > 0 {
		m.Hosts = []report.Host{{Labels: []string{label}, Fingerprint: run.Host}}
	}
	_, content, err := s.st.Config(ctx, run.Config)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	this := report.Config{Label: label, Name: run.Config, Content: content}
	m.Configs = []report.Config{this}
	// The config diff: against the run before it of the same test and
	// thread count under another config.
	earlier, _, err := s.st.RunList(ctx, store.RunQuery{Suite: run.Suite, Test: run.Test, Threads: run.Threads, Limit: 200})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	seen := false
	for _, e := range earlier {
		if e.ID == info.ID {
			seen = true
			continue
		}
		if seen && e.ConfigID != info.ConfigID {
			_, prev, err := s.st.Config(ctx, e.ConfigID)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			m.Configs = []report.Config{{Label: e.Label(), Name: e.ConfigID, Content: prev}, this}
			data.Against = &struct{ Label, Href string }{e.Label() + " (" + e.ConfigID + ")", runHref(e.ID)}
			break
		}
	}
	var body bytes.Buffer
	if err := report.HTMLSections(&body, m); err != nil {
		s.serverError(w, r, err)
		return
	}
	data.Report = template.HTML(body.String()) // the report's template escaped it
	s.render(w, r, http.StatusOK, "run", data.Title, data)
}

// ---- hosts

type hostLine struct {
	ID, Href, Names, Machine, Last string
	Risks, Runs                    int
}

func machine(c host.Check) string {
	parts := []string{}
	if c.CPUModel != "" {
		parts = append(parts, c.CPUModel)
	}
	if c.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("%d CPUs", c.CPUs))
	}
	if c.MemKB > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB", float64(c.MemKB)/(1<<20)))
	}
	if c.Kernel != "" {
		parts = append(parts, "kernel "+c.Kernel)
	}
	if c.VM {
		parts = append(parts, "VM")
	}
	return strings.Join(parts, ", ")
}

func (s *Server) pageHosts(w http.ResponseWriter, r *http.Request) {
	hosts, err := s.st.Hosts(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var lines []hostLine
	for _, h := range hosts {
		var c host.Check
		_ = json.Unmarshal(h.Fingerprint, &c) // a fingerprint that does not decode shows no machine
		lines = append(lines, hostLine{ID: h.ID, Href: hostHref(h.ID), Names: strings.Join(h.Hostnames, ", "), Machine: machine(c), Risks: len(c.Risks), Runs: h.Runs, Last: fmtTime(h.Last)})
	}
	s.render(w, r, http.StatusOK, "hosts", "hosts", lines)
}

func (s *Server) pageHost(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	hosts, err := s.st.Hosts(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(hosts, func(h store.HostInfo) bool { return h.ID == id })
	if i < 0 {
		s.fail(w, r, notFound("no host %s: see /hosts", id))
		return
	}
	h := hosts[i]
	var c host.Check
	noRisks := "No variance risk was found when its runs ran."
	if err := json.Unmarshal(h.Fingerprint, &c); err != nil {
		noRisks = "Its fingerprint does not read as qpslab host check's: " + result.JSONError(h.Fingerprint, err).Error()
	}
	labels := h.Hostnames
	if len(labels) == 0 {
		labels = []string{h.ID}
	}
	var body bytes.Buffer
	if err := report.HTMLSections(&body, report.Model{Hosts: []report.Host{{Labels: labels, Fingerprint: h.Fingerprint}}}); err != nil {
		s.serverError(w, r, err)
		return
	}
	data := struct {
		ID, Names, First, Last, RunsHref, NoRisks string
		Runs                                      int
		Risks                                     []host.Risk
		Report                                    template.HTML
	}{ID: h.ID, Names: strings.Join(h.Hostnames, ", "), First: fmtTime(h.FirstSeen), Last: fmtTime(h.Last), Runs: h.Runs,
		RunsHref: withQuery("/runs", url.Values{"host": {h.ID}}), Risks: c.Risks, NoRisks: noRisks, Report: template.HTML(body.String())}
	s.render(w, r, http.StatusOK, "host", "host "+h.ID, data)
}

// ---- alerts

func (s *Server) pageAlerts(w http.ResponseWriter, r *http.Request) {
	as, err := s.st.Alerts(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	type line struct {
		Created, Series, Kind, Magnitude, Arrived, State, Sent, Error string
		Attempts                                                      int
	}
	data := struct {
		Webhook            bool
		Metrics, Threshold string
		Alerts             []line
	}{Webhook: s.o.Webhook != "", Metrics: strings.Join(s.o.AlertMetrics, ", "), Threshold: fmt.Sprintf("%g%%", 100*s.o.AlertThreshold)}
	for _, a := range as {
		sent := ""
		if !a.Sent.IsZero() {
			sent = fmtTime(a.Sent)
		}
		data.Alerts = append(data.Alerts, line{Created: fmtTime(a.Created), Series: a.Series, Kind: a.Kind, Magnitude: fmt.Sprintf("%+.1f%%", 100*a.Magnitude),
			Arrived: a.Arrived, State: a.State, Sent: sent, Error: a.Error, Attempts: a.Attempts})
	}
	s.render(w, r, http.StatusOK, "alerts", "alerts", data)
}

// ---- login

func (s *Server) pageLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, http.StatusOK, "login", "log in", safeNext(r.URL.Query().Get("next")))
}

// unknownZero is text, or "-" where v is 0: what an import could not know
// (sysbench prints no wall-clock times, the reference no latencies).
func unknownZero(v float64, text string) string {
	if v == 0 {
		return "-"
	}
	return text
}

// threadsParam reads a query's threads= (0, any, when it is not given),
// refusing what is not a thread count of 1 or more.
func threadsParam(q url.Values) (int, error) {
	t := q.Get("threads")
	if t == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 {
		return 0, badInput("threads=%s: give a thread count of 1 or more, or leave it out for all", t)
	}
	return n, nil
}
