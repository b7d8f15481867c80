package serve

import (
	"net/http"
)

func (s *Server) pageLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, http.StatusOK, "login", page{Title: "log in", Data: safeNext(r.URL.Query().Get("next"))})
}
