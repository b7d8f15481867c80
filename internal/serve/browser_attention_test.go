package serve

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/qpslab/qpslab/internal/testenv"
)

// The attention view and triage in a real browser: the home page lists
// the seeded regressions, an entry opens into its parts, a note
// acknowledges it, dismissing it takes it off the open list, the history
// chart marks its state, and a chart point leads to its run.
func TestBrowserAttention(t *testing.T) {
	st := attentionStore(t)
	ts := start(t, st, func(o *Options) { o.PublicTriage = true })
	bctx := browser(t)
	entries := attentionAPI(t, ts, "").Entries
	if len(entries) != 3 {
		t.Fatalf("%d entries, want 3", len(entries))
	}
	e := entries[1] // ma10.2.7: three tests, QPS and p99
	sel := fmt.Sprintf(`details[data-key=%q]`, e.Key)

	// until waits for a condition on the page a form post leads to.
	until := func(what, js string) {
		t.Helper()
		testenv.WaitFor(t, time.Minute, what, func() bool {
			c, cancel := context.WithTimeout(bctx, 10*time.Second)
			defer cancel()
			ok, err := chromedp.Run(c, chromedp.Evaluate[bool](js))
			return err == nil && ok
		})
	}
	submit := func(state, note string) {
		t.Helper()
		c, cancel := context.WithTimeout(bctx, 60*time.Second)
		defer cancel()
		form := sel + ` form.triage`
		err := chromedp.Do(c,
			chromedp.SetValue(chromedp.CSS(form+` select[name="state"]`), state),
			chromedp.SendKeys(chromedp.CSS(form+` input[name="note"]`), note),
			chromedp.Click(chromedp.CSS(form+` button[type="submit"]`)),
		)
		if err != nil {
			t.Fatalf("triage %s: %v", state, err)
		}
	}

	t.Run("the home page lists the entry; it opens into its parts", func(t *testing.T) {
		open(t, bctx, ts.URL+"/")
		type view struct {
			Keys         []string
			Summary      string
			Open         bool
			Rows, Shown  int
			RowsAfter    int
			ShownAfter   int
			OpenAfter    bool
			FirstPartRow string
		}
		v := eval[view](t, bctx, fmt.Sprintf(`(() => {
			const d = document.querySelector(%q);
			const shown = () => Array.from(d.querySelectorAll("table.attparts tbody tr")).filter(r => r.checkVisibility()).length;
			const v = {Keys: Array.from(document.querySelectorAll("section.attention details")).map(x => x.dataset.key),
				Summary: d.querySelector("summary").innerText, Open: d.open, Rows: d.querySelectorAll("table.attparts tbody tr").length, Shown: shown()};
			d.querySelector("summary").click();
			v.OpenAfter = d.open; v.ShownAfter = shown();
			v.FirstPartRow = d.querySelector("table.attparts tbody tr").innerText;
			return v;
		})()`, sel))
		t.Logf("home page: entries %v; %q opens into %d rows (%d shown closed, %d open); first part: %q", v.Keys, v.Summary, v.Rows, v.Shown, v.ShownAfter, v.FirstPartRow)
		if len(v.Keys) != 3 || v.Keys[0] != entries[0].Key || v.Keys[1] != e.Key || v.Keys[2] != entries[2].Key {
			t.Errorf("the entries %v, want %s, %s then %s (the newest first)", v.Keys, entries[0].Key, e.Key, entries[2].Key)
		}
		if !strings.Contains(v.Summary, "worse in ma10.2.7 10.2.7 commit c0ffee07 after ma10.2.6 10.2.6 commit c0ffee06: "+
			"3 test(s) (delete_range=100, update-nonindex_range=100, update-index_range=100), 3 series, in qps, p99") ||
			!strings.Contains(v.Summary, "open") {
			t.Errorf("the entry's summary: %q", v.Summary)
		}
		if v.Open || v.Shown != 0 || !v.OpenAfter || v.Rows != 6 || v.ShownAfter != 6 || !strings.Contains(v.FirstPartRow, "ma10.2.7") {
			t.Errorf("the entry does not open into its six parts: %+v", v)
		}
	})

	t.Run("acknowledged with a note", func(t *testing.T) {
		open(t, bctx, ts.URL+"/")
		eval[bool](t, bctx, fmt.Sprintf(`document.querySelector(%q).open = true`, sel))
		submit("acknowledged", "looking into it")
		until("the entry acknowledged", fmt.Sprintf(`(() => { const d = document.querySelector(%q); return !!d && d.dataset.state === "acknowledged"; })()`, sel))
		text := eval[string](t, bctx, fmt.Sprintf(`document.querySelector(%q).textContent`, sel+` p`))
		state := eval[string](t, bctx, fmt.Sprintf(`document.querySelector(%q).innerText`, sel+` summary .state`))
		t.Logf("after acknowledging: %q, %q at %s", state, text, eval[string](t, bctx, `location.pathname + location.hash`))
		if state != "acknowledged" || !strings.Contains(text, "acknowledged by public") || !strings.Contains(text, "looking into it") {
			t.Errorf("the entry after acknowledging: %q %q", state, text)
		}
	})

	t.Run("the history chart marks the triage", func(t *testing.T) {
		open(t, bctx, ts.URL+strings.Split(e.Parts[0].History, "#")[0])
		type mark struct {
			Triage, Label, Cell string
		}
		m := eval[mark](t, bctx, `(() => { const g = document.querySelector("svg.chart.history g.cp[data-triage]");
			return g ? {Triage: g.dataset.triage, Label: g.querySelector("text").textContent, Cell: document.querySelector("tr.cprow td.state-acknowledged").innerText} : {}; })()`)
		t.Logf("history chart: %+v", m)
		if m.Triage != "acknowledged" || !strings.HasSuffix(m.Label, "· acknowledged") || m.Cell != "acknowledged" {
			t.Errorf("the chart's mark: %+v", m)
		}
	})

	t.Run("a chart point links to its run", func(t *testing.T) {
		open(t, bctx, ts.URL+strings.Split(e.Parts[0].History, "#")[0])
		href := eval[string](t, bctx, `document.querySelector('svg.chart.history circle.pt[data-index="0"]').parentNode.getAttribute("href")`)
		c, cancel := context.WithTimeout(bctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(c, chromedp.Click(chromedp.CSS(`svg.chart.history circle.pt[data-index="0"]`))); err != nil {
			t.Fatal(err)
		}
		until("the run page", fmt.Sprintf(`location.pathname === %q && !!document.querySelector("table.facts")`, href))
		facts := eval[string](t, bctx, `document.querySelector("table.facts").innerText`)
		t.Logf("point 0 links to %s: %q…", href, strings.SplitN(facts, "\n", 4)[:3])
		if !strings.HasPrefix(href, "/runs/") || !strings.Contains(facts, "ma10.2.1") || !strings.Contains(facts, "series\tthe history of") {
			t.Errorf("the run page of point 0: %s %q", href, facts)
		}
	})

	t.Run("dismissed leaves the open list", func(t *testing.T) {
		open(t, bctx, ts.URL+"/")
		eval[bool](t, bctx, fmt.Sprintf(`document.querySelector(%q).open = true`, sel))
		submit("dismissed", "noise")
		until("the entry gone from the open list", fmt.Sprintf(`!document.querySelector(%q) && document.querySelectorAll("section.attention details").length === 2`, sel))
		open(t, bctx, ts.URL+"/?attention=dismissed")
		state := eval[string](t, bctx, fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.state || ""`, sel))
		n := eval[int](t, bctx, `document.querySelectorAll("section.attention details").length`)
		t.Logf("after dismissing: the open list has 2 entries; the dismissed filter shows %d, this one %q", n, state)
		if state != "dismissed" || n != 1 {
			t.Errorf("the dismissed filter: %d entries, this one %q", n, state)
		}
		open(t, bctx, ts.URL+strings.Split(e.Parts[0].History, "#")[0])
		if tr := eval[string](t, bctx, `(document.querySelector("svg.chart.history g.cp[data-triage]") || {dataset: {}}).dataset.triage || ""`); tr != "dismissed" {
			t.Errorf("the chart's mark after dismissing: %q", tr)
		}
	})
}
