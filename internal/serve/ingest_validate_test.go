package serve

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
)

// A post of runs the registries refuse answers 400 with one line per
// problem, each naming the field and the run's index, and stores nothing;
// the old code stored every one of them (201).
func TestIngestValidated(t *testing.T) {
	ts := start(t, seeded(t), nil)
	ingest := ts.token(t, "ci", ScopeIngest)
	ok := stepRun(12, "update-index_range=100", 1000)
	ok.Build, ok.Version = "ma10.2.13", "10.2.13"
	for _, c := range []struct {
		what string
		body string
		want []string
	}{
		{"an empty run", `{"schema_version":3,"runs":[{}]}`, []string{"runs[0].status", "runs[0].threads = 0", "runs[0].build is empty", "runs[0].config is empty"}},
		{"a suite not registered", runsBody(t, ok, func(r *result.Run) { r.Suite = "../../evil<b>" }), []string{`runs[1].suite = "../../evil<b>": not a registered suite`}},
		{"status pwned", runsBody(t, ok, func(r *result.Run) { r.Status = "pwned" }), []string{`runs[1].status = "pwned": use one of ok, failed, aborted, saturated`}},
		{"threads 0", runsBody(t, ok, func(r *result.Run) { r.Threads = 0 }), []string{"runs[1].threads = 0"}},
		{"a 10 KB name", runsBody(t, ok, func(r *result.Run) { r.Test = strings.Repeat("x", 10<<10) }), []string{"runs[1].test is 10240 bytes long: a name is at most 200 bytes"}},
		{"a right-to-left override", runsBody(t, ok, func(r *result.Run) { r.Build = "abc\u202Eexe.png" }), []string{"runs[1].build", "U+202E"}},
		// A name with an invisible character shows as another name.
		{"a zero-width space in a build", runsBody(t, ok, func(r *result.Run) { r.Build = "nightly\u200b-0455" }),
			[]string{`runs[1].build = "nightly\u200b-0455": holds U+200B, an invisible character`,
				"at character 8", "remove it"}},
		{"a zero-width joiner in a test", runsBody(t, ok, func(r *result.Run) { r.Test = "insert\u200d_range=100" }),
			[]string{`runs[1].test = "insert\u200d_range=100": holds U+200D, an invisible character`}},
		{"a variation selector in a config", runsBody(t, ok, func(r *result.Run) { r.Config = "cz11a\ufe0f@0123" }),
			[]string{`runs[1].config = "cz11a\ufe0f": holds U+FE0F, an invisible character`}},
		{"a word joiner in a build", runsBody(t, ok, func(r *result.Run) { r.Build = "ma10\u20602" }),
			[]string{`runs[1].build`, "U+2060"}},
		{"a soft hyphen in a test", runsBody(t, ok, func(r *result.Run) { r.Test = "point\u00ad-query" }),
			[]string{`runs[1].test`, "U+00AD"}},
		{"a config with a dot", runsBody(t, ok, func(r *result.Run) { r.Config = "a.b@0123" }),
			[]string{`runs[1].config = "a.b": a config name cannot hold '.', since a label BUILD.CONFIG splits at its last dot; rename the config`}},
		{"two problems in one run", runsBody(t, ok, func(r *result.Run) { r.Threads = 0; r.Loop = "x" }), []string{"runs[1].threads = 0", `runs[1].loop = "x"`}},
	} {
		before := len(runsOf(t, ts.st, "", ""))
		a := ts.do(t, "POST", "/api/v1/results", ingest, "application/json", strings.NewReader(c.body))
		var e struct {
			Error    string
			Problems []string
		}
		if a.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", c.what, a.status, a.body)
			continue
		}
		decode(t, a, &e)
		if !strings.HasPrefix(e.Error, "nothing was stored: ") || len(e.Problems) == 0 || strings.Count(e.Error, "\n") != len(e.Problems)-1 {
			t.Errorf("%s: %q, problems %q", c.what, e.Error, e.Problems)
		}
		for _, w := range c.want {
			if !strings.Contains(strings.Join(e.Problems, "\n"), w) {
				t.Errorf("%s: no %q in %q", c.what, w, e.Problems)
			}
		}
		if after := len(runsOf(t, ts.st, "", "")); after != before {
			t.Errorf("%s: %d runs stored", c.what, after-before)
		}
	}
	// A sysbench post's label= names a build and a config as every command
	// does (package names): refused before the post is read.
	out, err := os.ReadFile(filepath.Join("testdata", "sysbench-1.0.20-point-select.txt"))
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"label": {"abc\u202Eexe.png.default"}, "test": {"point-query_range=100"}, "version": {"11.8.1"}}
	a := ts.do(t, "POST", "/api/v1/results?"+q.Encode(), ingest, "text/plain", bytes.NewReader(out))
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, `build name \"abc\\u202eexe.png\" is not valid: use letters, digits and _ . + -`) {
		t.Errorf("a sysbench post with a bidi label: %d %s", a.status, a.body)
	}
	if strings.Contains(a.body, "\u202E") {
		t.Errorf("the refusal holds the bidi character itself: %s", a.body)
	}
	q.Set("label", "nightly\u200b-0455.default")
	a = ts.do(t, "POST", "/api/v1/results?"+q.Encode(), ingest, "text/plain", bytes.NewReader(out))
	zw := `build name \"nightly\\u200b-0455\" is not valid`
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, zw) {
		t.Errorf("a sysbench post with a zero-width space in its label: %d %s", a.status, a.body)
	}
	if strings.Contains(ts.log.String(), "ingest: ") {
		t.Errorf("a refused post was stored:\n%s", ts.log)
	}
}

// runsBody is a results file of ok and ok changed by change.
func runsBody(t *testing.T, ok result.Run, change func(*result.Run)) string {
	bad := ok
	bad.Params = map[string]string{}
	change(&bad)
	return string(resultsJSON(t, []result.Run{ok, bad}))
}

// Every label a post is stored under can be queried back: ?label= on the
// API (and its runs page) and the selector find the runs, for names at the
// edges of what is accepted.
func TestAcceptedLabelsQueryBack(t *testing.T) {
	st := seeded(t)
	ts := start(t, st, nil)
	ingest := ts.token(t, "ci", ScopeIngest)
	for i, c := range []struct{ build, config, engine string }{
		{"ma10.2.13", "default", ""},
		{"mariadb-11.4.2-debug", "cz11a_bee", ""},
		{"build:with:colons", "c", ""},
		{"build with spaces", "my-config", ""},
		{"ünïcödé-ビルド", "設定", ""},
		{"x<b>&amp;'\"", "q", ""},
		{"a/b\\c", "d", ""},
		{"myrocks-8.0.32", "rocks", "rocksdb"},
		{"innodb-named", "c", "innodb"},
		{strings.Repeat("b", 200), strings.Repeat("c", 200), ""},
		{"%2e%40", "pct", ""},
	} {
		r := stepRun(i%12, "update-index_range=100", 1000)
		r.Build, r.Config, r.Params = c.build, c.config+"@0123456789ab", map[string]string{}
		if c.engine != "" {
			r.Params["engine"] = c.engine
		}
		a := ts.do(t, "POST", "/api/v1/results", ingest, "application/json", bytes.NewReader(resultsJSON(t, []result.Run{r})))
		var ans ingestAnswer
		if a.status != http.StatusCreated {
			t.Errorf("%s.%s refused: %d %s", c.build, c.config, a.status, a.body)
			continue
		}
		decode(t, a, &ans)
		label := ans.Labels[0]
		if label != r.Label() {
			t.Errorf("answered label %q, the run's is %q", label, r.Label())
		}
		var list struct{ Total int }
		decode(t, ts.get(t, "/api/v1/runs?label="+url.QueryEscape(label)), &list)
		if list.Total != 1 {
			t.Errorf("?label=%s: %d runs, want 1", label, list.Total)
		}
		if p := ts.get(t, "/runs?label="+url.QueryEscape(label)); p.status != http.StatusOK {
			t.Errorf("the runs page of %s: %d", label, p.status)
		}
		sets, err := selector.Selection{}.Sets(ctx, st, []string{label})
		if err != nil || len(sets) != 1 || len(sets[0].Runs) != 1 {
			t.Errorf("the selector's %s: %v", label, err)
		}
	}
}
