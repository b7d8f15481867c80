package serve

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
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

// render answers page p (its Title and Data; the layout fills the rest)
// with status, the page template name's.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	t, ok := pages[name]
	if !ok {
		s.serverError(w, r, fmt.Errorf("no page template %s", name))
		return
	}
	_, err := r.Cookie(sessionCookie)
	p.Cookie, p.CSRF = err == nil, s.csrfToken(w, r)
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		s.serverError(w, r, fmt.Errorf("page %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", page{Title: http.StatusText(status), Data: msg})
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

// ---- suite

// ---- history

// ---- compare

// ---- runs

// ---- hosts

// ---- alerts

// ---- login

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
