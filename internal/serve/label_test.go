package serve

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// A MyRocks run is listed under its own label, BUILD.CONFIG:rocksdb, on
// /runs, on its run page and by /api/v1/runs, with its engine; an InnoDB
// run of the same build and config keeps the label it always had, and
// the previous run of a label is one of that label.
func TestRunListsShowEngine(t *testing.T) {
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const test = "point-query_range=100"
	// InnoDB's runs at minutes 1 and 3, MyRocks' at 2 between them.
	runs := []result.Run{engineRun(t, "b1", "", test, 1, 1000), engineRun(t, "b1", "rocksdb", test, 2, 500), engineRun(t, "b1", "innodb", test, 3, 1000)}
	if _, err := st.Import(ctx, runs, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	ts := start(t, st, nil)

	var list struct {
		Total int
		Runs  []struct{ ID, Label, Engine string }
	}
	decode(t, ts.get(t, "/api/v1/runs?test="+url.QueryEscape(test)), &list)
	if list.Total != 3 || len(list.Runs) != 3 {
		t.Fatalf("/api/v1/runs: %d runs (%d listed), want 3: %+v", list.Total, len(list.Runs), list.Runs)
	}
	// Newest first: InnoDB's (engine recorded), MyRocks', InnoDB's (none
	// recorded, as before --engine).
	want := []struct{ label, engine string }{{"b1.cfg", "innodb"}, {"b1.cfg:rocksdb", "rocksdb"}, {"b1.cfg", ""}}
	for i, r := range list.Runs {
		if r.Label != want[i].label || r.Engine != want[i].engine {
			t.Errorf("/api/v1/runs lists run %s as %s (engine %q), want %s (engine %q)", r.ID, r.Label, r.Engine, want[i].label, want[i].engine)
		}
		var one struct{ Label string }
		if decode(t, ts.get(t, "/api/v1/runs/"+r.ID), &one); one.Label != want[i].label {
			t.Errorf("/api/v1/runs/%s: label %s, want %s", r.ID, one.Label, want[i].label)
		}
	}
	newest, rocks, oldest := list.Runs[0].ID, list.Runs[1].ID, list.Runs[2].ID

	page := ts.get(t, "/runs?test="+url.QueryEscape(test))
	if page.status != 200 {
		t.Fatalf("/runs: %d %s", page.status, page.body)
	}
	rows := regexp.MustCompile(`<tr><td><a href="/runs/([^"]+)">.*?</tr>`).FindAllStringSubmatch(page.body, -1)
	if len(rows) != 3 {
		t.Fatalf("/runs: %d rows, want 3:\n%s", len(rows), page.body)
	}
	for i, row := range rows {
		if row[1] != list.Runs[i].ID || !strings.Contains(row[0], `title="`+want[i].label+`"`) {
			t.Errorf("/runs row %d: %s, want run %s labelled %s", i, row[0], list.Runs[i].ID, want[i].label)
		}
	}

	for id, w := range map[string]struct{ label, prev string }{newest: {"b1.cfg", oldest}, rocks: {"b1.cfg:rocksdb", ""}} {
		page := ts.get(t, "/runs/"+id)
		if page.status != 200 {
			t.Fatalf("/runs/%s: %d %s", id, page.status, page.body)
		}
		lq := url.Values{"label": {w.label}}.Encode()
		if !strings.Contains(page.body, `<th>label</th><td><a href="/runs?`+strings.ReplaceAll(lq, "%3A", "%3a")+`"><bdi class="name" title="`+w.label+`">`) &&
			!strings.Contains(page.body, `<th>label</th><td><a href="/runs?`+lq+`"><bdi class="name" title="`+w.label+`">`) {
			t.Errorf("the page of run %s does not label it %s", id, w.label)
		}
		prev := regexp.MustCompile(`<th>previous run</th><td>(?:<a href="/runs/([^"]+)">)?`).FindStringSubmatch(page.body)
		if prev == nil {
			t.Fatalf("the page of run %s has no previous run", id)
		}
		if prev[1] != w.prev {
			t.Errorf("the page of run %s (%s) gives run %q as its label's previous run, want %q", id, w.label, prev[1], w.prev)
		}
		if w.prev == "" && !strings.Contains(page.body, "the first of "+w.label+" at") {
			t.Errorf("the page of run %s does not say it is the first of %s", id, w.label)
		}
	}
}
