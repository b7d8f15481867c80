package serve

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/store"
)

type attentionPartView struct {
	AttentionPart
	Name, Mag, Means, PValue, Interval, Who string
}

// attentionSeriesView is one series of an entry: its regressed figures
// (qps, tps, p99 … of one test are one series, one row of the page).
type attentionSeriesView struct {
	Name  string
	Spark template.HTML
	Parts []attentionPartView
}

type attentionEntryView struct {
	AttentionEntry
	Anchor, Mag, Range, Who, Note string
	Tested                        string // the tests, named (the first few)
	Rows                          []attentionSeriesView
}

// maxNamed is how many tests an entry's summary names.
const maxNamed = 4

type attentionFilterLink struct {
	Name, Href string
	On         bool
}

// attentionView is what the home page shows of the attention entries.
type attentionView struct {
	Filter, Error, Action string
	Filters               []attentionFilterLink
	Entries               []attentionEntryView
	States                []string
	CanTriage             bool
	BisectAction          string
	More                  int // entries beyond maxShown (the API lists them all)
	// AsOf is when the store was read for entries shown while newer ones
	// are computed; Pending: none computed yet (after a start).
	AsOf    string
	Pending bool
}

// maxShown is the most entries the home page shows.
const maxShown = 100

func pct(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) }

func triageWho(t *store.Triage) string {
	if t == nil {
		return ""
	}
	s := t.State + " by " + t.Who + " at " + fmtTime(t.At)
	if t.FixedIn != "" {
		s += ", fixed in " + t.FixedIn
	}
	return s
}

// canTriage says whether r may set triage states and ask bisections.
func (s *Server) canTriage(r *http.Request) bool {
	t, ok := tokenOf(r)
	return s.o.PublicTriage || (ok && slices.Contains(t.Scopes, ScopeTriage))
}

// hideSrc leaves the server's folders out of what entries say of
// bisecting them, for readers who may not ask a bisection: the source
// tree is named by its last element, and the command says SRC.
func hideSrc(es []AttentionEntry) {
	for i := range es {
		b := es[i].Bisect
		if b == nil || b.Src == "" {
			continue
		}
		hidden := *b // entries are shared by the views of a generation
		hidden.Command = strings.ReplaceAll(hidden.Command, "--src "+b.Src, "--src SRC")
		hidden.Src = filepath.Base(b.Src)
		es[i].Bisect = &hidden
	}
}

// attentionView reads the entries r asks for into the home page's block.
func (s *Server) attentionView(r *http.Request) attentionView {
	v := attentionView{Action: "/attention", BisectAction: "/attention/bisect", States: store.TriageStates[1:]}
	v.CanTriage = s.canTriage(r)
	f, err := attentionFilter(r.URL.Query())
	if err != nil {
		v.Error, f = err.Error(), "open"
	}
	v.Filter = f
	for _, n := range append([]string{"open", "all"}, store.TriageStates[1:]...) {
		v.Filters = append(v.Filters, attentionFilterLink{Name: n, Href: withQuery("/", url.Values{"attention": {n}}) + "#attention", On: n == f})
	}
	now, err := s.attentionList(r.Context(), f, s.o.PageWait)
	if err != nil {
		s.logf("attention: %v", err)
		v.Error = "the attention view could not be computed: the server's log says why"
		return v
	}
	es := now.Entries
	if !v.CanTriage {
		hideSrc(es)
	}
	v.Pending = now.Pending
	if now.Stale {
		v.AsOf = fmtTime(now.AsOf)
	}
	if len(es) > maxShown {
		v.More = len(es) - maxShown
		es = es[:maxShown]
	}
	for _, e := range es {
		ev := attentionEntryView{AttentionEntry: e, Anchor: "att-" + e.Key, Mag: fmt.Sprintf("%.1f%%", 100*e.Magnitude), Who: triageWho(e.Triage)}
		if e.MagnitudeMin != e.MagnitudeMax {
			ev.Range = fmt.Sprintf("%.1f … %.1f%%", 100*e.MagnitudeMin, 100*e.MagnitudeMax)
		}
		if e.Triage != nil {
			ev.Note = e.Triage.Note
		}
		ev.Tested = strings.Join(e.TestNames[:min(len(e.TestNames), maxNamed)], ", ")
		if len(e.TestNames) > maxNamed {
			ev.Tested += fmt.Sprintf(" and %d more", len(e.TestNames)-maxNamed)
		}
		row := map[string]int{}
		for _, p := range e.Parts {
			pv := attentionPartView{AttentionPart: p, Name: strings.TrimSuffix(p.Series, " "+p.Metric), Mag: pct(p.Magnitude),
				Means:  strings.TrimSpace(report.Num(p.MeanBefore) + " → " + report.Num(p.MeanAfter) + " " + p.Unit),
				PValue: strings.TrimPrefix(strings.TrimPrefix(report.PValue(p.PValue), "p = "), "p "), Interval: p.Earliest}
			if p.Latest != p.Earliest {
				pv.Interval += " … " + p.Latest
			}
			if p.Before != e.Before {
				pv.Interval += ", after " + p.Before
			}
			if p.Triage != nil && p.Triage.Key == p.Key {
				pv.Who = triageWho(p.Triage)
			}
			i, ok := row[p.seriesID]
			if !ok {
				i = len(ev.Rows)
				row[p.seriesID] = i
				ev.Rows = append(ev.Rows, attentionSeriesView{Name: pv.Name, Spark: p.Spark})
			}
			ev.Rows[i].Parts = append(ev.Rows[i].Parts, pv)
		}
		v.Entries = append(v.Entries, ev)
	}
	return v
}
