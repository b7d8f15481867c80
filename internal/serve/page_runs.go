package serve

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

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
		rq.Build, rq.Config, rq.StorageEngine = lb.Build, lb.Config, lb.StorageEngineFilter()
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
	pageHref := func(n int) string {
		v := mergeValues(url.Values{"page": {strconv.Itoa(n)}}, q)
		return withQuery("/runs", v)
	}
	if pg > 0 {
		data.Prev = pageHref(pg - 1)
	}
	if rq.Offset+len(runs) < total {
		data.Next = pageHref(pg + 1)
	}
	s.render(w, r, http.StatusOK, "runs", page{Title: "runs", Data: data})
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
	s.render(w, r, http.StatusOK, "run", page{Title: data.Title, Data: data})
}
