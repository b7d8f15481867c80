package serve

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/qpslab/qpslab/internal/curate"
	"github.com/qpslab/qpslab/internal/store"
)

// The admin endpoints hide, unhide and delete a run (internal/curate, as
// qpslab runs does), with a token of the admin scope: each answers the
// audit line it stored, which the server's log prints too (the API's
// index lists them).
//
//	POST   /api/v1/runs/{id}/hide    left out of every read until unhidden
//	POST   /api/v1/runs/{id}/unhide  read again
//	DELETE /api/v1/runs/{id}         the run and its samples, metrics, stacks, rounds

// admin lets a request in with a bearer token of the admin scope (never
// a session, so that no page of another site can act in a reader's name),
// and hands the handler the token: who acted.
func (a *auth) admin(h func(http.ResponseWriter, *http.Request, store.Token)) http.HandlerFunc {
	return a.need(ScopeAdmin, false, func(w http.ResponseWriter, r *http.Request) {
		t, _ := tokenOf(r) // need lets nothing in without one
		h(w, r, t)
	})
}

// curateRun answers an admin endpoint: action on the run of the path's id.
func (s *Server) curateRun(action string) func(http.ResponseWriter, *http.Request, store.Token) {
	return func(w http.ResponseWriter, r *http.Request, t store.Token) {
		done, err := curate.Apply(r.Context(), s.st, store.Audit{Action: action, Who: curate.Token(t.ID, t.Name), At: s.o.Now()}, []string{r.PathValue("id")})
		var nr *store.NoRunError
		if errors.As(err, &nr) { // its Error names the store's path: no client learns where the server keeps it
			apiError(w, http.StatusNotFound, fmt.Sprintf("run %q: no such run: give a run's id, the end of its "+
				"dashboard page's address (/runs/ID) or the id in GET /api/v1/runs", nr.ID))
			return
		}
		if err != nil {
			s.serverError(w, r, err)
			return
		}
		for _, a := range done {
			s.logf("audit: %s", curate.Line(a))
		}
		if _, err := s.cache.sync(r.Context()); err != nil {
			s.logf("refresh after %s: %v", action, err)
		}
		s.kick()
		s.apiJSON(w, r, http.StatusOK, done[0])
	}
}
