package serve

import (
	"context"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/selector"
)

// The change points are qpslab detect's: the series come from
// selector.History and their change points from analysis.Detect with the
// store's noise floors (selector.Floors), as the command finds them, so
// that the dashboard, its API and its alerts always agree with it.

// detect finds the change points of series with the settings qpslab
// detect would use.
func (s *Server) detect(series []history.Series) ([]analysis.Change, error) {
	return analysis.Detect(series, s.settings(), s.o.Detect)
}

// settings are the detect settings qpslab detect would use: the server's,
// with the calibrated hosts' noise floors as the minimum magnitude where
// they set none.
func (s *Server) settings() analysis.DetectSettings {
	set, _ := selector.Floors(context.Background(), s.st, s.o.Settings) // without floors: the settings as given
	return set
}
