package serve

import (
	"fmt"
	"html"
	"html/template"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// Names of 10 KB, and one with a right-to-left override, as a store
// written before ingest refused them can hold them: a build, its version
// and config, a test, a suite, an engine and a host.
var (
	long       = func(what string) string { return "long-" + what + "-" + strings.Repeat(what[:1], 10<<10) + "-end" }
	longBuild  = long("build")
	longConfig = long("config")
	longTest   = long("test")
	longSuite  = long("suite")
	longHost   = long("host")
	longEngine = long("engine")
	longLabel  = longBuild + "." + longConfig + ":" + longEngine
	bidiBuild  = "abc\u202Eexe.png"
	bidiLabel  = bidiBuild + ".default"
)

// longRuns are runs with those names: long's runs of the sysbench test
// update-index_range=100 and of longTest in longSuite, the bidi build's,
// and a run of build short with long's config and engine.
func longRuns() []result.Run {
	r := stepRun(0, "update-index_range=100", 1000)
	r.Build, r.Version, r.Config = longBuild, "10."+strings.Repeat("9", 10<<10), longConfig+"@0123456789ab"
	r.Params = map[string]string{"engine": longEngine, "commit": long("commit")}
	o := r
	o.Suite, o.Test, o.Role, o.Groups, o.Step = longSuite, longTest, "", nil, 1
	b := stepRun(1, "update-index_range=100", 1000)
	b.Build, b.Version = bidiBuild, ""
	c := r // to compare with
	c.Build, c.Version = "short", "10.1"
	return []result.Run{r, o, b, c}
}

// longAlertSeries is the series of an alert about longTest.
var longAlertSeries = longSuite + " " + longTest + " qps, 1 thread(s), " + longConfig

// seedLong stores longRuns as qpslab run does, on longHost, and an alert
// of a regression in longAlertSeries that arrived in longBuild.
func seedLong(t testing.TB, st *store.Store) {
	t.Helper()
	if _, err := st.Import(ctx, longRuns(), store.Meta{Source: "run", Hostname: longHost}); err != nil {
		t.Fatal(err)
	}
	a := store.Alert{Key: "long", Series: longAlertSeries, Kind: "regression", Magnitude: -0.2, Arrived: longBuild, State: store.AlertKnown}
	if _, err := st.AddAlert(ctx, a, t0); err != nil {
		t.Fatal(err)
	}
}

// longHostID is the id of the host seedLong's runs ran on.
func longHostID(t testing.TB, st *store.Store) string {
	t.Helper()
	hosts, err := st.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if len(h.Hostnames) > 0 && h.Hostnames[0] == longHost {
			return h.ID
		}
	}
	t.Fatal("no host named longHost")
	return ""
}

// nameMarkup is how a page shows name: cut, its full text in the title.
func nameMarkup(name string) string {
	return `<bdi class="name" title="` + template.HTMLEscapeString(name) + `">` + template.HTMLEscapeString(shortName(name)) + `</bdi>`
}

func TestShortName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ma10.2.7.default", "ma10.2.7.default"},
		{bidiBuild, "abc[U+202E]exe.png"},
		{"a\u2066b\u200fc\x01", "a[U+2066]b[U+200F]c[U+0001]"},
		{strings.Repeat("é", 200), strings.Repeat("é", nameRunes) + "…"}, // at a rune, not a byte
		{strings.Repeat("x", nameRunes), strings.Repeat("x", nameRunes)},
	} {
		if got := shortName(c.in); got != c.want || !utf8.ValidString(got) {
			t.Errorf("shortName(%.30q) = %.60q, want %.60q", c.in, got, c.want)
		}
	}
	if got := string(nameHTML(`<b>"x"</b>`)); got != `<bdi class="name" title="&lt;b&gt;&#34;x&#34;&lt;/b&gt;">&lt;b&gt;&#34;x&#34;&lt;/b&gt;</bdi>` {
		t.Errorf("nameHTML escapes: %s", got)
	}
}

// On every page, a 10 KB name is shown cut to nameRunes runes, with the
// full name in its title, and the bidi override is shown as its code
// point inside an isolate.
func TestLongNamesCut(t *testing.T) {
	st := seeded(t)
	seedLong(t, st)
	ts := start(t, st, nil)
	id := firstRun(t, st, longBuild)
	hostID := longHostID(t, st)
	longLabelHosts := longHost + "/" + hostID
	for _, p := range []struct {
		path  string
		names []string
	}{
		{"/", []string{longSuite}},
		{"/labels", []string{longLabel, longSuite, "10." + strings.Repeat("9", 10<<10), longLabelHosts, bidiLabel}},
		{"/labels?" + url.Values{"q": {"long-build"}, "host": {longHost}, "engine": {longEngine}}.Encode(), []string{longLabel}},
		{"/suites/sysbench", []string{longConfig, hostID}},
		{"/suites/" + url.PathEscape(longSuite), []string{longSuite, longTest, longConfig}},
		{"/suites/" + url.PathEscape(longSuite) + "/tests/" + url.PathEscape(longTest), []string{longTest, longSuite}},
		{"/runs", []string{longSuite, longTest, longLabel, longHost + "/" + hostID, bidiLabel}},
		{"/runs/" + id, []string{longLabel, longConfig + "@0123456789ab", longEngine}},
		{"/hosts", []string{longHost}},
		{"/hosts/" + hostID, []string{longHost}},
		{"/alerts", []string{longAlertSeries, longBuild}},
	} {
		a := ts.get(t, p.path)
		if a.status != http.StatusOK {
			t.Errorf("%.80s: %d %.300s", p.path, a.status, a.body)
			continue
		}
		for _, n := range p.names {
			if !strings.Contains(a.body, nameMarkup(n)) {
				t.Errorf("%.80s does not show %.40q… cut with its full name in the title", p.path, n)
			}
		}
		// The long names are whole only in titles (the charts' tooltips
		// too), links and the labels' form values: never as text, but in
		// the report's sections (the report's own HTML, which wraps them).
		body := a.body
		if i := strings.Index(body, `<div class="report">`); i >= 0 {
			body = body[:i]
		}
		text := regexp.MustCompile(`(?s)<title>.*?</title>|<[^>]*>`).ReplaceAllString(body, "")
		for _, n := range []string{longBuild, longTest, longSuite, longHost} {
			if strings.Contains(text, template.HTMLEscapeString(n)) {
				t.Errorf("%.80s shows %.40q… whole as text", p.path, n)
			}
		}
		if strings.Contains(text, "\u202E") {
			t.Errorf("%.80s has a right-to-left override in its text", p.path)
		}
	}
}

// labelsPage reads the labels page: the labels of its rows and the total
// it says match.
func labelsPage(t *testing.T, a answer) ([]string, int) {
	t.Helper()
	m := regexp.MustCompile(`<p class="note">(\d+) label\(s\)`).FindStringSubmatch(a.body)
	if m == nil {
		t.Fatalf("no total on the labels page: %d %s", a.status, a.body[strings.Index(a.body, "<main>"):])
	}
	total, _ := strconv.Atoi(m[1])
	var out []string
	for _, v := range regexp.MustCompile(`<input type="radio" name="base" value="([^"]*)"`).FindAllStringSubmatch(a.body, -1) {
		out = append(out, html.UnescapeString(v[1]))
	}
	return out, total
}

// The labels page and the API's labels give the same labels and total for
// the same filters and page; pages past the last and bad page numbers are
// refused on both with one line.
func TestLabelsPageAndAPI(t *testing.T) {
	st := seeded(t)
	var runs []result.Run
	for i := 0; i < 120; i++ {
		r := stepRun(i%12, "update-index_range=100", 1000)
		r.Build, r.Version = fmt.Sprintf("nb%03d", i), ""
		if i%4 == 0 {
			r.Params["engine"] = "rocksdb"
		}
		runs = append(runs, r)
	}
	if _, err := st.Import(ctx, runs[:100], store.Meta{Source: "run", Hostname: "alpha"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Import(ctx, runs[100:], store.Meta{Source: "run", Hostname: "beta"}); err != nil {
		t.Fatal(err)
	}
	ts := start(t, st, nil)
	all, err := st.Labels(ctx)
	if err != nil || len(all) <= 100 || len(all) > 150 {
		t.Fatalf("%d labels, want three pages: %v", len(all), err)
	}
	for _, c := range []struct {
		query        string
		total, shown int
	}{
		{"", len(all), 50},
		{"page=1", len(all), 50},
		{"page=2", len(all), len(all) - 100},
		{"q=NB01", 10, 10},
		{"q=nb&engine=rocksdb", 30, 30},
		{"q=nb&engine=innodb&page=1", 90, 40},
		{"host=beta", 20, 20},
		{"suite=xss-suite", 1, 1},
		{"suite=nosuch", 0, 0},
	} {
		// By name (qpslab labels' order), on both.
		page, total := labelsPage(t, ts.get(t, "/labels?sort=name&"+c.query))
		a := ts.get(t, "/api/v1/labels?sort=name&"+c.query)
		var api []store.LabelInfo
		decode(t, a, &api)
		var names []string
		for _, l := range api {
			names = append(names, l.Label)
		}
		if c.query == "" { // the API without page= gives every label, as qpslab labels
			names = names[:min(len(names), 50)]
		}
		if total != c.total || len(page) != c.shown || strings.Join(page, " ") != strings.Join(names, " ") || a.header.Get("X-Total-Count") != strconv.Itoa(c.total) {
			t.Errorf("%s: the page shows %d of %d, the API %d of %s; want %d of %d, the same", c.query, len(page), total, len(names), a.header.Get("X-Total-Count"), c.shown, c.total)
		}
	}
	// The page lists the newest first, as the API with sort=newest; the
	// last run's time goes down the page.
	page, _ := labelsPage(t, ts.get(t, "/labels"))
	var newest []store.LabelInfo
	decode(t, ts.get(t, "/api/v1/labels?sort=newest&page=0"), &newest)
	for i, l := range newest {
		if i >= len(page) || page[i] != l.Label || (i > 0 && newest[i-1].Last < l.Last) {
			t.Errorf("label %d: the page shows %q, the API by newest %q (last run %s)", i, page[min(i, len(page)-1)],
				l.Label, l.Last)
			break
		}
	}
	if bad := ts.get(t, "/api/v1/labels?sort=size"); bad.status != 400 || !strings.Contains(bad.body,
		"sort=size: use name, newest or oldest") {
		t.Errorf("sort=size: %d %s", bad.status, bad.body)
	}
	if a := ts.get(t, "/labels?suite=xss-suite"); !strings.Contains(a.body, "&lt;script&gt;document.body.dataset.xss") || strings.Contains(a.body, "<script>document") {
		t.Errorf("the labels page does not show the markup label as text")
	}
	if a := ts.get(t, "/labels?page=1"); !strings.Contains(a.body, `href="/labels?page=0" rel="prev"`) || !strings.Contains(a.body, `href="/labels?page=2" rel="next"`) {
		t.Errorf("page 1 does not link its neighbours")
	}
	last := (len(all) - 1) / 50
	for _, c := range []struct{ query, want string }{
		{"page=" + strconv.Itoa(last+1), fmt.Sprintf("page=%d is past the last: %d label(s) match, on pages 0 to %d", last+1, len(all), last)},
		{"host=beta&page=1", "page=1 is past the last: 20 label(s) match, on pages 0 to 0"},
		{"page=-1", "page=-1: give a page number from 0"},
		{"page=two", "page=two: give a page number from 0"},
	} {
		apiErr(t, "/api/v1/labels?"+c.query, ts.get(t, "/api/v1/labels?"+c.query), http.StatusBadRequest, c.want)
		a := ts.get(t, "/labels?"+c.query)
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, `<p class="error">`+template.HTMLEscapeString(c.want)) {
			t.Errorf("/labels?%s: %d, want 400 with %q", c.query, a.status, c.want)
		}
	}
}

// A label's thread counts are listed in order whatever order its runs
// came in, and a host without a name (a posted run's) by its id alone.
func TestLabelsThreadsAndHosts(t *testing.T) {
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, b := stepRun(0, "update-index_range=100", 1000), stepRun(0, "update-index_range=100", 1000)
	a.Threads, b.Threads, b.Started = 2, 1, a.Started.Add(time.Hour)
	if _, err := st.Import(ctx, []result.Run{a, b}, store.Meta{Source: "post"}); err != nil {
		t.Fatal(err)
	}
	ts := start(t, st, nil)
	body := ts.get(t, "/labels").body
	if !strings.Contains(body, "<td>"+string(nameHTML("1,2"))+"</td>") || strings.Contains(body, `title="/`) {
		t.Errorf("the labels page lists threads out of order or a host as /ID: %s", body[strings.Index(body, "<tbody>"):])
	}
}
