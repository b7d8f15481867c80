package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/bisect"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/serve"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// parityRun is a run of point-query_range=100 at 1 thread.
func parityRun(t *testing.T, build, flavor, version, config, engine string, at int, qps float64) result.Run {
	r := result.Run{SchemaVersion: result.SchemaVersion, Test: "point-query_range=100", Build: build, Flavor: flavor, Version: version,
		Config: config + "@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: time.Date(2026, 1, 1, 0, at, 0, 0, time.UTC),
		Host:   json.RawMessage(`{"kernel":"6.1.0","cpu_model":"Test CPU","cpus":2,"mem_kb":4096000}`),
		Params: map[string]string{"repeat": fmt.Sprint(at%3 + 1)},
		Totals: result.Totals{Seconds: 2, Events: int64(qps * 2), Statements: int64(qps * 2), Reported: qps, ReportedUnit: "qps", QPS: qps, Series: result.SeriesStatements}}
	if engine != "" {
		r.Params["engine"] = engine
	}
	r.Samples = []result.Sample{{Second: 0, Events: int64(qps), Statements: int64(qps)}, {Second: 1, Events: int64(qps), Statements: int64(qps)}}
	r.HW = &result.HW{Op: "statement", Seconds: 2, Samples: 2, CPUPerOp: 10 / qps, OpsPerSec: qps, CPUs: 2}
	if err := sysbench.Stamp(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// serveAPI serves st as qpslab serve does without a settings file (until
// the test ends), and gives the status and body of a GET of a path.
func serveAPI(t *testing.T, st *store.Store) func(path string) (int, string) {
	t.Helper()
	var settings analysis.DetectSettings
	base, err := settings.Resolve(analysis.Tuning{}, "")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Store: st, Settings: settings, Detect: base, PublicRead: true, Bisect: &bisect.Dashboard{}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return func(p string) (int, string) {
		t.Helper()
		resp, err := http.Get(hs.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

// The same store asked the same questions through the command line
// (--format json) and the API gives the same answers: labels, compare
// (InnoDB's and MyRocks' runs of one build.config apart), metrics and the
// change points, and the API's history is what qpslab export writes. A
// MySQL and a MariaDB build under one config name (cz11a_bee) are two
// series in both: MariaDB's regression is found in its own series, and no
// change point falls between the flavors.
func TestParityCLIAndAPI(t *testing.T) {
	h := newHome(t)
	ctx := context.Background()
	st, err := store.Open(ctx, "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var runs []result.Run
	noise := []float64{3, -2, 1, -4, 2, 0, -1, 4}
	for i := 0; i < 8; i++ {
		q := 1000.0
		if i >= 4 {
			q = 800
		}
		runs = append(runs, parityRun(t, fmt.Sprintf("ma10.6.%d", i+1), "mariadb", fmt.Sprintf("10.6.%d", i+1), "cz11a_bee", "", i, q+noise[i]),
			parityRun(t, fmt.Sprintf("my8.0.%d", i+31), "mysql", fmt.Sprintf("8.0.%d", i+31), "cz11a_bee", "", i, 500+noise[7-i]))
	}
	for rep := 0; rep < 3; rep++ {
		runs = append(runs, parityRun(t, "b1", "mariadb", "", "cfg", "", 20+rep, 1000+noise[rep]), parityRun(t, "b2", "mariadb", "", "cfg", "", 30+rep, 1100+noise[rep+1]),
			parityRun(t, "b1", "mariadb", "", "cfg", "rocksdb", 40+rep, 500+noise[rep+2]), parityRun(t, "b2", "mariadb", "", "cfg", "rocksdb", 50+rep, 550+noise[rep+3]))
	}
	if _, err := st.Import(ctx, runs, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	get := serveAPI(t, st)
	api := func(p string) string {
		t.Helper()
		code, b := get(p)
		if code != 200 {
			t.Fatalf("GET %s: %d %s", p, code, b)
		}
		return b
	}
	cli := func(args ...string) string {
		t.Helper()
		r := qpslab(t, h, args...)
		if r.code != 0 {
			t.Fatalf("qpslab %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r.stdout
	}

	var cl, al []store.LabelInfo
	json.Unmarshal([]byte(cli("labels", "--format", "json")), &cl)
	json.Unmarshal([]byte(api("/api/v1/labels")), &al)
	if len(cl) != 20 || !reflect.DeepEqual(cl, al) {
		t.Errorf("labels: the CLI's %d differ from the API's %d:\n%+v\n%+v", len(cl), len(al), cl, al)
	}

	for _, e := range []string{"", ":rocksdb"} {
		c := cli("compare", "b1.cfg"+e, "b2.cfg"+e, "--format", "json")
		if a := api("/api/v1/compare?" + url.Values{"base": {"b1.cfg" + e}, "other": {"b2.cfg" + e}}.Encode()); c != a {
			t.Errorf("compare b1.cfg%s: the CLI's\n%s\nthe API's\n%s", e, c, a)
		}
		var cmp struct {
			Rows []struct{ Base struct{ N int } }
		}
		if json.Unmarshal([]byte(c), &cmp); len(cmp.Rows) != 1 || cmp.Rows[0].Base.N != 3 {
			t.Errorf("compare b1.cfg%s: %+v, want one row of 3 runs (one engine's)", e, cmp)
		}
		m := cli("metrics", "b1.cfg"+e, "b2.cfg"+e, "--format", "json")
		if a := api("/api/v1/metrics?label=b1.cfg" + url.QueryEscape(e) + ",b2.cfg" + url.QueryEscape(e)); m != a {
			t.Errorf("metrics b1.cfg%s: the CLI's\n%s\nthe API's\n%s", e, m, a)
		}
	}

	var cd struct {
		Series  int               `json:"series"`
		Changes []analysis.Change `json:"change_points"`
	}
	var ad struct{ Changes []analysis.Change }
	json.Unmarshal([]byte(cli("detect", "--format", "json")), &cd)
	json.Unmarshal([]byte(api("/api/v1/changes")), &ad)
	bySeries := func(cs []analysis.Change) {
		sort.Slice(cs, func(i, j int) bool {
			return cs[i].Series+fmt.Sprint(cs[i].Index) < cs[j].Series+fmt.Sprint(cs[j].Index)
		})
	}
	bySeries(cd.Changes)
	bySeries(ad.Changes)
	if !reflect.DeepEqual(cd.Changes, ad.Changes) {
		t.Errorf("change points: the CLI's\n%+v\nthe API's\n%+v", cd.Changes, ad.Changes)
	}
	var bee []analysis.Change
	for _, c := range cd.Changes {
		if c.Config == "cz11a_bee" {
			bee = append(bee, c)
		}
	}
	if len(bee) != 1 || !strings.Contains(bee[0].Series, "flavor=mariadb") || bee[0].Arrived.Build != "ma10.6.5" || bee[0].Kind != "regression" {
		t.Errorf("change points under cz11a_bee %+v: want MariaDB's regression in ma10.6.5 only, in a series of its own", bee)
	}

	dir := t.TempDir()
	cli("export", "otava-csv", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	exported := map[string]bool{}
	for _, f := range files {
		ss, err := history.Read(f, "time", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range history.OfMetrics(ss, []string{"qps"}) {
			exported[fmt.Sprint(values(s))] = true
		}
	}
	var ah struct{ Series []history.Series }
	json.Unmarshal([]byte(api("/api/v1/history?suite=sysbench&test=point-query_range%3D100")), &ah)
	if len(ah.Series) != 4 || len(files) != 4 {
		t.Errorf("history: %d series in the API, %d files exported; want 4 (MariaDB's and MySQL's under cz11a_bee, InnoDB's and MyRocks' under cfg)", len(ah.Series), len(files))
	}
	for _, s := range ah.Series {
		if !exported[fmt.Sprint(values(s))] {
			t.Errorf("the API's series %s %s (%v) is not what qpslab export wrote: %v", s.Config, s.Flavor, values(s), exported)
		}
	}
}

// values are a series' point values, rounded as the CSV writes them.
func values(s history.Series) []string {
	var out []string
	for _, p := range s.Points {
		out = append(out, fmt.Sprintf("%.2f", p.Value))
	}
	return out
}
