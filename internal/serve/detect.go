package serve

import (
	"context"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// The change points are qpslab detect's: this file is the only place that
// makes series and finds their change points, so that the dashboard, its
// API and its alerts always agree with the command.

// seriesOf makes the series of one metric from runs, per suite, test,
// host, config and thread count, with hosts named by their id as detect
// names them.
func seriesOf(runs []result.Run, metric string) ([]history.Series, error) {
	return analysis.Series(runs, "", []string{metric}, func(r result.Run) string {
		id, _ := store.HostID(r.Host)
		return id
	})
}

// detect finds the change points of series with the settings qpslab
// detect would use.
func (s *Server) detect(series []history.Series) ([]analysis.Change, error) {
	return analysis.Detect(series, s.settings(), s.o.Detect)
}

// settings are the detect settings qpslab detect would use: the server's,
// with the calibrated hosts' noise floors as the minimum magnitude where
// they set none.
func (s *Server) settings() analysis.DetectSettings {
	set := s.o.Settings
	if f, err := s.st.Floors(context.Background()); err == nil {
		set.Floors = f
	}
	return set
}
