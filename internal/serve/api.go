package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// The JSON API, version 1 (docs/serve.md): its addresses and the fields
// of its answers only ever grow within a version.

// apiJSON writes v as JSON, or a 500 when v does not encode.
func (s *Server) apiJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	var b bytes.Buffer
	if err := report.JSON(&b, v); err != nil {
		s.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// apiError is the one shape of every API error: {"error": "…"}, one line
// that names the problem and the fix.
func apiError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

type endpoint struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Params string `json:"params,omitempty"`
	About  string `json:"about"`
}

var endpoints = []endpoint{
	{"GET", "/api/v1/labels", "q (text in the label), suite, host, engine (narrow); page (from 0, 50 a page, as /labels; default every label)", "every build.config label with its version, suite, runs, tests, thread counts, statuses, hosts and sources (qpslab labels --format json); the header X-Total-Count says how many match"},
	{"GET", "/api/v1/tests", "", "every suite's tests with ok runs, in the suite's order"},
	{"GET", "/api/v1/history", "suite, test (required); metric (default qps); threads, config, flavor, host, cond (narrow the series); from, to (a range of points); buckets (at most this many spans: min, max, mean)", "the test's history series per host, config, flavor and thread count, with their change points"},
	{"GET", "/api/v1/changes", "metric (default qps); suite, test (narrow)", "the change points of every series (qpslab detect's analysis), each with its link"},
	{"GET", "/api/v1/compare", "base, other (repeated or comma-separated; none with by-host=1); suite, threads, host, groups; by-host=1 (each label once per host)", "the comparison qpslab compare --format json prints"},
	{"GET", "/api/v1/metrics", "label (repeated or comma-separated, the first the base); suite, threads, host, test (a glob); counters (default, all, or names); by-host=1 (each label once per host)", "the per-op tables qpslab metrics --format json prints"},
	{"GET", "/api/v1/runs", "suite, label, test, threads, status, host; limit (default 100, at most 1000), offset", "runs, the newest first, with their total"},
	{"GET", "/api/v1/runs/{id}", "", "one run: totals, per-second samples, verdicts, host fingerprint (qpslab's results JSON of one run)"},
	{"GET", "/api/v1/alerts", "", "the change points the alerts know of, and what was sent"},
	{"GET", "/api/v1/attention", "attention (open, the default: open and acknowledged; all, acknowledged, dismissed, fixed)", "the attention view's regressions, newest first, one entry per build they arrived in with its parts and triage"},
	{"POST", "/api/v1/attention", "a JSON body: key (an entry's or a part's), state (open, acknowledged, dismissed, fixed), note, fixed_in (with fixed)", "set a triage state (a token with the triage scope); an entry's applies to its parts"},
	{"POST", "/api/v1/attention/{key}/bisect", "an optional JSON body: set (the suite's flags, NAME: VALUE), " +
		"threshold (a fraction; default the host's noise floor), rounds, host (an agent; default one that measured " +
		"it, or an idle one), retries (resumes of a step that cannot tell, default 2)",
		"queue a fleet job that bisects the entry's commits (qpslab bisect; a token with the triage scope; " +
			"a PostgreSQL store with a fleet and qpslab serve --bisect-src)"},
	{"POST", "/api/v1/results", "format (results, sysbench, mytools; default from the Content-Type); label (sysbench, mytools); test (sysbench); version, commit, time, file", "import results as qpslab import does, all or nothing (a token with the ingest scope)"},
	{"POST", "/api/v1/runs/{id}/hide", "", "hide a run from every read, keeping it (a token with the admin scope; audited)"},
	{"POST", "/api/v1/runs/{id}/unhide", "", "show a hidden run again (a token with the admin scope; audited)"},
	{"DELETE", "/api/v1/runs/{id}", "", "delete a run with its samples, metrics, stacks and rounds (a token with the admin scope; audited)"},
}

func (s *Server) apiIndex(w http.ResponseWriter, r *http.Request) {
	s.apiJSON(w, r, http.StatusOK, map[string]any{"version": "v1", "endpoints": endpoints})
}

func (s *Server) apiTests(w http.ResponseWriter, r *http.Request) {
	ts, err := s.st.Tests(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ts == nil {
		ts = []store.TestInfo{}
	}
	s.apiJSON(w, r, http.StatusOK, ts)
}

// apiSeries is a series as the API gives it: the points of its window (or
// its spans), its change points and its page.
type apiSeries struct {
	Name string `json:"name"`
	history.Series
	From    int               `json:"from"`
	To      int               `json:"to"`
	N       int               `json:"n"`
	Buckets []Bucket          `json:"buckets,omitempty"`
	Changes []analysis.Change `json:"changes"`
	Link    string            `json:"link"`
}

func (s *Server) link(p string) string { return s.o.PublicURL + p }

func (s *Server) apiHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	suite, test := q.Get("suite"), q.Get("test")
	if suite == "" || test == "" {
		s.fail(w, r, badInput("name the series' suite and test: suite=sysbench&test=point-query_range=100 (see /api/v1/tests)"))
		return
	}
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
	nb := 0
	if b := q.Get("buckets"); b != "" {
		if nb, err = strconv.Atoi(b); err != nil || nb < 1 || nb > 100000 {
			s.fail(w, r, badInput("buckets=%s: give the most spans to cut each series into, from 1 to 100000", b))
			return
		}
	}
	series, err := s.cache.history(r.Context(), suite, test, m.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := []apiSeries{}
	for _, sr := range series {
		if !f.match(sr.Series) {
			continue
		}
		win, err := clampWindow(q.Get("from"), q.Get("to"), len(sr.Points))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		a := apiSeries{Name: sr.Name(), Series: sr.Series, From: win.From, To: win.To, N: win.N, Changes: sr.Changes, Link: s.link(seriesHref(suite, test, sr.Series))}
		if a.Changes == nil {
			a.Changes = []analysis.Change{}
		}
		if nb > 0 {
			a.Buckets = aggregate(sr.Points, sr.Order, win.From, win.To, nb)
			a.Points = []history.Point{}
		} else {
			a.Points = sr.Points[win.From:win.To]
		}
		out = append(out, a)
	}
	if len(out) == 0 && f.any() {
		s.fail(w, r, notFound("no series of %s %s with metric %s matches these threads, config, flavor, host and cond", suite, test, m.Name))
		return
	}
	s.apiJSON(w, r, http.StatusOK, map[string]any{"suite": suite, "test": test, "metric": m.Name, "series": out})
}

// apiChange is a change point with its page.
type apiChange struct {
	analysis.Change
	Link string `json:"link"`
}

func (s *Server) apiChanges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	m, err := metricParam(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	suite, test := q.Get("suite"), q.Get("test")
	var series []Series
	if test != "" {
		if suite == "" {
			s.fail(w, r, badInput("test=%s needs its suite: suite=sysbench", test))
			return
		}
		series, err = s.cache.history(r.Context(), suite, test, m.Name)
	} else {
		series, err = s.cache.allChanges(r.Context(), suite, m.Name)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := []apiChange{}
	for _, sr := range series {
		for _, c := range sr.Changes {
			out = append(out, apiChange{Change: c, Link: s.link(changeHref(sr.Suite, sr.Test, sr.Series, c))})
		}
	}
	s.apiJSON(w, r, http.StatusOK, map[string]any{"metric": m.Name, "series": len(series), "changes": out})
}

func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request) {
	c, err := parseCompare(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	cmp, sets, err := s.compare(r.Context(), c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reportJSON(w, r, func(b io.Writer) error { return report.ComparisonJSON(b, sets, cmp) })
}

// reportJSON answers what write writes: the report's JSON, the bytes the
// command's --format json prints.
func (s *Server) reportJSON(w http.ResponseWriter, r *http.Request, write func(io.Writer) error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(b.Bytes())
}

func (s *Server) apiMetrics(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sel := selector.Selection{Suite: q.Get("suite"), Host: q.Get("host"), See: "/api/v1/labels"}
	var err error
	if sel.Threads, err = threadsParam(q); err != nil {
		s.fail(w, r, err)
		return
	}
	if sel.ByHost, err = byHostParam(q); err != nil {
		s.fail(w, r, err)
		return
	}
	labels, counters := listParam(q["label"]), listParam(q["counters"])
	if len(labels) == 0 {
		s.fail(w, r, badInput("name the labels: label=BUILD.CONFIG (one or more, the first the base; see /api/v1/labels)"))
		return
	}
	sets, err := sel.Sets(r.Context(), s.st, labels)
	if err != nil {
		s.fail(w, r, asParams(err))
		return
	}
	s.reportJSON(w, r, func(b io.Writer) error {
		if err := report.MetricsOf(b, sets, q.Get("test"), analysis.ParseCounterChoice(counters), "json"); err != nil {
			return badInput("%v", err) // what the runs lack, or a bad test glob
		}
		return nil
	})
}

// listParam is a parameter's values, each comma-separated list split.
func listParam(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, x := range strings.Split(v, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
	}
	return out
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rq, _, err := runQuery(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rq.Limit = 100
	if l := q.Get("limit"); l != "" {
		if rq.Limit, err = strconv.Atoi(l); err != nil || rq.Limit < 1 || rq.Limit > 1000 {
			s.fail(w, r, badInput("limit=%s: give 1 to 1000 runs a page", l))
			return
		}
	}
	if o := q.Get("offset"); o != "" {
		if rq.Offset, err = strconv.Atoi(o); err != nil || rq.Offset < 0 {
			s.fail(w, r, badInput("offset=%s: give how many runs to skip, 0 or more", o))
			return
		}
	}
	runs, total, err := s.st.RunList(r.Context(), rq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	type line struct {
		store.RunInfo
		Label string `json:"label"`
		Link  string `json:"link"`
	}
	out := []line{}
	for _, ri := range runs {
		out = append(out, line{RunInfo: ri, Label: ri.Label(), Link: s.link(runHref(ri.ID))})
	}
	s.apiJSON(w, r, http.StatusOK, map[string]any{"total": total, "offset": rq.Offset, "runs": out})
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	run, info, err := s.loadRun(r, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.apiJSON(w, r, http.StatusOK, map[string]any{"id": info.ID, "label": info.Label(), "source": info.Source, "link": s.link(runHref(info.ID)), "run": run})
}

func (s *Server) apiAlerts(w http.ResponseWriter, r *http.Request) {
	as, err := s.st.Alerts(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if as == nil {
		as = []store.Alert{}
	}
	s.apiJSON(w, r, http.StatusOK, map[string]any{"webhook": s.o.Webhook != "", "threshold": s.o.AlertThreshold, "metrics": s.o.AlertMetrics, "alerts": as})
}
