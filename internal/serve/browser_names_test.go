package serve

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// Long names in a real browser: on every page of a store that holds
// 10 KB names and a right-to-left override, the page is no wider than the
// window (a table wider than it scrolls in itself, inside the window), each
// name is cut with an ellipsis at its column's width with the full name in
// its title, and the override is isolated and shown as its code point.
func TestBrowserLongNames(t *testing.T) {
	st := seeded(t)
	seedLong(t, st)
	ts := start(t, st, nil)
	bctx := browser(t)
	id := firstRun(t, st, longBuild)
	hostID := longHostID(t, st)
	for _, p := range []struct {
		path  string
		names []string // shown cut, each with its full name in a title
	}{
		{"/", []string{longSuite}},
		{"/labels", []string{longLabel, longSuite, longHost + "/" + hostID, bidiLabel}},
		{"/labels?" + url.Values{"q": {"long-build"}}.Encode(), []string{longLabel}},
		{"/suites/sysbench", []string{longConfig}},
		{"/suites/" + url.PathEscape(longSuite), []string{longSuite, longTest, longConfig}},
		{"/suites/" + url.PathEscape(longSuite) + "/tests/" + url.PathEscape(longTest), []string{longTest, longSuite}},
		{"/suites/sysbench/tests/update-index_range=100", nil},
		{"/runs", []string{longSuite, longTest, longLabel, longHost + "/" + hostID, bidiLabel}},
		{"/runs/" + id, []string{longLabel, longConfig + "@0123456789ab", longEngine}},
		{"/hosts", []string{longHost}},
		{"/hosts/" + hostID, []string{longHost}},
		{"/alerts", []string{longAlertSeries, longBuild}},
		{"/compare?" + url.Values{"base": {"short." + longConfig + ":" + longEngine}, "other": {longLabel}, "suite": {"sysbench"}}.Encode(), []string{longLabel}},
	} {
		open(t, bctx, ts.URL+p.path)
		names, _ := json.Marshal(append([]string{}, p.names...))
		type layout struct {
			ScrollWidth, Width int
			Wide               []string // elements past the window's right edge, outside a table that scrolls
			Missing            []string // names with no title holding them whole
			Uncut              []string // long names shown whole
			Bidi               []string // bidi names not isolated, or with the override in their text
			Names              int
		}
		l := eval[layout](t, bctx, `(() => {
			const vw = document.documentElement.clientWidth, out = {ScrollWidth: document.documentElement.scrollWidth, Width: vw, Wide: [], Missing: [], Uncut: [], Bidi: []};
			for (const el of document.querySelectorAll("body *")) {
				// A table or a pre scrolls in itself; a chart clips what it draws.
				const scroller = el.parentElement && el.parentElement.closest("table.list, pre, svg");
				const r = el.getBoundingClientRect();
				if (!scroller && r.right > vw + 1) out.Wide.push(el.tagName + "." + el.className + " " + Math.round(r.right));
			}
			const bdis = Array.from(document.querySelectorAll("bdi.name"));
			out.Names = bdis.length;
			for (const n of `+string(names)+`) {
				if (!bdis.some(b => b.title === n)) out.Missing.push(n.slice(0, 40));
			}
			for (const b of bdis) {
				const cs = getComputedStyle(b);
				const cut = b.textContent.endsWith("…") || (b.scrollWidth > b.clientWidth && cs.textOverflow === "ellipsis");
				if (b.title.length > 1000 && !(cut && b.textContent.length < 200 && b.getBoundingClientRect().width <= vw))
					out.Uncut.push(b.title.slice(0, 40) + " " + Math.round(b.getBoundingClientRect().width));
				if (b.title.includes("\u202E") && (cs.unicodeBidi !== "isolate" || b.textContent.includes("\u202E") || !b.textContent.includes("[U+202E]")))
					out.Bidi.push(b.title + " " + cs.unicodeBidi);
			}
			return out;
		})()`)
		t.Logf("%.70s: %d names; the page %d px wide in a %d px window", p.path, l.Names, l.ScrollWidth, l.Width)
		if l.ScrollWidth > l.Width || len(l.Wide) > 0 {
			t.Errorf("%.70s is %d px wide in a %d px window; past its edge: %.5q", p.path, l.ScrollWidth, l.Width, l.Wide)
		}
		if len(l.Missing) > 0 || len(l.Uncut) > 0 || len(l.Bidi) > 0 {
			t.Errorf("%.70s: no title holds %q whole; shown uncut: %q; bidi not isolated: %q", p.path, l.Missing, l.Uncut, l.Bidi)
		}
	}
	// The compare page is the report's, which the window holds too; its
	// window's title is cut.
	if s := eval[string](t, bctx, `document.title`); !strings.Contains(s, "…") || len(s) > 1000 {
		t.Errorf("the compare page's title: %.80q", s)
	}
	if n := eval[int](t, bctx, `document.querySelectorAll(".report table").length`); n == 0 {
		t.Errorf("the compare page shows no comparison")
	}
}
