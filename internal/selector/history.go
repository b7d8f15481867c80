package selector

import (
	"context"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// HistoryQuery selects the series of history: the store's ok runs of a
// suite, test (a glob, or one test by its name), config name, thread count
// and host, one series per metric, test, host, config, flavor, thread
// count and conditions (engine included).
type HistoryQuery struct {
	Selection // Suite, Threads and Host narrow; See names where the tests are listed
	// Test is a glob over test names; TestName one test by its exact
	// name (the dashboard's pages).
	Test, TestName string
	Config         string   // a config name
	Metrics        []string // default qps
}

// History makes q's series: the one history of qpslab detect, export, the
// dashboard and its API.
func History(ctx context.Context, st *store.Store, q HistoryQuery) ([]history.Series, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	runs, err := st.Runs(ctx, store.Filter{Suite: q.Suite, Test: q.TestName, Config: q.Config, Threads: q.Threads, Host: q.Host})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		if q.TestName != "" {
			return nil, notFound("no ok results of test %s in suite %s: see %s", q.TestName, q.Suite, q.see())
		}
		return nil, notFound("no ok results match: see %s", q.see())
	}
	ms := q.Metrics
	if len(ms) == 0 {
		ms = []string{history.HeadlineMetric}
	}
	series, err := analysis.Series(runs, q.Test, ms, hostID)
	if err != nil {
		return nil, bad("%v", err)
	}
	return series, nil
}

// hostID names a run's host in history: its fingerprint's id.
func hostID(r result.Run) string {
	id, _ := store.HostID(r.Host)
	return id
}

// Floors are settings with the store's noise floors (qpslab run --aa) as
// the minimum magnitude of the headline series where nothing sets one.
func Floors(ctx context.Context, st *store.Store, settings analysis.DetectSettings) (analysis.DetectSettings, error) {
	f, err := st.Floors(ctx)
	if err != nil {
		return settings, err
	}
	settings.Floors = f
	return settings, nil
}
