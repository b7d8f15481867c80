package serve

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/qpslab/qpslab/internal/store"
)

// The bisections of qpslab bisect (docs/bisect.md), read only: the list,
// and one bisection's steps. Their runs are normal runs (the runs page).

type bisectLine struct {
	ID                                          int64
	Href, State, Good, Bad, Suite, Test, Metric string
	Threshold, Started, Ended, Result           string
	Entry                                       string // the attention entry it was asked from ("" for none)
}

type bisectStepLine struct {
	Seq                                                           int
	Commit, Against, Build, Kind, Rel, Interval, Plan, Note, When string
	Rounds                                                        int
}

func bisectOf(b store.Bisection) bisectLine {
	l := bisectLine{ID: b.ID, Href: "/bisections/" + strconv.FormatInt(b.ID, 10), State: b.State, Good: store.Hash8(b.Good), Bad: store.Hash8(b.Bad),
		Suite: b.Suite, Test: b.Test, Metric: b.Metric, Threshold: fmt.Sprintf("%.1f %%", 100*b.Threshold),
		Started: fmtTime(b.Started), Result: b.Result}
	if !b.Ended.IsZero() {
		l.Ended = fmtTime(b.Ended)
	}
	if k := b.Params["attention"]; k != "" {
		l.Entry = "/?attention=all#att-" + k
	}
	return l
}

func (s *Server) pageBisections(w http.ResponseWriter, r *http.Request) {
	bs, err := s.st.Bisections(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var lines []bisectLine
	for _, b := range bs {
		lines = append(lines, bisectOf(b))
	}
	s.render(w, r, http.StatusOK, "bisections", page{Title: "bisections", Data: lines})
}

func (s *Server) pageBisection(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.fail(w, r, notFound("no bisection %s: see /bisections", r.PathValue("id")))
		return
	}
	b, steps, err := s.st.Bisection(r.Context(), id)
	if errors.Is(err, store.ErrNoBisection) {
		err = notFound("no bisection %d: see /bisections", id)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var lines []bisectStepLine
	for _, st := range steps {
		l := bisectStepLine{Seq: st.Seq, Commit: store.Hash8(st.Commit), Build: st.Build, Kind: st.Kind, Plan: st.Plan, Note: st.Note, When: fmtTime(st.At), Rounds: st.Rounds}
		l.Against, l.Rel, l.Interval = store.BisectStepCells(b, st)
		lines = append(lines, l)
	}
	s.render(w, r, http.StatusOK, "bisection", page{Title: fmt.Sprintf("bisection %d", id), Data: struct {
		B     bisectLine
		Src   string
		Steps []bisectStepLine
	}{bisectOf(b), b.Src, lines}})
}
