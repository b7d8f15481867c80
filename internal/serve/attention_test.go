package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// regressed is twelve builds ma10.2.1 … ma10.2.12 of test, measured in
// version order a day after the seed's step history, QPS base until
// index at and base × (1 - drop) from it on: the change arrives in
// ma10.2.(at+1), in QPS and (its inverse) p99.
func regressed(test string, base, drop float64, at int) []result.Run {
	var runs []result.Run
	for i := 0; i < 12; i++ {
		r := stepRun(i, test, base)
		q := base + stepNoise[i]
		if i >= at {
			q = base*(1-drop) + stepNoise[i]
		}
		r.Totals.Reported, r.Totals.QPS, r.Totals.Response.P99 = q, q, 1e6/q
		r.Started = t0.Add(24*time.Hour + time.Duration(i)*time.Hour)
		runs = append(runs, r)
	}
	return runs
}

// attentionStore is the seeded store (update-index_range=100 regressed
// in ma10.2.7) with two more tests regressed in ma10.2.7 and one in
// ma10.2.10, measured later.
func attentionStore(t *testing.T) *store.Store {
	st := seeded(t)
	var runs []result.Run
	runs = append(runs, regressed("update-nonindex_range=100", 2000, 0.2, 6)...)
	runs = append(runs, regressed("delete_range=100", 3000, 0.25, 6)...)
	runs = append(runs, regressed("insert_range=100", 1500, 0.3, 9)...)
	if _, err := st.Import(ctx, runs, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return st
}

type attentionAnswer struct {
	Filter  string           `json:"filter"`
	Entries []AttentionEntry `json:"entries"`
}

func attentionAPI(t *testing.T, ts *testServer, filter string) attentionAnswer {
	t.Helper()
	var a attentionAnswer
	p := "/api/v1/attention"
	if filter != "" {
		p += "?attention=" + filter
	}
	ans := ts.get(t, p)
	if ans.status != 200 {
		t.Fatalf("GET %s: %d %s", p, ans.status, ans.body)
	}
	decode(t, ans, &a)
	return a
}

// The attention view lists the regressions of every series and metric,
// one entry per build they arrived in, the newest first, each with its
// parts, magnitude, interval and links; the page and the API say the
// same.
func TestAttentionListsRegressionsByBuild(t *testing.T) {
	ts := start(t, attentionStore(t), nil)
	a := attentionAPI(t, ts, "")
	if len(a.Entries) != 3 {
		for _, e := range a.Entries {
			t.Logf("entry %s: %d parts", e.Arrived, len(e.Parts))
		}
		t.Fatalf("%d entries, want 3 (ma10.2.10, ma10.2.7, other)", len(a.Entries))
	}
	newer, older, pair := a.Entries[0], a.Entries[1], a.Entries[2]
	if newer.Build != "ma10.2.10" || older.Build != "ma10.2.7" || pair.Build != "other" {
		t.Fatalf("entries %s, %s, %s: want ma10.2.10 (newest), ma10.2.7, other", newer.Build, older.Build, pair.Build)
	}
	// The 42-test comparison is a history of two builds: comparing them
	// (their paired rounds, as compare does) finds the writes 10 % worse,
	// and those calls are an entry too.
	if pair.Before != "base 10.11.1" || pair.Tests != len(pair.Parts) || pair.Tests < 8 || pair.Magnitude < 0.099 || pair.Magnitude > 0.101 {
		t.Errorf("the other entry: before %q, %d tests, %d parts, magnitude %g", pair.Before, pair.Tests, len(pair.Parts), pair.Magnitude)
	}
	// ma10.2.7: three tests, in QPS and p99 each: one entry of six parts.
	if older.Tests != 3 || len(older.Parts) != 6 || strings.Join(older.Metrics,
		",") != "qps,p99" || older.Before != "ma10.2.6 10.2.6 commit c0ffee06" || older.State != store.TriageOpen {
		t.Errorf("the ma10.2.7 entry: %d tests, %d parts, metrics %v, before %q, state %s", older.Tests, len(older.Parts), older.Metrics, older.Before, older.State)
	}
	// A test's figures are one series, one row: three, naming their tests.
	if older.Series != 3 || len(older.TestNames) != 3 || newer.Series != 1 || len(newer.TestNames) != 1 {
		t.Errorf("series %d and tests %q, %d and %q: want 3 and 3, 1 and 1", older.Series, older.TestNames,
			newer.Series, newer.TestNames)
	}
	tests := map[string]bool{}
	for _, p := range older.Parts {
		tests[p.Test] = true
		if (p.Metric == "qps" && p.Unit != "qps") || (p.Metric == "p99" && p.Unit != "ms") {
			t.Errorf("%s %s: unit %q", p.Test, p.Metric, p.Unit)
		}
		if p.Arrived != "ma10.2.7 10.2.7 commit c0ffee07" || p.Before != "ma10.2.6 10.2.6 commit c0ffee06" ||
			p.Earliest == "" || p.Latest == "" || p.Key == "" ||
			!strings.HasPrefix(p.History, "/suites/sysbench/tests/"+url.PathEscape(p.Test)+"?") || !strings.Contains(p.History, "#cp-ma10.2.7") ||
			!strings.Contains(p.Compare, "base=ma10.2.6.default") || p.State != store.TriageOpen {
			t.Errorf("part %+v", p)
		}
		if (p.Metric == "qps") != (p.Magnitude < 0) {
			t.Errorf("%s %s: magnitude %g, the wrong way for a regression", p.Test, p.Metric, p.Magnitude)
		}
	}
	for _, want := range []string{"update-index_range=100", "update-nonindex_range=100", "delete_range=100"} {
		if !tests[want] {
			t.Errorf("the ma10.2.7 entry lacks %s", want)
		}
	}
	// How much worse: the median of 20 %, 20 %, 25 % lower QPS and 25 %,
	// 25 %, 33 % higher p99 (as their inverse): 25 %.
	if older.Magnitude < 0.24 || older.Magnitude > 0.26 || older.MagnitudeMin < 0.19 || older.MagnitudeMin > 0.21 || older.MagnitudeMax < 0.33 || older.MagnitudeMax > 0.34 {
		t.Errorf("the ma10.2.7 entry's magnitude %g in [%g, %g]", older.Magnitude, older.MagnitudeMin, older.MagnitudeMax)
	}
	if newer.Tests != 1 || len(newer.Parts) != 2 || newer.Parts[0].Test != "insert_range=100" {
		t.Errorf("the ma10.2.10 entry: %+v", newer)
	}
	// The page shows the same entries in the same order, each part with
	// its key and links.
	page := ts.get(t, "/")
	if page.status != 200 {
		t.Fatalf("home: %d", page.status)
	}
	keys := regexp.MustCompile(`<details class="att [^"]*" id="att-([0-9a-f g]+)" data-key="([^"]+)"`).FindAllStringSubmatch(page.body, -1)
	if len(keys) != 3 || keys[0][2] != newer.Key || keys[1][2] != older.Key || keys[2][2] != pair.Key {
		t.Errorf("the page's entries %q, the API's %s, %s, %s", keys, newer.Key, older.Key, pair.Key)
	}
	for _, e := range a.Entries {
		for _, p := range e.Parts {
			if !strings.Contains(page.body, `<tr data-key="`+p.Key+`">`) || !strings.Contains(page.body, strings.ReplaceAll(pct(p.Magnitude), "+", "&#43;")) {
				t.Errorf("the page lacks part %s %s %s", p.Test, p.Metric, pct(p.Magnitude))
			}
		}
	}
	// One row group per series (3 + 1 + the pair's), each with its
	// trend, and each entry's summary with its largest part's trend.
	if n, sparks := strings.Count(page.body, `<tbody class="attseries">`), strings.Count(page.body,
		`data-chart="spark"`); n != 4+pair.Series || sparks != 4+pair.Series+3 {
		t.Errorf("the page has %d series rows and %d sparklines, want %d and %d", n, sparks, 4+pair.Series, 4+pair.Series+3)
	}
	if !strings.Contains(page.body, "1000 → 800 qps") || !strings.Contains(page.body,
		" ms</td>") || strings.Contains(page.body, ">0</td>") {
		t.Errorf("the page's means lack their units")
	}
	for _, want := range []string{"worse in <b>" + string(nameHTML("ma10.2.7 10.2.7 commit c0ffee07")) + "</b> after " +
		string(nameHTML("ma10.2.6 10.2.6 commit c0ffee06")) + ": 3 test(s) (" +
		string(nameHTML("delete_range=100, update-nonindex_range=100, update-index_range=100")) + "), 3 series, in " +
		string(nameHTML("qps")) + ", " + string(nameHTML("p99")), "compare the builds"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Its findings are qpslab compare's of the two builds.
	if len(older.Findings) == 0 || !strings.HasPrefix(older.Findings[0], "ma10.2.7.default against ma10.2.6.default: faster on 0 of 4 microbenchmarks") ||
		!strings.Contains(page.body, "from 0.75 (delete_range=100) to 1.00 (insert_range=100)") {
		t.Errorf("the ma10.2.7 entry's findings: %q", older.Findings)
	}
	// Its links answer.
	for _, link := range []string{older.History, older.Compare, older.Parts[0].History} {
		if ans := ts.get(t, strings.Split(link, "#")[0]); ans.status != 200 {
			t.Errorf("%s: %d", link, ans.status)
		}
	}
	if ans := ts.get(t, "/api/v1/attention?attention=pwned"); ans.status != 400 || !strings.Contains(ans.body, "use open") {
		t.Errorf("a filter that is none: %d %s", ans.status, ans.body)
	}
}

// The entries are computed once per generation of the store: more views
// compute nothing, new results are found at the next refresh.
func TestAttentionCached(t *testing.T) {
	st := attentionStore(t)
	ts := start(t, st, nil)
	computed := func() int {
		ts.att.mu.Lock()
		defer ts.att.mu.Unlock()
		return ts.att.computed
	}
	for i := 0; i < 3; i++ {
		if a := ts.get(t, "/"); a.status != 200 {
			t.Fatal(a.status)
		}
	}
	attentionAPI(t, ts, "all")
	if n := computed(); n != 1 {
		t.Fatalf("computed %d times for four views of one generation, want 1", n)
	}
	later := regressed("update-one_range=100", 4000, 0.3, 3)
	for i := range later {
		later[i].Started = later[i].Started.Add(48 * time.Hour) // measured after the others
	}
	if _, err := st.Import(ctx, later, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := ts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	a := attentionAPI(t, ts, "")
	if n := computed(); n != 2 {
		t.Errorf("computed %d times after new results, want 2", n)
	}
	if len(a.Entries) != 4 || a.Entries[0].Build != "ma10.2.4" {
		t.Errorf("the new results' regression is not the newest entry: %d entries, first %s", len(a.Entries), a.Entries[0].Build)
	}
}

// Triage through the API: an entry's state applies to its parts, a part's
// own state set later overrides it, each with who and when; a dismissed
// entry leaves the open list (a filter shows it); the history chart and
// table show the state; the webhook receives each change.
func TestTriageRoundTrip(t *testing.T) {
	h := newHook(t, 0)
	now := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	ts := start(t, attentionStore(t), func(o *Options) { o.Webhook = h.URL; o.Now = func() time.Time { return now } })
	if err := ts.Refresh(ctx); err != nil { // the alerts' baseline: nothing posted
		t.Fatal(err)
	}
	tok := ts.token(t, "alice", ScopeRead, ScopeTriage)
	reader := ts.token(t, "bob", ScopeRead)
	post := func(tok string, body any) answer {
		t.Helper()
		b, _ := json.Marshal(body)
		return ts.do(t, "POST", "/api/v1/attention", tok, "application/json", bytes.NewReader(b))
	}
	a := attentionAPI(t, ts, "")
	e := a.Entries[1] // ma10.2.7
	apiErr(t, "no token", post("", map[string]string{"key": e.Key, "state": "acknowledged"}), 401, "triage scope")
	apiErr(t, "a read token", post(reader, map[string]string{"key": e.Key, "state": "acknowledged"}), 403, "not triage")
	apiErr(t, "a state that is none", post(tok, map[string]string{"key": e.Key, "state": "pwned"}), 400, "use one of open")
	apiErr(t, "fixed without a build", post(tok, map[string]string{"key": e.Key, "state": "fixed"}), 400, "fixed_in")
	apiErr(t, "an unknown key", post(tok, map[string]string{"key": "nope", "state": "dismissed"}), 404, "no regression")
	apiErr(t, "an unknown field", post(tok, map[string]string{"key": e.Key, "sate": "dismissed"}), 400, "not a triage")
	if n := len(h.posts()); n != 0 {
		t.Fatalf("%d posts before any triage", n)
	}

	ans := post(tok, map[string]string{"key": e.Key, "state": "acknowledged", "note": "looking: the buffer pool <b>shrank</b>"})
	var got store.Triage
	if ans.status != 200 {
		t.Fatalf("triage: %d %s", ans.status, ans.body)
	}
	decode(t, ans, &got)
	if got.Who != "alice" || !got.At.Equal(now) || got.State != "acknowledged" {
		t.Errorf("the triage answered: %+v", got)
	}
	a = attentionAPI(t, ts, "")
	ack := a.Entries[1]
	if ack.Key != e.Key || ack.State != "acknowledged" || ack.Triage == nil || ack.Triage.Who != "alice" || !ack.Triage.At.Equal(now) || ack.Triage.Note != "looking: the buffer pool <b>shrank</b>" {
		t.Fatalf("after acknowledging: %+v", ack)
	}
	for _, p := range ack.Parts {
		if p.State != "acknowledged" {
			t.Errorf("part %s %s: %s, want the entry's acknowledged", p.Test, p.Metric, p.State)
		}
	}
	posts := h.posts()
	if len(posts) != 1 {
		t.Fatalf("%d webhook posts after a triage, want 1", len(posts))
	}
	var p Payload
	if err := json.Unmarshal(posts[0], &p); err != nil {
		t.Fatal(err)
	}
	if d := p.Qpslab; d.Event != "triage" || d.State != "acknowledged" || d.Who != "alice" || d.Note != "looking: the buffer pool <b>shrank</b>" || d.Key != e.Key || d.Build != "ma10.2.7" ||
		d.Link != ts.URL+"/#att-"+e.Key || !strings.Contains(p.Text, "acknowledged by alice") {
		t.Errorf("the triage event: %s", posts[0])
	}
	// The page shows it, the note as text.
	home := ts.get(t, "/")
	if !strings.Contains(home.body, `data-key="`+e.Key+`" data-state="acknowledged"`) || !strings.Contains(home.body, "acknowledged by alice at 2026-11-26 15:00:00") ||
		!strings.Contains(home.body, "the buffer pool &lt;b&gt;shrank&lt;/b&gt;") {
		t.Errorf("the home page does not show the acknowledgement")
	}
	// The history chart marks it, its table says it.
	hist := ts.get(t, strings.Split(ack.Parts[0].History, "#")[0])
	if !strings.Contains(hist.body, `data-triage="acknowledged"`) || !strings.Contains(hist.body, "· acknowledged") || !strings.Contains(hist.body, `<td class="state-acknowledged">acknowledged</td>`) {
		t.Errorf("the history page does not mark the triage")
	}

	// One part fixed later: it alone is fixed; the entry stays as
	// unsettled as its others.
	now = now.Add(time.Hour)
	part := ack.Parts[0]
	if ans := post(tok, map[string]string{"key": part.Key, "state": "fixed", "fixed_in": "ma10.2.13"}); ans.status != 200 {
		t.Fatalf("triage a part: %d %s", ans.status, ans.body)
	}
	a = attentionAPI(t, ts, "")
	for _, p := range a.Entries[1].Parts {
		want := "acknowledged"
		if p.Key == part.Key {
			want = "fixed"
			if p.Triage == nil || p.Triage.FixedIn != "ma10.2.13" || !p.Triage.At.Equal(now) {
				t.Errorf("the fixed part's triage: %+v", p.Triage)
			}
		}
		if p.State != want {
			t.Errorf("part %s %s: %s, want %s", p.Test, p.Metric, p.State, want)
		}
	}
	if a.Entries[1].State != "acknowledged" {
		t.Errorf("the entry: %s, want acknowledged (its least settled part)", a.Entries[1].State)
	}
	if d := lastPost(t, h); d.Event != "triage" || d.State != "fixed" || d.FixedIn != "ma10.2.13" || d.Test != part.Test || d.Metric != part.Metric {
		t.Errorf("the part's triage event: %+v", d)
	}

	// Dismissed: it leaves the open list; the filter shows it.
	now = now.Add(time.Hour)
	if ans := post(tok, map[string]string{"key": e.Key, "state": "dismissed", "note": "noise"}); ans.status != 200 {
		t.Fatalf("dismiss: %d %s", ans.status, ans.body)
	}
	open := attentionAPI(t, ts, "")
	if len(open.Entries) != 2 || open.Entries[0].Key == e.Key || open.Entries[1].Key == e.Key {
		t.Errorf("the dismissed entry is still open: %d entries", len(open.Entries))
	}
	dis := attentionAPI(t, ts, "dismissed")
	if len(dis.Entries) != 1 || dis.Entries[0].Key != e.Key {
		t.Errorf("the dismissed filter: %+v", dis.Entries)
	}
	if home := ts.get(t, "/"); strings.Contains(home.body, `data-key="`+e.Key+`"`) {
		t.Errorf("the home page still lists the dismissed entry")
	}
	if all := attentionAPI(t, ts, "all"); len(all.Entries) != 3 {
		t.Errorf("all: %d entries", len(all.Entries))
	}
	if n := len(h.posts()); n != 3 {
		t.Errorf("%d webhook posts after three triages", n)
	}
}

func lastPost(t *testing.T, h *hook) AlertDetail {
	t.Helper()
	posts := h.posts()
	if len(posts) == 0 {
		t.Fatal("nothing posted")
	}
	var p Payload
	if err := json.Unmarshal(posts[len(posts)-1], &p); err != nil {
		t.Fatal(err)
	}
	return p.Qpslab
}

// The attention form: with PublicTriage, anyone's post is recorded as by
// "public", with the form's CSRF token and from this site only; without
// it, a post with no token is refused.
func TestTriageForm(t *testing.T) {
	st := attentionStore(t)
	ts := start(t, st, func(o *Options) { o.PublicTriage = true })
	// A browser: it keeps the CSRF cookie the page sets.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page := func(ts *testServer) string {
		t.Helper()
		resp, err := browser.Get(ts.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return b.String()
	}
	m := regexp.MustCompile(`name="csrf" value="([A-Za-z0-9_-]+)"><input type="hidden" name="key" value="([0-9a-fg]+)"`).FindStringSubmatch(page(ts))
	if m == nil {
		t.Fatalf("no triage form on the home page")
	}
	csrf, key := m[1], m[2]
	form := func(ts *testServer, v url.Values, origin string) answer {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+"/attention", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return answer{resp.StatusCode, resp.Header, b.String()}
	}
	ok := url.Values{"csrf": {csrf}, "key": {key}, "state": {"acknowledged"}, "note": {"mine"}}
	if a := form(ts, url.Values{"key": {key}, "state": {"acknowledged"}}, ts.URL); a.status != 403 || !strings.Contains(a.body, "CSRF") {
		t.Errorf("without the CSRF token: %d", a.status)
	}
	if a := form(ts, ok, "https://evil.example"); a.status != 403 || !strings.Contains(a.body, "not from this site") {
		t.Errorf("from another site: %d", a.status)
	}
	a := form(ts, ok, ts.URL)
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/#att-"+key {
		t.Fatalf("the form: %d %s %s", a.status, a.header.Get("Location"), a.body)
	}
	ts2 := start(t, st, nil) // the same store, triage not public
	e := attentionAPI(t, ts2, "all").Entries
	var found bool
	for _, x := range e {
		if x.Key == key {
			found = true
			if x.State != "acknowledged" || x.Triage == nil || x.Triage.Who != "public" || x.Triage.Note != "mine" {
				t.Errorf("the form's triage: %+v", x.Triage)
			}
		}
	}
	if !found {
		t.Errorf("entry %s gone", key)
	}
	home2 := ts2.get(t, "/")
	if strings.Contains(home2.body, `<form class="triage"`) || !strings.Contains(home2.body, "Triage needs a token with the triage scope") {
		t.Errorf("a public reader without triage is offered the form")
	}
	page(ts2)
	if a := form(ts2, url.Values{"csrf": {csrf}, "key": {key}, "state": {"dismissed"}}, ts2.URL); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
		t.Errorf("a form post without a login where triage is not public (want the login form): %d %s", a.status, a.header.Get("Location"))
	}
}

// The history page offers the registered metrics in a drop-down, links
// each point to its run; a run page links to its series and to the
// previous run of its label, test and thread count.
func TestHistoryAndRunLinks(t *testing.T) {
	st := seeded(t)
	again := stepRun(11, "update-index_range=100", 1000) // ma10.2.12 once more, later
	again.Started = t0.Add(48 * time.Hour)
	if _, err := st.Import(ctx, []result.Run{again}, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	ts := start(t, st, nil)
	hist := ts.get(t, "/suites/sysbench/tests/update-index_range=100?metric=p99&threads=1&config=default")
	if hist.status != 200 || !strings.Contains(hist.body, `<select name="metric">`) || !strings.Contains(hist.body, `<option value="p99" selected>p99</option>`) ||
		!strings.Contains(hist.body, `<option value="qps">qps</option>`) || strings.Contains(hist.body, `value="ops_sec"`) {
		t.Errorf("the metric drop-down (sysbench's metrics, p99 selected): %d", hist.status)
	}
	runs, _, err := st.RunList(ctx, store.RunQuery{Suite: "sysbench", Test: "update-index_range=100", Config: "default"})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string][]string{}
	for _, r := range runs {
		ids[r.Build] = append(ids[r.Build], r.ID)
	}
	// One run's point links to it; ma10.2.12's two runs to their list.
	if !strings.Contains(hist.body, `<a class="ptlink" href="/runs/`+ids["ma10.2.1"][0]+`"><circle class="mark pt"`) {
		t.Errorf("ma10.2.1's point does not link to its run %s", ids["ma10.2.1"][0])
	}
	if !strings.Contains(hist.body, `<a class="ptlink" href="/runs?build=ma10.2.12&amp;config=default&amp;`) {
		t.Errorf("ma10.2.12's point does not link to its two runs")
	}
	if len(ids["ma10.2.12"]) != 2 {
		t.Fatalf("ma10.2.12 runs %v", ids["ma10.2.12"])
	}
	newest, older := ids["ma10.2.12"][0], ids["ma10.2.12"][1] // RunList: the newest first
	page := ts.get(t, "/runs/"+newest)
	if !strings.Contains(page.body, `<a href="/runs/`+older+`"><bdi class="name" title="`+older) {
		t.Errorf("run %s does not link to the previous run %s", newest, older)
	}
	series := regexp.MustCompile(`<th>series</th><td><a href="([^"]+)">`).FindStringSubmatch(page.body)
	if series == nil {
		t.Fatalf("the run page has no series link")
	}
	link := strings.ReplaceAll(series[1], "&amp;", "&")
	if !strings.HasPrefix(link, "/suites/sysbench/tests/update-index_range=100?") || !strings.Contains(link, "threads=1") || !strings.Contains(link, "config=default") {
		t.Errorf("the series link %s", link)
	}
	if a := ts.get(t, link); a.status != 200 || strings.Count(a.body, `<section class="series"`) != 1 {
		t.Errorf("the series link %s: %d, not one series", link, a.status)
	}
	first := ts.get(t, "/runs/"+older)
	if !strings.Contains(first.body, "none: the first of ma10.2.12.default") {
		t.Errorf("the first run of its label claims a previous one")
	}
}

// With --triage public and --read token, triage needs a token that reads
// (and is recorded under its name); without one it is refused.
func TestPublicTriageNeedsReadWhereReadsNeedAToken(t *testing.T) {
	ts := start(t, attentionStore(t), func(o *Options) { o.PublicRead, o.PublicTriage = false, true })
	reader := ts.token(t, "bob", ScopeRead)
	ingest := ts.token(t, "ci", ScopeIngest)
	var a attentionAnswer
	decode(t, ts.do(t, "GET", "/api/v1/attention", reader, "", nil), &a)
	body := func() *bytes.Reader {
		b, _ := json.Marshal(map[string]string{"key": a.Entries[0].Key, "state": "acknowledged"})
		return bytes.NewReader(b)
	}
	apiErr(t, "no token", ts.do(t, "POST", "/api/v1/attention", "", "application/json", body()), 401, "read scope")
	apiErr(t, "an ingest token", ts.do(t, "POST", "/api/v1/attention", ingest, "application/json", body()), 403, "not read")
	ans := ts.do(t, "POST", "/api/v1/attention", reader, "application/json", body())
	var got store.Triage
	if ans.status != 200 {
		t.Fatalf("a read token: %d %s", ans.status, ans.body)
	}
	decode(t, ans, &got)
	if got.Who != "bob" {
		t.Errorf("recorded as %q, want bob", got.Who)
	}
}

// The form is the login session's, whether reads need a token or are
// public: a session of a token with the triage scope is offered the form,
// and its post (with the page's CSRF field) is recorded under the token's
// name; a session of a read-only token is offered none and its post is
// refused; after log out, a public page is read as anyone's again.
func TestTriageFormOfASession(t *testing.T) {
	for _, public := range []bool{false, true} {
		t.Run(fmt.Sprintf("public=%v", public), func(t *testing.T) { triageFormOfASession(t, public) })
	}
}

func triageFormOfASession(t *testing.T, public bool) {
	ts := start(t, attentionStore(t), func(o *Options) { o.PublicRead = public })
	triager := ts.token(t, "alice", ScopeRead, ScopeTriage)
	reader := ts.token(t, "bob", ScopeRead)
	home := func(session string) (answer, form) {
		t.Helper()
		a := ts.page(t, "/", session)
		m := csrfInput.FindStringSubmatch(a.body)
		c := cookieOf(a, csrfCookie)
		if a.status != 200 || m == nil || c == "" {
			t.Fatalf("the home page: %d, csrf field %v, cookie %q", a.status, m, c)
		}
		return a, form{m[1], c}
	}
	var entries attentionAnswer
	decode(t, ts.do(t, "GET", "/api/v1/attention", reader, "", nil), &entries)
	if len(entries.Entries) == 0 {
		t.Fatal("no attention entry")
	}
	key := entries.Entries[0].Key

	alice := ts.login(t, triager)
	page, f := home(alice)
	if !strings.Contains(page.body, `<form class="triage"`) {
		t.Fatalf("a session with the triage scope is not offered the form")
	}
	a := ts.post(t, "/attention", url.Values{"key": {key}, "state": {"acknowledged"}, "note": {"looking"}}, f, ts.URL, alice)
	if a.status != http.StatusSeeOther {
		t.Fatalf("the form of a triage session: %d %s", a.status, a.body)
	}
	decode(t, ts.do(t, "GET", "/api/v1/attention?attention=all", reader, "", nil), &entries)
	var got *store.Triage
	for _, e := range entries.Entries {
		if e.Key == key {
			got = e.Triage
		}
	}
	if got == nil || got.Who != "alice" || got.State != "acknowledged" || got.Note != "looking" {
		t.Errorf("the session's triage: %+v, want acknowledged by alice", got)
	}

	bob := ts.login(t, reader)
	page, f = home(bob)
	if strings.Contains(page.body, `<form class="triage"`) {
		t.Errorf("a read-only session is offered the triage form")
	}
	if a := ts.post(t, "/attention", url.Values{"key": {key}, "state": {"dismissed"}}, f, ts.URL, bob); a.status != http.StatusForbidden {
		t.Errorf("a read-only session's triage: %d, want 403", a.status)
	}
	_, f = home(alice)
	if a := ts.post(t, "/logout", nil, f, ts.URL, alice); a.status != http.StatusSeeOther {
		t.Fatalf("log out: %d %s", a.status, a.body)
	}
	after := ts.page(t, "/", alice) // the ended session's cookie, kept
	switch {
	case public && (after.status != 200 || strings.Contains(after.body, `<form class="triage"`) || !strings.Contains(after.body, `href="/login"`)):
		t.Errorf("a public page read with an ended session: %d, offered the form or no log in link", after.status)
	case !public && !toLogin(after):
		t.Errorf("a page read with an ended session: %d, want the login form", after.status)
	}
}

// A sweep of 24 builds, one run each at ±3 % noise, as the reference
// posts measure a version range: a 25 % dip over builds 7 to 12 that the
// 13th recovers, and a new 25 % step from the 22nd build on. The
// attention view lists both regressions, each in its own entry, through
// the real handler over a real store; the dip's recovery is no entry.
func TestAttentionSweep(t *testing.T) {
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := rand.New(rand.NewPCG(59, 24))
	var runs []result.Run
	for i := 0; i < 24; i++ {
		q := 5000.0
		if (i >= 6 && i < 12) || i >= 21 {
			q *= 0.75
		}
		q *= 1 + 0.03*r.NormFloat64()
		run := stepRun(i, "point-query_range=100", 5000)
		run.Build, run.Version = fmt.Sprintf("sw10.6.%d", i+1), fmt.Sprintf("10.6.%d", i+1)
		run.Params = map[string]string{"commit": fmt.Sprintf("beef%04d", i+1)}
		run.Started = t0.Add(time.Duration(i) * time.Hour)
		run.Totals.Reported, run.Totals.QPS, run.Totals.Response.P99 = q, q, 1e6/q
		runs = append(runs, run)
	}
	if _, err := st.Import(ctx, runs, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	ts := start(t, st, nil)
	a := attentionAPI(t, ts, "")
	var builds []string
	for _, e := range a.Entries {
		builds = append(builds, e.Build)
	}
	if len(a.Entries) != 2 || a.Entries[0].Build != "sw10.6.22" || a.Entries[1].Build != "sw10.6.7" {
		t.Fatalf("entries %v: want sw10.6.22 (the new step) and sw10.6.7 (the dip)", builds)
	}
	for _, e := range a.Entries {
		qps := false
		for _, p := range e.Parts {
			if p.Metric == "qps" {
				qps = true
				if p.Magnitude > -0.2 || p.Magnitude < -0.3 || p.Unconfirmed || p.Test != "point-query_range=100" {
					t.Errorf("%s: the qps part %+v", e.Build, p)
				}
			}
		}
		if !qps || e.Unconfirmed {
			t.Errorf("%s: no confirmed qps regression: %+v", e.Build, e.Parts)
		}
	}
	if e := a.Entries[1]; e.Before != "sw10.6.6 10.6.6 commit beef0006" {
		t.Errorf("the dip arrived after %q, want sw10.6.6", e.Before)
	}
	page := ts.get(t, "/")
	for _, e := range a.Entries {
		if !strings.Contains(page.body, `data-key="`+e.Key+`"`) {
			t.Errorf("the page lacks the %s entry", e.Build)
		}
	}
}
