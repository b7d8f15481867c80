package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/selector"
)

// cache keeps each test's history of each metric with its change points
// for one generation of the store (store.Generation): when the generation
// moves, everything is dropped and found again on demand, one test and
// metric at a time, each once however many requests ask at the same time.
type cache struct {
	s       *Server
	mu      sync.Mutex
	gen     string
	synced  bool
	entries map[histKey]*histEntry
	flight  singleflight.Group
}

type histKey struct{ suite, test, metric string }

type histEntry struct {
	gen    string
	series []Series
}

// maxEntries bounds the cache: beyond it, entries are dropped at random
// (a map's order) as new ones come.
const maxEntries = 2048

// Series is one history series and its change points.
type Series struct {
	history.Series
	Changes []analysis.Change `json:"changes"`
}

// errNotFound is a page or endpoint asked for what the store does not
// hold.
type errNotFound struct{ msg string }

func (e *errNotFound) Error() string { return e.msg }

func notFound(format string, a ...any) error { return &errNotFound{fmt.Sprintf(format, a...)} }

// errBadInput is a request that cannot be answered as it is.
type errBadInput struct{ msg string }

func (e *errBadInput) Error() string { return e.msg }

func badInput(format string, a ...any) error { return &errBadInput{fmt.Sprintf(format, a...)} }

// status is the answer to err: 404 for what the store does not hold, 400
// for a request that cannot be answered as it is, else 0 (a server error).
func status(err error) int {
	var nf *errNotFound
	var bad *errBadInput
	var sel *selector.Error
	var con *errConflict
	switch {
	case errors.As(err, &con):
		return http.StatusConflict
	case errors.As(err, &nf):
		return http.StatusNotFound
	case errors.As(err, &bad):
		return http.StatusBadRequest
	case errors.As(err, &sel) && sel.NotFound:
		return http.StatusNotFound
	case errors.As(err, &sel):
		return http.StatusBadRequest
	}
	return 0
}

func newCache(s *Server) *cache { return &cache{s: s, entries: map[histKey]*histEntry{}} }

// sync reads the store's generation; moved says whether it changed since
// the last sync (the first sync moves it).
func (c *cache) sync(ctx context.Context) (moved bool, err error) {
	g, err := c.s.st.Generation(ctx)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.synced && g == c.gen {
		return false, nil
	}
	c.gen, c.synced = g, true
	c.entries = map[histKey]*histEntry{}
	return true, nil
}

func (c *cache) generation(ctx context.Context) (string, error) {
	c.mu.Lock()
	synced, gen := c.synced, c.gen
	c.mu.Unlock()
	if synced {
		return gen, nil
	}
	if _, err := c.sync(ctx); err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, nil
}

// history is the series of one test and metric with their change points.
func (c *cache) history(ctx context.Context, suite, test, metric string) ([]Series, error) {
	gen, err := c.generation(ctx)
	if err != nil {
		return nil, err
	}
	k := histKey{suite, test, metric}
	c.mu.Lock()
	if e, ok := c.entries[k]; ok && e.gen == gen {
		c.mu.Unlock()
		return e.series, nil
	}
	c.mu.Unlock()
	v, err, _ := c.flight.Do(gen+"\x00"+suite+"\x00"+test+"\x00"+metric, func() (any, error) {
		// Not the asking request's context: others wait on this answer.
		series, err := c.compute(context.WithoutCancel(ctx), suite, test, metric)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.gen == gen {
			if len(c.entries) >= maxEntries {
				for old := range c.entries {
					delete(c.entries, old)
					break
				}
			}
			c.entries[k] = &histEntry{gen: gen, series: series}
		}
		return series, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]Series), nil
}

// compute reads one test's ok runs and finds its series of metrics and
// their change points.
func (c *cache) compute(ctx context.Context, suite, test string, metrics ...string) ([]Series, error) {
	hs, err := selector.History(ctx, c.s.st, selector.HistoryQuery{Selection: selector.Selection{Suite: suite, See: "/suites/" + url.PathEscape(suite)}, TestName: test, Metrics: metrics})
	if err != nil {
		return nil, err
	}
	changes, err := c.s.detect(hs)
	if err != nil {
		return nil, err
	}
	byName := map[string][]analysis.Change{}
	for _, ch := range changes {
		byName[ch.Series] = append(byName[ch.Series], ch)
	}
	out := make([]Series, len(hs))
	for i, h := range hs {
		out[i] = Series{Series: h, Changes: byName[h.Name()]}
	}
	return out, nil
}

// allChanges are the change points of metric over every test (of suite,
// or of all suites for "").
func (c *cache) allChanges(ctx context.Context, suite, metric string) ([]Series, error) {
	tests, err := c.s.st.Tests(ctx)
	if err != nil {
		return nil, err
	}
	var out []Series
	for _, t := range tests {
		if suite != "" && t.Suite != suite {
			continue
		}
		ss, err := c.history(ctx, t.Suite, t.Test, metric)
		if status(err) == http.StatusNotFound {
			continue // its runs went between the two reads
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	return out, nil
}

// seriesParams are the parameters that name one series of a test (with
// its metric): stable, readable, and the same in pages and the API.
func seriesParams(s history.Series) url.Values {
	v := url.Values{}
	v.Set("metric", s.Metric)
	if s.Threads > 0 {
		v.Set("threads", strconv.Itoa(s.Threads))
	}
	if s.Config != "" {
		v.Set("config", s.Config)
	}
	if s.MixedFlavor {
		v.Set("flavor", s.Flavor)
	}
	if s.Host != "" {
		v.Set("host", s.Host)
	}
	if s.Mixed {
		v.Set("cond", s.Conditions)
	}
	return v
}

// seriesFilter narrows a test's series by the parameters seriesParams
// writes (each one given must match).
type seriesFilter struct {
	threads              int
	config, host, flavor string
	cond                 *string
}

func parseSeriesFilter(q url.Values) (seriesFilter, error) {
	f := seriesFilter{config: q.Get("config"), host: q.Get("host"), flavor: q.Get("flavor")}
	var err error
	if f.threads, err = threadsParam(q); err != nil {
		return f, err
	}
	if q.Has("cond") {
		c := q.Get("cond")
		f.cond = &c
	}
	return f, nil
}

func (f seriesFilter) match(s history.Series) bool {
	return (f.threads == 0 || s.Threads == f.threads) && (f.config == "" || s.Config == f.config) &&
		(f.host == "" || s.Host == f.host) && (f.flavor == "" || s.Flavor == f.flavor) && (f.cond == nil || s.Conditions == *f.cond)
}

func (f seriesFilter) any() bool {
	return f.threads != 0 || f.config != "" || f.host != "" || f.flavor != "" || f.cond != nil
}
