package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// The post: two runs of one build with totals.reported =
// 1.7e308, each value finite, whose median once overflowed to +Inf (a 500
// from the history API for good, and a page whose chart ticks looped for
// ever).
func hugeRuns() []result.Run {
	var runs []result.Run
	for i := 0; i < 2; i++ {
		r := stepRun(i, "point-query_range=100", 1000)
		r.Build, r.Version, r.Started = "huge", "10.2.99", t0.Add(time.Duration(i)*time.Minute)
		r.Totals.Reported, r.Totals.QPS = 1.7e308, 1.7e308
		runs = append(runs, r)
	}
	return runs
}

// outOfBounds are runs no ingest accepts now, written straight into the
// store as an older release (or a measurement) could have: the largest
// floats, of both signs, in every figure the pages draw, and a series of
// builds whose values span the whole float range.
func outOfBounds() []result.Run {
	runs := hugeRuns()
	for i, v := range []float64{math.MaxFloat64, -math.MaxFloat64, 1.7e308, 5e-324, -1.7e308, math.MaxFloat64, 1e-300, 1.7e308} {
		r := stepRun(i, "update-index_range=100", 1000)
		r.Build, r.Version = fmt.Sprintf("old%d", i), fmt.Sprintf("9.%d", i)
		r.Totals.Reported, r.Totals.QPS, r.Totals.TPS = v, v, v
		r.Totals.Response.P99 = math.Abs(v)
		r.Totals.Figures = map[string]float64{"jain": v, "stalls": math.Abs(v)}
		r.Plan, r.Pairing = "20260101T000000-old", result.PairedSlices
		for k := 0; k < 4; k++ {
			r.Rounds = append(r.Rounds, result.Round{Repeat: 1, Round: k + 1, Seconds: 1, Value: v / float64(k+1)})
		}
		runs = append(runs, r)
	}
	return runs
}

// extremeButAccepted draws a value within qps's bounds from the edges of
// the float range: 0, subnormal, tiny, the bound itself, just under it.
func extremeButAccepted(rng *rand.Rand) float64 {
	pool := []float64{5e-324, 2.2250738585072014e-308, 1e-300, 1e-9, 1, 1e9, math.Nextafter(1e9, 0), 123456.789, 0.5}
	return pool[rng.IntN(len(pool))]
}

// guardGet fetches u within a failure guard: a page that does not answer
// in time (a tick loop that never ends) panics, failing the test binary at
// once rather than hanging it on the server's Close, which waits for the
// request. The answer is the event; the deadline only a guard.
func guardGet(t *testing.T, c *http.Client, u string) answer {
	t.Helper()
	type got struct {
		a   answer
		err error
	}
	done := make(chan got, 1)
	go func() {
		resp, err := c.Get(u)
		if err != nil {
			done <- got{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- got{answer{resp.StatusCode, resp.Header, string(b)}, err}
	}()
	select {
	case g := <-done:
		if g.err != nil {
			t.Fatalf("GET %s: %v", u, g.err)
		}
		return g.a
	case <-time.After(2 * time.Minute):
		panic("GET " + u + " did not answer within 2 minutes: a page that never ends")
	}
}

var hrefRE = regexp.MustCompile(`(?:href|data-href)="([^"]*)"`)

// crawl fetches every page and API answer reachable from roots on the
// test server (links in pages, links in JSON answers), at most limit of
// them, and fails on any 5xx. It returns the answers by address.
func crawl(t *testing.T, ts *testServer, roots []string, limit int) map[string]answer {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	seen := map[string]answer{}
	queue := slices.Clone(roots)
	add := func(link string) {
		u, err := url.Parse(link)
		if err != nil || (u.Host != "" && ts.URL != u.Scheme+"://"+u.Host) || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "/static/") {
			return
		}
		u.Fragment = ""
		p := u.RequestURI()
		if _, ok := seen[p]; !ok && !slices.Contains(queue, p) {
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 && len(seen) < limit {
		p := queue[0]
		queue = queue[1:]
		if _, ok := seen[p]; ok {
			continue
		}
		a := guardGet(t, c, ts.URL+p)
		seen[p] = a
		if a.status >= 500 {
			t.Errorf("GET %s: %d %s", p, a.status, a.body)
		}
		if strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
			var v any
			if err := json.Unmarshal([]byte(a.body), &v); err != nil {
				t.Errorf("GET %s: not JSON: %v", p, err)
			}
			walkStrings(v, func(s string) {
				if strings.HasPrefix(s, ts.URL+"/") {
					add(s)
				}
			})
			continue
		}
		for _, m := range hrefRE.FindAllStringSubmatch(a.body, -1) {
			add(html.UnescapeString(m[1]))
		}
	}
	return seen
}

func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}

// apiRoots are the API's answers over the store's labels and tests: the
// history and changes of every test in several metrics, the compare and
// per-op figures of every label against the first, every run.
func apiRoots(t *testing.T, ts *testServer) []string {
	t.Helper()
	c := &http.Client{}
	var labels []store.LabelInfo
	decode(t, guardGet(t, c, ts.URL+"/api/v1/labels"), &labels)
	var tests []store.TestInfo
	decode(t, guardGet(t, c, ts.URL+"/api/v1/tests"), &tests)
	roots := []string{"/", "/api/v1", "/api/v1/labels", "/api/v1/tests", "/api/v1/changes", "/api/v1/runs?limit=500", "/api/v1/alerts", "/runs", "/hosts", "/alerts"}
	for _, x := range tests {
		for _, m := range []string{"qps", "tps", "p99", "jain", "stalls"} {
			q := url.Values{"suite": {x.Suite}, "test": {x.Test}, "metric": {m}}
			roots = append(roots, "/api/v1/history?"+q.Encode(), "/api/v1/changes?"+q.Encode())
			q.Set("buckets", "3")
			roots = append(roots, "/api/v1/history?"+q.Encode())
		}
	}
	for _, l := range labels[1:] {
		q := url.Values{"base": {labels[0].Label}, "other": {l.Label}}
		roots = append(roots, "/api/v1/compare?"+q.Encode(), "/compare?"+q.Encode(), "/api/v1/metrics?"+url.Values{"label": {labels[0].Label, l.Label}}.Encode())
	}
	return roots
}

// Done when: no sequence of authenticated posts can crash the server or
// make a page fail. Random extreme values that the bounds accept are
// posted through the real ingest (a fixed seed: the same sequence each
// time), out-of-bounds values are written straight into the store as an
// older release could have, and then every page and API answer reachable
// from the home page, the API index and every test's history is fetched:
// none answers 5xx, none hangs, every JSON answer is JSON.
func TestExtremeFiguresNeverFailAPage(t *testing.T) {
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := start(t, st, nil)
	tok := ts.token(t, "ci", ScopeIngest)

	rng := rand.New(rand.NewPCG(31, 1))
	tests := []string{"point-query_range=100", "update-index_range=100"}
	for post := 0; post < 24; post++ {
		var runs []result.Run
		for k := 0; k < 1+rng.IntN(3); k++ {
			b := rng.IntN(6)
			r := stepRun(b, tests[rng.IntN(len(tests))], 1000)
			r.Build, r.Version = fmt.Sprintf("fz%d", b), fmt.Sprintf("11.%d", b)
			r.Started = t0.Add(time.Duration(post*10+k) * time.Second)
			v := extremeButAccepted(rng)
			r.Totals.Reported, r.Totals.QPS, r.Totals.TPS = v, v, extremeButAccepted(rng)
			r.Totals.Response.P99 = []float64{5e-324, 1, 1e6, result.DayUs}[rng.IntN(4)]
			r.Totals.Figures = map[string]float64{"jain": []float64{0, 5e-324, 1}[rng.IntN(3)], "stalls": []float64{0, 5e-324, 1e8}[rng.IntN(3)]}
			runs = append(runs, r)
		}
		a := ts.do(t, "POST", "/api/v1/results", tok, "application/json", bytes.NewReader(resultsJSON(t, runs)))
		if a.status != http.StatusCreated && a.status != http.StatusOK {
			t.Fatalf("post %d of values within the bounds: %d %s", post, a.status, a.body)
		}
	}
	// The post is refused now, with the field named; written
	// straight into the store, it and worse are still served.
	// Each run's problem is a line of its own (importer.Validate's).
	huge := ts.do(t, "POST", "/api/v1/results", tok, "application/json", bytes.NewReader(resultsJSON(t, hugeRuns())))
	var refused struct{ Problems []string }
	if huge.status != http.StatusBadRequest {
		t.Fatalf("the 1.7e308 post: %d %s", huge.status, huge.body)
	}
	decode(t, huge, &refused)
	if len(refused.Problems) == 0 || !strings.HasPrefix(refused.Problems[0], "runs[0] (point-query_range=100): totals.reported = 1.7e+308 is above the plausible 1e+09 for qps") {
		t.Errorf("the 1.7e308 post's problems: %q", refused.Problems)
	}
	if _, err := st.Import(ctx, outOfBounds(), store.Meta{Source: "an older release"}); err != nil {
		t.Fatal(err)
	}
	if err := ts.Refresh(ctx); err != nil {
		t.Fatalf("refresh over the extreme store: %v", err)
	}
	seen := crawl(t, ts, apiRoots(t, ts), 1500)
	var pages, charts int
	for p, a := range seen {
		if strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
			pages++
		}
		if strings.Contains(p, "/tests/") && strings.Contains(a.body, `data-chart="history"`) {
			charts++
			if strings.Contains(a.body, "NaN") || strings.Contains(a.body, "Inf") {
				t.Errorf("%s: a chart with a non-finite coordinate", p)
			}
		}
	}
	t.Logf("fetched %d answers: %d pages, %d with a history chart", len(seen), pages, charts)
	if pages < 20 || charts < 2 {
		t.Errorf("the crawl fetched %d pages, %d with a history chart, of %d answers: it no longer reaches the pages", pages, charts, len(seen))
	}
	// The median of the two 1.7e308 runs is 1.7e308, not +Inf (null).
	var h struct{ Series []apiSeries }
	decode(t, guardGet(t, &http.Client{}, ts.URL+"/api/v1/history?suite=sysbench&test=point-query_range%3D100&metric=qps"), &h)
	found := false
	for _, s := range h.Series {
		for _, p := range s.Points {
			if p.Build == "huge" {
				found = true
				if p.Value != 1.7e308 {
					t.Errorf("the huge build's median: %g", p.Value)
				}
			}
		}
	}
	if !found {
		t.Errorf("the history lacks the huge build: %+v", h.Series)
	}
}

// The statistics and the chart over extreme values: whatever a series
// holds, the chart is drawn at once with finite coordinates, a few
// ticks, and the statistics stay finite.
func FuzzHistoryChart(f *testing.F) {
	f.Add(1.7e308, 1.7e308, 1.0, 5e-324, 2, 500)
	f.Add(math.MaxFloat64, -math.MaxFloat64, 0.0, 1e-300, 7, 3)
	f.Add(1e300, 1e300+1e285, 1e300, 1e300, 4, 1)
	f.Add(0.0, 0.0, 0.0, 0.0, 1, 1)
	f.Add(5e-324, -5e-324, 2.2250738585072014e-308, 1e-320, 3, 900)
	f.Fuzz(func(t *testing.T, a, b, c, d float64, n, count int) {
		vals := []float64{a, b, c, d}
		for _, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return // no store holds them: a figure JSON cannot hold is refused
			}
		}
		count = 1 + absInt(count)%1200
		s := Series{Series: history.Series{Suite: "sysbench", Test: "t", Metric: "qps", Order: history.OrderVersion}}
		for i := 0; i < count; i++ {
			v := vals[(i*(1+absInt(n)%3))%len(vals)]
			s.Points = append(s.Points, history.Point{Build: fmt.Sprint("b", i), Version: fmt.Sprint("1.", i), Value: v, N: 1})
		}
		var svg string
		guardRun(t, "historyChart", func() { svg = string(historyChart(s, window{0, count, count}, "/x")) })
		if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
			t.Fatalf("a non-finite coordinate or label: %s", svg)
		}
		if ticks := strings.Count(svg, `class="tick" x=`); ticks > 12 {
			t.Fatalf("%d y ticks", ticks)
		}
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		if m := history.Median(sorted); math.IsInf(m, 0) || math.IsNaN(m) {
			t.Fatalf("median %g of %v", m, vals)
		}
		if m := result.Mean(vals); math.IsInf(m, 0) || math.IsNaN(m) {
			t.Fatalf("mean %g of %v", m, vals)
		}
		for _, bk := range aggregate(s.Points, s.Order, 0, count, 1+absInt(n)%400) {
			if math.IsInf(bk.Mean, 0) || math.IsNaN(bk.Mean) {
				t.Fatalf("a bucket's mean %g", bk.Mean)
			}
		}
	})
}

// guardRun runs f, panicking when it has not returned within a minute
// (the failure guard of a loop that never ends).
func guardRun(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		panic(what + " did not return within a minute: an unbounded loop")
	}
}

func absInt(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}
