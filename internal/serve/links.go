package serve

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// pointLinks are the run pages of a series' points: a point of one run
// links to it, a point of several to the list of its runs.
// A page of many series reads its test's runs once (testRuns) and gives
// them as all.
func (s *Server) pointLinks(ctx context.Context, suite string, sr history.Series, all []store.RunInfo) (func(int) string, error) {
	runs := all
	if all == nil {
		var err error
		runs, _, err = s.st.RunList(ctx, store.RunQuery{Suite: suite, Test: sr.Test, Threads: sr.Threads, Host: sr.Host, Config: sr.Config,
			StorageEngine: label.Label{StorageEngine: sr.StorageEngine}.StorageEngineFilter(), Status: result.OK})
		if err != nil {
			return nil, err
		}
	}
	byBuild := map[string][]store.RunInfo{}
	for _, ri := range runs {
		if all != nil && !sameSeries(ri, sr) {
			continue
		}
		byBuild[ri.Build] = append(byBuild[ri.Build], ri)
	}
	return func(i int) string {
		p := sr.Points[i]
		rs := byBuild[p.Build]
		if sr.Order == history.OrderTime {
			for _, ri := range rs {
				if ri.Started.Equal(p.Time) {
					return runHref(ri.ID)
				}
			}
		}
		if len(rs) == 1 && p.N == 1 {
			return runHref(rs[0].ID)
		}
		q := url.Values{"suite": {suite}, "test": {sr.Test}, "build": {p.Build}, "status": {result.OK}}
		switch {
		case sr.Config != "" && sr.StorageEngine != "":
			q.Del("build")
			q.Set("label", label.Of(p.Build, sr.Config, sr.StorageEngine).String())
		case sr.Config != "":
			q.Set("config", sr.Config)
		}
		if sr.Threads > 0 {
			q.Set("threads", strconv.Itoa(sr.Threads))
		}
		if sr.Host != "" {
			q.Set("host", sr.Host)
		}
		return withQuery("/runs", q)
	}, nil
}

// sameSeries is RunList's filter of a series' threads, config, storage
// engine and host (a hostname, or a host id's prefix), in memory.
func sameSeries(ri store.RunInfo, sr history.Series) bool {
	return (sr.Threads <= 0 || ri.Threads == sr.Threads) && (sr.Config == "" || ri.Config == sr.Config) &&
		label.OtherStorageEngine(ri.StorageEngine) == sr.StorageEngine &&
		(sr.Host == "" || ri.Hostname == sr.Host || strings.HasPrefix(ri.HostID, sr.Host))
}

// testRuns are a test's ok runs, for pointLinks.
func (s *Server) testRuns(ctx context.Context, suite, test string) ([]store.RunInfo, error) {
	runs, _, err := s.st.RunList(ctx, store.RunQuery{Suite: suite, Test: test, Status: result.OK})
	if runs == nil && err == nil {
		runs = []store.RunInfo{}
	}
	return runs, err
}

// historyMetrics are the drop-down's metrics for a suite's test: every
// registered metric every run or the suite's runs have, and cur.
func historyMetrics(suite, cur string) []string {
	var out []string
	for _, m := range result.All() {
		if m.Suite == "" || m.Suite == suite {
			out = append(out, m.Name)
		}
	}
	if !slices.Contains(out, cur) {
		out = append(out, cur)
	}
	return out
}

// runLinks are a run page's links to its series (the history of its
// test, threads, config and host) and to the previous run of its label,
// test and thread count, by the store's run time.
func (s *Server) runLinks(ctx context.Context, info store.RunInfo) ([]fact, error) {
	q := url.Values{"threads": {strconv.Itoa(info.Threads)}, "config": {info.Config}}
	if info.HostID != "" {
		q.Set("host", info.HostID)
	}
	out := []fact{{K: "series", V: "the history of " + info.Test + " at " + strconv.Itoa(info.Threads) + " thread(s) under " + info.Config, Href: withQuery(testHref(info.Suite, info.Test), q)}}
	same, _, err := s.st.RunList(ctx, store.RunQuery{Suite: info.Suite, Test: info.Test, Threads: info.Threads, Build: info.Build, Config: info.Config, StorageEngine: info.LabelOf().StorageEngineFilter()})
	if err != nil {
		return nil, err
	}
	prev := fact{K: "previous run", V: "none: the first of " + info.Label() + " at this test and thread count"}
	for i, ri := range same {
		if ri.ID == info.ID && i+1 < len(same) {
			p := same[i+1]
			prev.V, prev.Href = fmt.Sprintf("%s of %s (%s)", p.ID, fmtTime(p.Started), p.Status), runHref(p.ID)
		}
	}
	return append(out, prev), nil
}
