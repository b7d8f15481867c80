package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// cache keeps each test's history of each metric with its change points
// for the test's generation (store.Generations): a post that brings runs
// of a few tests leaves every other test's answers in place, and those of
// the tests it moved are found again on demand, one test and metric at a
// time, each once however many requests ask at the same time. Until then
// the answer of the test's previous generation stays, for the pages that
// show many tests at once (lookup): they show it with its "as of" time
// rather than wait.
type cache struct {
	s      *Server
	mu     sync.Mutex
	gen    string                   // the store's generation at the last sync
	tests  map[store.TestKey]string // each test's generation then
	asOf   time.Time                // when the last sync read them
	synced bool
	// entries are the answers found, each for its test's generation.
	entries map[histKey]*histEntry
	flight  singleflight.Group
	// computes counts the reads of a test's runs (tests read it); stall,
	// in tests, holds each read until it is closed (a slow store, which a
	// real one cannot be made on demand).
	computes int
	stall    chan struct{}
	// labels are store.Labels of generation labelsGen (every run's row:
	// the home page counts them, /labels and /compare list them).
	labels    []store.LabelInfo
	labelsGen string
}

type histKey struct{ suite, test, metric string }

type histEntry struct {
	gen    string    // the test's generation it was found for
	asOf   time.Time // the sync that gave that generation
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

// sync reads the store's generations; moved says whether the store's
// changed since the last sync (the first sync moves it). The answers of a
// test that has no ok run any more are dropped; those of a test whose
// generation moved are kept, as its previous generation's.
func (c *cache) sync(ctx context.Context) (moved bool, err error) {
	g, err := c.s.st.Generations(ctx)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.synced && g.Global == c.gen {
		return false, nil
	}
	c.gen, c.tests, c.asOf, c.synced = g.Global, g.Tests, c.s.o.Now(), true
	for k := range c.entries {
		if _, ok := g.Tests[store.TestKey{Suite: k.suite, Test: k.test}]; !ok {
			delete(c.entries, k)
		}
	}
	return true, nil
}

// testGen is a test's generation at the last sync ("" for a test with no
// ok run), and that sync's time.
func (c *cache) testGen(ctx context.Context, suite, test string) (string, time.Time, error) {
	if _, err := c.generation(ctx); err != nil {
		return "", time.Time{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tests[store.TestKey{Suite: suite, Test: test}], c.asOf, nil
}

// keep stores an answer found for a test's generation gen, unless a sync
// moved the test on meanwhile (an answer of an older generation than the
// one kept never replaces it).
func (c *cache) keep(k histKey, gen string, asOf time.Time, series []Series) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tests[store.TestKey{Suite: k.suite, Test: k.test}] != gen {
		return
	}
	if _, ok := c.entries[k]; !ok && len(c.entries) >= maxEntries {
		for old := range c.entries {
			delete(c.entries, old)
			break
		}
	}
	c.entries[k] = &histEntry{gen: gen, asOf: asOf, series: series}
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

// history is the series of one test and metric with their change points,
// of the test's generation at the last sync (found now if need be).
func (c *cache) history(ctx context.Context, suite, test, metric string) ([]Series, error) {
	a, err := c.lookup(ctx, suite, test, metric, -1)
	return a.series, err
}

// labelInfos are the store's labels, read once per generation of the
// store however many pages ask.
func (c *cache) labelInfos(ctx context.Context) ([]store.LabelInfo, error) {
	gen, err := c.generation(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.labels != nil && c.labelsGen == gen {
		defer c.mu.Unlock()
		return c.labels, nil
	}
	c.mu.Unlock()
	v, err, _ := c.flight.Do("labels\x00"+gen, func() (any, error) {
		ls, err := c.s.st.Labels(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		if ls == nil {
			ls = []store.LabelInfo{}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.gen == gen {
			c.labels, c.labelsGen = ls, gen
		}
		return ls, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]store.LabelInfo), nil
}

// histAnswer is one test's history of one metric as lookup found it.
type histAnswer struct {
	series []Series
	asOf   time.Time // the sync whose generation of the test it is
	// stale: the test's generation moved since, and its answer is being
	// found; pending: no answer yet (series is nil).
	stale, pending bool
}

// lookup is history for a page that shows many tests: when the test's
// answer of its current generation is not found yet, it is found in the
// background and lookup waits for it at most wait (a negative wait: as
// long as it takes); then it gives the test's previous answer (stale), or
// none (pending).
func (c *cache) lookup(ctx context.Context, suite, test, metric string, wait time.Duration) (histAnswer, error) {
	gen, asOf, err := c.testGen(ctx, suite, test)
	if err != nil {
		return histAnswer{}, err
	}
	k := histKey{suite, test, metric}
	c.mu.Lock()
	prev := c.entries[k]
	c.mu.Unlock()
	if prev != nil && prev.gen == gen {
		return histAnswer{series: prev.series, asOf: prev.asOf}, nil
	}
	ch := c.flight.DoChan(gen+"\x00"+suite+"\x00"+test+"\x00"+metric, func() (any, error) {
		// Not the asking request's context: others wait on this answer,
		// and it is kept when the asking page went on without it.
		series, err := c.compute(context.WithoutCancel(ctx), suite, test, metric)
		if err != nil {
			return nil, err
		}
		c.keep(k, gen, asOf, series)
		return series, nil
	})
	v, done, err := await(ctx, ch, wait)
	if err != nil {
		return histAnswer{}, err
	}
	if done {
		return histAnswer{series: v.([]Series), asOf: asOf}, nil
	}
	if prev != nil {
		return histAnswer{series: prev.series, asOf: prev.asOf, stale: true}, nil
	}
	return histAnswer{pending: true}, nil
}

// await waits at most wait (a negative wait: as long as it takes) for a
// computation's answer; done says whether it came (its error is err).
func await(ctx context.Context, ch <-chan singleflight.Result, wait time.Duration) (v any, done bool, err error) {
	var timeout <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case res := <-ch:
		return res.Val, res.Err == nil, res.Err
	case <-timeout:
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// compute reads one test's ok runs and finds its series of metrics and
// their change points.
func (c *cache) compute(ctx context.Context, suite, test string, metrics ...string) ([]Series, error) {
	c.mu.Lock()
	c.computes++
	stall := c.stall
	c.mu.Unlock()
	if stall != nil {
		<-stall
	}
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
