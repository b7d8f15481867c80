package serve

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/store"
)

// Pages never wait for an analysis being computed: after a start they say
// "computing"; after new results they show the last entries computed with
// their "as of" time until the new ones are found; and a post that brings
// one test's runs reads that test's runs again, not every test's. The
// store's reads are held (cache.stall) to stand for a slow store.
func TestPagesServeWhatIsComputed(t *testing.T) {
	st := attentionStore(t)
	ts := start(t, st, func(o *Options) { o.PageWait = time.Nanosecond })
	stall := func() chan struct{} {
		ch := make(chan struct{})
		ts.cache.mu.Lock()
		ts.cache.stall = ch
		ts.cache.mu.Unlock()
		return ch
	}
	release := func(ch chan struct{}) {
		ts.cache.mu.Lock()
		ts.cache.stall = nil
		ts.cache.mu.Unlock()
		close(ch)
	}
	computes := func() int {
		ts.cache.mu.Lock()
		defer ts.cache.mu.Unlock()
		return ts.cache.computes
	}

	// After a start: computing, at once, on the page and in the API.
	held := stall()
	home := ts.get(t, "/")
	if home.status != 200 || !strings.Contains(home.body, `id="att-computing"`) || strings.Contains(home.body, "No open regression") {
		t.Fatalf("home while the first entries are computed: %d, computing note %v", home.status, strings.Contains(home.body, "att-computing"))
	}
	var a struct {
		attentionAnswer
		Stale   bool      `json:"stale"`
		Pending bool      `json:"pending"`
		AsOf    time.Time `json:"as_of"`
	}
	decode(t, ts.get(t, "/api/v1/attention"), &a)
	if !a.Pending || len(a.Entries) != 0 {
		t.Errorf("the API while the first entries are computed: pending %v, %d entries", a.Pending, len(a.Entries))
	}
	suite := ts.get(t, "/suites/sysbench")
	if suite.status != 200 || !strings.Contains(suite.body, `id="suite-computing"`) {
		t.Errorf("the suite page while its tests are computed: %d %v", suite.status, strings.Contains(suite.body, "suite-computing"))
	}
	release(held)
	first, err := ts.attentionEntries(ctx)
	if err != nil || len(first) != 3 {
		t.Fatalf("the first entries: %d %v", len(first), err)
	}
	home = ts.get(t, "/")
	if strings.Contains(home.body, "att-computing") || strings.Contains(home.body, "att-asof") || strings.Count(home.body, `<details class="att `) != 3 {
		t.Errorf("home once computed: computing %v, as of %v, %d entries", strings.Contains(home.body, "att-computing"),
			strings.Contains(home.body, "att-asof"), strings.Count(home.body, `<details class="att `))
	}
	suite = ts.get(t, "/suites/sysbench")
	if strings.Contains(suite.body, "suite-computing") || strings.Contains(suite.body, "suite-asof") {
		t.Errorf("the suite page once computed still says computing or as of")
	}

	// New results of one test: the last entries, as of the sync before.
	later := regressed("update-one_range=100", 4000, 0.3, 3)
	for i := range later {
		later[i].Started = later[i].Started.Add(48 * time.Hour)
	}
	if _, err := st.Import(ctx, later, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	held = stall()
	if _, err := ts.cache.sync(ctx); err != nil {
		t.Fatal(err)
	}
	before := computes()
	home = ts.get(t, "/")
	if !strings.Contains(home.body, `id="att-asof"`) || strings.Count(home.body, `<details class="att `) != 3 {
		t.Errorf("home while new results are analysed: as of %v, %d entries (the last computed: 3)", strings.Contains(home.body, "att-asof"),
			strings.Count(home.body, `<details class="att `))
	}
	a.Stale, a.Pending, a.AsOf = false, false, time.Time{}
	decode(t, ts.get(t, "/api/v1/attention"), &a)
	if !a.Stale || a.Pending || a.AsOf.IsZero() || len(a.Entries) != 3 {
		t.Errorf("the API while new results are analysed: stale %v pending %v as of %v, %d entries", a.Stale, a.Pending, a.AsOf, len(a.Entries))
	}
	suite = ts.get(t, "/suites/sysbench")
	if !strings.Contains(suite.body, `id="suite-asof"`) || strings.Contains(suite.body, "suite-computing") {
		t.Errorf("the suite page while new results are analysed shows no as-of note")
	}
	if ans := ts.get(t, "/api/v1/attention?fresh=yes"); ans.status != http.StatusBadRequest || !strings.Contains(ans.body, "fresh=1") {
		t.Errorf("fresh=yes: %d %s", ans.status, ans.body)
	}
	release(held)
	a.Stale, a.Pending, a.AsOf = false, false, time.Time{}
	decode(t, ts.get(t, "/api/v1/attention?fresh=1"), &a)
	if a.Stale || a.Pending || len(a.Entries) != 4 || a.Entries[0].Build != "ma10.2.4" {
		t.Errorf("fresh=1: stale %v pending %v, %d entries", a.Stale, a.Pending, len(a.Entries))
	}
	// Only the test that received runs was read again (once, for all its
	// metrics; the suite page's read of it joins or follows it).
	if n := computes() - before; n < 1 || n > 2 {
		t.Errorf("new runs of one test read %d tests' runs again, want that test's alone", n)
	}
	home = ts.get(t, "/")
	if strings.Contains(home.body, "att-asof") || strings.Count(home.body, `<details class="att `) != 4 {
		t.Errorf("home once the new results are analysed: as of %v, %d entries", strings.Contains(home.body, "att-asof"), strings.Count(home.body, `<details class="att `))
	}
}

// plant makes series the cache's answer for a test and metric, of the
// test's generation now.
func (ts *testServer) plant(suite, test, metric string, series ...Series) {
	ts.cache.mu.Lock()
	defer ts.cache.mu.Unlock()
	ts.cache.entries[histKey{suite, test, metric}] = &histEntry{gen: ts.cache.tests[store.TestKey{Suite: suite, Test: test}], asOf: ts.cache.asOf, series: series}
}
