package selector

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/store"
)

// LabelsPerPage is how many labels a page of them holds: the dashboard's
// /labels and the API's /api/v1/labels?page=N alike.
const LabelsPerPage = 50

// LabelQuery narrows and pages the store's labels. Each filter left empty
// keeps every label.
type LabelQuery struct {
	// Text keeps the labels whose name (build.config, with its :ENGINE)
	// holds it, in any case.
	Text string
	// Suite keeps one suite's labels.
	Suite string
	// Host keeps the labels with runs on a host: its hostname (a fleet
	// agent's name) or a prefix of its host id, as a selection's Host.
	Host string
	// StorageEngine keeps the labels of one storage engine (innodb: the labels
	// without :ENGINE).
	StorageEngine string
	// Sort orders them: "" or "name" (the store's order: by name, as
	// qpslab labels lists them), "newest" (by their latest run, the
	// newest first) or "oldest".
	Sort string
	// Paged asks for page Page (from 0) of LabelsPerPage labels; without
	// it every matching label is given.
	Paged bool
	Page  int
}

// LabelPage is a page of the labels that match a query: Total of them
// match, over Pages pages.
type LabelPage struct {
	Labels       []store.LabelInfo
	Total, Pages int
	// First is the index of the page's first label among those that match.
	First int
	// Suites, Hosts and StorageEngines are what the filters can be set to: those
	// of every stored label, whatever the query.
	Suites, Hosts, StorageEngines []string
}

// Labels reads the store's labels that match q and gives q's page of them:
// the one list of the dashboard's /labels page and the API's labels. A
// page past the last or below 0 is bad input, the error naming the pages there are.
func Labels(ctx context.Context, st *store.Store, q LabelQuery) (LabelPage, error) {
	all, err := st.Labels(ctx)
	if err != nil {
		return LabelPage{}, err
	}
	return LabelsOf(all, q)
}

// LabelsOf is Labels of the labels all (store.Labels' answer, kept by a
// server between two generations of its store).
func LabelsOf(all []store.LabelInfo, q LabelQuery) (LabelPage, error) {
	var p LabelPage
	if q.Paged && q.Page < 0 {
		return p, bad("page %d: give a page number from 0", q.Page)
	}
	p.Suites, p.Hosts, p.StorageEngines = facets(all)
	keep := []store.LabelInfo{}
	for _, l := range all {
		if q.match(l) {
			keep = append(keep, l)
		}
	}
	switch q.Sort {
	case "", "name":
	case "newest", "oldest":
		sort.SliceStable(keep, func(i, j int) bool {
			if q.Sort == "oldest" {
				return keep[i].Last < keep[j].Last
			}
			return keep[i].Last > keep[j].Last
		})
	default:
		return p, bad("sort %s: use name, newest or oldest", q.Sort)
	}
	p.Total = len(keep)
	p.Pages = (p.Total + LabelsPerPage - 1) / LabelsPerPage
	if !q.Paged {
		p.Labels = keep
		return p, nil
	}
	if q.Page > 0 && q.Page >= p.Pages {
		return p, bad("page %d is past the last: %d label(s) match, on pages 0 to %d: ask for one of those", q.Page, p.Total, max(p.Pages-1, 0))
	}
	p.First = q.Page * LabelsPerPage
	p.Labels = keep[p.First:min(p.First+LabelsPerPage, p.Total)]
	return p, nil
}

// match says whether label l passes q's filters.
func (q LabelQuery) match(l store.LabelInfo) bool {
	if q.Suite != "" && l.Suite != q.Suite {
		return false
	}
	if q.Text != "" && !strings.Contains(strings.ToLower(l.Label), strings.ToLower(q.Text)) {
		return false
	}
	if q.StorageEngine != "" && !strings.EqualFold(storageEngine(l.Label), q.StorageEngine) {
		return false
	}
	if q.Host != "" {
		on := false
		for _, h := range l.Hosts {
			name, id, _ := strings.Cut(h, "/")
			if name == q.Host || (id != "" && strings.HasPrefix(id, q.Host)) {
				on = true
				break
			}
		}
		if !on {
			return false
		}
	}
	return true
}

// storageEngine is label l's storage storageEngine as a filter takes it (innodb for a
// label without :ENGINE).
func storageEngine(l string) string {
	lb, err := label.Parse(l)
	if err != nil {
		return ""
	}
	return lb.StorageEngineFilter()
}

// facets are the suites, hosts (hostnames, else host ids) and engines of
// every label, sorted: what a filter can be set to.
func facets(all []store.LabelInfo) (suites, hosts, engines []string) {
	add := func(list *[]string, v string) {
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, l := range all {
		add(&suites, l.Suite)
		add(&engines, storageEngine(l.Label))
		for _, h := range l.Hosts {
			name, id, _ := strings.Cut(h, "/")
			if name == "" {
				name = id
			}
			add(&hosts, name)
		}
	}
	sort.Strings(suites)
	sort.Strings(hosts)
	sort.Strings(engines)
	return suites, hosts, engines
}
