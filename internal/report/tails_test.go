package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/analysis"
)

// A label whose runs of a test have starved connections is named in
// compare, one line with the test, the label and the count; its response
// times at that count are shown marked "?" and their relative values are
// not called (not coloured); the other counts' still are.
func TestStarvedTailsNotCalled(t *testing.T) {
	sets := sweepSets()
	for i := range sets[1].Runs {
		if r := &sets[1].Runs[i]; r.Threads == 4 && i == 1 {
			r.Totals.Figures["starved"] = 3 // one of its three runs
		}
	}
	cmp, err := analysis.Compare(sets[0], sets[1:], analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := Comparison(&text, sets, cmp, "text"); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	want := "tails not called: point-query_range=100, 4 thread(s), ma1011.perconn: 3 of 4 connections completed nothing in the window (1 of 3 run(s)); its p95, p99 and max are not compared"
	if strings.Count(out, "tails not called:") != 1 || !strings.Contains(out, want) {
		t.Errorf("want one line %q in:\n%s", want, out)
	}
	for title, want := range map[string][]string{
		"point-query_range=100 by clients: p95 (ms)":                                {"label 1 4 16", "ma1011.pool 2 2.5 20", "ma1011.perconn 1.8 4 ? -"},
		"point-query_range=100 by clients: p95 (ms), relative to ma1011.pool":       {"label 1 4 16", "ma1011.perconn 0.90 1.60 ? -"},
		"point-query_range=100 by clients: tps (events/s), relative to ma1011.pool": {"label 1 4 16", "ma1011.perconn 1.10 0.84 -"},
	} {
		if got := tableOf(t, out, title); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", title, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	var md bytes.Buffer
	if err := Comparison(&md, sets, cmp, "md"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| ma1011.perconn | **0.90** | 1.60 ? | - |") {
		t.Errorf("markdown: the cut p95 is called:\n%s", md.String())
	}
	// The HTML report names the same test, label and count.
	var page bytes.Buffer
	if err := HTML(&page, Model{Comparison: cmp, Sweeps: analysis.Sweeps(sets), Tails: analysis.Tails(sets)}); err != nil {
		t.Fatal(err)
	}
	if h := page.String(); !strings.Contains(h, "<li>point-query_range=100, 4 thread(s), ma1011.perconn: 3 of 4 connections completed nothing in the window (1 of 3 run(s))") ||
		!strings.Contains(h, `<td class="num">1.60 ?</td>`) {
		t.Errorf("the HTML report lacks the tails line or the mark")
	}
	var js bytes.Buffer
	if err := Comparison(&js, sets, cmp, "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tails []analysis.TailWarning `json:"tails"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Tails) != 1 || doc.Tails[0].Starved != 3 || doc.Tails[0].Label != "ma1011.perconn" {
		t.Errorf("json tails %+v (%v)", doc.Tails, err)
	}
}
