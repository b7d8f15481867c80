package serve

import (
	"net/http"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// The API's errors are in its own words: a JSON field by its path in the
// posted JSON (runs counted from 0, as the list is, in every message),
// never a Go struct, field or type; never a file the client did not send
// (the old code named the server's posted.json), nor the store's path on
// the server (an admin's 404 named it).
func TestAPIErrorsInItsOwnWords(t *testing.T) {
	ts := start(t, seeded(t), nil)
	ingest := ts.token(t, "ci", ScopeIngest)
	admin := ts.token(t, "ops", ScopeAdmin)
	triager := ts.token(t, "triager", ScopeTriage, ScopeRead)
	ok := stepRun(12, "update-index_range=100", 1000)
	ok.Build, ok.Version = "ma10.2.13", "10.2.13"
	good := string(resultsJSON(t, []result.Run{ok, ok, ok}))
	at := strings.LastIndex(good, `"qps":`) // the third run's
	withQPS := func(v string) string {
		end := at + strings.IndexAny(good[at:], ",}")
		return good[:at] + `"qps": ` + v + good[end:]
	}
	negative := ok
	negative.Totals.QPS = -5
	for _, c := range []struct {
		what, body, want string
	}{
		{"a string for a number", withQPS(`"fast"`),
			`nothing was stored: runs[2].totals.qps: a number is expected, got a string`},
		{"a number out of range", withQPS(`1e999`), `runs[2].totals.qps: 1e999 is out of range`},
		{"a list of runs that is no list", `{"schema_version": 3, "runs": {"build": "x"}}`,
			`runs: a list ([…]) is expected, got an object`},
		{"broken JSON", "{\"schema_version\": 3,\n \"runs\": [}", `not JSON at line 2, column 11`},
		{"an impossible figure", string(resultsJSON(t, []result.Run{ok, negative})), `nothing was stored: runs[1]: `},
		{"a run the rules refuse", runsBody(t, ok, func(r *result.Run) { r.Threads = 0 }), `runs[1].threads = 0`},
	} {
		a := ts.do(t, "POST", "/api/v1/results", ingest, "application/json", strings.NewReader(c.body))
		apiErr(t, c.what, a, http.StatusBadRequest, c.want)
		for _, leak := range []string{"Go struct", "float64", "unmarshal", "posted.json", "run 2", "run 3", ts.st.Where()} {
			if strings.Contains(a.body, leak) {
				t.Errorf("%s: the answer names %q: %s", c.what, leak, a.body)
			}
		}
	}

	a := ts.do(t, "DELETE", "/api/v1/runs/no-such-run", admin, "", nil)
	apiErr(t, "delete an unknown run", a, http.StatusNotFound, `run "no-such-run": no such run: give a run's id`)
	if strings.Contains(a.body, ts.st.Where()) {
		t.Errorf("an admin's 404 names the store's path %s: %s", ts.st.Where(), a.body)
	}

	triage := strings.NewReader(`{"key": 5, "state": "open"}`)
	a = ts.do(t, "POST", "/api/v1/attention", triager, "application/json", triage)
	apiErr(t, "a triage whose key is a number", a, http.StatusBadRequest, `key: a string is expected, got a number`)
	if strings.Contains(a.body, "triageRequest") || strings.Contains(a.body, "Go ") {
		t.Errorf("a triage's error names Go's types: %s", a.body)
	}
}
