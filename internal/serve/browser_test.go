package serve

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
)

// The dashboard in a real browser: Debian's Chromium, driven by chromedp
// over the DevTools protocol, against a served store with seeded history.
// Without Chromium on PATH the test is skipped, unless
// QPSLAB_REQUIRE_CHROMIUM=1 (make test) makes that a failure, as for the
// HTML report's test.

func chromiumPath(t *testing.T) string {
	return testenv.Chromium(t, "the dashboard is not tested in a browser")
}

// browser starts Chromium with a profile and HOME of its own under a
// temporary folder, and at the end checks that no process of it is left.
func browser(t *testing.T) context.Context { return browserSized(t, 1280, 1000) }

// browserSized is browser with a window of w × h px.
func browserSized(t *testing.T, w, h int) context.Context {
	bin := chromiumPath(t)
	dir := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Flag("no-sandbox", true), // root in a container has no user namespace to sandbox with
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-crash-reporter", true),
		chromedp.WindowSize(w, h),
		// TMPDIR too: Chromium leaves a folder there at each start.
		chromedp.Env("HOME="+dir, "TMPDIR="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
			"XDG_CACHE_HOME="+filepath.Join(dir, "cache")),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		if left := leftBehind(dir, 5*time.Second); len(left) > 0 {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Errorf("chromium processes left behind (killed): %v", left)
		}
	})
	// The first run starts the browser: never under a timeout.
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// leftBehind waits for every live process with dir in its command line to
// end, and returns those still there after d.
func leftBehind(dir string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		var left []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			s := string(stat)
			if i := strings.LastIndexByte(s, ')'); i < 0 || len(s) < i+3 || s[i+2] == 'Z' || s[i+2] == 'X' {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if bytes.Contains(cmdline, []byte(dir)) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			sort.Ints(left)
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// open loads a page and waits until its script has counted the charts.
func open(t *testing.T, bctx context.Context, u string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("body[data-rendered]"))); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
}

// eval evaluates a script on the page.
func eval[T any](t *testing.T, bctx context.Context, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// drawn is how many charts the page's script counted as drawn, of how many.
func drawn(t *testing.T, bctx context.Context) (int, int) {
	t.Helper()
	v := eval[[]int](t, bctx, `[+document.body.dataset.rendered, +document.body.dataset.charts]`)
	return v[0], v[1]
}

func TestBrowser(t *testing.T) {
	st := seeded(t)
	ts := start(t, st, nil)
	bctx := browser(t)

	t.Run("history marks the change point", func(t *testing.T) {
		open(t, bctx, ts.URL+"/suites/sysbench/tests/update-index_range=100?metric=qps&threads=1&config=default")
		if r, n := drawn(t, bctx); r != 1 || n != 1 {
			t.Errorf("drew %d of %d charts, want the history's one", r, n)
		}
		type mark struct {
			Build, Kind, Label string
			X, W, H            float64
			Before, After      float64 // the x of the points on each side
			Points             int
		}
		m := eval[mark](t, bctx, `(() => {
			const g = document.querySelector("svg.chart.history g.cp");
			const line = g.querySelector("line").getBoundingClientRect();
			const pt = i => document.querySelector('svg.chart.history circle.pt[data-index="' + i + '"]').getBoundingClientRect();
			return {Build: g.dataset.build, Kind: g.dataset.kind, Label: g.querySelector("text").textContent,
				X: line.x, W: line.width, H: line.height, Before: pt(5).x, After: pt(6).x,
				Points: document.querySelectorAll("svg.chart.history circle.pt").length};
		})()`)
		t.Logf("history page: %d points drawn; change point %q (%s) at x=%.0f between points 5 (x=%.0f) and 6 (x=%.0f), %.0f px tall", m.Points, m.Label, m.Build, m.X, m.Before, m.After, m.H)
		if m.Build != "ma10.2.7" || m.Kind != "regression" || !strings.HasPrefix(m.Label, "regression -20.") || !strings.HasSuffix(m.Label, "in ma10.2.7 10.2.7") {
			t.Errorf("the change point mark: %+v", m)
		}
		if m.Points != 12 || !(m.H > 50) || !(m.X > m.Before && m.X < m.After) {
			t.Errorf("the mark is not drawn between ma10.2.6 and ma10.2.7: %+v", m)
		}
		row := eval[string](t, bctx, `document.getElementById("cp-ma10.2.7").innerText`)
		if !strings.Contains(row, "regression") || !strings.Contains(row, "ma10.2.7 10.2.7") || !strings.Contains(row, "c0ffee07") || !strings.Contains(row, "ma10.2.6 10.2.6") {
			t.Errorf("the change point's row: %q", row)
		}

		// Drag over points 2 to 8: the page zooms to them, a link of its own.
		xs := eval[[]float64](t, bctx, `(() => { const r = i => document.querySelector('circle.pt[data-index="' + i + '"]').getBoundingClientRect();
			const a = r(2), b = r(8); return [a.x + a.width/2, b.x + b.width/2, a.y + 10]; })()`)
		ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
		defer cancel()
		err := chromedp.Do(ctx,
			chromedp.MouseEvent(chromedp.MousePressed, xs[0], xs[2], chromedp.ButtonLeft),
			chromedp.MouseEvent(chromedp.MouseMoved, (xs[0]+xs[1])/2, xs[2], chromedp.ButtonLeft),
			chromedp.MouseEvent(chromedp.MouseReleased, xs[1], xs[2], chromedp.ButtonLeft),
		)
		if err != nil {
			t.Fatal(err)
		}
		// The drag navigates: wait for the new address, then its page.
		var zoomed string
		testenv.WaitFor(t, time.Minute, "the address the drag navigates to", func() bool {
			loc, err := chromedp.Run(ctx, chromedp.Location())
			if err != nil && navigating(err) {
				return false // the page is being replaced: ask the new one
			}
			if err != nil {
				t.Fatalf("no zoom after a drag: %v", err)
			}
			if strings.Contains(loc, "from=") {
				zoomed = loc
			}
			return zoomed != ""
		})
		open(t, bctx, zoomed)
		loc := eval[string](t, bctx, `location.search`)
		q, _ := url.ParseQuery(strings.TrimPrefix(loc, "?"))
		pts := eval[int](t, bctx, `document.querySelectorAll("svg.chart.history circle.pt").length`)
		t.Logf("dragged from point 2 to 8: %s, %d points drawn", loc, pts)
		if q.Get("from") != "2" || q.Get("to") != "9" || pts != 7 {
			t.Errorf("zoomed to %s with %d points, want from=2 to=9 and 7", loc, pts)
		}
		if n := eval[int](t, bctx, `document.querySelectorAll('svg.chart.history g.cp[data-build="ma10.2.7"]').length`); n != 1 {
			t.Errorf("the zoomed chart does not mark the change point")
		}
	})

	t.Run("a history of 100,000 points", func(t *testing.T) {
		if _, err := ts.cache.sync(ctx); err != nil {
			t.Fatal(err)
		}
		ts.plant("sysbench", "point-query_range=100", "qps", longSeries(100_000))
		start := time.Now()
		open(t, bctx, ts.URL+"/suites/sysbench/tests/point-query_range=100?threads=8&config=nightly")
		took := time.Since(start)
		r, n := drawn(t, bctx)
		marks := eval[int](t, bctx, `document.querySelector("svg.chart.history").querySelectorAll("*").length`)
		cp := eval[string](t, bctx, `document.querySelector("svg.chart.history g.cp").dataset.index`)
		t.Logf("100,000-point history: drew %d of %d charts, %d SVG elements, change point at point %s, loaded in %s", r, n, marks, cp, took.Round(time.Millisecond))
		if r != 1 || n != 1 || marks > 200 || cp != "60000" {
			t.Errorf("the 100,000-point chart: drew %d of %d, %d elements, change point at %s", r, n, marks, cp)
		}
	})

	t.Run("compare shows the known relative values", func(t *testing.T) {
		open(t, bctx, ts.URL+"/compare?base=base.demo&other=other.demo")
		type cell struct{ Test, Rel, Class string }
		cells := eval[[]cell](t, bctx, `Array.from(document.querySelectorAll("table.cmp tbody tr")).filter(tr => tr.querySelector("td.rel")).map(tr => ({
			Test: tr.cells[0].innerText, Rel: tr.querySelector("td.rel").innerText.trim(), Class: tr.querySelector("td.rel").className}))`)
		count := map[string]int{}
		value := regexp.MustCompile(`^\d+\.\d\d`) // the value, without its interval and mark
		for _, c := range cells {
			count[strings.Join(append([]string{value.FindString(c.Rel)}, strings.Fields(strings.TrimPrefix(c.Class, "num rel"))...), " ")]++
			if c.Test == "point-query_range=100" && !regexp.MustCompile(`^1\.10±\d\.\d%\+$`).MatchString(c.Rel) {
				t.Errorf("point-query: %+v", c)
			}
		}
		r, n := drawn(t, bctx)
		geo := eval[string](t, bctx, `Array.from(document.querySelectorAll("table.stats tr")).filter(tr => tr.innerText.startsWith("all")).map(tr => tr.cells[tr.cells.length-1].innerText)[0]`)
		t.Logf("compare page: %d rows, relative values %v, geomean over all %s, drew %d of %d charts", len(cells), count, geo, r, n)
		if len(cells) != 43 || count["1.10 green"] != 17 || count["0.90 red"] != 10 || count["1.00"] != 15 || count["1.05 green"] != 1 {
			t.Errorf("relative values: %v over %d rows", count, len(cells))
		}
		if r != n || n < 6 {
			t.Errorf("drew %d of %d charts", r, n)
		}
	})

	t.Run("a post with a token appears, one without is refused", func(t *testing.T) {
		tok := ts.token(t, "ci", ScopeIngest)
		page := ts.URL + "/runs?label=ci-nightly.default"
		open(t, bctx, page)
		if s := eval[string](t, bctx, `document.querySelector("main p.note").innerText`); !strings.HasPrefix(s, "0 run(s)") {
			t.Fatalf("before the post: %q", s)
		}
		run := stepRun(0, "update-one_range=100", 4321) // 4324 qps
		run.Build, run.Version = "ci-nightly", "11.8.1"
		body := resultsJSON(t, []result.Run{run})
		// Without a token, from the browser itself and from a client.
		status := eval[int](t, bctx, fmt.Sprintf(`fetch("/api/v1/results", {method: "POST", headers: {"Content-Type": "application/json"}, body: %q}).then(r => r.status)`, body))
		refused := ts.do(t, "POST", "/api/v1/results", "", "application/json", bytes.NewReader(body))
		if status != http.StatusUnauthorized || refused.status != http.StatusUnauthorized {
			t.Errorf("posts without a token: %d from the browser, %d from a client", status, refused.status)
		}
		open(t, bctx, page)
		if s := eval[string](t, bctx, `document.querySelector("main p.note").innerText`); !strings.HasPrefix(s, "0 run(s)") {
			t.Errorf("a refused post shows: %q", s)
		}
		// With one.
		a := ts.do(t, "POST", "/api/v1/results", tok, "application/json", bytes.NewReader(body))
		if a.status != http.StatusCreated {
			t.Fatalf("post with a token: %d %s", a.status, a.body)
		}
		open(t, bctx, page)
		row := eval[string](t, bctx, `document.querySelector("table.runs tbody tr").innerText`)
		note := eval[string](t, bctx, `document.querySelector("main p.note").innerText`)
		t.Logf("runs page after the post with a token: %q; row %q; refused without: %d (browser), %d (client)", note, row, status, refused.status)
		if !strings.HasPrefix(note, "1 run(s)") || !strings.Contains(row, "ci-nightly.default") || !strings.Contains(row, "4324") || !strings.Contains(row, "update-one_range=100") {
			t.Errorf("the posted run on the runs page: %q %q", note, row)
		}
	})

	t.Run("markup in labels renders as text", func(t *testing.T) {
		xssRun := firstRun(t, st, xssBuild)
		var xssHost string
		hosts, _ := st.Hosts(ctx)
		for _, h := range hosts {
			if strings.Contains(string(h.Fingerprint), "<script>") {
				xssHost = h.ID
			}
		}
		for _, p := range []struct{ path, text string }{
			{"/labels", xssLabel},
			{"/runs/" + xssRun, xssBuild},
			{"/runs/" + xssRun, "</pre><script>document.body.dataset.xss='config'</script>"},
			{"/suites/xss-suite", xssTest},
			{"/suites/xss-suite/tests/" + url.PathEscape(xssTest), xssTest},
			{"/hosts/" + xssHost, "<script>x()</script>"},
			{"/compare?" + url.Values{"base": {"ma10.2.1.default"}, "other": {xssLabel}, "suite": {"sysbench"}}.Encode(), xssLabel},
		} {
			open(t, bctx, ts.URL+p.path)
			type dom struct {
				XSS             *string
				Scripts, Images int
				Text            bool
			}
			d := eval[dom](t, bctx, fmt.Sprintf(`({XSS: document.body.dataset.xss || null, Scripts: document.scripts.length,
				Images: document.querySelectorAll("img").length, Text: document.body.textContent.includes(%q)})`, p.text))
			if d.XSS != nil || d.Scripts != 2 || d.Images != 0 || !d.Text {
				t.Errorf("%s: injected %v, %d scripts, %d images, shows %q as text: %v", p.path, d.XSS, d.Scripts, d.Images, p.text, d.Text)
			} else {
				t.Logf("%s: shows %q as text; the server's two scripts, no image, nothing ran", p.path, p.text)
			}
		}
	})
}

// navigating says whether err is the browser's answer to a question asked
// while the page was being replaced (a navigation's old document gone, the
// new one's script context not there yet): the question is asked again of
// the new page, not failed. Under load the window between the two is wide
// enough to hit (a fresh-check's TestBrowser failed on it twice).
func navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "navigated or closed") || strings.Contains(msg, "Cannot find context") ||
		strings.Contains(msg, "Execution context was destroyed")
}
