package serve

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/store"
)

// stepPoints is how many points the step history's series (config
// default) has in /api/v1/history.
func stepPoints(t *testing.T, ts *testServer) int {
	t.Helper()
	var h struct{ Series []apiSeries }
	decode(t, ts.get(t, "/api/v1/history?suite=sysbench&test=update-index_range%3D100&config=default"), &h)
	if len(h.Series) != 1 {
		t.Fatalf("history: %d series of config default", len(h.Series))
	}
	return len(h.Series[0].Points)
}

// hasLabel says whether /api/v1/labels lists l.
func hasLabel(t *testing.T, ts *testServer, l string) bool {
	t.Helper()
	var ls []store.LabelInfo
	decode(t, ts.get(t, "/api/v1/labels"), &ls)
	for _, x := range ls {
		if x.Label == l {
			return true
		}
	}
	return false
}

// runID is the id of label's one run.
func runID(t *testing.T, ts *testServer, label string) string {
	t.Helper()
	var list struct {
		Runs []struct{ ID string }
	}
	decode(t, ts.get(t, "/api/v1/runs?label="+label), &list)
	if len(list.Runs) != 1 {
		t.Fatalf("%s: %d runs", label, len(list.Runs))
	}
	return list.Runs[0].ID
}

// A token of the admin scope hides a run from the labels and the history
// (two surfaces on the one read path), unhides it, and deletes it; a
// token without the scope is refused (403), none at all too (401); each
// action is answered with its audit line, which the log prints and the
// store keeps.
func TestAdminHideDelete(t *testing.T) {
	ts := start(t, seeded(t), nil)
	admin := ts.token(t, "alice", ScopeAdmin)
	ingest := ts.token(t, "ci", ScopeIngest, ScopeRead)
	const label = "ma10.2.7.default"
	id := runID(t, ts, label)
	if !hasLabel(t, ts, label) || stepPoints(t, ts) != 12 {
		t.Fatal("the seeded step history is not whole")
	}

	apiErr(t, "hide without a token", ts.do(t, "POST", "/api/v1/runs/"+id+"/hide", "", "", nil), http.StatusUnauthorized, "admin scope")
	apiErr(t, "hide with an ingest token", ts.do(t, "POST", "/api/v1/runs/"+id+"/hide", ingest, "", nil), http.StatusForbidden, "not admin")
	apiErr(t, "delete with an ingest token", ts.do(t, "DELETE", "/api/v1/runs/"+id, ingest, "", nil), http.StatusForbidden, "not admin")
	if !hasLabel(t, ts, label) || stepPoints(t, ts) != 12 {
		t.Fatal("a refused hide hid")
	}

	a := ts.do(t, "POST", "/api/v1/runs/"+id+"/hide", admin, "", nil)
	var done store.Audit
	if a.status != http.StatusOK {
		t.Fatalf("hide: %d %s", a.status, a.body)
	}
	decode(t, a, &done)
	if done.Action != store.Hide || done.RunID != id || done.Label != label || !strings.HasPrefix(done.Who, "token ") || !strings.HasSuffix(done.Who, " (alice)") {
		t.Errorf("hide answered %+v", done)
	}
	if hasLabel(t, ts, label) {
		t.Error("a hidden run's label is listed")
	}
	if n := stepPoints(t, ts); n != 11 {
		t.Errorf("history of a hidden run: %d points, want 11", n)
	}
	if a := ts.get(t, "/api/v1/runs/"+id); a.status != http.StatusNotFound {
		t.Errorf("a hidden run read by its id: %d", a.status)
	}
	if !strings.Contains(ts.log.String(), fmt.Sprintf("audit: hid run %s (%s update-index_range=100, 1 thread(s)) by %s at ", id, label, done.Who)) {
		t.Errorf("no audit line in the log:\n%s", ts.log)
	}

	if a := ts.do(t, "POST", "/api/v1/runs/"+id+"/unhide", admin, "", nil); a.status != http.StatusOK {
		t.Fatalf("unhide: %d %s", a.status, a.body)
	}
	if !hasLabel(t, ts, label) || stepPoints(t, ts) != 12 {
		t.Error("an unhidden run is not back")
	}

	apiErr(t, "delete an unknown run", ts.do(t, "DELETE", "/api/v1/runs/no-such-run", admin, "", nil), http.StatusNotFound, `run "no-such-run": no such run`)
	if a := ts.do(t, "DELETE", "/api/v1/runs/"+id, admin, "", nil); a.status != http.StatusOK {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	if hasLabel(t, ts, label) || stepPoints(t, ts) != 11 {
		t.Error("a deleted run is still read")
	}
	apiErr(t, "unhide a deleted run", ts.do(t, "POST", "/api/v1/runs/"+id+"/unhide", admin, "", nil), http.StatusNotFound, "no such run")

	log, err := ts.st.AuditLog(ctx)
	if err != nil || len(log) != 3 || log[0].Action != store.Hide || log[1].Action != store.Unhide || log[2].Action != store.Delete {
		t.Fatalf("audit: %+v, %v", log, err)
	}
	for _, l := range []string{"audit: unhid run " + id, "audit: deleted run " + id} {
		if !strings.Contains(ts.log.String(), l) {
			t.Errorf("no %q in the log", l)
		}
	}
}
