package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

func textRun(test string, qps float64) result.Run {
	r := result.Run{Test: test, Threads: 1, Status: result.OK, Totals: result.Totals{Reported: qps, ReportedUnit: "qps"}}
	sysbench.Stamp(&r) // a test the suite does not know stays without a group, as such a stored run would
	return r
}

func textComparison(t *testing.T) *analysis.Comparison {
	t.Helper()
	base := analysis.Set{Label: "x.my8032_rel_o2nofp.z11a_c8r32", Runs: []result.Run{
		textRun("point-query_range=100", 1000), textRun("random-points_range=1000", 300), textRun("point-query.pre_range=100", 990),
		textRun("scan_range=100", 50), textRun("read-only_range=10", 800), textRun("update-index_range=100", 400), textRun("insert_range=100", 500),
	}}
	other := analysis.Set{Label: "x.my8403_rel_o2nofp.z11a_c8r32", Runs: []result.Run{
		textRun("point-query_range=100", 900), textRun("random-points_range=1000", 330), textRun("point-query.pre_range=100", 1000),
		textRun("scan_range=100", 50), textRun("read-only_range=10", 760), textRun("update-index_range=100", 500),
	}}
	c, err := analysis.Compare(base, []analysis.Set{other}, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The reference's sum_qps_csv.sh layout: inputs, blank line, header, then
// point tests, range tests, writes, each sorted by sb.r.qps file name.
func TestQPSTSVLayout(t *testing.T) {
	c := textComparison(t)
	var abs, rel bytes.Buffer
	Compare(&abs, c, "qps.abs", false)
	Compare(&rel, c, "qps.rel", false)
	wantAbs := "col-1 : x.my8032_rel_o2nofp.z11a_c8r32\ncol-2 : x.my8403_rel_o2nofp.z11a_c8r32\n\ncol-1\tcol-2\n" +
		"990\t1000\tpoint-query.pre_range=100\n" +
		"1000\t900\tpoint-query_range=100\n" +
		"300\t330\trandom-points_range=1000\n" +
		"800\t760\tread-only_range=10\n" +
		"50\t50\tscan_range=100\n" +
		"500\t\tinsert_range=100\n" +
		"400\t500\tupdate-index_range=100\n"
	if abs.String() != wantAbs {
		t.Errorf("qps.abs:\n%s\nwant:\n%s", abs.String(), wantAbs)
	}
	wantRel := "col-1 : x.my8032_rel_o2nofp.z11a_c8r32\ncol-2 : x.my8403_rel_o2nofp.z11a_c8r32\n\ncol-2\n" +
		"1.01\tpoint-query.pre_range=100\n0.90\tpoint-query_range=100\n1.10\trandom-points_range=1000\n" +
		"0.95\tread-only_range=10\n1.00\tscan_range=100\n\tinsert_range=100\n1.25\tupdate-index_range=100\n"
	if rel.String() != wantRel {
		t.Errorf("qps.rel:\n%s\nwant:\n%s", rel.String(), wantRel)
	}
}

func TestCompareFormats(t *testing.T) {
	c := textComparison(t)
	var text, col, md, js, csv bytes.Buffer
	Compare(&text, c, "text", false)
	Compare(&col, c, "text", true)
	Compare(&md, c, "md", false)
	Compare(&csv, c, "csv", false)
	if err := Compare(&js, c, "json", false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"point-query_range=100", "0.90", "[writes]", "geomean", "MEDIAN", "STDDEV"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "\x1b[") || !strings.Contains(col.String(), "\x1b[41;97m0.90") || !strings.Contains(col.String(), "\x1b[42;30m1.25") {
		t.Errorf("colours: plain has escapes, or the terminal lacks red 0.90 / green 1.25:\n%q", col.String())
	}
	if !strings.Contains(md.String(), "| point-query_range=100 | 1 |") || !strings.Contains(md.String(), "**0.90**") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var v map[string]any
	if err := json.Unmarshal(js.Bytes(), &v); err != nil || v["base"] != c.Base {
		t.Errorf("json: %v %v", err, v["base"])
	}
	if lines := strings.Count(csv.String(), "\n"); lines != 1+len(c.Rows) {
		t.Errorf("csv has %d lines for %d rows", lines, len(c.Rows))
	}
}

// --format offers what a command names from the registry and refuses the
// rest (and a format the registry lacks) in one line, before anything runs.
func TestFormatFlag(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var f string
	FormatFlag(fs, &f, "text", "json", "md")
	if f != "text" {
		t.Errorf("default %q, want the first offered", f)
	}
	if err := fs.Parse([]string{"--format", "markdown"}); err != nil || f != "md" {
		t.Errorf("markdown: %q %v", f, err)
	}
	for _, bad := range []string{"csv", "xml", "json\n"} {
		err := fs.Parse([]string{"--format", bad})
		if err == nil || !strings.Contains(err.Error(), "use one of text, json, md") {
			t.Errorf("--format %q: %v", bad, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a format the registry lacks was offered")
		}
	}()
	FormatFlag(pflag.NewFlagSet("y", pflag.ContinueOnError), &f, "text", "yaml")
}

// JSON leaves out what encoding/json leaves out: omitempty's empty
// values and omitzero's zero ones (a time not yet set).
func TestJSONOmits(t *testing.T) {
	var buf bytes.Buffer
	v := struct {
		Started time.Time `json:"started"`
		Ended   time.Time `json:"ended,omitzero"`
		Note    string    `json:"note,omitempty"`
		N       float64   `json:"n"`
	}{Started: time.Unix(0, 0).UTC(), N: math.NaN()}
	if err := JSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(buf.String()), ""); got != `{"n":null,"started":"1970-01-01T00:00:00Z"}` {
		t.Errorf("JSON wrote %s", got)
	}
}

// Two repeats give an infinite interval, a missing test a NaN: JSON holds
// them as null instead of failing.
func TestJSONWithNonFiniteValues(t *testing.T) {
	a := analysis.Set{Label: "a.c", Runs: []result.Run{textRun("point-query_range=100", 100), textRun("point-query_range=100", 110), textRun("scan_range=100", 5)}}
	b := analysis.Set{Label: "b.c", Runs: []result.Run{textRun("point-query_range=100", 90), textRun("point-query_range=100", 95)}}
	c, err := analysis.Compare(a, []analysis.Set{b}, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Compare(&buf, c, "json", false); err != nil {
		t.Fatalf("compare json: %v", err)
	}
	var v struct {
		Rows []struct {
			Test   string
			Base   map[string]any
			Others []map[string]any `json:"others"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil || len(v.Rows) != 2 {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if v.Rows[0].Base["hi"] != nil || v.Rows[0].Others[0]["rel"] == nil || v.Rows[1].Others[0]["rel"] != nil || v.Rows[1].Others[0]["missing"] != true {
		t.Errorf("rows: %+v", v.Rows)
	}
	hw := &result.HW{Samples: 3, OpsPerSec: 10, CPUPerOp: 0.1}
	tables, err := analysis.Metrics([]analysis.Set{
		{Label: "a.c", Runs: []result.Run{{Test: "scan_range=100", Threads: 1, Status: result.OK, HW: hw}, {Test: "insert_range=100", Threads: 1, Status: result.OK, HW: hw}}},
		{Label: "b.c", Runs: []result.Run{{Test: "scan_range=100", Threads: 1, Status: result.OK, HW: hw}}},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := Metrics(&buf, tables, "json"); err != nil || !strings.Contains(buf.String(), "null") {
		t.Errorf("metrics json: %v\n%s", err, buf.String())
	}
}
