package serve

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

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
	s.render(w, r, code, "compare", page{Title: title, Data: data})
}
