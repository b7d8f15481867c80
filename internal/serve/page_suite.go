package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
)

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
	s.render(w, r, http.StatusOK, "suite", page{Title: suite, Data: data})
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
