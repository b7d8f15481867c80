package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// The attention view: every regression change point that detect finds
// over every series of every test and every metric it considers (the
// registry's headline figures and latencies of the test's suite, and the
// alert metrics), grouped by where it arrived (a build, or a time for a
// history of one build's runs), so that one build that regressed 42 tests
// and several metrics is one entry that opens into its parts. The change
// points are the cache's (cache.history, as alerts and pages find them);
// the entries are kept for one generation of the store, so a page view
// computes nothing the previous one did. Triage (who looked, what they
// found) is read from the store at each view: it moves no generation.

// ScopeTriage lets a token set triage states (the attention form, POST
// /api/v1/attention).
const ScopeTriage = "triage"

// AttentionPart is one regression change point of an entry.
type AttentionPart struct {
	Key string `json:"key"` // alertKey: the change point's for good
	SeriesChange
	Arrived string `json:"arrived"` // the build (and version), or time, where it arrived
	Before  string `json:"before"`  // the last point before it
	// Earliest and Latest bound where it arrived at 95 % confidence.
	Earliest string `json:"earliest"`
	Latest   string `json:"latest"`
	Commit   string `json:"commit,omitempty"`
	// BeforeCommit is the commit of the build before, when it names one.
	BeforeCommit string        `json:"before_commit,omitempty"`
	Time         string        `json:"time,omitempty"`
	History      string        `json:"history"`           // the change point's row on its history page
	Compare      string        `json:"compare,omitempty"` // the two builds compared
	State        string        `json:"state"`
	Triage       *store.Triage `json:"triage,omitempty"` // its own, or its entry's, the newer
	Unit         string        `json:"unit,omitempty"`   // the metric's unit
	// Unconfirmed: a change at the newest (or oldest) build of a sweep
	// that rests on that one build of a run or two, or a lead (short of
	// a sweep's call); Confirm says what would confirm it. Note says
	// where compare's verdict on the two builds (their paired rounds)
	// gives another answer, and why.
	Unconfirmed bool   `json:"unconfirmed,omitempty"`
	Confirm     string `json:"confirm,omitempty"`
	Note        string `json:"note,omitempty"`
	// Spark is the series' trend with the change point marked, as the
	// page draws it (report.Sparkline).
	Spark    template.HTML `json:"-"`
	arrived  history.Point // for ordering
	seriesID string        // the series but its metric: a test's figures are one row
}

// AttentionEntry is the regressions that arrived in one build (or at one
// time).
type AttentionEntry struct {
	Key     string `json:"key"`
	Build   string `json:"build"`             // where they arrived
	Arrived string `json:"arrived"`           // its name with its version, or the time
	Before  string `json:"before,omitempty"`  // the build before (the most parts')
	Time    string `json:"time,omitempty"`    // the arrived build's latest run time
	Compare string `json:"compare,omitempty"` // the builds compared (the largest part's config)
	History string `json:"history"`           // the largest part's history
	// Magnitude is how much worse its parts are, their median: the size
	// of each part's magnitude (0.2: 20 % lower for a metric that is
	// better higher, 20 % higher for one better lower); Min and Max their
	// range.
	Magnitude    float64 `json:"magnitude"`
	MagnitudeMin float64 `json:"magnitude_min"`
	MagnitudeMax float64 `json:"magnitude_max"`
	Tests        int     `json:"tests"`
	// TestNames are the tests, the most regressed first; Series how many
	// series regressed (a test's qps, tps and p99 are one series).
	TestNames []string `json:"test_names"`
	Series    int      `json:"series"`
	Metrics   []string `json:"metrics"`
	// Findings are the tl;dr of comparing the two builds (Compare), as
	// qpslab compare says it: for the newest maxFindings entries only.
	Findings []string `json:"findings,omitempty"`
	State    string   `json:"state"` // the least settled of its parts'
	// Unconfirmed: every part is (a lead on the newest build, not a call).
	Unconfirmed bool            `json:"unconfirmed,omitempty"`
	Triage      *store.Triage   `json:"triage,omitempty"`
	Parts       []AttentionPart `json:"parts"`
	// Bisect is what is known of bisecting it (its builds name commits:
	// "bisect this"; nil when they do not).
	Bisect *EntryBisect `json:"bisect,omitempty"`
	newest time.Time
}

// attention keeps the entries of the last generation computed, until
// those of the store's current generation replace them.
type attention struct {
	mu       sync.Mutex
	gen      string
	asOf     time.Time // the sync whose generation they are
	entries  []AttentionEntry
	have     bool
	computed int // how many times the entries were computed (tests read it)
	flight   singleflight.Group
}

// attentionNow is what a page shows of the attention entries: those of
// the current generation, or, while they are computed (at most wait: a
// negative wait waits for them), the last ones computed, stale, with the
// time of the store they were computed from; none (pending) when no
// generation has been computed yet, after a start.
type attentionNow struct {
	Entries        []AttentionEntry
	AsOf           time.Time
	Stale, Pending bool
}

func newAttention() *attention { return &attention{} }

// changeWhere is where a change point arrived: its build, or its time and
// build in a history of one build's runs.
func changeWhere(c analysis.Change) string {
	if c.Order == history.OrderTime {
		return c.Arrived.Time.UTC().Format("2006-01-02T15:04:05.000000000Z") + " " + c.Arrived.Build
	}
	return c.Arrived.Build
}

// groupKey names an entry: where its change points arrived.
func groupKey(where string) string {
	h := sha256.Sum256([]byte("attention\x00" + where))
	return "g" + hex.EncodeToString(h[:15])
}

// attentionMetrics are the metrics detect is run on for a suite's tests:
// the alert metrics, and the registry's figures and latencies that every
// run or the suite's runs have.
func (s *Server) attentionMetrics(suite string) []string {
	out := slices.Clone(s.o.AlertMetrics)
	for _, m := range result.All() {
		if (m.Class == result.ClassFigure || m.Class == result.ClassLatency) && (m.Suite == "" || m.Suite == suite) && !slices.Contains(out, m.Name) {
			out = append(out, m.Name)
		}
	}
	return out
}

// histories are the series of one test for several metrics, from the
// cache where it has them; those it lacks are found in one read of the
// test's runs and one detect, and kept in the cache.
func (c *cache) histories(ctx context.Context, suite, test string, metrics []string) ([]Series, error) {
	gen, asOf, err := c.testGen(ctx, suite, test)
	if err != nil {
		return nil, err
	}
	var out []Series
	var missing []string
	c.mu.Lock()
	for _, m := range metrics {
		if e, ok := c.entries[histKey{suite, test, m}]; ok && e.gen == gen {
			out = append(out, e.series...)
		} else {
			missing = append(missing, m)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	found, err := c.compute(ctx, suite, test, missing...)
	if err != nil {
		return nil, err
	}
	byMetric := map[string][]Series{}
	for _, sr := range found {
		byMetric[sr.Metric] = append(byMetric[sr.Metric], sr)
	}
	for _, m := range missing {
		c.keep(histKey{suite, test, m}, gen, asOf, byMetric[m])
	}
	return append(out, found...), nil
}

// attentionEntries are the entries of the store's generation, computed
// once per generation however many views ask.
func (s *Server) attentionEntries(ctx context.Context) ([]AttentionEntry, error) {
	now, err := s.attentionAt(ctx, -1)
	return now.Entries, err
}

// attentionAt is attentionNow: the current generation's entries are
// computed in the background (once however many ask), and kept when the
// asking page went on without them.
func (s *Server) attentionAt(ctx context.Context, wait time.Duration) (attentionNow, error) {
	gen, err := s.cache.generation(ctx)
	if err != nil {
		return attentionNow{}, err
	}
	s.cache.mu.Lock()
	asOf := s.cache.asOf
	s.cache.mu.Unlock()
	a := s.att
	a.mu.Lock()
	last := attentionNow{Entries: a.entries, AsOf: a.asOf, Stale: a.have, Pending: !a.have}
	if a.have && a.gen == gen {
		a.mu.Unlock()
		last.Stale = false
		return last, nil
	}
	a.mu.Unlock()
	ch := a.flight.DoChan(gen, func() (any, error) {
		es, err := s.computeAttention(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.computed++
		if !a.have || a.asOf.Before(asOf) || a.gen == gen {
			a.gen, a.asOf, a.entries, a.have = gen, asOf, es, true
		}
		return es, nil
	})
	v, done, err := await(ctx, ch, wait)
	switch {
	case err != nil:
		return attentionNow{}, err
	case done:
		return attentionNow{Entries: v.([]AttentionEntry), AsOf: asOf}, nil
	}
	return last, nil
}

// computeAttention finds every regression change point and groups them.
func (s *Server) computeAttention(ctx context.Context) ([]AttentionEntry, error) {
	tests, err := s.st.Tests(ctx)
	if err != nil {
		return nil, err
	}
	byWhere := map[string]*AttentionEntry{}
	for _, t := range tests {
		series, err := s.cache.histories(ctx, t.Suite, t.Test, s.attentionMetrics(t.Suite))
		if status(err) == http.StatusNotFound {
			continue // its runs went between the two reads
		}
		if err != nil {
			return nil, err
		}
		for _, sr := range series {
			for _, c := range sr.Changes {
				if c.Kind != "regression" && c.Kind != "unconfirmed regression" {
					continue
				}
				where := changeWhere(c)
				e, ok := byWhere[where]
				if !ok {
					e = &AttentionEntry{Key: groupKey(where), Build: c.Arrived.Build, Arrived: pointName(c.Arrived, c.Order)}
					byWhere[where] = e
				}
				e.Parts = append(e.Parts, AttentionPart{Key: alertKey(sr.Series, c), SeriesChange: seriesChange(sr, c),
					Arrived: pointName(c.Arrived, c.Order), Before: pointName(c.Before, c.Order), Earliest: pointName(c.Earliest, c.Order), Latest: pointName(c.Latest, c.Order),
					Commit: c.Arrived.Commit, Time: pointTime(c.Arrived.Time), History: changeHref(sr.Suite, sr.Test, sr.Series, c), Compare: compareHref(sr.Suite, sr.Series, c),
					Unit: sr.Unit, Spark: report.Sparkline(sr.Series, c, 140, 30), arrived: c.Arrived, BeforeCommit: c.Before.Commit,
					Unconfirmed: c.Unconfirmed, Confirm: c.Confirm, Note: c.Note,
					seriesID: strings.TrimSuffix(sr.Name(), " "+sr.Metric) + "\x00" + sr.StorageEngine + "\x00" + sr.Conditions})
			}
		}
	}
	out := make([]AttentionEntry, 0, len(byWhere))
	for _, e := range byWhere {
		// The largest first.
		sort.SliceStable(e.Parts, func(i, j int) bool { return math.Abs(e.Parts[i].Magnitude) > math.Abs(e.Parts[j].Magnitude) })
		mags := make([]float64, len(e.Parts))
		tests, series := map[string]bool{}, map[string]bool{}
		befores := map[string]int{}
		e.Unconfirmed = true
		for i, p := range e.Parts {
			e.Unconfirmed = e.Unconfirmed && p.Unconfirmed
			mags[i] = math.Abs(p.Magnitude)
			if !tests[p.Suite+"\x00"+p.Test] {
				e.TestNames = append(e.TestNames, p.Test)
			}
			tests[p.Suite+"\x00"+p.Test] = true
			series[p.seriesID] = true
			if !slices.Contains(e.Metrics, p.Metric) {
				e.Metrics = append(e.Metrics, p.Metric)
			}
			befores[p.Before]++
			if p.arrived.Time.After(e.newest) {
				e.newest = p.arrived.Time
			}
			if e.Compare == "" {
				e.Compare = p.Compare
			}
		}
		order := result.Names()
		sort.SliceStable(e.Metrics, func(i, j int) bool { return slices.Index(order, e.Metrics[i]) < slices.Index(order, e.Metrics[j]) })
		sort.Float64s(mags)
		e.Magnitude, e.MagnitudeMin, e.MagnitudeMax = history.Median(mags), mags[0], mags[len(mags)-1]
		e.Tests, e.Series, e.History, e.Time = len(tests), len(series), e.Parts[0].History, pointTime(e.newest)
		for b, n := range befores {
			if n > befores[e.Before] || (n == befores[e.Before] && b < e.Before) {
				e.Before = b
			}
		}
		out = append(out, *e)
	}
	// The newest first.
	sort.Slice(out, func(i, j int) bool {
		if !out[i].newest.Equal(out[j].newest) {
			return out[i].newest.After(out[j].newest)
		}
		return out[i].Arrived > out[j].Arrived
	})
	for i := range out[:min(len(out), maxFindings)] {
		out[i].Findings = s.findings(ctx, out[i].Compare)
	}
	return out, nil
}

// maxFindings is how many of the newest entries say their findings.
const maxFindings = 10

// findings are the tl;dr of the comparison at href (a compare page's
// address), as qpslab compare says it; none when it cannot be made.
func (s *Server) findings(ctx context.Context, href string) []string {
	u, err := url.Parse(href)
	if href == "" || err != nil {
		return nil
	}
	c, err := parseCompare(u.Query())
	if err != nil {
		return nil
	}
	cmp, sets, err := s.compare(ctx, c)
	if err != nil {
		s.logf("attention: the findings of %s: %v", href, err)
		return nil
	}
	return report.FindingsWords(analysis.FindingsFor(cmp, sets)).TLDR
}

// compareHref compares the builds before and after a change point of s,
// under its config, threads and host ("" when there are not two builds).
func compareHref(suite string, sr history.Series, c analysis.Change) string {
	if c.Before.Build == "" || c.Arrived.Build == "" || c.Before.Build == c.Arrived.Build || sr.Config == "" {
		return ""
	}
	cq := url.Values{"base": {label.Of(c.Before.Build, sr.Config, sr.StorageEngine).String()}, "other": {label.Of(c.Arrived.Build, sr.Config, sr.StorageEngine).String()}, "suite": {suite}}
	if sr.Threads > 0 {
		cq.Set("threads", strconv.Itoa(sr.Threads))
	}
	if sr.Host != "" {
		cq.Set("host", sr.Host)
	}
	return withQuery("/compare", cq)
}

// settled orders the states by how much attention they still need: an
// entry is as unsettled as its least settled part.
var settled = map[string]int{store.TriageOpen: 0, store.TriageAcknowledged: 1, store.TriageFixed: 2, store.TriageDismissed: 3}

// withTriage copies entries with their triage: a part's state is its own
// or its entry's, the one set later; an entry's is its least settled
// part's.
func withTriage(entries []AttentionEntry, ts map[string]store.Triage) []AttentionEntry {
	out := make([]AttentionEntry, len(entries))
	for i, e := range entries {
		e.Parts = slices.Clone(e.Parts)
		g, hasG := ts[e.Key]
		if hasG {
			e.Triage = &g
		}
		e.State = store.TriageDismissed
		for j := range e.Parts {
			p := &e.Parts[j]
			p.State, p.Triage = store.TriageOpen, nil
			if own, ok := ts[p.Key]; ok && (!hasG || !own.At.Before(g.At)) {
				p.Triage = &own
			} else if hasG {
				p.Triage = &g
			}
			if p.Triage != nil {
				p.State = p.Triage.State
			}
			if settled[p.State] < settled[e.State] {
				e.State = p.State
			}
		}
		out[i] = e
	}
	return out
}

// attentionFilter is which entries a view lists: "open" (the default:
// open and acknowledged), "all", or one state.
func attentionFilter(q url.Values) (string, error) {
	f := q.Get("attention")
	if f == "" {
		return "open", nil
	}
	if f != "all" && !slices.Contains(store.TriageStates, f) {
		return "", badInput("attention=%s: use open (open and acknowledged, the default), all, %s", f, strings.Join(store.TriageStates[1:], ", "))
	}
	return f, nil
}

func (f0 AttentionEntry) shown(f string) bool {
	switch f {
	case "all":
		return true
	case "open":
		return f0.State == store.TriageOpen || f0.State == store.TriageAcknowledged
	}
	if f == store.TriageOpen {
		return f0.State == store.TriageOpen
	}
	return f0.State == f
}

// attentionList is the entries a view shows, with their triage (as
// attentionAt finds them).
func (s *Server) attentionList(ctx context.Context, filter string, wait time.Duration) (attentionNow, error) {
	now, err := s.attentionAt(ctx, wait)
	if err != nil {
		return now, err
	}
	ts, err := s.st.Triages(ctx)
	if err != nil {
		return now, err
	}
	var out []AttentionEntry
	for _, e := range withTriage(now.Entries, ts) {
		if e.shown(filter) {
			out = append(out, e)
		}
	}
	if out, err = s.withBisect(ctx, out); err != nil {
		return now, err
	}
	now.Entries = out
	return now, nil
}

// ---- the view

// ---- triage

// apiAttention lists the entries: GET /api/v1/attention?attention=open,
// with as_of (when the store was read for them) and, while the newest are
// computed, stale (older ones shown) or pending (none yet); fresh=1 waits
// for the newest.
func (s *Server) apiAttention(w http.ResponseWriter, r *http.Request) {
	f, err := attentionFilter(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	wait := s.o.PageWait
	switch r.URL.Query().Get("fresh") {
	case "", "0":
	case "1":
		wait = -1
	default:
		s.fail(w, r, badInput("fresh=%s: use fresh=1 (wait for the entries of the results stored now) or leave it out", r.URL.Query().Get("fresh")))
		return
	}
	now, err := s.attentionList(r.Context(), f, wait)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	es := now.Entries
	if es == nil {
		es = []AttentionEntry{}
	}
	if !s.canTriage(r) {
		hideSrc(es)
	}
	answer := map[string]any{"filter": f, "entries": es, "stale": now.Stale, "pending": now.Pending}
	if !now.AsOf.IsZero() {
		answer["as_of"] = now.AsOf.UTC()
	}
	s.apiJSON(w, r, http.StatusOK, answer)
}

// ---- history and runs
