package serve

import (
	"math"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/store"
)

// The dashboard lists the stored bisections and shows one's steps, read
// only, what users stored (a test's name) as text; an id that is none is
// a 404.
func TestBisectionPages(t *testing.T) {
	st := seeded(t)
	b, err := st.StartBisection(ctx, store.Bisection{Src: "/src/pg", Good: "aaaaaaaa11", Bad: "bbbbbbbb22", Suite: "sysbench", Test: "<b>pq</b>", Metric: "qps",
		Threshold: 0.05, State: store.BisectRunning})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []store.BisectStep{
		{Commit: "aaaaaaaa11", Build: "pg_aaaa", Kind: "good", Rel: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Note: "GOOD: the base of every step"},
		{Commit: "cccccccc33", Base: "aaaaaaaa11", Build: "pg_cccc", Plan: "p1", Kind: "bad", Rel: 0.75, Lo: 0.74, Hi: 0.76, Rounds: 10, Note: "below the cut"},
	} {
		if _, err := st.AddBisectStep(ctx, b.ID, s); err != nil {
			t.Fatal(err)
		}
	}
	ts := start(t, st, nil)
	a := ts.get(t, "/bisections")
	if a.status != 200 || !strings.Contains(a.body, `href="/bisections/1"`) || !strings.Contains(a.body, "running") || strings.Contains(a.body, "<b>pq</b>") {
		t.Errorf("/bisections: %d\n%s", a.status, a.body)
	}
	a = ts.get(t, "/bisections/1")
	for _, want := range []string{"Bisection 1: running", "cccccccc", "GOOD", "0.750", "[0.740, 0.760]", "below the cut", "pg_cccc", "/src/pg"} {
		if a.status != 200 || !strings.Contains(a.body, want) {
			t.Errorf("/bisections/1 lacks %q: %d\n%s", want, a.status, a.body)
		}
	}
	for _, p := range []string{"/bisections/7", "/bisections/x"} {
		if a := ts.get(t, p); a.status != 404 || !strings.Contains(a.body, "see /bisections") {
			t.Errorf("%s: %d %s", p, a.status, a.body)
		}
	}
}
