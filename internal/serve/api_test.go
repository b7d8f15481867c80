package serve

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// Every read endpoint answers the seeded store as the commands would, and
// refuses bad input in one line.
func TestAPIReads(t *testing.T) {
	ts := start(t, seeded(t), nil)

	var idx struct {
		Version   string
		Endpoints []endpoint
	}
	decode(t, ts.get(t, "/api/v1"), &idx)
	if idx.Version != "v1" || len(idx.Endpoints) != len(endpoints) {
		t.Errorf("index: %+v", idx)
	}

	var labels []store.LabelInfo
	decode(t, ts.get(t, "/api/v1/labels"), &labels)
	have := map[string]bool{}
	for _, l := range labels {
		have[l.Label] = true
	}
	for _, want := range []string{"base.demo", "other.demo", "ma10.2.7.default", xssLabel} {
		if !have[want] {
			t.Errorf("labels lack %q: %v", want, have)
		}
	}

	var tests []store.TestInfo
	decode(t, ts.get(t, "/api/v1/tests"), &tests)
	sb := 0
	for _, x := range tests {
		if x.Suite == "sysbench" {
			sb++
		}
	}
	if sb != 43 { // the 42 tests and the load
		t.Errorf("%d sysbench tests, want 43: %+v", sb, tests)
	}

	type hist struct {
		Metric string
		Series []apiSeries
	}
	var h hist
	decode(t, ts.get(t, "/api/v1/history?suite=sysbench&test=update-index_range%3D100"), &h)
	if len(h.Series) != 3 { // the step history (config default), the 42-test labels' (config demo) and the markup's (config xss)
		t.Fatalf("history: %d series", len(h.Series))
	}
	step := h.Series[0]
	for _, s := range h.Series {
		if len(s.Points) == 12 {
			step = s
		}
	}
	if len(step.Points) != 12 || step.Order != "version" || len(step.Changes) != 1 || step.N != 12 {
		t.Fatalf("the step series: %d points, order %s, %d changes", len(step.Points), step.Order, len(step.Changes))
	}
	c := step.Changes[0]
	if c.Kind != "regression" || c.Arrived.Build != "ma10.2.7" || c.Before.Build != "ma10.2.6" || math.Abs(c.Magnitude+0.2) > 0.01 || c.Arrived.Commit != "c0ffee07" {
		t.Errorf("the change point: %+v", c)
	}
	if !strings.HasPrefix(step.Link, ts.URL+"/suites/sysbench/tests/update-index_range=100?") {
		t.Errorf("link %s", step.Link)
	}
	q := seriesParams(step.Series)
	q.Set("suite", "sysbench")
	q.Set("test", "update-index_range=100")
	q.Set("buckets", "5")
	decode(t, ts.get(t, "/api/v1/history?"+q.Encode()), &h)
	if len(h.Series) != 1 || len(h.Series[0].Buckets) != 4 || len(h.Series[0].Points) != 0 || h.Series[0].Buckets[0].N != 3 || h.Series[0].Buckets[3].Last != "ma10.2.12 10.2.12" {
		t.Errorf("12 points in at most 5 buckets: %+v", h.Series)
	}
	q.Del("buckets")
	q.Set("from", "6")
	q.Set("to", "9")
	decode(t, ts.get(t, "/api/v1/history?"+q.Encode()), &h)
	if len(h.Series) != 1 || len(h.Series[0].Points) != 3 || h.Series[0].Points[0].Build != "ma10.2.7" || h.Series[0].From != 6 {
		t.Errorf("points 6 to 8: %+v", h.Series)
	}
	decode(t, ts.get(t, "/api/v1/history?suite=sysbench&test=update-index_range%3D100&metric=p99&threads=1&config=default"), &h)
	if len(h.Series) != 1 || h.Metric != "p99" || len(h.Series[0].Changes) != 1 || h.Series[0].Changes[0].Kind != "regression" {
		t.Errorf("p99 history: %+v", h)
	}
	for _, bad := range []struct {
		path   string
		status int
		want   string
	}{
		{"/api/v1/history?test=x", 400, "name the series' suite and test"},
		{"/api/v1/history?suite=sysbench&test=update-index_range%3D100&metric=qpz", 400, "metric=qpz: use one of qps"},
		{"/api/v1/history?suite=sysbench&test=update-index_range%3D100&threads=two", 400, "threads=two"},
		{"/api/v1/history?suite=sysbench&test=update-index_range%3D100&from=9&to=3", 400, "from must be below to"},
		{"/api/v1/history?suite=sysbench&test=update-index_range%3D100&from=-1", 400, "from=-1"},
		{"/api/v1/history?suite=sysbench&test=update-index_range%3D100&buckets=0", 400, "buckets=0"},
		{"/api/v1/history?suite=sysbench&test=no-such-test", 404, "no ok results of test no-such-test"},
		{"/api/v1/history?suite=sysbench&test=update-index_range%3D100&threads=64", 404, "no series"},
		{"/api/v1/changes?test=x", 400, "needs its suite"},
		{"/api/v1/changes?metric=%3Cb%3E", 400, "metric=<b>"},
		{"/api/v1/compare?base=base.demo", 400, "name the labels to compare"},
		{"/api/v1/compare?base=base.demo&other=nolabel", 400, `label "nolabel" is not build.config`},
		{"/api/v1/compare?base=base.demo&other=none.default", 404, "no ok results for none.default"},
		{"/api/v1/compare?base=base.demo&other=other.demo&threads=0", 400, "threads=0"},
		{"/api/v1/compare?base=base.demo&other=other.demo&groups=9", 400, "groups=9"},
		{"/api/v1/compare?base=base.demo&other=other.demo&groups=/etc/hostname", 400, "groups=/etc/hostname: sysbench's runs are grouped by the layout(s) 5, 4"}, // names only: the server reads no file
		{"/api/v1/compare?base=base.demo&other=ma10.2.1.default&threads=2", 404, "with this suite, thread count and host"},
		{"/api/v1/runs?limit=0", 400, "limit=0"},
		{"/api/v1/runs?offset=-3", 400, "offset=-3"},
		{"/api/v1/runs?status=bogus", 400, "status=bogus"},
		{"/api/v1/runs?label=x", 400, `label "x"`},
		{"/api/v1/runs/nosuch", 404, "no run nosuch"},
		{"/api/v1/nosuch", 404, "GET /api/v1 lists them"},
		{"/api/v2/labels", 404, "no endpoint"},
	} {
		apiErr(t, bad.path, ts.get(t, bad.path), bad.status, bad.want)
	}
	apiErr(t, "POST /api/v1/labels", ts.do(t, "POST", "/api/v1/labels", "", "", nil), 404, "no endpoint POST /api/v1/labels")

	var ch struct {
		Metric  string
		Series  int
		Changes []apiChange
	}
	decode(t, ts.get(t, "/api/v1/changes"), &ch)
	found := false
	for _, c := range ch.Changes {
		if c.Test == "update-index_range=100" && c.Arrived.Build == "ma10.2.7" && c.Kind == "regression" {
			found = true
			if !strings.HasSuffix(c.Link, "#cp-ma10.2.7") {
				t.Errorf("the change's link: %s", c.Link)
			}
		}
	}
	if !found || ch.Series < 44 {
		t.Errorf("changes over %d series: %+v", ch.Series, ch.Changes)
	}
	decode(t, ts.get(t, "/api/v1/changes?suite=sysbench&test=update-index_range%3D100&metric=p99"), &ch)
	if len(ch.Changes) != 1 || ch.Metric != "p99" {
		t.Errorf("p99 changes: %+v", ch)
	}

	// compare: qpslab compare --format json's answer.
	var cmp analysis.Comparison
	decode(t, ts.get(t, "/api/v1/compare?base=base.demo&other=other.demo"), &cmp)
	if len(cmp.Rows) != 43 || cmp.Base != "base.demo" || len(cmp.Others) != 1 || cmp.Layout != "5" {
		t.Fatalf("compare: %d rows, base %s, others %v, layout %s", len(cmp.Rows), cmp.Base, cmp.Others, cmp.Layout)
	}
	rel := map[string]float64{}
	for _, r := range cmp.Rows {
		rel[r.Test] = r.Others[0].Rel
	}
	for test, want := range map[string]float64{"point-query_range=100": 1.10, "update-index_range=100": 0.90, "read-only_range=100": 1.00, "load": 1.05} {
		if math.Abs(rel[test]-want) > 1e-9 {
			t.Errorf("%s: rel %g, want %g", test, rel[test], want)
		}
	}
	want, err := analysis.Compare(analysis.Set{Label: "base.demo", Runs: runsOf(t, ts.st, "base", "demo")}, []analysis.Set{{Label: "other.demo", Runs: runsOf(t, ts.st, "other", "demo")}}, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cmp.Geomean[0]-want.Geomean[0]) > 1e-12 || len(cmp.Groups) != len(want.Groups) {
		t.Errorf("geomean %g, groups %d; compare's %g, %d", cmp.Geomean[0], len(cmp.Groups), want.Geomean[0], len(want.Groups))
	}

	var runs struct {
		Total int
		Runs  []struct {
			store.RunInfo
			Label, Link string
		}
	}
	decode(t, ts.get(t, "/api/v1/runs?label=base.demo&limit=5"), &runs)
	if runs.Total != 43 || len(runs.Runs) != 5 || runs.Runs[0].Label != "base.demo" || !strings.HasPrefix(runs.Runs[0].Link, ts.URL+"/runs/") {
		t.Errorf("runs: %d of %d, %+v", len(runs.Runs), runs.Total, runs.Runs)
	}
	var one struct {
		ID, Label string
		Run       result.Run
	}
	decode(t, ts.get(t, "/api/v1/runs/"+url.PathEscape(runs.Runs[0].ID)), &one)
	if one.ID != runs.Runs[0].ID || one.Run.Test != runs.Runs[0].Test || len(one.Run.Samples) != 2 || one.Label != "base.demo" {
		t.Errorf("one run: %+v", one)
	}
	var al struct {
		Webhook bool
		Alerts  []store.Alert
	}
	decode(t, ts.get(t, "/api/v1/alerts"), &al)
	if al.Webhook || len(al.Alerts) != 0 {
		t.Errorf("alerts without a webhook: %+v", al)
	}
}

func runsOf(t testing.TB, st *store.Store, build, config string) []result.Run {
	t.Helper()
	rs, err := st.Runs(ctx, store.Filter{Build: build, Config: config})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// tarball tars dir's files, under top ("" for none), gzip-compressed or not.
func tarball(t testing.TB, dir, top string, gz bool) []byte {
	t.Helper()
	var b bytes.Buffer
	var w *tar.Writer
	var z *gzip.Writer
	if gz {
		z = gzip.NewWriter(&b)
		w = tar.NewWriter(z)
	} else {
		w = tar.NewWriter(&b)
	}
	if top != "" {
		w.WriteHeader(&tar.Header{Name: top + "/", Typeflag: tar.TypeDir, Mode: 0o755})
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w.WriteHeader(&tar.Header{Name: strings.TrimPrefix(top+"/"+e.Name(), "/"), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))})
		w.Write(data)
	}
	w.Close()
	if z != nil {
		z.Close()
	}
	return b.Bytes()
}

// rawTar is a tarball of the headers and contents given.
func rawTar(hs ...tar.Header) []byte {
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	for _, h := range hs {
		h.Mode = 0o644
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Linkname))
			data := h.Linkname
			h.Linkname = ""
			w.WriteHeader(&h)
			w.Write([]byte(data))
			continue
		}
		w.WriteHeader(&h)
	}
	w.Close()
	return b.Bytes()
}

func resultsJSON(t testing.TB, runs []result.Run) []byte {
	t.Helper()
	b, err := json.Marshal(result.File{SchemaVersion: result.SchemaVersion, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Posted results are imported as qpslab import does, all or nothing, with
// a token of the ingest scope; everything else is refused in one line,
// and no token ever reaches the log.
func TestIngest(t *testing.T) {
	ts := start(t, seeded(t), func(o *Options) { o.MaxBody = 64 << 10; o.MaxUnpack = 128 << 10 })
	ingest := ts.token(t, "ci", ScopeIngest)
	reader := ts.token(t, "reader", ScopeRead)
	post := func(query, tok, ctype string, body []byte) answer {
		return ts.do(t, "POST", "/api/v1/results"+query, tok, ctype, bytes.NewReader(body))
	}
	labels := func() int {
		var ls []store.LabelInfo
		decode(t, ts.get(t, "/api/v1/labels"), &ls)
		return len(ls)
	}
	before := labels()

	// qpslab's results JSON: a new build of the step history.
	nightly := stepRun(12, "update-index_range=100", 1000)
	nightly.Build, nightly.Version = "ma10.2.13", "10.2.13"
	body := resultsJSON(t, []result.Run{nightly})
	var ans ingestAnswer
	a := post("", ingest, "application/json", body)
	if a.status != http.StatusCreated {
		t.Fatalf("post results: %d %s", a.status, a.body)
	}
	decode(t, a, &ans)
	if ans.Imported != 1 || ans.Skipped != 0 || len(ans.Labels) != 1 || ans.Labels[0] != "ma10.2.13.default" || !strings.HasPrefix(ans.Links[0], ts.URL+"/runs?label=") {
		t.Errorf("post results: %+v", ans)
	}
	if got := labels(); got != before+1 {
		t.Errorf("%d labels after the post, want %d", got, before+1)
	}
	// The same again stores nothing twice.
	a = post("?format=results", ingest, "", body)
	decode(t, a, &ans)
	if a.status != http.StatusOK || ans.Imported != 0 || ans.Skipped != 1 {
		t.Errorf("posted twice: %d %+v", a.status, ans)
	}

	// sysbench output, with its label, test and version.
	out, err := os.ReadFile(filepath.Join("testdata", "sysbench-1.0.20-point-select.txt"))
	if err != nil {
		t.Fatal(err)
	}
	a = post("?format=sysbench&label=nightly.default&test=point-query_range%3D100&version=11.4.5&commit=abc123&time=2026-02-01", ingest, "", out)
	decode(t, a, &ans)
	if a.status != http.StatusCreated || ans.Imported != 1 || ans.Version != "11.4.5" {
		t.Errorf("post sysbench: %d %+v", a.status, ans)
	}
	rs := runsOf(t, ts.st, "nightly", "default")
	if len(rs) != 1 || rs[0].Totals.Reported != 62984.69 || rs[0].Params["commit"] != "abc123" || !rs[0].Started.Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) || rs[0].Params["file"] != "sysbench.txt" {
		t.Errorf("the sysbench run: %+v", rs)
	}

	// A reference harness folder as a tarball: gzip-compressed with its
	// folder, or a plain tar of its files; the version from its name.
	a = post("?format=mytools&label=ma100244_rel.cz11a", ingest, "", tarball(t, filepath.Join("testdata", "mytools-ma100244"), "ma100244_rel.cz11a.pk1", true))
	decode(t, a, &ans)
	if a.status != http.StatusCreated || ans.Imported != 1 || ans.Version != "mariadb 10.2.44" {
		t.Errorf("post a mytools tar.gz: %d %+v", a.status, ans)
	}
	a = post("?label=ma100339_rel.cz11a", ingest, "application/x-tar", tarball(t, filepath.Join("testdata", "mytools-ma100244"), "", false))
	decode(t, a, &ans)
	if a.status != http.StatusCreated || ans.Imported != 1 || ans.Version != "mariadb 10.3.39" {
		t.Errorf("post a mytools tar: %d %+v", a.status, ans)
	}
	if rs := runsOf(t, ts.st, "ma100244_rel", "cz11a"); len(rs) != 1 || rs[0].Totals.Reported != 3966 || rs[0].HW == nil || rs[0].HW.CPUPerOp != 0.006937 {
		t.Errorf("the mytools run: %+v", rs)
	}
	// Without a version, it says so.
	a = post("?format=sysbench&label=trunk.default&test=point-query_range%3D100", ingest, "text/plain", out)
	decode(t, a, &ans)
	if a.status != http.StatusCreated || !strings.Contains(ans.Warning, "build trunk has no version") {
		t.Errorf("post without a version: %d %+v", a.status, ans)
	}

	count := labels()
	bad := nightly
	bad.Build = "ma10.2.14"
	bad.Totals.QPS = -5
	good := nightly
	good.Build = "ma10.2.15"
	huge := bytes.Repeat([]byte("x"), 70<<10)
	var bomb bytes.Buffer
	z := gzip.NewWriter(&bomb)
	tw := tar.NewWriter(z)
	tw.WriteHeader(&tar.Header{Name: "sb.r.qps.point-query.range100.pk1", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1 << 20})
	tw.Write(make([]byte, 1<<20))
	tw.Close()
	z.Close()
	for _, c := range []struct {
		what, query, ctype string
		body               []byte
		status             int
		want               string
	}{
		{"broken JSON", "", "application/json", []byte(`{"schema_version": 4, "runs": [`), 400, "nothing was stored: not JSON at line 1, column 32: unexpected end of JSON input"},
		{"a results file of no runs", "", "application/json", resultsJSON(t, nil), 400, "holds no runs"},
		{"one bad run among good", "", "application/json", resultsJSON(t, []result.Run{good, bad}), 400, "nothing was stored: runs[1]: update-index_range=100 ma10.2.14: qps is -5"},
		{"a label for a results file", "?label=a.b", "application/json", body, 400, "label= is for sysbench and mytools posts"},
		{"a huge body", "?format=sysbench&label=a.b&test=point-query_range%3D100", "", huge, 413, "larger than 65536 bytes"},
		{"no label", "?format=sysbench&test=point-query_range%3D100", "", out, 400, "label=BUILD.CONFIG"},
		{"a label with no config", "?format=sysbench&label=nodot&test=point-query_range%3D100", "", out, 400, "label=nodot"},
		{"no test", "?format=sysbench&label=a.b", "", out, 400, "name the test"},
		{"an unknown test", "?format=sysbench&label=a.b&test=pointy", "", out, 400, `unknown test "pointy"`},
		{"a bad version", "?format=sysbench&label=a.b&test=point-query_range%3D100&version=%3Cb%3E", "", out, 400, "version=<b>"},
		{"a bad time", "?format=sysbench&label=a.b&test=point-query_range%3D100&time=yesterday", "", out, 400, "time=yesterday"},
		{"a bad file name", "?format=sysbench&label=a.b&test=point-query_range%3D100&file=..%2Fx", "", out, 400, "file=../x"},
		{"an unknown parameter", "?format=sysbench&label=a.b&tset=x", "", out, 400, "tset= is no parameter"},
		{"an unknown format", "?format=xml", "", out, 400, "format=xml"},
		{"an unknown content type", "", "image/png", out, 415, `Content-Type "image/png"`},
		{"output that is not sysbench's", "?format=sysbench&label=a.b&test=point-query_range%3D100", "", []byte("hello\nworld\n"), 400, "import sysbench sysbench.txt"},
		{"not a tarball", "?format=mytools&label=a.b", "", []byte("not a tar at all, but long enough to be read as a header block by the reader......"), 400, "not a tarball"},
		{"an empty tarball", "?format=mytools&label=a.b", "", rawTar(), 400, "the tarball is empty"},
		{"a tarball reaching out", "?format=mytools&label=a.b", "", rawTar(tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Linkname: "x"}), 400, `"../evil" is outside its folder`},
		{"an absolute name", "?format=mytools&label=a.b", "", rawTar(tar.Header{Name: "/etc/evil", Typeflag: tar.TypeReg, Linkname: "x"}), 400, "outside its folder"},
		{"a symlink", "?format=mytools&label=a.b", "", rawTar(tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}), 400, `"link" is not a file or folder`},
		{"a tarball unpacking too large", "?format=mytools&label=a.b", "", bomb.Bytes(), 413, "unpacks to more than 131072 bytes"},
		{"a folder that is no result folder", "?format=mytools&label=a.b", "", rawTar(tar.Header{Name: "README", Typeflag: tar.TypeReg, Linkname: "hi"}), 400, "neither sysbench nor Insert Benchmark results"},
	} {
		a := post(c.query, ingest, c.ctype, c.body)
		apiErr(t, c.what, a, c.status, c.want)
		if strings.Contains(a.body, os.TempDir()) {
			t.Errorf("%s: the answer names the server's temporary folder: %s", c.what, a.body)
		}
	}
	if got := labels(); got != count {
		t.Errorf("refused posts stored something: %d labels, were %d", got, count)
	}
	if rs := runsOf(t, ts.st, "ma10.2.15", "default"); len(rs) != 0 {
		t.Errorf("the good run of a refused post was stored: %d", len(rs))
	}

	// Tokens: none, another scheme, a wrong one, one without the scope,
	// a revoked one.
	apiErr(t, "no token", post("", "", "application/json", body), 401, "needs a token with the ingest scope")
	if a := post("", "", "application/json", body); a.header.Get("WWW-Authenticate") == "" {
		t.Error("a 401 without WWW-Authenticate")
	}
	apiErr(t, "a wrong token", post("", "qpslab_0123456789ab_"+strings.Repeat("A", 43), "application/json", body), 401, "the token is not valid")
	apiErr(t, "a read token", post("", reader, "application/json", body), 403, "has the scope(s) read, not ingest")
	basic := ts.do(t, "POST", "/api/v1/results", "", "application/json", bytes.NewReader(body))
	if basic.status != 401 {
		t.Errorf("no Authorization: %d", basic.status)
	}
	revoked := ts.token(t, "old", ScopeIngest)
	if _, err := ts.st.RevokeToken(ctx, "old", time.Now()); err != nil {
		t.Fatal(err)
	}
	apiErr(t, "a revoked token", post("", revoked, "application/json", body), 401, "the token is not valid")
	if got := labels(); got != count {
		t.Errorf("posts without a valid token stored something: %d labels", got)
	}

	// The log names requests, never a token nor its secret.
	log := ts.log.String()
	if !strings.Contains(log, "POST /api/v1/results 201") {
		t.Errorf("the log lacks the posts:\n%s", log)
	}
	for _, tok := range []string{ingest, reader, revoked} {
		secret := tokenSecret(t, tok)
		if strings.Contains(log, secret) {
			t.Errorf("the log holds a token:\n%s", log)
		}
	}
}

// serve refuses plain HTTP on an address others reach, unless told.
func TestListenCheck(t *testing.T) {
	for _, c := range []struct {
		l    Listen
		want string
	}{
		{Listen{Addr: "127.0.0.1:8080"}, ""},
		{Listen{Addr: "[::1]:8080"}, ""},
		{Listen{Addr: "localhost:0"}, ""},
		{Listen{Addr: ":8080"}, "listens on every address without TLS"},
		{Listen{Addr: "0.0.0.0:8080"}, "without TLS"},
		{Listen{Addr: "bench.example.com:80"}, "without TLS"},
		{Listen{Addr: "0.0.0.0:8080", Insecure: true}, ""},
		{Listen{Addr: "0.0.0.0:8443", CertFile: "c.pem", KeyFile: "k.pem"}, ""},
		{Listen{Addr: "0.0.0.0:8443", CertFile: "c.pem"}, "go together"},
		{Listen{Addr: "8080"}, "give host:port"},
	} {
		err := c.l.Check()
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.l, err, c.want)
		}
	}
}
