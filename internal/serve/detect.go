package serve

import (
	"context"
	"sync"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/selector"
)

// The change points are qpslab detect's: the series come from
// selector.History and their change points from analysis.Detect with the
// store's noise floors (selector.Floors) and compare's verdict on builds
// measured side by side (selector.Pairs), as the command finds them, so
// that the dashboard, its API and its alerts always agree with it. A
// history of two or three builds has no change points: the calls of
// comparing its neighbouring builds (analysis.Builds, detect's few-builds
// verdicts) are its changes.

// detect finds the changes of series with the settings qpslab detect
// would use.
func (s *Server) detect(series []history.Series) ([]analysis.Change, error) {
	set := s.settings()
	changes, err := analysis.Detect(series, set, s.o.Detect)
	if err != nil {
		return nil, err
	}
	return append(changes, analysis.BuildCalls(series, analysis.Builds(series, set, s.o.Detect))...), nil
}

// settings are the detect settings qpslab detect would use: the server's,
// with the calibrated hosts' noise floors as the minimum magnitude where
// they set none, and compare's verdicts of the store's generation.
func (s *Server) settings() analysis.DetectSettings {
	ctx := context.Background()
	set, _ := selector.Floors(ctx, s.st, s.o.Settings) // without floors: the settings as given
	set.Pair = s.pairs.of(ctx, s).Judge(ctx, s.st)
	return set
}

// pairCache keeps the comparisons of builds measured side by side
// (selector.Pairs) for one generation of the store.
type pairCache struct {
	mu    sync.Mutex
	gen   string
	pairs *selector.Pairs
}

// of is the comparisons of the store's generation (new ones when it
// moved, or when it cannot be read).
func (c *pairCache) of(ctx context.Context, s *Server) *selector.Pairs {
	gen, err := s.cache.generation(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || c.pairs == nil || gen != c.gen {
		c.gen, c.pairs = gen, new(selector.Pairs)
	}
	return c.pairs
}
