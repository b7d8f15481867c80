package serve

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// In a real browser: a run an admin hides is gone from the home page's
// labels and from the runs pages, its own page answers 404, and unhiding
// brings it back; the browser itself (a reader's cookie, no admin token)
// cannot hide a run.
func TestBrowserHiddenRun(t *testing.T) {
	st := seeded(t)
	ts := start(t, st, nil)
	bctx := browser(t)
	admin := ts.token(t, "alice", ScopeAdmin)
	const label = "ma10.2.7.default"
	id := runID(t, ts, label)

	type view struct {
		HomeHasLabel, RunsHasID bool
		LabelNote               string
	}
	look := func() view {
		t.Helper()
		var v view
		open(t, bctx, ts.URL+"/")
		v.HomeHasLabel = eval[bool](t, bctx, fmt.Sprintf(`document.body.textContent.includes(%q)`, label))
		open(t, bctx, ts.URL+"/runs")
		v.RunsHasID = eval[bool](t, bctx, fmt.Sprintf(`!!document.querySelector('a[href$="/runs/%s"]')`, id))
		open(t, bctx, ts.URL+"/runs?label="+label)
		v.LabelNote = eval[string](t, bctx, `document.querySelector("main p.note").innerText`)
		return v
	}
	before := look()
	if !before.HomeHasLabel || !before.RunsHasID || !strings.HasPrefix(before.LabelNote, "1 run(s)") {
		t.Fatalf("before: %+v", before)
	}

	// From the page, without an admin token: refused.
	status := eval[int](t, bctx, fmt.Sprintf(`fetch("/api/v1/runs/%s/hide", {method: "POST"}).then(r => r.status)`, id))
	if status != http.StatusUnauthorized || !look().HomeHasLabel {
		t.Fatalf("a hide from the page: %d", status)
	}

	if a := ts.do(t, "POST", "/api/v1/runs/"+id+"/hide", admin, "", nil); a.status != http.StatusOK {
		t.Fatalf("hide: %d %s", a.status, a.body)
	}
	hidden := look()
	t.Logf("hidden: %+v", hidden)
	if hidden.HomeHasLabel || hidden.RunsHasID || !strings.HasPrefix(hidden.LabelNote, "0 run(s)") {
		t.Errorf("a hidden run shows: %+v", hidden)
	}
	if a := ts.get(t, "/runs/"+id); a.status != http.StatusNotFound {
		t.Errorf("a hidden run's page: %d", a.status)
	}

	if a := ts.do(t, "POST", "/api/v1/runs/"+id+"/unhide", admin, "", nil); a.status != http.StatusOK {
		t.Fatalf("unhide: %d %s", a.status, a.body)
	}
	if back := look(); back != before {
		t.Errorf("unhidden: %+v, want %+v", back, before)
	}
}
