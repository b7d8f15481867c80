package serve

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// The labels: every build.config (once per suite it has runs of), on the
// page /labels and in the API's /api/v1/labels, both the selector's one
// list (selector.Labels), narrowed by the same parameters and cut into the
// same pages, so that the two give the same labels and the same total.

// labelQuery reads the labels' filters (q: text in the label; suite, host,
// engine) and page (page=N, from 0). Without page=, paged says whether the
// first page is meant (the page) or every label (the API).
func labelQuery(q url.Values, paged bool) (selector.LabelQuery, error) {
	lq := selector.LabelQuery{Text: strings.TrimSpace(q.Get("q")), Suite: q.Get("suite"), Host: q.Get("host"),
		StorageEngine: q.Get("engine"), Paged: paged,
		Sort: q.Get("sort")}
	if paged && !q.Has("sort") {
		lq.Sort = "newest" // the page: the newest builds first
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return lq, badInput("page=%.40s: give a page number from 0", p)
		}
		lq.Paged, lq.Page = true, n
	}
	return lq, nil
}

// labels reads the labels the request asks for, its errors naming the
// parameters as the request gives them.
func (s *Server) labels(r *http.Request, paged bool) (selector.LabelQuery, selector.LabelPage, error) {
	lq, err := labelQuery(r.URL.Query(), paged)
	if err != nil {
		return lq, selector.LabelPage{}, err
	}
	all, err := s.cache.labelInfos(r.Context())
	if err != nil {
		return lq, selector.LabelPage{}, err
	}
	p, err := selector.LabelsOf(all, lq)
	var se *selector.Error
	if errors.As(err, &se) && (strings.HasPrefix(se.Msg, "page ") || strings.HasPrefix(se.Msg, "sort ")) {
		err = &selector.Error{NotFound: se.NotFound, Msg: strings.Replace(se.Msg, " ", "=", 1)}
	}
	return lq, p, err
}

// apiLabels is every label that matches, or a page of them; the header
// X-Total-Count says how many match.
func (s *Server) apiLabels(w http.ResponseWriter, r *http.Request) {
	_, p, err := s.labels(r, false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ls := p.Labels
	if ls == nil {
		ls = []store.LabelInfo{}
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(p.Total))
	s.apiJSON(w, r, http.StatusOK, ls)
}

type labelLine struct {
	Label, Version, Suite, Threads, Status, Last, Hosts, Sources, Runs string
	N, Tests                                                           int
}

func (s *Server) pageLabels(w http.ResponseWriter, r *http.Request) {
	lq, p, err := s.labels(r, true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	data := struct {
		Q                             selector.LabelQuery
		Suites, Hosts, StorageEngines []string
		Labels                        []labelLine
		Total, First, Last            int
		Page, Pages                   int
		Filtered                      bool
		Prev, Next, All, JSON         string
		// ByName, ByNewest and ByOldest are this page's labels sorted so.
		Sort, ByName, ByNewest, ByOldest string
	}{Sort: lq.Sort, ByName: withQuery("/labels", mergeValues(url.Values{"sort": {"name"}, "page": nil}, q)),
		ByNewest: withQuery("/labels", mergeValues(url.Values{"sort": {"newest"}, "page": nil}, q)),
		ByOldest: withQuery("/labels", mergeValues(url.Values{"sort": {"oldest"}, "page": nil}, q)),
		Q:        lq, Suites: p.Suites, Hosts: p.Hosts, StorageEngines: p.StorageEngines, Total: p.Total,
		First: p.First + 1, Last: p.First + len(p.Labels),
		Page: lq.Page + 1, Pages: max(p.Pages, 1), Filtered: lq.Text != "" || lq.Suite != "" || lq.Host != "" || lq.StorageEngine != "",
		All: "/labels", JSON: withQuery("/api/v1/labels", q)}
	for _, l := range p.Labels {
		// Thread counts in order, whatever order the runs came in; a host
		// without a name (a posted run's) by its id.
		ts := slices.Sorted(slices.Values(l.Threads))
		threads := make([]string, len(ts))
		for i, t := range ts {
			threads[i] = strconv.Itoa(t)
		}
		hosts := make([]string, len(l.Hosts))
		for i, h := range l.Hosts {
			hosts[i] = strings.TrimPrefix(h, "/")
		}
		v := url.Values{"label": {l.Label}, "suite": {l.Suite}}
		data.Labels = append(data.Labels, labelLine{Label: l.Label, Version: l.Version, Suite: l.Suite, Threads: strings.Join(threads, ","), Status: l.Status,
			Last: fmtTime(parseStored(l.Last)), Hosts: strings.Join(hosts, ", "), Sources: strings.Join(l.Sources, ", "),
			Runs: withQuery("/runs", v), N: l.Runs, Tests: l.Tests})
	}
	pageHref := func(n int) string {
		return withQuery("/labels", mergeValues(url.Values{"page": {strconv.Itoa(n)}}, q))
	}
	if lq.Page > 0 {
		data.Prev = pageHref(lq.Page - 1)
	}
	if lq.Page+1 < p.Pages {
		data.Next = pageHref(lq.Page + 1)
	}
	s.render(w, r, http.StatusOK, "labels", page{Title: "labels", Data: data})
}
