package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
	"github.com/qpslab/qpslab/internal/workload/sysbench"
)

const (
	htmlBase  = "mariadb-10.11.6.default"
	htmlNew   = "mariadb-11.4.2.default"
	htmlTuned = "mariadb-11.4.2.tuned"
)

func htmlRuns(test string, unit string, vals ...float64) []result.Run {
	var out []result.Run
	for _, v := range vals {
		r := result.Run{Test: test, Threads: 1, Status: result.OK, Totals: result.Totals{Reported: v, ReportedUnit: unit}}
		sysbench.Stamp(&r) // a test the suite does not know stays without a group, as such a stored run would
		out = append(out, r)
	}
	return out
}

func htmlSeq(start float64, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = start + float64(i)
	}
	return v
}

// htmlTestModel is a comparison over all five groups of the 5-group layout:
// reds, greens, a missing cell, repeats without a significant difference
// (~) and with one, two timelines (one with a gap, one without p99
// samples), two metric tables, two hosts and three configs.
func htmlTestModel(t *testing.T) Model {
	t.Helper()
	var b, o1, o2 []result.Run
	add := func(test, unit string, base, one, two []float64) {
		b = append(b, htmlRuns(test, unit, base...)...)
		o1 = append(o1, htmlRuns(test, unit, one...)...)
		o2 = append(o2, htmlRuns(test, unit, two...)...)
	}
	add("point-query.pre_range=100", "qps", []float64{1000}, []float64{900}, []float64{1000})                    // red, -
	add("random-points.pre_range=1000", "qps", []float64{500}, []float64{560}, []float64{510})                   // green, -
	add("read-only.pre_range=10", "qps", []float64{2000}, []float64{2000}, []float64{2200})                      // -, green
	add("update-index_range=100", "qps", []float64{800}, []float64{600}, []float64{880})                         // red, green
	add("point-query_range=100", "qps", []float64{1000, 1010, 990}, []float64{1005, 995, 1000}, []float64{1200}) // ~, green
	add("random-points_range=1000", "qps", htmlSeq(400, 5), htmlSeq(480, 5), []float64{300})                     // green significant, red
	add("scan_range=100", "Krows/s", []float64{3.5}, []float64{3.6}, nil)                                        // -, missing
	add("read-only_range=10", "qps", []float64{1800}, []float64{1700}, []float64{1800})                          // red, -
	c, err := analysis.Compare(analysis.Set{Label: htmlBase, Runs: b},
		[]analysis.Set{{Label: htmlNew, Runs: o1}, {Label: htmlTuned, Runs: o2}}, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The fixture must be what the assertions assume.
	var groups []string
	for _, r := range c.Rows {
		groups = append(groups, r.Test+"/"+r.Group)
	}
	want := "point-query.pre_range=100/point-1 point-query_range=100/point-1 random-points.pre_range=1000/point-2 " +
		"random-points_range=1000/point-2 scan_range=100/range-1 read-only.pre_range=10/range-2 " +
		"read-only_range=10/range-2 update-index_range=100/writes"
	if got := strings.Join(groups, " "); got != want {
		t.Fatalf("fixture rows:\n got %s\nwant %s", got, want)
	}

	nan := math.NaN()
	rate := func(level float64, n int, gap ...int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = level + float64(i%7)*3
		}
		for _, g := range gap {
			v[g] = nan
		}
		return v
	}
	allNaN := []float64{nan, nan, nan, nan, nan}
	timelines := []Timeline{
		{Test: "point-query_range=100", Threads: 1, Series: []Series{
			{Label: htmlBase, Unit: "statements/s", Rate: rate(1000, 60, 10, 11, 12, 30, 32), P99Ms: rate(0.4, 60, 10, 11, 12)},
			{Label: htmlNew, Unit: "statements/s", Rate: rate(1003, 58), P99Ms: rate(0.5, 58, 20)},
		}},
		{Test: "update-index_range=100", Threads: 1, Series: []Series{
			{Label: htmlBase, Unit: "statements/s", Rate: []float64{800, 810, nan, 790, 805}, P99Ms: allNaN},
		}},
	}
	metrics := []analysis.MetricTable{
		{Test: "point-query_range=100", Threads: 1, Rows: []analysis.MetricRow{
			{Label: htmlBase, N: 3, Op: "statement", Abs: []float64{0.002346, 4.5, 0, 0, 0.12, 1000}, Honest: []float64{95, 60, 20}},
			{Label: htmlNew, N: 3, Op: "statement", Abs: []float64{0.002581, 4.5, 0, 0.5, 0.06, 1000}, Honest: []float64{104.6, 66, 21}},
			{Label: htmlTuned, N: 0, Abs: []float64{nan, nan, nan, nan, nan, nan}, Honest: []float64{nan, nan, nan}},
		}},
		{Test: "update-index_range=100", Threads: 1, Rows: []analysis.MetricRow{
			{Label: htmlBase, N: 1, Op: "statement", Abs: []float64{0.01, 12, 0.1, 1.6, 9.5, 800}, Honest: []float64{480, 300, 40}},
			{Label: htmlTuned, N: 1, Op: "statement", Abs: []float64{0.009, 11, 0.08, 1.3, 8.1, 880}, Honest: []float64{440, 280, 39}},
		}},
	}
	hosts := []Host{
		{Labels: []string{htmlBase, htmlNew}, Fingerprint: json.RawMessage(`{"kernel":"6.1.0-18-amd64","cpu_model":"AMD Ryzen 7 7735HS with Radeon Graphics","cpus":16,"mem_kb":32500000,"cpufreq_driver":"acpi-cpufreq","policies":[{"cpu":"cpu0","driver":"acpi-cpufreq","governor":"performance"}],"swap_kb":0,"vm":false,"steal_pct_since_boot":0,"risks":[]}`)},
		{Labels: []string{htmlTuned}, Fingerprint: json.RawMessage(`{"kernel":"6.8.0-40-generic","cpu_model":"AMD Ryzen 7 7735HS with Radeon Graphics","cpus":16,"mem_kb":32500000,"cpufreq_driver":"none","swap_kb":0,"vm":true,"hypervisor":"KVM","steal_pct_since_boot":3.2,"risks":[{"name":"steal","detail":"3.2% steal since boot","fix":"run on bare metal"},{"name":"vm","detail":"a virtual machine","fix":"-"}]}`)},
	}
	baseCnf := "[mysqld]\ninnodb_buffer_pool_size=1G\ninnodb_log_file_size=1G\nmax_connections=200\nperformance_schema=0\nskip_log_bin\n"
	tunedCnf := "[mysqld]\ninnodb_buffer_pool_size=4G\ninnodb_log_file_size=1G\nmax_connections=200\nperformance_schema=0\nskip_log_bin\ninnodb_flush_log_at_trx_commit=2\n"
	configs := []Config{
		{Label: htmlBase, Name: "default@1a2b3c", Content: baseCnf},
		{Label: htmlNew, Name: "default@1a2b3c", Content: baseCnf},
		{Label: htmlTuned, Name: "tuned@9f8e7d", Content: tunedCnf},
	}
	return Model{
		Title: "MariaDB 10.11.6 vs 11.4.2", Generated: time.Date(2025, 11, 22, 3, 4, 5, 0, time.UTC),
		Comparison: c, Metrics: metrics, Timelines: timelines, Hosts: hosts, Configs: configs,
	}
}

// htmlWantCharts is every chart htmlTestModel draws: a relative-QPS chart per
// group, throughput and p99 per timeline (but no p99 without samples) and
// CPU per op per metric table.
var htmlWantCharts = []string{
	"rel:point-1", "rel:point-2", "rel:range-1", "rel:range-2", "rel:writes",
	"rate:point-query_range=100:1", "p99:point-query_range=100:1", "rate:update-index_range=100:1",
	"cpu-us-op:point-query_range=100:1", "cpu-us-op:update-index_range=100:1",
}

func htmlRender(t *testing.T, m Model) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// htmlRow is the <tr> of test in the comparison table.
func htmlRow(t *testing.T, page, test string) string {
	t.Helper()
	i := strings.Index(page, "<tr><td>"+test+"</td>")
	if i < 0 {
		t.Fatalf("no comparison row for %s", test)
	}
	j := strings.Index(page[i:], "</tr>")
	return page[i : i+j]
}

var htmlRelCell = regexp.MustCompile(`<td class="num rel( red| green)?"[^>]*>([^<]*)(?:<span class="mark">([^<]*)</span>)?</td>`)

func TestHTMLComparison(t *testing.T) {
	m := htmlTestModel(t)
	page := htmlRender(t, m)
	for _, s := range []string{m.Title, "2025-11-22 03:04:05 UTC", htmlBase, htmlNew, htmlTuned, "5 groups", "Alpha 0.05"} {
		if !strings.Contains(page, s) {
			t.Errorf("header lacks %q", s)
		}
	}
	for _, r := range m.Comparison.Rows {
		if !strings.Contains(page, ">"+r.Test+"<") {
			t.Errorf("no test label %s", r.Test)
		}
	}
	for _, g := range []string{"point-1", "point-2", "range-1", "range-2", "writes", "all"} {
		if !strings.Contains(page, `<tr class="group"><th colspan="7">`+g+`</th></tr>`) && g != "all" {
			t.Errorf("no group header row for %s", g)
		}
		if !regexp.MustCompile(`<th rowspan="2">` + g + `</th>`).MatchString(page) {
			t.Errorf("no group statistics for %s", g)
		}
	}
	// Per row: the colour, value and verdict mark of each other label's
	// relative cell. One value a side (no seconds): nothing to test with,
	// coloured by the ±5 % convention, no mark; three repeats a side,
	// unpaired: "?", Mann-Whitney cannot reach 0.05; five a side, a 20 %
	// change: "+", green.
	for test, want := range map[string]string{
		"point-query.pre_range=100":    "red 0.90| 1.00",
		"random-points.pre_range=1000": "green 1.12| 1.02",
		"read-only.pre_range=10":       " 1.00|green 1.10",
		"update-index_range=100":       "red 0.75|green 1.10",
		"point-query_range=100":        " 1.00?|green 1.20",
		"random-points_range=1000":     "green 1.20+|red 0.75",
		"scan_range=100":               " 1.03| -",
		"read-only_range=10":           "red 0.94| 1.00",
	} {
		row := htmlRow(t, page, test)
		var got []string
		for _, mm := range htmlRelCell.FindAllStringSubmatch(row, -1) {
			got = append(got, strings.TrimSpace(mm[1])+" "+mm[2]+html.UnescapeString(mm[3]))
		}
		if strings.Join(got, "|") != want {
			t.Errorf("%s: relative cells %q, want %q\n%s", test, strings.Join(got, "|"), want, row)
		}
	}
	row := htmlRow(t, page, "point-query_range=100")
	if !strings.Contains(row, "cannot tell: 3 unpaired repeats a side") || !strings.Contains(row, "too few for the Mann-Whitney test to reach p &lt; 0.05") {
		t.Errorf("no evidence on the ? cell:\n%s", row)
	}
	if row := htmlRow(t, page, "random-points_range=1000"); !regexp.MustCompile(`title="better: 5 unpaired repeats a side; p=0\.00\d+ \(level 0\.05\)`).MatchString(row) {
		t.Errorf("no significant p-value on random-points_range=1000:\n%s", row)
	}
	if !strings.Contains(page, "1 test(s) changed beyond the noise (0 worse, 1 better)") {
		t.Errorf("the comparison does not lead with its verdict")
	}
	if row := htmlRow(t, page, "scan_range=100"); !strings.Contains(row, `3.5 <span class="unit">Krows/s</span>`) || !strings.Contains(row, `<td class="num">-</td><td class="num rel" title="no result">-</td>`) {
		t.Errorf("scan row: unit or missing cell:\n%s", row)
	}
	// Group statistics: writes has 0.75 and 1.10, all has 8 and 7 values.
	stats := regexp.MustCompile(`<th rowspan="2">writes</th><td>` + regexp.QuoteMeta(htmlNew) + `</td><td class="num">1</td><td class="num red">0.75</td>`)
	if !stats.MatchString(page) {
		t.Error("writes statistics missing or uncoloured")
	}
	all := regexp.MustCompile(`<th rowspan="2">all</th><td>` + regexp.QuoteMeta(htmlNew) + `</td><td class="num">8</td>.*?</tr>\s*<tr><td>` + regexp.QuoteMeta(htmlTuned) + `</td><td class="num">7</td>`)
	if !all.MatchString(page) {
		t.Error("all statistics: want n=8 and n=7")
	}
	geo := htmlDec(m.Comparison.Geomean[0], 2)
	if !strings.Contains(page, ">"+geo+"</td></tr>") {
		t.Errorf("no geomean %s", geo)
	}
}

func TestHTMLSections(t *testing.T) {
	m := htmlTestModel(t)
	page := htmlRender(t, m)
	text := html.UnescapeString(page)

	// Hardware: the seeds' columns with the label last, relative rows, honest CPU.
	if !strings.Contains(page, "<th>cpu/o</th><th>cs/o</th><th>r/o</th><th>rKB/o</th><th>wKB/o</th><th>o/s</th><th>label</th>") {
		t.Error("no per-op header")
	}
	for _, s := range []string{
		`<td class="num">0.002346</td><td class="num">4.5</td><td class="num">0</td><td class="num">0</td><td class="num">0.12</td><td class="num">1000</td><td>` + htmlBase + `</td>`,
		"relative to first result",
		// cpu/o 1.10, cs/o 1.00, r/o 0/0 = 1, rKB/o x/0 = inf, wKB/o 0.50, o/s 1.00
		`<td class="num">1.10</td><td class="num">1.00</td><td class="num">1</td><td class="num">inf</td><td class="num">0.50</td><td class="num">1.00</td><td>` + htmlNew + `</td>`,
		`<td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td><td class="num">-</td><td>` + htmlTuned + `</td>`,
		"<th>host_cpu_us/o</th><th>server_cpu_us/o</th><th>client_cpu_us/o</th>",
		`<td>` + htmlNew + `</td><td class="num">3</td><td>statement</td><td class="num">105</td><td class="num">66</td><td class="num">21</td>`,
	} {
		if !strings.Contains(page, s) {
			t.Errorf("hardware section lacks %s", s)
		}
	}
	// Hosts: the key fields side by side, differences marked, full JSON.
	for _, s := range []string{
		"host 1: " + htmlBase + ", " + htmlNew, "host 2: " + htmlTuned,
		"<th>kernel</th><td>6.1.0-18-amd64</td><td>6.8.0-40-generic</td>",
		"<th>cpu_model</th><td>AMD Ryzen 7 7735HS with Radeon Graphics</td>",
		"<th>cpus</th><td>16</td><td>16</td>", "32500000 kB (31.0 GiB)",
		"<th>cpufreq_driver</th><td>acpi-cpufreq</td><td>none</td>",
		"<th>governor</th><td>performance</td><td>-</td>",
		"<th>vm</th><td>no</td><td>yes</td>",
		"<th>risks</th><td>none</td><td>steal: 3.2% steal since boot<br>vm: a virtual machine</td>",
		`<details><summary>host 2: ` + htmlTuned + `: full fingerprint</summary>`,
	} {
		if !strings.Contains(text, s) {
			t.Errorf("hosts section lacks %s", s)
		}
	}
	if !strings.Contains(page, `<tr class="differ"><th>kernel</th>`) || strings.Contains(page, `<tr class="differ"><th>cpus</th>`) {
		t.Error("differing host fields not marked (or equal ones marked)")
	}
	if !strings.Contains(text, "\n  \"hypervisor\": \"KVM\",\n") {
		t.Error("full fingerprint is not pretty-printed")
	}
	// Configs: identical to the base, and a unified diff.
	if !strings.Contains(page, "<h3>"+htmlNew+" default@1a2b3c</h3>\n<p>same config as base</p>") {
		t.Error("no same-config note for " + htmlNew)
	}
	for _, s := range []string{
		`<span class="hdr">--- ` + htmlBase + ` default@1a2b3c</span>`,
		`<span class="hdr">+++ ` + htmlTuned + ` tuned@9f8e7d</span>`,
		`<span class="hunk">@@ -1,6 +1,7 @@</span>`,
		`<span class=""> [mysqld]</span>`,
		`<span class="del">-innodb_buffer_pool_size=1G</span>`,
		`<span class="add">+innodb_buffer_pool_size=4G</span>`,
		`<span class=""> innodb_log_file_size=1G</span>`,
		`<span class="add">+innodb_flush_log_at_trx_commit=2</span>`,
	} {
		if !strings.Contains(text, s) {
			t.Errorf("config diff lacks %s", s)
		}
	}
	if strings.Contains(text, "-innodb_log_file_size") || strings.Contains(text, "+max_connections") {
		t.Error("unchanged lines in the diff as changes")
	}
}

func TestHTMLSelfContained(t *testing.T) {
	page := htmlRender(t, htmlTestModel(t))
	low := strings.ToLower(page)
	for _, bad := range []string{`src="http`, `href="http`, `src='http`, `href='http`, "<link", "@import", "url(", "<script src", "<img", "<iframe"} {
		if strings.Contains(low, bad) {
			t.Errorf("external reference %q", bad)
		}
	}
	if n := strings.Count(low, "<script"); n != 1 {
		t.Errorf("%d scripts, want 1", n)
	}
}

// A report written to a file is its owner's alone (0600), as the results
// it shows are.
func TestHTMLFileIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.html")
	if err := WriteHTML(path, htmlTestModel(t)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, mode %v, want 0600", path, err, fi.Mode())
	}
}

var htmlSVGRE = regexp.MustCompile(`(?s)<svg\b.*?</svg>`)

// htmlCharts parses each <svg> of page as XML and returns its data-chart name.
func htmlCharts(t *testing.T, page string) (names []string, docs []string) {
	t.Helper()
	for _, s := range htmlSVGRE.FindAllString(page, -1) {
		d := xml.NewDecoder(strings.NewReader(s))
		var name, class string
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("SVG is not XML: %v\n%.300s", err, s)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
				for _, a := range se.Attr {
					switch a.Name.Local {
					case "data-chart":
						name = a.Value
					case "class":
						class = a.Value
					}
				}
			}
		}
		if class != "chart" || name == "" {
			t.Errorf("svg without class chart or data-chart: %.200s", s)
		}
		names, docs = append(names, name), append(docs, s)
	}
	return names, docs
}

func TestHTMLCharts(t *testing.T) {
	m := htmlTestModel(t)
	page := htmlRender(t, m)
	names, docs := htmlCharts(t, page)
	if strings.Join(names, " ") != strings.Join(htmlWantCharts, " ") {
		t.Errorf("charts:\n got %v\nwant %v", names, htmlWantCharts)
	}
	for i, name := range names {
		doc := docs[i]
		if !strings.Contains(doc, `class="mark"`) {
			t.Errorf("%s: no marks", name)
		}
		switch {
		case strings.HasPrefix(name, "rel:"):
			// The y axis starts above 0 and below the lowest value and 1.0; a
			// reference line at 1.0; a bar per test and label.
			var ticks []float64
			for _, mm := range regexp.MustCompile(`<text class="tick"[^>]*>([^<]+)</text>`).FindAllStringSubmatch(doc, -1) {
				v, err := strconv.ParseFloat(mm[1], 64)
				if err != nil {
					t.Fatal(err)
				}
				ticks = append(ticks, v)
			}
			group := strings.TrimPrefix(name, "rel:")
			lo, bars := 1.0, 0
			for _, r := range m.Comparison.Rows {
				if r.Group != group {
					continue
				}
				if !strings.Contains(doc, ">"+r.Test+"</text>") {
					t.Errorf("%s: no x label %s", name, r.Test)
				}
				for _, c := range r.Others {
					if !c.Missing {
						lo, bars = math.Min(lo, c.Rel), bars+1
					}
				}
			}
			if len(ticks) < 2 || ticks[0] <= 0 || ticks[0] >= lo || !slices.Contains(ticks, 1) {
				t.Errorf("%s: y ticks %v, want from above 0 to below %v, and 1", name, ticks, lo)
			}
			if n := strings.Count(doc, `<rect class="mark"`); n != bars {
				t.Errorf("%s: %d bars, want %d", name, n, bars)
			}
			if !strings.Contains(doc, `<line class="ref"`) || !strings.Contains(doc, "rotate(-45") {
				t.Errorf("%s: no reference line or rotated labels", name)
			}
			for _, l := range m.Comparison.Others {
				if !strings.Contains(doc, ">"+l+"</text>") {
					t.Errorf("%s: legend lacks %s", name, l)
				}
			}
		case name == "rate:point-query_range=100:1":
			// base: a gap at 10-12 and at 30 and 32 (31 alone is a dot); newLabel: none.
			paths := regexp.MustCompile(`<path class="mark" d="([^"]+)"`).FindAllStringSubmatch(doc, -1)
			if len(paths) != 2 || strings.Count(paths[0][1], "M") != 3 || strings.Count(paths[1][1], "M") != 1 {
				t.Errorf("%s: want a line broken at the gaps and an unbroken one: %v", name, paths)
			}
			if strings.Count(doc, "<circle class=\"mark\"") != 1 {
				t.Errorf("%s: the isolated second 31 is not a dot", name)
			}
			if strings.Contains(doc, "NaN") {
				t.Errorf("%s: NaN in the SVG", name)
			}
		}
	}
	if !strings.Contains(page, "No p99 samples.") {
		t.Error("no note for the timeline without p99 samples")
	}
}

func TestHTMLEscapes(t *testing.T) {
	c, err := analysis.Compare(
		analysis.Set{Label: `a<q1>.c"`, Runs: htmlRuns(`x<script>alert(1)</script>&y`, "qps", 100)},
		[]analysis.Set{{Label: `o&<q2>.c`, Runs: htmlRuns(`x<script>alert(1)</script>&y`, "qps", 90)}}, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := Model{
		Title: "<script>alert(2)</script>", Comparison: c,
		Timelines: []Timeline{{Test: "t<&>", Threads: 2, Series: []Series{{Label: "<q3>", Rate: []float64{1, 2}, P99Ms: []float64{1, 2}}}}},
		Hosts:     []Host{{Labels: []string{"<q4>"}, Fingerprint: json.RawMessage(`{"kernel":"<q5>","risks":[{"name":"<q6>"}]}`)}, {Fingerprint: json.RawMessage(`not json <q7>`)}},
		Configs:   []Config{{Label: "a", Content: "<q8>\n"}, {Label: "b", Content: "<q9>\n"}},
	}
	page := htmlRender(t, m)
	for _, bad := range []string{"<script>alert", "<q", "t<&>"} {
		if strings.Contains(page, bad) {
			t.Errorf("unescaped %q", bad)
		}
	}
	names, _ := htmlCharts(t, page)
	if len(names) != 3 {
		t.Errorf("charts %v", names)
	}
	if !strings.Contains(page, "the fingerprint is not a JSON object") {
		t.Error("no note for a bad fingerprint")
	}
}

func TestHTMLEmpty(t *testing.T) {
	page := htmlRender(t, Model{})
	if !strings.Contains(page, "<title>qpslab report</title>") || strings.Contains(page, "<svg") {
		t.Error("an empty model should give a page without charts")
	}
}

func TestRelAxis(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		above0 bool // the axis must not start at 0
	}{{0.75, 1.2, true}, {1.02, 1.1, true}, {0.5, 0.9, true}, {0.98, 1.01, true}, {1, 1, true}, {0.3, 1.9, true}, {0.01, 3, false}, {0.2, 25, false}} {
		from, to, step := svgRelAxis(c.lo, c.hi)
		if from < 0 || (c.above0 && from == 0) || from >= math.Min(c.lo, 1) || to <= math.Max(c.hi, 1) || step <= 0 || (to-from)/step > 12 {
			t.Errorf("relAxis(%v, %v) = %v, %v, %v", c.lo, c.hi, from, to, step)
		}
	}
}

// diffLCS is the length of a longest common subsequence, by dynamic programming.
func diffLCS(a, b []string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				d[i][j] = d[i+1][j+1] + 1
			} else {
				d[i][j] = max(d[i+1][j], d[i][j+1])
			}
		}
	}
	return d[0][0]
}

func TestLineDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() []string {
		v := make([]string, r.IntN(12))
		for i := range v {
			v[i] = string(rune('a' + r.IntN(4)))
		}
		return v
	}
	for range 3000 {
		a, b := gen(), gen()
		es := diffLines(a, b)
		var ga, gb []string
		edits := 0
		for _, e := range es {
			switch e.kind {
			case diffEq:
				if a[e.a] != b[e.b] {
					t.Fatalf("%v %v: eq of different lines", a, b)
				}
				ga, gb = append(ga, a[e.a]), append(gb, b[e.b])
			case diffDel:
				ga, edits = append(ga, a[e.a]), edits+1
			case diffIns:
				gb, edits = append(gb, b[e.b]), edits+1
			}
		}
		if strings.Join(ga, "") != strings.Join(a, "") || strings.Join(gb, "") != strings.Join(b, "") {
			t.Fatalf("%v %v: the script does not rebuild them: %v", a, b, es)
		}
		if want := len(a) + len(b) - 2*diffLCS(a, b); edits != want {
			t.Fatalf("%v %v: %d edits, want %d", a, b, edits, want)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	var a, b []string
	for i := 1; i <= 20; i++ {
		a = append(a, "l"+strconv.Itoa(i))
	}
	b = append(b, a...)
	b[1] = "L2"                                               // a change near the top
	b = append(b[:15], append([]string{"new"}, b[15:]...)...) // an insertion after l15
	b = b[:len(b)-1]                                          // l20 removed
	got := diffUnified("a", "b", strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n", 3)
	want := []string{
		"--- a", "+++ b",
		"@@ -1,5 +1,5 @@", " l1", "-l2", "+L2", " l3", " l4", " l5",
		"@@ -13,8 +13,8 @@", " l13", " l14", " l15", "+new", " l16", " l17", " l18", " l19", "-l20",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if diffUnified("a", "b", "x\n", "x\n", 3) != nil {
		t.Error("equal texts differ")
	}
	if got := diffUnified("a", "b", "", "x\n", 3); strings.Join(got, "|") != "--- a|+++ b|@@ -0,0 +1 @@|+x" {
		t.Errorf("from empty: %q", got)
	}
}

// TestHTMLChromium renders the page in headless Chromium and requires every
// chart to be drawn (the page's script counts them into the body's data-
// attributes, which --dump-dom shows).
func TestHTMLChromium(t *testing.T) {
	bin := testenv.Chromium(t, "the HTML report is not rendered")
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := HTML(&b, htmlTestModel(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := htmlRunChromium(t, bin, dir, "file://"+file)
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	attr := func(name string) int {
		m := regexp.MustCompile(`\s` + name + `="(\d+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no %s on the body %q; chromium's stderr:\n%s", name, body, htmlTail(stderr, 2000))
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	rendered, total := attr("data-rendered"), attr("data-charts")
	if rendered != len(htmlWantCharts) || total != len(htmlWantCharts) {
		t.Errorf("chromium drew %d of %d charts, want %d of %d", rendered, total, len(htmlWantCharts), len(htmlWantCharts))
	}
}

func htmlTail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// htmlRunChromium dumps the DOM of url after load, with a fresh profile and
// HOME under dir (so nothing is written elsewhere), in a process group of
// its own, and leaves no process behind: not of that group, nor the crash
// handlers Chromium starts in sessions of their own (found by dir in their
// command line).
func htmlRunChromium(t *testing.T, bin, dir, url string) (dom, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless=new", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-dev-shm-usage", "--dump-dom", url)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	err := cmd.Wait()
	// Whatever the outcome, end the group (renderers, zygotes), then give
	// the crash handlers a moment to follow the browser out; kill what
	// stays, by pid, and fail.
	if kerr := syscall.Kill(-pgid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
		t.Errorf("kill chromium's process group %d: %v", pgid, kerr)
	}
	if left := htmlWaitGone(pgid, dir, 5*time.Second); len(left) > 0 {
		for _, p := range left {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		t.Errorf("chromium processes left behind (killed): %v", left)
		if left := htmlWaitGone(pgid, dir, 5*time.Second); len(left) > 0 {
			t.Errorf("chromium processes still running after SIGKILL: %v", left)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("chromium timed out; stderr:\n%s", htmlTail(errb.String(), 2000))
	}
	if err != nil {
		t.Fatalf("chromium: %v; stderr:\n%s", err, htmlTail(errb.String(), 2000))
	}
	return out.String(), errb.String()
}

type htmlProc struct {
	pid  int
	stat string
}

// htmlWaitGone waits until no live (non-zombie) process is in process group
// pgid or has dir in its command line, and returns those still there after
// d. It reads /proc; where there is none, it trusts the kill.
func htmlWaitGone(pgid int, dir string, d time.Duration) []htmlProc {
	deadline := time.Now().Add(d)
	for {
		var left []htmlProc
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
			s := string(b)
			i := strings.LastIndexByte(s, ')')
			if i < 0 {
				continue
			}
			f := strings.Fields(s[i+1:])
			if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if g, _ := strconv.Atoi(f[2]); g == pgid || bytes.Contains(cmdline, []byte(dir)) {
				left = append(left, htmlProc{pid, s[:i+1]})
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			sort.Slice(left, func(i, j int) bool { return left[i].pid < left[j].pid })
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}
