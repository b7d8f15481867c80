package serve

import (
	"fmt"
	"net/http"
	"strings"
)

func (s *Server) pageAlerts(w http.ResponseWriter, r *http.Request) {
	as, err := s.st.Alerts(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	type line struct {
		Created, Series, Kind, Magnitude, Arrived, State, Sent, Error string
		Attempts                                                      int
	}
	data := struct {
		Webhook            bool
		Metrics, Threshold string
		Alerts             []line
	}{Webhook: s.o.Webhook != "", Metrics: strings.Join(s.o.AlertMetrics, ", "), Threshold: fmt.Sprintf("%g%%", 100*s.o.AlertThreshold)}
	for _, a := range as {
		sent := ""
		if !a.Sent.IsZero() {
			sent = fmtTime(a.Sent)
		}
		data.Alerts = append(data.Alerts, line{Created: fmtTime(a.Created), Series: a.Series, Kind: a.Kind, Magnitude: fmt.Sprintf("%+.1f%%", 100*a.Magnitude),
			Arrived: a.Arrived, State: a.State, Sent: sent, Error: a.Error, Attempts: a.Attempts})
	}
	s.render(w, r, http.StatusOK, "alerts", page{Title: "alerts", Data: data})
}
