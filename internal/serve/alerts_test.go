package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// hook is an incoming webhook that records what it is posted, and answers
// 500 to the first fail posts.
type hook struct {
	URL  string
	mu   sync.Mutex
	raw  [][]byte
	fail int
}

const hookSecret = "T0001/B0001/s3cr3tWebhookPath"

func newHook(t *testing.T, fail int) *hook {
	h := &hook{fail: fail}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.raw = append(h.raw, b)
		if r.URL.Path != "/services/"+hookSecret || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "wrong address or type", http.StatusBadRequest)
			return
		}
		if h.fail > 0 {
			h.fail--
			http.Error(w, "try later", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL + "/services/" + hookSecret
	return h
}

func (h *hook) posts() [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]byte{}, h.raw...)
}

// stepHistory is twelve builds of test, QPS base until 10.2.6 and
// base × (1 - drop) from 10.2.7 on.
func stepHistory(test string, base, drop float64) []result.Run {
	var runs []result.Run
	for i := 0; i < 12; i++ {
		r := stepRun(i, test, base)
		if i >= 6 {
			r.Totals.Reported = base*(1-drop) + stepNoise[i]
			r.Totals.QPS = r.Totals.Reported
		}
		runs = append(runs, r)
	}
	return runs
}

// Results posted with a regression above the threshold alert once, with
// the test, the magnitude, the build where it arrived and a link; the
// change points stored before alerts began, smaller ones and later
// results do not.
func TestAlertOnNewRegression(t *testing.T) {
	st := seeded(t) // update-index_range=100 regressed before alerts began
	h := newHook(t, 0)
	ts := start(t, st, func(o *Options) { o.Webhook = h.URL; o.AlertThreshold = 0.1 })
	if err := ts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(h.posts()); n != 0 {
		t.Fatalf("%d alerts of change points stored before alerts began", n)
	}
	// Known: the step history's regression, and the writes of the 42-test
	// comparison that comparing its two builds calls 10 % worse.
	as, err := st.Alerts(ctx)
	step := 0
	for _, a := range as {
		switch {
		case a.State != store.AlertKnown:
			t.Errorf("a stored change point alerted: %+v", a)
		case strings.Contains(a.Series, "update-index_range=100 thr=1 config=default"):
			step++
		case a.Arrived != "other 10.11.2" || !strings.Contains(a.Series, "config=demo"):
			t.Errorf("a known change point of neither: %+v", a)
		}
	}
	if err != nil || step != 1 || len(as) < 2 {
		t.Fatalf("the known change points: %+v %v", as, err)
	}
	tok := ts.token(t, "ci", ScopeIngest)
	post := func(runs []result.Run) {
		t.Helper()
		a := ts.do(t, "POST", "/api/v1/results", tok, "application/json", bytes.NewReader(resultsJSON(t, runs)))
		if a.status != http.StatusCreated {
			t.Fatalf("post: %d %s", a.status, a.body)
		}
	}
	post(stepHistory("update-nonindex_range=100", 2000, 0.2))
	post(stepHistory("update-one_range=100", 2000, 0.05)) // below the threshold
	if err := ts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	posts := h.posts()
	if len(posts) != 1 {
		t.Fatalf("%d alerts, want 1: %q", len(posts), posts)
	}
	var p Payload
	if err := json.Unmarshal(posts[0], &p); err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	json.Unmarshal(posts[0], &generic)
	if _, ok := generic["text"].(string); !ok {
		t.Errorf("no top-level text for Slack and Mattermost: %s", posts[0])
	}
	d := p.Qpslab
	if d.Test != "update-nonindex_range=100" || d.Build != "ma10.2.7" || d.Version != "10.2.7" || d.BeforeBuild != "ma10.2.6" || d.Metric != "qps" ||
		d.Magnitude > -0.19 || d.Magnitude < -0.21 || d.Commit != "c0ffee07" || d.Event != "regression" {
		t.Errorf("the alert: %+v", d)
	}
	for _, want := range []string{"qpslab: regression -20.", "update-nonindex_range=100", "arrived in ma10.2.7 10.2.7 after ma10.2.6 10.2.6", ts.URL + "/suites/sysbench/tests/update-nonindex_range=100?"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("the alert's text lacks %q: %s", want, p.Text)
		}
	}
	// Its link is the change point's row on its history page.
	link := strings.TrimPrefix(d.Link, ts.URL)
	anchor := link[strings.Index(link, "#")+1:]
	if a := ts.get(t, link[:strings.Index(link, "#")]); a.status != 200 || !strings.Contains(a.body, `<tr id="`+anchor+`" class="cprow">`) {
		t.Errorf("the alert's link %s: %d, no row %s", d.Link, a.status, anchor)
	}
	// More results, and refreshes: the change point is not posted again.
	more := stepRun(12, "update-nonindex_range=100", 2000) // 1600 and a bit, as the builds after the change
	more.Build, more.Version = "ma10.2.13", "10.2.13"
	post([]result.Run{more})
	for i := 0; i < 2; i++ {
		if err := ts.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.posts()); n != 1 {
		t.Errorf("%d alerts after more results, want still 1", n)
	}
	// A second server on the same store does not post it either.
	ts2 := start(t, st, func(o *Options) { o.Webhook = h.URL; o.AlertThreshold = 0.1 })
	if err := ts2.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(h.posts()); n != 1 {
		t.Errorf("%d alerts after a second server started, want still 1", n)
	}
	if a := ts.get(t, "/alerts"); !strings.Contains(a.body, "update-nonindex_range=100") || !strings.Contains(a.body, "<td>sent</td>") {
		t.Errorf("the alerts page lacks the alert sent")
	}
}

// A webhook that fails is tried again at the next refresh, until it
// takes the alert; its address (a secret, for Slack) is never logged.
func TestAlertRetried(t *testing.T) {
	st := seeded(t)
	h := newHook(t, 1)
	ts := start(t, st, func(o *Options) { o.Webhook = h.URL })
	if err := ts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Import(ctx, stepHistory("delete_range=100", 3000, 0.3), store.Meta{Source: "run"}); err != nil {
		t.Fatal(err)
	}
	err := ts.Refresh(ctx)
	if err == nil || !strings.Contains(err.Error(), "the webhook answered 500") {
		t.Fatalf("a failing webhook: %v", err)
	}
	as, _ := st.Alerts(ctx)
	if len(as) == 0 || as[0].State != store.AlertFailed || as[0].Attempts != 1 {
		t.Fatalf("after a failure: %+v", as)
	}
	if err := ts.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	as, _ = st.Alerts(ctx)
	if as[0].State != store.AlertSent || as[0].Attempts != 2 || len(h.posts()) != 2 {
		t.Errorf("after a retry: %+v, %d posts", as[0], len(h.posts()))
	}
	if err := ts.Refresh(ctx); err != nil || len(h.posts()) != 2 {
		t.Errorf("posted again after it was taken: %d posts, %v", len(h.posts()), err)
	}
	if strings.Contains(ts.log.String(), "s3cr3t") || (err != nil && strings.Contains(err.Error(), "s3cr3t")) {
		t.Errorf("the webhook's address reached the log:\n%s", ts.log.String())
	}
	// An unreachable webhook says why, without its address.
	ts3 := start(t, seeded(t), func(o *Options) { o.Webhook = "http://127.0.0.1:1/services/" + hookSecret })
	ts3.Refresh(ctx)
	if _, err := ts3.st.Import(ctx, stepHistory("delete_range=100", 3000, 0.3), store.Meta{Source: "run"}); err != nil {
		t.Fatal(err)
	}
	if err := ts3.Refresh(ctx); err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("an unreachable webhook: %v", err)
	}
}

// With AlertExisting, the regressions already stored are posted the first
// time alerts run, once.
func TestAlertExisting(t *testing.T) {
	st := seeded(t)
	h := newHook(t, 0)
	ts := start(t, st, func(o *Options) { o.Webhook = h.URL; o.AlertExisting = true })
	for i := 0; i < 2; i++ {
		if err := ts.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The step history's regression, and the writes of the 42-test
	// comparison that comparing its two builds calls 10 % worse (the
	// default threshold is 5 %).
	posts := h.posts()
	step, pair := 0, 0
	for _, p := range posts {
		switch {
		case strings.Contains(string(p), "update-index_range=100 thr=1 config=default") && strings.Contains(string(p), `"build":"ma10.2.7"`):
			step++
		case strings.Contains(string(p), "config=demo") && strings.Contains(string(p), `"build":"other"`) && strings.Contains(string(p), `"before_build":"base"`):
			pair++
		default:
			t.Errorf("an alert of neither: %s", p)
		}
	}
	if step != 1 || pair < 8 {
		t.Errorf("the stored regressions: %d of the step history, %d of the comparison: %q", step, pair, posts)
	}
}
