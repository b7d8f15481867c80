package serve

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// The five pages a performance engineer reads first (home, a test's
// history, overlaid and of one series, compare, labels, bisections) at a 1400 px window, as
// screenshots: no page nor table scrolls sideways, and no name is cut (each
// bdi.name shows its whole text, wrapping rather than clipping; one cut at
// 120 characters ends with "…" and has its whole in its title). The
// screenshots are written to a temporary folder, or to
// QPSLAB_SCREENSHOTS when set (to look at them: docs/serve.md).
func TestBrowserPagesScreenshots(t *testing.T) {
	st := seeded(t)
	// A test of many series: 3 thread counts × 8 configs × 12 builds,
	// half the configs regressed in ma10.2.7, their names long enough to
	// wrap.
	var many []result.Run
	for _, thr := range []int{1, 8, 32} {
		for c := 0; c < 8; c++ {
			for b := 0; b < 12; b++ {
				base := 1000 * float64(thr) * (1 + 0.05*float64(c))
				r := stepRun(b, "points-covered-pk.pre_range=100", base)
				if c%2 == 1 && b >= 6 {
					r = stepRun(b, "points-covered-pk.pre_range=100", base/0.8) // 1.25 × 0.8: no change
				}
				r.Threads, r.Config = thr, fmt.Sprintf("innodb_buffer_pool_size_%dG_flush_log_at_trx_commit_2@0123456789ab", c+1)
				many = append(many, r)
			}
		}
	}
	if _, err := st.Import(ctx, many, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	ts := start(t, st, nil)
	bctx := browserSized(t, 1400, 900)
	dir := os.Getenv("QPSLAB_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ name, path, says string }{
		{"home", "/?attention=all", "2 test(s) (points-covered-pk.pre_range=100, update-index_range=100)"},
		{"history", "/suites/sysbench/tests/update-index_range=100?metric=qps", "3 of 3 series of qps"},
		{"history-many", "/suites/sysbench/tests/points-covered-pk.pre_range=100?metric=qps", "25 of 25 series of qps"},
		{"history-series", "/suites/sysbench/tests/update-index_range=100?metric=qps&threads=1&config=default", "band: ±"},
		{"compare", "/compare?" + url.Values{"base": {"base.demo"}, "other": {"other.demo"}}.Encode(), "0.77: 23% slower"},
		{"labels", "/labels", "the newest first"},
		{"bisections", "/bisections", "No bisection yet"},
	} {
		open(t, bctx, ts.URL+p.path)
		// Open the attention entries, so that their parts are seen too.
		eval[bool](t, bctx, `(() => { document.querySelectorAll("details").forEach(d => d.open = true); return true })()`)
		shot(t, bctx, filepath.Join(dir, p.name+".png"))
		if p.name == "compare" { // its first screen and its first relative chart, at their size
			view(t, bctx, filepath.Join(dir, "compare-top.png"), chromedp.CaptureScreenshot())
			view(t, bctx, filepath.Join(dir, "compare-rel.png"),
				chromedp.Screenshot(chromedp.CSS(`svg.chart[data-chart^="rel:"]`)))
		}
		if says := eval[bool](t, bctx, fmt.Sprintf(`document.documentElement.textContent.includes(%q)`, p.says)); !says {
			t.Errorf("%s does not say %q", p.name, p.says)
		}
		type layout struct {
			ScrollWidth, Width int
			Cut                []string // names clipped in their box
			Tables             []string // tables that scroll in themselves
			Names              int
		}
		l := eval[layout](t, bctx, `(() => {
			const out = {ScrollWidth: document.documentElement.scrollWidth,
				Width: document.documentElement.clientWidth, Cut: [], Tables: []};
			for (const t of document.querySelectorAll("table"))
				if (t.scrollWidth > t.clientWidth + 1) out.Tables.push(t.className + " " + t.scrollWidth + ">" + t.clientWidth);
			const names = document.querySelectorAll("bdi.name");
			out.Names = names.length;
			for (const b of names) {
				const cs = getComputedStyle(b);
				if (b.scrollWidth > b.clientWidth + 1 || cs.textOverflow === "ellipsis" && cs.overflow !== "visible")
					out.Cut.push(b.textContent.slice(0, 60) + " " + b.scrollWidth + ">" + b.clientWidth);
				const cell = b.closest("td, th"), r = b.getBoundingClientRect();
				if (cell && r.right > cell.getBoundingClientRect().right + 1)
					out.Cut.push(b.textContent.slice(0, 60) + ": spills out of its cell");
				if (b.textContent.endsWith("…"))
					out.Cut.push(b.textContent.slice(0, 60) + ": cut at 120 characters");
			}
			return out;
		})()`)
		t.Logf("%s: %d names; %d px wide in a %d px window", p.name, l.Names, l.ScrollWidth, l.Width)
		if l.ScrollWidth > l.Width {
			t.Errorf("%s is %d px wide in a %d px window: it scrolls sideways", p.name, l.ScrollWidth, l.Width)
		}
		if len(l.Tables) > 0 {
			t.Errorf("%s: table(s) wider than the window: %q", p.name, l.Tables)
		}
		if len(l.Cut) > 0 {
			t.Errorf("%s: %d name(s) cut: %.60q", p.name, len(l.Cut), l.Cut[:min(len(l.Cut), 5)])
		}
	}
}

// view writes the image an action captures to file.
func view(t *testing.T, bctx context.Context, file string, a chromedp.Action[[]byte]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("screenshot %s: %v", file, err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// shot writes a screenshot of the whole page to file.
func shot(t *testing.T, bctx context.Context, file string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", file, err)
	}
	if !strings.HasSuffix(file, ".png") {
		file += ".png"
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(fmt.Errorf("screenshot: %w", err))
	}
}
