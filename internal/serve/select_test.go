package serve

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

// engineRun is a run of build.cfg at qps, in engine ("" for InnoDB).
func engineRun(t testing.TB, build, engine, test string, rep int, qps float64) result.Run {
	r := result.Run{SchemaVersion: result.SchemaVersion, Test: test, Build: build, Flavor: "mariadb", Version: "10.11.9",
		Config: "cfg@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK, Started: t0.Add(time.Duration(rep) * time.Minute),
		Host: fingerprint("a"), Params: map[string]string{"repeat": fmt.Sprint(rep)},
		Totals: result.Totals{Seconds: 2, Events: int64(qps * 2), Statements: int64(qps * 2), Reported: qps, ReportedUnit: "qps", QPS: qps, Series: result.SeriesStatements}}
	if engine != "" {
		r.Params["engine"] = engine
	}
	r.Samples = []result.Sample{{Second: 0, Events: int64(qps), Statements: int64(qps)}, {Second: 1, Events: int64(qps), Statements: int64(qps)}}
	if err := sysbench.Stamp(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// The dashboard's compare page and the API's compare select a label's
// engine as qpslab compare does: b.cfg is InnoDB's runs only, b.cfg:rocksdb
// MyRocks' only, though both ran under one build.config.
func TestCompareSeparatesEngines(t *testing.T) {
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var runs []result.Run
	for rep := 1; rep <= 3; rep++ {
		for _, test := range []string{"point-query_range=100", "update-index_range=100"} {
			runs = append(runs, engineRun(t, "b1", "", test, rep, 1000), engineRun(t, "b2", "", test, rep, 1100),
				engineRun(t, "b1", "rocksdb", test, rep, 500), engineRun(t, "b2", "rocksdb", test, rep, 550))
		}
	}
	if _, err := st.Import(ctx, runs, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	ts := start(t, st, nil)
	for _, c := range []struct {
		engine    string
		base, oth float64
	}{{"", 1000, 1100}, {":rocksdb", 500, 550}} {
		q := url.Values{"base": {"b1.cfg" + c.engine}, "other": {"b2.cfg" + c.engine}}
		var cmp struct {
			Rows []struct {
				Test, Conditions string
				Base             struct{ Center float64 }
				Others           []struct{ Center float64 }
			}
		}
		decode(t, ts.get(t, "/api/v1/compare?"+q.Encode()), &cmp)
		if len(cmp.Rows) != 2 {
			t.Errorf("API compare b1.cfg%s: %d rows, want 2 (one engine's tests): %+v", c.engine, len(cmp.Rows), cmp.Rows)
		}
		for _, r := range cmp.Rows {
			if r.Base.Center != c.base || len(r.Others) != 1 || r.Others[0].Center != c.oth {
				t.Errorf("API compare b1.cfg%s: %s [%s] compares %v with %+v, want %g with %g", c.engine, r.Test, r.Conditions, r.Base.Center, r.Others, c.base, c.oth)
			}
		}
		page := ts.get(t, "/compare?"+q.Encode())
		if page.status != 200 {
			t.Fatalf("compare page b1.cfg%s: %d %s", c.engine, page.status, page.body)
		}
		other := map[string]string{"": "550", ":rocksdb": "1,100"}[c.engine]
		if strings.Contains(page.body, other) {
			t.Errorf("the compare page of b1.cfg%s shows the other engine's %s", c.engine, other)
		}
	}
	for label, want := range map[string]int{"b1.cfg": 6, "b1.cfg:rocksdb": 6, "b1.cfg:innodb": 6, "b2.cfg:tokudb": 0} {
		var list struct{ Total int }
		decode(t, ts.get(t, "/api/v1/runs?label="+url.QueryEscape(label)), &list)
		if list.Total != want {
			t.Errorf("runs of %s: %d, want %d", label, list.Total, want)
		}
	}
	var list struct{ Runs []struct{ ID string } }
	decode(t, ts.get(t, "/api/v1/runs?label=b1.cfg:rocksdb"), &list)
	for _, r := range list.Runs {
		var one struct{ Run result.Run }
		if decode(t, ts.get(t, "/api/v1/runs/"+r.ID), &one); one.Run.StorageEngine() != "rocksdb" {
			t.Errorf("runs of b1.cfg:rocksdb list %s, a run of engine %q", r.ID, one.Run.StorageEngine())
		}
	}
}
