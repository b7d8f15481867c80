package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// triageRequest is a change of state: of an entry (its key: every part
// follows) or of one part.
type triageRequest struct {
	Key     string `json:"key"`
	State   string `json:"state"`
	Note    string `json:"note"`
	FixedIn string `json:"fixed_in"`
}

const maxNote = 2000

// triage checks and stores a change of state by who, and posts it to the
// webhook. It returns the entry the key is (or is a part of).
func (s *Server) triage(ctx context.Context, tr triageRequest, who string) (AttentionEntry, store.Triage, error) {
	tr.Key, tr.Note, tr.FixedIn = strings.TrimSpace(tr.Key), strings.TrimSpace(tr.Note), strings.TrimSpace(tr.FixedIn)
	if !slices.Contains(store.TriageStates, tr.State) {
		return AttentionEntry{}, store.Triage{}, badInput("state=%q: use one of %s", tr.State, strings.Join(store.TriageStates, ", "))
	}
	if tr.State == store.TriageFixed && tr.FixedIn == "" {
		return AttentionEntry{}, store.Triage{}, badInput("state=fixed needs fixed_in: the build that fixed it")
	}
	if tr.State != store.TriageFixed && tr.FixedIn != "" {
		return AttentionEntry{}, store.Triage{}, badInput("fixed_in=%s goes with state=fixed only", tr.FixedIn)
	}
	if len(tr.Note) > maxNote || strings.ContainsFunc(tr.Note, func(r rune) bool { return r < ' ' && r != '\n' && r != '\t' || r == 0x7f }) {
		return AttentionEntry{}, store.Triage{}, badInput("note: at most %d characters, without control characters", maxNote)
	}
	es, err := s.attentionEntries(ctx)
	if err != nil {
		return AttentionEntry{}, store.Triage{}, err
	}
	t := store.Triage{Key: tr.Key, State: tr.State, Note: tr.Note, FixedIn: tr.FixedIn, Who: who, At: s.o.Now().UTC()}
	var entry *AttentionEntry
	for i := range es {
		if es[i].Key == tr.Key {
			entry, t.What = &es[i], "regressions in "+es[i].Arrived
			break
		}
		for _, p := range es[i].Parts {
			if p.Key == tr.Key {
				entry, t.What = &es[i], p.Series+" "+p.Metric+" in "+p.Arrived
			}
		}
		if entry != nil {
			break
		}
	}
	if entry == nil {
		return AttentionEntry{}, store.Triage{}, notFound("key=%s: no regression of the attention view has this key: see GET /api/v1/attention?attention=all", tr.Key)
	}
	if err := s.st.SetTriage(ctx, []store.Triage{t}); err != nil {
		return AttentionEntry{}, store.Triage{}, err
	}
	s.logf("triage %s: %s by %s", t.What, t.State, who)
	if s.o.Webhook != "" {
		if err := s.post(ctx, triageDetail(*entry, t, s.link("/#att-"+entry.Key))); err != nil {
			s.logf("triage %s: the webhook failed: %v", t.What, err)
		}
	}
	return *entry, t, nil
}

// triageDetail is a triage change as the webhook receives it.
func triageDetail(e AttentionEntry, t store.Triage, link string) AlertDetail {
	d := AlertDetail{Event: "triage", SeriesChange: SeriesChange{Magnitude: e.Magnitude}, Build: e.Build, BeforeBuild: e.Before, Time: e.Time, Link: link,
		Key: t.Key, State: t.State, Note: t.Note, FixedIn: t.FixedIn, Who: t.Who}
	for _, p := range e.Parts {
		if p.Key == t.Key {
			d.SeriesChange = p.SeriesChange
		}
	}
	d.Series = t.What
	return d
}

// triageWho is who a triage request is from: the name of the token it
// was let in with (triageAuth), or "public".
func triageWhoOf(r *http.Request) string {
	if t, ok := tokenOf(r); ok {
		return t.Name
	}
	return "public"
}

// triageAuth lets a triage in: with PublicTriage whoever may read (anyone,
// when reads are public); otherwise a token of the triage scope — for the
// form (cookie true) the login session's, for the API only a bearer
// header, so that no page of another site can post in a reader's name.
func (s *Server) triageAuth(cookie bool, h http.HandlerFunc) http.HandlerFunc {
	if s.o.PublicTriage {
		return s.auth.read(h)
	}
	return s.auth.need(ScopeTriage, cookie, h)
}

// triageForm is the attention view's form: POST /attention, then back to
// the entry.
func (s *Server) triageForm(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r) {
		return
	}
	who := triageWhoOf(r)
	f := r.PostForm
	e, _, err := s.triage(r.Context(), triageRequest{Key: f.Get("key"), State: f.Get("state"), Note: f.Get("note"), FixedIn: f.Get("fixed_in")}, who)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	back := "/"
	if fl := f.Get("attention"); fl != "" && fl != "open" {
		back = withQuery("/", url.Values{"attention": {fl}})
	}
	http.Redirect(w, r, back+"#att-"+e.Key, http.StatusSeeOther)
}

// apiTriage sets a state: POST /api/v1/attention with {"key", "state",
// "note", "fixed_in"}, a bearer token of the triage scope (never the
// cookie: no page of another site can post in a reader's name).
func (s *Server) apiTriage(w http.ResponseWriter, r *http.Request) {
	who := triageWhoOf(r)
	var tr triageRequest
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err = dec.Decode(&tr); err != nil {
			err = result.JSONError(b, err) // the field's name, never a Go type's
		}
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "the body is not a triage: give {\"key\": KEY, \"state\": open|acknowledged|dismissed|fixed, \"note\": TEXT, \"fixed_in\": BUILD}: "+strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	_, t, err := s.triage(r.Context(), tr, who)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.apiJSON(w, r, http.StatusOK, t)
}

// changeTriage is the triage state of a change point, as the attention
// view has it ("" for none set).
func changeTriage(ts map[string]store.Triage, sr history.Series, c analysis.Change) string {
	if c.Kind != "regression" {
		return ""
	}
	own, ok := ts[alertKey(sr, c)]
	g, hasG := ts[groupKey(changeWhere(c))]
	switch {
	case ok && (!hasG || !own.At.Before(g.At)):
		return own.State
	case hasG:
		return g.State
	}
	return ""
}
