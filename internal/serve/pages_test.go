package serve

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// firstRun is the id of a run of build.
func firstRun(t testing.TB, st *store.Store, build string) string {
	t.Helper()
	rs, _, err := st.RunList(ctx, store.RunQuery{Build: build, Limit: 1})
	if err != nil || len(rs) == 0 {
		t.Fatalf("no run of %s: %v", build, err)
	}
	return rs[0].ID
}

// Every page answers, shows what users stored as text (markup in a build,
// a test, a suite, a config and a host's risks never becomes markup), and
// carries the headers that keep any script but the server's own from
// running.
func TestPagesEscape(t *testing.T) {
	st := seeded(t)
	ts := start(t, st, nil)
	xssRun := firstRun(t, st, xssBuild)
	hosts, err := st.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var xssHost, hostA string
	for _, h := range hosts {
		if strings.Contains(string(h.Fingerprint), "<script>") {
			xssHost = h.ID
		}
		if strings.Contains(string(h.Fingerprint), "Test CPU a") {
			hostA = h.ID
		}
	}
	if xssHost == "" {
		t.Fatal("no host with markup in its fingerprint")
	}
	pages := []string{
		"/", "/suites/sysbench", "/suites/xss-suite", "/suites/xss-suite/tests/" + url.PathEscape(xssTest),
		"/suites/sysbench/tests/point-query_range=100", "/runs", "/runs?label=" + url.QueryEscape(xssLabel), "/runs/" + xssRun,
		"/hosts", "/hosts/" + xssHost, "/alerts", "/compare",
		"/compare?" + url.Values{"base": {"ma10.2.1.default@" + hostA}, "other": {xssLabel + "@" + xssHost}, "suite": {"sysbench"}}.Encode(),
		"/compare?" + url.Values{"base": {xssLabel}, "other": {"nosuch.default"}}.Encode(),
	}
	// Two unlike hosts, unnamed: refused, the hosts' facts shown as text.
	unlike := "/compare?" + url.Values{"base": {"ma10.2.1.default"}, "other": {xssLabel}, "suite": {"sysbench"}}.Encode()
	pages = append(pages, unlike)
	for _, p := range pages {
		a := ts.get(t, p)
		if p == unlike && (a.status != 400 || !strings.Contains(a.body, "ran on hosts that differ in")) {
			t.Errorf("%s: %d, want the refusal of unlike hosts\n%.400s", p, a.status, a.body)
		}
		if a.status != 200 && !(strings.Contains(p, "nosuch") && a.status == 404) && p != unlike {
			t.Errorf("%s: %d\n%.400s", p, a.status, a.body)
			continue
		}
		for _, raw := range []string{"<script>document", "<img src=x", "<b>on a VM</b>", "<i>risk</i>", "<script>x()"} {
			if strings.Contains(a.body, raw) {
				t.Errorf("%s shows %q as markup", p, raw)
			}
		}
		if csp := a.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: Content-Security-Policy %q", p, csp)
		}
		if a.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", p)
		}
		if strings.Count(a.body, "<script") != 2 || !strings.Contains(a.body,
			`<script src="/static/serve.js" defer></script>`) ||
			!strings.Contains(a.body, `<script src="/static/charts.js" defer></script>`) {
			t.Errorf("%s: scripts other than the server's own", p)
		}
	}
	// The markup is there, as text.
	if a := ts.get(t, "/runs/"+xssRun); !strings.Contains(a.body, "&lt;script&gt;document.body.dataset.xss") {
		t.Errorf("the run page lacks the build's name as text")
	}
	if a := ts.get(t, "/suites/xss-suite"); !strings.Contains(a.body, "&lt;img src=x onerror=") {
		t.Errorf("the suite page lacks the test's name as text")
	}
	for _, f := range []string{"report.css", "serve.css", "serve.js", "charts.js"} {
		if a := ts.get(t, "/static/"+f); a.status != 200 || len(a.body) < 100 {
			t.Errorf("static %s: %d", f, a.status)
		}
	}
	if a := ts.get(t, "/static/nosuch.js"); a.status != 404 {
		t.Errorf("a static file that is not: %d", a.status)
	}
	for _, p := range []string{"/runs/nosuch", "/hosts/nosuch", "/suites/nosuch", "/suites/sysbench/tests/nosuch"} {
		if a := ts.get(t, p); a.status != 404 || !strings.Contains(a.body, "class=\"error\"") {
			t.Errorf("%s: %d", p, a.status)
		}
	}
	for _, p := range []string{"/suites/sysbench?metric=qpz", "/runs?threads=x", "/runs?page=-1", "/suites/sysbench/tests/update-index_range=100?from=x"} {
		if a := ts.get(t, p); a.status != 400 {
			t.Errorf("%s: %d", p, a.status)
		}
	}
}

// The suite page shows each test's latest value relative to the point
// before, coloured as the reports colour; the history page marks the
// change point at the build where it arrived; the compare page is the
// report's comparison with its colours.
func TestPagesShowHistoryAndComparison(t *testing.T) {
	st := seeded(t)
	ts := start(t, st, nil)
	a := ts.get(t, "/suites/sysbench")
	row := regexp.MustCompile(`(?s)<tr><td><a href="[^"]*config=default[^"]*"><bdi class="name" title="update-index_range=100">update-index_range=100</bdi></a>.*?</tr>`).FindString(a.body)
	if !strings.Contains(row, "ma10.2.12 10.2.12") || !strings.Contains(row, `class="num rel ">1.00<`) ||
		!strings.Contains(row, "regression -20.") || !strings.Contains(row, "in ma10.2.7 10.2.7") || !strings.Contains(row, "#cp-ma10.2.7") {
		t.Errorf("the suite's row of the step history: %s", row)
	}
	// other.demo's point tests are its latest point: 1.10 × base.demo's.
	row = regexp.MustCompile(`(?s)<tr><td><a href="[^"]*config=demo[^"]*"><bdi class="name" title="point-query_range=100">point-query_range=100</bdi></a>.*?</tr>`).FindString(a.body)
	if !strings.Contains(row, `class="num rel green">1.10<`) {
		t.Errorf("the suite's row of point-query: %s", row)
	}
	row = regexp.MustCompile(`(?s)<tr><td><a href="[^"]*config=demo[^"]*"><bdi class="name" title="update-one_range=100">update-one_range=100</bdi></a>.*?</tr>`).FindString(a.body)
	if !strings.Contains(row, `class="num rel red">0.90<`) {
		t.Errorf("the suite's row of update-one: %s", row)
	}
	// Latency is better lower: p99 rising is red.
	a = ts.get(t, "/suites/sysbench?metric=p99")
	if !strings.Contains(a.body, "better lower") {
		t.Errorf("the p99 suite page does not say the metric is better lower")
	}

	a = ts.get(t, "/suites/sysbench/tests/update-index_range=100?metric=qps&threads=1&config=default")
	if a.status != 200 {
		t.Fatalf("history: %d %s", a.status, a.body)
	}
	if n := strings.Count(a.body, `<svg xmlns="http://www.w3.org/2000/svg" class="chart history"`); n != 1 {
		t.Errorf("%d history charts, want 1", n)
	}
	if n := strings.Count(a.body, `class="mark pt"`); n != 12 {
		t.Errorf("%d points drawn, want 12", n)
	}
	if !regexp.MustCompile(`<g class="cp cp-regression" data-build="ma10\.2\.7" data-version="10\.2\.7" data-kind="regression" data-index="6"`).MatchString(a.body) {
		t.Errorf("no change point marked at ma10.2.7")
	}
	if !strings.Contains(a.body, `<tr id="cp-ma10.2.7" class="cprow">`) || !strings.Contains(a.body, "c0ffee07") {
		t.Errorf("no change point row with its commit")
	}
	// zoomed to points 5..8: four points, the change still marked
	a = ts.get(t, "/suites/sysbench/tests/update-index_range=100?metric=qps&threads=1&config=default&from=4&to=8")
	if n := strings.Count(a.body, `class="mark pt"`); n != 4 || !strings.Contains(a.body, `data-build="ma10.2.7"`) || !strings.Contains(a.body, "zoom out") {
		t.Errorf("zoomed: %d points", n)
	}
	// too short for a change point: it says so, and what comparing the
	// two builds says (the same, in the range groups)
	a = ts.get(t, "/suites/sysbench/tests/range-covered-pk_range=100?metric=qps&config=demo")
	if !strings.Contains(a.body, "a change point needs 4 points, this series has 2; base → other: no significant change") {
		t.Errorf("a two-point series does not say why it has no change point")
	}
	// the writes' regression of the two builds is its change
	a = ts.get(t, "/suites/sysbench/tests/update-index_range=100?metric=qps&config=demo")
	if !strings.Contains(a.body, `<tr id="cp-other" class="cprow">`) {
		t.Errorf("a two-build series lacks the regression of comparing its builds")
	}

	a = ts.get(t, "/compare?base=base.demo&other=other.demo")
	if a.status != 200 {
		t.Fatalf("compare: %d %s", a.status, a.body)
	}
	// Paired rounds: the point tests better and green, the writes worse
	// and red, each with its interval and mark.
	if n := len(regexp.MustCompile(`<td class="num rel green" title="better: 8 paired rounds \(slices\) in 2 repeat\(s\)[^"]*">1\.10±\d\.\d%<span class="mark">&#43;</span></td>`).FindAllString(a.body, -1)); n != 17 { // the 17 point tests
		t.Errorf("%d point tests at 1.10 in green, want 17", n)
	}
	if n := len(regexp.MustCompile(`<td class="num rel red" title="worse: [^"]*">0\.90±\d\.\d%<span class="mark">-</span></td>`).FindAllString(a.body, -1)); n != 10 { // the 10 writes
		t.Errorf("%d writes at 0.90 in red, want 10", n)
	}
	if !strings.Contains(a.body, "27 test(s) changed beyond the noise (10 worse, 17 better)") {
		t.Errorf("the compare page does not lead with the verdict")
	}
	if f, c := strings.Index(a.body, `<h2 id="findings">`), strings.Index(a.body, `<h2 id="comparison">`); f < 0 || c < f || !strings.Contains(a.body, "faster on 17 of 42 microbenchmarks, beyond the noise on 17") {
		t.Errorf("the compare page does not open with the findings (at %d, the comparison at %d)", f, c)
	}
	for _, want := range []string{"Group statistics of the relative values", `data-chart="rel:point-1"`, `href="/api/v1/compare?`, "base.demo (10.11.1)", "Timelines"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("compare lacks %q", want)
		}
	}
	// the run page: its timeline, host and config
	a = ts.get(t, "/runs/"+firstRun(t, st, "ma10.2.12"))
	for _, want := range []string{"update-index_range=100 ma10.2.12.default, 1 thread(s)", `data-chart="rate:update-index_range=100:1"`, "Hosts", "Test CPU a", "c0ffee12"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	// a host page: its risks with their fix
	hosts, _ := st.Hosts(ctx)
	a = ts.get(t, "/hosts/"+hosts[0].ID)
	if !strings.Contains(a.body, "run on bare metal") || !strings.Contains(a.body, `<td class="risky">`) {
		t.Errorf("the host page lacks its risks")
	}
}

// The analysis is cached, and found again when new results arrive.
func TestHistoryRecomputedOnNewResults(t *testing.T) {
	st := seeded(t)
	ts := start(t, st, nil)
	points := func() int {
		ss, err := ts.cache.history(ctx, "sysbench", "update-index_range=100", "qps")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if s.Config == "default" {
				return len(s.Points)
			}
		}
		return 0
	}
	if n := points(); n != 12 {
		t.Fatalf("%d points", n)
	}
	// qpslab run (another process) stores a thirteenth build.
	r := stepRun(12, "update-index_range=100", 1000)
	r.Build, r.Version = "ma10.2.13", "10.2.13"
	if _, err := st.Import(ctx, []result.Run{r}, store.Meta{Source: "run"}); err != nil {
		t.Fatal(err)
	}
	if n := points(); n != 12 {
		t.Errorf("the cache moved before a refresh: %d points", n)
	}
	if err := ts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := points(); n != 13 {
		t.Errorf("after a refresh: %d points, want 13", n)
	}
}

// longSeries is n points in time order with a step down at n*3/5.
func longSeries(n int) Series {
	s := history.Series{Suite: "sysbench", Test: "point-query_range=100", Metric: "qps", Unit: "qps", HigherIsBetter: true, Threads: 8, Config: "nightly", Order: history.OrderTime}
	step := n * 3 / 5
	for i := 0; i < n; i++ {
		v := 1000 + 20*math.Sin(float64(i)/7)
		if i >= step {
			v -= 150
		}
		s.Points = append(s.Points, history.Point{Time: t0.Add(time.Duration(i) * time.Minute), Build: "nightly", Value: v, N: 1})
	}
	c := analysis.Change{Series: s.Name(), Suite: s.Suite, Test: s.Test, Metric: s.Metric, Threads: 8, Config: "nightly", Kind: "regression", Magnitude: -0.15,
		MeanBefore: 1000, MeanAfter: 850, PValue: 1e-9, Index: step, Points: n, Order: s.Order, Arrived: s.Points[step], Before: s.Points[step-1]}
	return Series{Series: s, Changes: []analysis.Change{c}}
}

// A history of 100,000 points is drawn as at most maxBuckets spans: the
// page stays small whatever the history's length; zoomed in, the points
// themselves are drawn, and the change point stays marked.
func TestChartOf100000Points(t *testing.T) {
	s := longSeries(100_000)
	svg := string(historyChart(s, window{0, 100_000, 100_000}, "/x"))
	if len(svg) > 120_000 {
		t.Errorf("the chart of 100,000 points is %d bytes", len(svg))
	}
	band := regexp.MustCompile(`<path class="band" d="([^"]*)"`).FindStringSubmatch(svg)
	if band == nil || strings.Count(band[1], "M") > maxBuckets || strings.Count(band[1], "M") < maxBuckets/2 {
		t.Errorf("the band: %d spans", strings.Count(band[1], "M"))
	}
	if strings.Count(svg, "<circle") != 0 || !strings.Contains(svg, `data-aggregated="true"`) || !strings.Contains(svg, "250 per bar") {
		t.Error("100,000 points drawn one by one")
	}
	if !strings.Contains(svg, `<g class="cp cp-regression" data-build="nightly"`) || !strings.Contains(svg, "data-index=\"60000\"") {
		t.Error("the change point is not marked")
	}
	zoom := string(historyChart(s, window{59_900, 60_100, 100_000}, "/x"))
	if n := strings.Count(zoom, `class="mark pt"`); n != 200 || !strings.Contains(zoom, `data-index="59900"`) || !strings.Contains(zoom, `data-index="60000"`) {
		t.Errorf("zoomed to 200 points: %d drawn", n)
	}
	// The page of that history, served: small, and its chart aggregated.
	st := seeded(t)
	ts := start(t, st, nil)
	if _, err := ts.cache.sync(ctx); err != nil {
		t.Fatal(err)
	}
	ts.plant("sysbench", "point-query_range=100", "qps", s)
	a := ts.get(t, "/suites/sysbench/tests/point-query_range=100?threads=8&config=nightly")
	if a.status != 200 || len(a.body) > 150_000 || !strings.Contains(a.body, "points 0 to 99999 of 100000") {
		t.Errorf("the page of 100,000 points: %d, %d bytes", a.status, len(a.body))
	}
	var h struct{ Series []apiSeries }
	decode(t, ts.get(t, "/api/v1/history?suite=sysbench&test=point-query_range%3D100&config=nightly&buckets=1000"), &h)
	if len(h.Series) != 1 || len(h.Series[0].Buckets) != 1000 || h.Series[0].Buckets[999].To != 99_999 {
		t.Errorf("100,000 points in 1000 buckets: %+v", len(h.Series))
	}
}

func TestAggregate(t *testing.T) {
	var pts []history.Point
	for i, v := range []float64{1, 5, 3, 2, 8, 4, 6} {
		pts = append(pts, history.Point{Build: fmt.Sprintf("b%d", i), Value: v})
	}
	bs := aggregate(pts, history.OrderVersion, 0, 7, 3)
	want := []Bucket{{From: 0, To: 2, N: 3, Min: 1, Max: 5, Mean: 3, First: "b0", Last: "b2"},
		{From: 3, To: 5, N: 3, Min: 2, Max: 8, Mean: 14.0 / 3, First: "b3", Last: "b5"}, {From: 6, To: 6, N: 1,
			Min: 6, Max: 6, Mean: 6, First: "b6", Last: "b6"}}
	if fmt.Sprint(bs) != fmt.Sprint(want) {
		t.Errorf("aggregate: %v, want %v", bs, want)
	}
	if w, err := clampWindow("2", "99", 7); err != nil || w != (window{2, 7, 7}) {
		t.Errorf("clamp: %+v %v", w, err)
	}
}

// A test's many series are one overlaid chart with a table of them and a
// filter; a chart each only when asked (view=multiples); one series is
// its own chart with its change points and noise band.
func TestHistoryOverlay(t *testing.T) {
	st := seeded(t)
	ts := start(t, st, nil)
	base := "/suites/sysbench/tests/update-index_range=100?metric=qps"
	a := ts.get(t, base)
	if a.status != 200 || strings.Count(a.body, `data-chart="overlay"`) != 1 || strings.Contains(a.body,
		`data-chart="history"`) ||
		strings.Count(a.body, `<svg class="swatch"`) != 3 || !strings.Contains(a.body, `<select name="config">`) {
		t.Errorf("the history of 3 series: %d, want one overlaid chart, its 3 series listed and a config filter", a.status)
	}
	rng := ts.get(t, base+"&"+url.Values{"first": {"ma10.2.3 10.2.3"}, "last": {"ma10.2.5 10.2.5"}}.Encode())
	if rng.status != 200 || !strings.Contains(rng.body, `<option value="ma10.2.3 10.2.3" selected>`) ||
		!strings.Contains(rng.body, `>ma10.2.3 10.2.3</text>`) || strings.Contains(rng.body, `>ma10.2.1 10.2.1</text>`) {
		t.Errorf("the builds ma10.2.3 to ma10.2.5: %d, want the chart from ma10.2.3, the range chosen", rng.status)
	}
	if m := ts.get(t, base+"&view=multiples"); m.status != 200 || strings.Count(m.body,
		`data-chart="history"`) != 3 || strings.Contains(m.body, `data-chart="overlay"`) {
		t.Errorf("view=multiples: %d, want a chart per series", m.status)
	}
	one := ts.get(t, base+"&config=default")
	if one.status != 200 || strings.Count(one.body, `data-chart="history"`) != 1 || !strings.Contains(one.body,
		`class="noise"`) ||
		!strings.Contains(one.body, "1000 → 800 qps") || !strings.Contains(one.body, "&lt; 1e-15") {
		t.Errorf("one series: %d, want its chart with a noise band, means with units and the p-value", one.status)
	}
	if bad := ts.get(t, base+"&view=sideways"); bad.status != 400 || !strings.Contains(bad.body,
		"view=sideways: use overlay") {
		t.Errorf("view=sideways: %d, want 400 naming the views", bad.status)
	}
}
