package serve

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/store"
)

// The 1.7e308 post in a real browser: posted from a page as a CI
// script would, it is refused with the field named; written straight into
// the store (as an older release could have), with worse beside it, the
// server stays up, answers every page, and the history pages draw their
// charts with a few ticks and every point on the plot.
func TestBrowserFigures(t *testing.T) {
	st := seeded(t)
	ts := start(t, st, nil)
	tok := ts.token(t, "ci", ScopeIngest)
	bctx := browser(t)

	open(t, bctx, ts.URL+"/")
	body, err := json.Marshal(string(resultsJSON(t, hugeRuns())))
	if err != nil {
		t.Fatal(err)
	}
	type posted struct {
		Status int
		Error  string
	}
	p := eval[posted](t, bctx, fmt.Sprintf(`fetch("/api/v1/results", {method: "POST", headers: {"Authorization": "Bearer " + %q, "Content-Type": "application/json"}, body: %s})
		.then(async r => ({Status: r.status, Error: (await r.json()).error}))`, tok, body))
	t.Logf("the 1.7e308 post: %d %s", p.Status, p.Error)
	if p.Status != 400 || !strings.Contains(p.Error, "runs[0] (point-query_range=100): totals.reported = 1.7e+308 is above the plausible 1e+09 for qps") {
		t.Errorf("the 1.7e308 post: %+v", p)
	}

	if _, err := st.Import(ctx, outOfBounds(), store.Meta{Source: "an older release"}); err != nil {
		t.Fatal(err)
	}
	if err := ts.Refresh(ctx); err != nil {
		t.Fatalf("refresh over the extreme store: %v", err)
	}
	// Every page answers (crawl fails on any 5xx, and on one that never
	// ends); the pages of the extreme series are opened in the browser.
	seen := crawl(t, ts, apiRoots(t, ts), 1500)
	var charts []string
	for u, a := range seen {
		if strings.Contains(u, "/tests/point-query_range=100?") || strings.Contains(u, "/tests/update-index_range=100?") {
			if strings.Contains(a.body, `data-chart="history"`) {
				charts = append(charts, u)
			}
		}
	}
	sort.Strings(charts)
	if len(charts) < 2 {
		t.Fatalf("no history page of the extreme series among %d answers", len(seen))
	}
	for _, u := range append([]string{"/", "/suites/sysbench", "/runs", "/hosts", "/alerts", "/compare?base=base.demo&other=huge.default", "/compare?base=ma10.2.1.default&other=old0.default&other=old1.default&other=old2.default"}, charts...) {
		open(t, bctx, ts.URL+u)
		r, n := drawn(t, bctx)
		if !strings.Contains(u, "/tests/") {
			t.Logf("%s: %d of %d charts drawn", u, r, n)
		}
		if r != n {
			t.Errorf("%s: drew %d of %d charts", u, r, n)
		}
		if !strings.Contains(u, "/tests/") {
			continue
		}
		type chart struct {
			Ticks, Points, Off int
			Title              string
		}
		c := eval[chart](t, bctx, `(() => {
			const svg = document.querySelector("svg.chart.history");
			const box = svg.getBoundingClientRect();
			const pts = [...svg.querySelectorAll("circle.pt, path.mark, path.band")];
			const off = pts.filter(e => { const b = e.getBoundingClientRect();
				return !(isFinite(b.y) && b.y >= box.y - 4 && b.y + b.height <= box.y + box.height + 4); }).length;
			return {Ticks: svg.querySelectorAll("text.tick:not(.xlabel)").length, Points: pts.length, Off: off,
				Title: svg.querySelector("title").textContent};
		})()`)
		t.Logf("%s: %s: %d ticks, %d marks", u, c.Title, c.Ticks, c.Points)
		if c.Ticks < 2 || c.Ticks > 12 || c.Points == 0 || c.Off != 0 {
			t.Errorf("%s: the chart has %d ticks, %d marks, %d off the plot", u, c.Ticks, c.Points, c.Off)
		}
	}
}
