package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/changepoint"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	_ "github.com/qpslab/qpslab/internal/workload" // every suite, as the binary has them
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

var ctx = context.Background()

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// xssBuild and xssTest are a build and a test whose names are markup: every
// page must show them as text.
const (
	xssBuild = `<script>document.body.dataset.xss="build"</script>`
	xssTest  = `<img src=x onerror="document.body.dataset.xss='test'">`
	xssLabel = xssBuild + ".xss"
)

// fingerprint is a host check's JSON with a risk (and markup in its detail).
func fingerprint(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"kernel":"6.1.0-%s","cpu_model":"Test CPU %s","cpus":2,"mem_kb":4096000,"cpufreq_driver":"none","swap_kb":0,"vm":true,"hypervisor":"kvm","steal_pct_since_boot":0.4,
"risks":[{"name":"steal","detail":"CPU steal 0.4%% since boot <b>on a VM</b>","fix":"run on bare metal"}]}`, name, name))
}

// stepQPS is the known history: twelve builds ma10.2.1 … ma10.2.12 of
// update-index_range=100 at 1 thread, QPS 1000 (± a few) until 10.2.6 and
// 800 from 10.2.7 on, the runs' times out of version order. detect finds a
// regression of -20 % that arrived in ma10.2.7 (after ma10.2.6).
var stepNoise = []float64{3, -2, 1, -4, 2, 0, -1, 4, -3, 1, 2, -2}

func stepRun(i int, test string, base float64) result.Run {
	v := fmt.Sprintf("10.2.%d", i+1)
	q := base + stepNoise[i%len(stepNoise)]
	if i >= 6 {
		q = base*0.8 + stepNoise[i%len(stepNoise)]
	}
	r := result.Run{SchemaVersion: result.SchemaVersion, Test: test, Build: "ma" + v, Flavor: "mariadb", Version: v,
		Config: "default@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: t0.Add(time.Duration(12-i) * time.Hour),
		Host: fingerprint("a"), Params: map[string]string{"commit": fmt.Sprintf("c0ffee%02d", i+1)},
		Totals: result.Totals{Seconds: 3, Events: int64(q * 3), Statements: int64(q * 3), Reported: q, ReportedUnit: "qps", QPS: q, Series: result.SeriesStatements,
			Response: result.Latency{Count: int64(q * 3), P99: 1e6 / q}}}
	for s := 0; s < 3; s++ {
		r.Samples = append(r.Samples, result.Sample{Second: s, Events: int64(q), Statements: int64(q), Response: result.Latency{P99: 1e6 / q}})
	}
	if err := sysbench.Stamp(&r); err != nil {
		panic(err)
	}
	return r
}

// fortyTwo are two labels, base.demo and other.demo, over sysbench's
// 42 tests and its load (other's rows/s 1.05 × base's): other's QPS is 1.10 × base's in the point groups,
// 0.90 × in the writes and 1.00 × in the range groups. They ran in one
// plan, test-level, each test in 8 paired rounds (2 repeats of 4 slices)
// within ±1 % of its value.
func fortyTwo() []result.Run {
	var runs []result.Run
	for j, lb := range []string{"base", "other"} {
		rows := 50000 * (1 + 0.05*float64(j))
		r := result.Run{SchemaVersion: result.SchemaVersion, Test: "load", Build: lb, Flavor: "mariadb", Version: "10.11." + fmt.Sprint(j+1),
			Config: "demo@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: t0.Add(-time.Duration(2-j) * time.Minute), Host: fingerprint("a"),
			Totals: result.Totals{Seconds: 2, Rows: int64(rows * 2), RowsPerSec: rows, Reported: rows, ReportedUnit: "rows/s", Series: result.SeriesRows}}
		if err := sysbench.Stamp(&r); err != nil {
			panic(err)
		}
		runs = append(runs, r)
	}
	for i, t := range sysbench.Order2024() {
		if t.Warm() {
			continue
		}
		q := 1000 + 10*float64(i)
		for j, lb := range []string{"base", "other"} {
			v := q
			if j == 1 {
				switch t.Group5 {
				case sysbench.Point1, sysbench.Point2:
					v = q * 1.10
				case sysbench.Writes:
					v = q * 0.90
				}
			}
			r := result.Run{SchemaVersion: result.SchemaVersion, Test: t.Label(), Build: lb, Flavor: "mariadb", Version: "10.11." + fmt.Sprint(j+1),
				Config: "demo@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: t0.Add(time.Duration(i*2+j) * time.Minute),
				Host:   fingerprint("a"),
				Totals: result.Totals{Seconds: 2, Events: int64(v * 2), Statements: int64(v * 2), Reported: v, ReportedUnit: "qps", QPS: v, Series: result.SeriesStatements}}
			r.Samples = []result.Sample{{Second: 0, Events: int64(v), Statements: int64(v)}, {Second: 1, Events: int64(v), Statements: int64(v)}}
			r.Plan, r.Pairing = "20261126T000000-seed", result.PairedSlices
			for k := 0; k < 8; k++ {
				// The other label's wobble is the base's a round on, so
				// that the geometric mean of the ratios is exact.
				wobble := 1 + 0.01*float64(((k+j)%8)%3-1)
				r.Rounds = append(r.Rounds, result.Round{Repeat: k/4 + 1, Round: k%4 + 1, Started: r.Started.Add(time.Duration(k) * time.Second),
					Seconds: 0.25, Events: int64(v / 4), Statements: int64(v / 4), Value: v * wobble})
			}
			if err := sysbench.Stamp(&r); err != nil {
				panic(err)
			}
			runs = append(runs, r)
		}
	}
	return runs
}

// xssRuns are results whose build, test, suite, config content and host
// are markup.
func xssRuns() []result.Run {
	r := stepRun(0, "update-index_range=100", 500)
	r.Build, r.Version, r.Config = xssBuild, "", "xss@0123456789ab"
	r.Host = json.RawMessage(`{"kernel":"<script>document.body.dataset.xss='host'</script>","cpus":1,"risks":[{"name":"<i>risk</i>","detail":"<script>x()</script>","fix":"<b>fix</b>"}]}`)
	o := r
	o.Suite, o.Test, o.Role, o.Groups, o.Step = "xss-suite", xssTest, "", nil, 1
	return []result.Run{r, o}
}

// seeded is a store with the step history of update-index_range=100, the
// 42-test comparison and the markup results.
func seeded(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var step []result.Run
	for i := 0; i < 12; i++ {
		step = append(step, stepRun(i, "update-index_range=100", 1000))
	}
	if _, err := st.Import(ctx, step, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Import(ctx, fortyTwo(), store.Meta{Source: "test", ConfigContent: []byte("[mysqld]\ninnodb_buffer_pool_size=1G\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Import(ctx, xssRuns(), store.Meta{Source: "test", ConfigContent: []byte("[mysqld]\n# </pre><script>document.body.dataset.xss='config'</script>\n")}); err != nil {
		t.Fatal(err)
	}
	return st
}

// syncBuffer is a log that the server and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

type testServer struct {
	*Server
	URL string
	log *syncBuffer
	st  *store.Store
}

// start serves st with the detect defaults and o's changes.
func start(t testing.TB, st *store.Store, change func(*Options)) *testServer {
	t.Helper()
	log := &syncBuffer{}
	o := Options{Store: st, Detect: changepoint.Options{Window: changepoint.DefaultWindow, PValue: changepoint.DefaultPValue, MinSegment: changepoint.DefaultMinSegment},
		PublicRead: true, Log: log, PageWait: -1}
	if change != nil {
		change(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	s.o.PublicURL = hs.URL
	return &testServer{Server: s, URL: hs.URL, log: log, st: st}
}

type answer struct {
	status int
	header http.Header
	body   string
}

// do sends a request; tok is a bearer token ("" for none).
func (ts *testServer) do(t testing.TB, method, path, tok, ctype string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	return ts.send(t, req)
}

func (ts *testServer) get(t testing.TB, path string) answer {
	return ts.do(t, "GET", path, "", "", nil)
}

// token makes a token with scopes.
func (ts *testServer) token(t testing.TB, name string, scopes ...string) string {
	t.Helper()
	tok, _, err := CreateToken(ctx, ts.st, name, scopes, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// decode reads a JSON answer into v, failing on anything else.
func decode(t testing.TB, a answer, v any) {
	t.Helper()
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("answer of type %q: %s", ct, a.body)
	}
	if err := json.Unmarshal([]byte(a.body), v); err != nil {
		t.Fatalf("answer %q: %v", a.body, err)
	}
}

// apiErr checks an API error: its status and a message containing want.
func apiErr(t testing.TB, what string, a answer, status int, want string) {
	t.Helper()
	var e struct{ Error string }
	if a.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, a.status, status, a.body)
		return
	}
	decode(t, a, &e)
	if e.Error == "" || !strings.Contains(e.Error, want) || strings.Contains(e.Error, "\n") {
		t.Errorf("%s: error %q, want one line with %q", what, e.Error, want)
	}
}
