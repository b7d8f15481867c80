package serve

import (
	"net/http"
)

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
	s.render(w, r, http.StatusOK, "home", page{Title: "suites", Data: data})
}
