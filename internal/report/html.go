package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
)

// WriteHTML writes the report to the file path.
func WriteHTML(path string, m Model) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600) // the owner's alone, as the results
	if err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if err := HTML(f, m); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the report %s: %w", path, err)
	}
	return nil
}

// HTML writes m as one self-contained HTML file (no external CSS, JS, fonts or images; viewable offline).
func HTML(w io.Writer, m Model) error {
	var b bytes.Buffer
	if err := htmlTemplate.Execute(&b, htmlBuildPage(m)); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// htmlPage is what the template shows; htmlBuildPage formats everything.
type htmlPage struct {
	Title     string
	Generated string
	Findings  template.HTML // FindingsHTML: what the numbers say, first
	Cmp       *htmlCmp
	RelCharts []template.HTML
	Steps     []stepView
	Sweeps    []htmlSweep
	Tails     []string // the tails-not-called lines (tailLines)
	Timelines []htmlTimeline
	Metrics   []htmlMetric
	Hosts     *htmlHosts
	Configs   *htmlConfigs
	Stacks    template.HTML // flame graphs and their diffs (flame.go)
}

type htmlCmp struct {
	Base          string
	Others        []string
	Shown         []string // the labels with their builds' versions, base first
	Layout        string
	Alpha         string
	Repeats       bool
	Worse, Better string
	Cols          int // of the table
	Rows          []htmlCmpRow
	Stats         []htmlStatsRow
	// Verdict leads the section: what changed beyond the noise; Legend
	// says how the relative values were measured and tested.
	Verdict []string
	Legend  []string
	Noise   bool // a NOISE column: the host's noise floor per test
}

// htmlCmpRow is a group header (Group set) or a test's row.
type htmlCmpRow struct {
	Group     string
	Test      string
	Threads   int
	Base      string
	BaseTitle string
	Unit      string
	Noise     string // the host's noise floor of the test, "-" where not calibrated
	Cells     []htmlCmpCell
}

type htmlCmpCell struct {
	Abs, AbsTitle     string
	Rel, Class, Title string
	Mark              string // "~": tested over repeats, no significant difference
}

type htmlStatsRow struct {
	Group, Label                    string
	Span                            int // rows the group cell spans; 0 below the first
	N                               int
	Avg, Median, Min, Max, Stddev   string
	AvgClass, MedianClass, GeoClass string
	Geomean                         string
}

type htmlTimeline struct {
	Title     string
	Rate, P99 template.HTML
	Rows      template.HTML // rows written per second, beside another headline (the Insert Benchmark's inserts)
	WriteKB   template.HTML // the disk's write KB/s in the same seconds, stalls shaded
}

type htmlMetric struct {
	Title       string
	Cols        int
	Names       []string
	Abs         []htmlMetricLine
	Rel         []htmlMetricLine
	HonestNames []string
	Honest      []htmlMetricLine
	Chart       template.HTML
	Server      *htmlServer // the server's own figures per op
	Stacks      string      // the anchor of the test's flame graphs, if it has some
}

type htmlMetricLine struct {
	Cells []string
	Label string
	N     int
	Op    string
}

type htmlHosts struct {
	Heads []string
	Rows  []htmlHostRow
	Full  []htmlHostFull
}

type htmlHostRow struct {
	Key    string
	Cells  [][]string
	Differ bool
}

type htmlHostFull struct {
	Head, JSON, Note string
}

type htmlConfigs struct {
	Base   Config
	Others []htmlConfigDiff
}

type htmlConfigDiff struct {
	Config
	Same  bool
	Lines []htmlDiffLine
}

type htmlDiffLine struct{ Class, Text string }

func htmlBuildPage(m Model) htmlPage {
	p := htmlPage{Title: m.Title}
	if p.Title == "" {
		p.Title = "qpslab report"
	}
	if !m.Generated.IsZero() {
		p.Generated = m.Generated.Format("2006-01-02 15:04:05 MST")
	}
	colour := htmlLabelColours(m)
	p.Findings = FindingsHTML(m.Findings)
	if c := m.Comparison; c != nil {
		p.Cmp = htmlComparison(c)
		p.RelCharts = htmlRelCharts(c, colour)
	}
	for _, t := range m.Timelines {
		p.Timelines = append(p.Timelines, htmlTimelineCharts(t, colour))
	}
	p.Steps = stepViews(m.Steps)
	p.Sweeps = htmlSweeps(m.Sweeps, colour)
	p.Tails = tailLines(m.Tails, m.Comparison != nil && m.Comparison.MixedConditions)
	for _, t := range m.Metrics {
		v := htmlMetrics(t)
		v.Stacks = stackAnchor(m.Stacks, t.Test, t.Threads)
		p.Metrics = append(p.Metrics, v)
	}
	p.Stacks = htmlStacks(m.Stacks)
	if len(m.Hosts) > 0 {
		p.Hosts = htmlHostsView(m.Hosts)
	}
	if len(m.Configs) > 0 {
		p.Configs = htmlConfigsView(m.Configs)
	}
	return p
}

// htmlLabelColours gives every label of the page its colour: the base first,
// then the others, then labels that only timelines or metrics name.
func htmlLabelColours(m Model) map[string]string {
	out := map[string]string{}
	add := func(l string) {
		if _, ok := out[l]; !ok {
			out[l] = svgColour(len(out))
		}
	}
	if c := m.Comparison; c != nil {
		add(c.Base)
		for _, o := range c.Others {
			add(o)
		}
	}
	for _, t := range m.Timelines {
		for _, s := range t.Series {
			add(s.Label)
		}
	}
	for _, t := range m.Metrics {
		for _, r := range t.Rows {
			add(r.Label)
		}
	}
	return out
}

// htmlNum formats an absolute value without exponent: whole from 100 on
// (12345, 990), else to four significant digits without trailing zeros
// (3.5, 0.01, 0.002346).
func htmlNum(v float64) string {
	if !htmlFinite(v) {
		return "-"
	}
	if math.Abs(v) >= 100 || v == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	d := min(3-int(math.Floor(math.Log10(math.Abs(v)))), 9)
	s := strconv.FormatFloat(v, 'f', d, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func htmlFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func htmlDec(v float64, d int) string {
	if !htmlFinite(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// htmlSummaryTitle explains a centre computed over repeats.
func htmlSummaryTitle(s analysis.Summary) string {
	missed := ""
	if s.Missed > 0 {
		missed = fmt.Sprintf("%d of %d run(s) missed the %s", s.Missed, s.N, s.MissedWhat)
	}
	if s.Stalled > 0 {
		missed = strings.TrimPrefix(missed+fmt.Sprintf("; %d of %d run(s) stalled, the longest %.0f s", s.Stalled, s.N, s.StallMax), "; ")
	}
	if s.N <= 1 {
		return missed
	}
	vs := make([]string, len(s.Values))
	for i, v := range s.Values {
		vs[i] = htmlNum(v)
	}
	t := fmt.Sprintf("median of %d: %s", s.N, strings.Join(vs, ", "))
	if htmlFinite(s.Lo) && htmlFinite(s.Hi) {
		t += fmt.Sprintf("; interval %s to %s", htmlNum(s.Lo), htmlNum(s.Hi))
	} else {
		t += "; too few values for an interval"
	}
	if missed != "" {
		t += "; " + missed
	}
	return t
}

func htmlComparison(c *analysis.Comparison) *htmlCmp {
	v := &htmlCmp{
		Base: c.Base, Others: c.Others, Repeats: c.Repeats,
		Layout: c.Layout + " groups", Alpha: strconv.FormatFloat(c.Alpha, 'g', -1, 64),
		Worse: htmlDec(analysis.Worse, 2), Better: htmlDec(analysis.Better, 2),
		Cols: 3 + 2*len(c.Others),
	}
	for i, l := range append([]string{c.Base}, c.Others...) {
		v.Shown = append(v.Shown, l+versionOf(c, i))
	}
	group := "\x00"
	for _, r := range c.Rows {
		if r.Group != group {
			group = r.Group
			v.Rows = append(v.Rows, htmlCmpRow{Group: group})
		}
		row := htmlCmpRow{Test: r.Test, Threads: r.Threads, Base: htmlNum(r.Base.Center) + htmlMissed(r.Base), BaseTitle: htmlSummaryTitle(r.Base), Unit: r.Unit, Noise: noiseCell(r)}
		for _, o := range r.Others {
			if o.Missing {
				row.Cells = append(row.Cells, htmlCmpCell{Abs: "-", Rel: "-", Title: "no result"})
				continue
			}
			cell := htmlCmpCell{Abs: htmlNum(o.Center) + htmlMissed(o.Summary), AbsTitle: htmlSummaryTitle(o.Summary), Rel: htmlDec(o.Rel, 2) + halfWidth(o.Verdict),
				Class: o.Verdict.Colour(), Mark: strings.TrimSpace(verdictMark(o.Verdict)), Title: verdictTitle(o.Verdict)}
			row.Cells = append(row.Cells, cell)
		}
		v.Rows = append(v.Rows, row)
	}
	stats := func(group string, per []analysis.Stats, geo []float64) {
		for i, label := range c.Others {
			if i >= len(per) {
				break
			}
			s := per[i]
			r := htmlStatsRow{Group: group, Label: label, N: s.N, Avg: "-", Median: "-", Min: "-", Max: "-", Stddev: "-"}
			if i == 0 {
				r.Span = len(c.Others)
			}
			if s.N > 0 {
				r.Avg, r.Median, r.Min, r.Max, r.Stddev = htmlDec(s.Avg, 2), htmlDec(s.Median, 2), htmlDec(s.Min, 2), htmlDec(s.Max, 2), htmlDec(s.Stddev, 3)
				r.AvgClass, r.MedianClass = analysis.Colour(s.Avg), analysis.Colour(s.Median)
			}
			if geo != nil && i < len(geo) {
				r.Geomean, r.GeoClass = htmlDec(geo[i], 2), analysis.Colour(geo[i])
			}
			v.Stats = append(v.Stats, r)
		}
	}
	for _, g := range c.Groups {
		stats(g.Name, g.Stats, groupGeomeans(c, g.Name))
	}
	stats("all", c.All, c.Geomean)
	var vb strings.Builder
	VerdictSummary(&vb, c)
	v.Verdict = strings.Split(strings.TrimSpace(vb.String()), "\n")
	v.Legend = verdictLegend(c)
	v.Noise = calibrated(c)
	if v.Noise {
		v.Cols++
	}
	return v
}

// verdictTitle says, on hover, how a relative value was measured and
// tested and what was concluded.
func verdictTitle(v analysis.Verdict) string {
	t := v.Kind
	switch v.Method {
	case analysis.MethodPaired:
		t += fmt.Sprintf(": %d paired rounds (%s) in %d repeat(s)", v.N, v.Pairing, v.Blocks)
		if v.Unit != "" && v.DF > 0 {
			t += fmt.Sprintf(", the interval on its %s (%g degrees of freedom)", v.Unit, v.DF)
		}
		if v.Pool != "" {
			t += "; pool " + v.Pool
		}
	case analysis.MethodRepeats:
		t += fmt.Sprintf(": %d unpaired repeats a side", v.N)
	case analysis.MethodSingle:
		t += fmt.Sprintf(": one run a side, %d seconds", v.N)
	case analysis.MethodNone:
		t = "no test possible (one value a side, no seconds): coloured by the ±5 % convention"
	}
	if v.Lo > 0 && v.Hi > 0 {
		t += fmt.Sprintf("; interval %.3f–%.3f", v.Lo, v.Hi)
	}
	if !math.IsNaN(v.P) {
		t += fmt.Sprintf("; p=%.3g (level %g)", v.P, v.Level)
	}
	if v.Method != analysis.MethodNone {
		t += fmt.Sprintf("; floor ±%.1f%%", 100*v.Floor)
		if v.Calibrated {
			t += " (this host's)"
		}
	}
	if v.Why != "" {
		t += "; " + v.Why
	}
	if v.More > 0 {
		t += fmt.Sprintf("; about %d more repeat(s) would decide it", v.More)
	}
	return t
}

// htmlMissed marks a value whose run missed its goal (the insert SLA).
func htmlMissed(s analysis.Summary) string { return marked(s) }

// htmlRelCharts draws a relative-QPS bar chart per group that has a value.
func htmlRelCharts(c *analysis.Comparison, colour map[string]string) []template.HTML {
	threads := map[int]bool{}
	for _, r := range c.Rows {
		threads[r.Threads] = true
	}
	var out []template.HTML
	for _, grp := range c.Groups { // the groups with a value, in layout order
		g := grp.Name
		var cats []string
		series := make([]svgBars, len(c.Others))
		for i, o := range c.Others {
			series[i] = svgBars{Name: o, Colour: colour[o]}
		}
		for _, r := range c.Rows {
			if r.Group != g {
				continue
			}
			cat := r.Test
			if len(threads) > 1 {
				cat += fmt.Sprintf(" %dt", r.Threads)
			}
			cats = append(cats, cat)
			for i := range series {
				v, tip := math.NaN(), cat+" "+c.Others[i]+": no result"
				if i < len(r.Others) && !r.Others[i].Missing {
					v = r.Others[i].Rel
					tip = fmt.Sprintf("%s %s: %s", cat, c.Others[i], htmlDec(v, 2))
				}
				series[i].Values = append(series[i].Values, v)
				series[i].Tips = append(series[i].Tips, tip)
			}
		}
		title := fmt.Sprintf("%s: QPS relative to %s", g, c.Base)
		if ch := svgBarChart(ChartHead{Name: "rel:" + g, Title: title, YLabel: "relative QPS"}, cats, series, true); ch != "" {
			out = append(out, ch)
		}
	}
	return out
}

func htmlTimelineCharts(t Timeline, colour map[string]string) htmlTimeline {
	name := fmt.Sprintf("%s:%d", t.Test, t.Threads)
	v := htmlTimeline{Title: fmt.Sprintf("%s, %d thread(s)", t.Test, t.Threads)}
	var rate, p99, rows, wkb []svgLine
	unit := ""
	for _, s := range t.Series {
		rate = append(rate, svgLine{Name: s.Label, Colour: colour[s.Label], Values: s.Rate, Marks: s.Stalls})
		if s.WriteKB != nil {
			wkb = append(wkb, svgLine{Name: s.Label, Colour: colour[s.Label], Values: s.WriteKB, Marks: s.Stalls})
		}
		p99 = append(p99, svgLine{Name: s.Label, Colour: colour[s.Label], Values: s.P99Ms})
		if s.Rows != nil {
			rows = append(rows, svgLine{Name: s.Label, Colour: colour[s.Label], Values: s.Rows})
		}
		if unit == "" {
			unit = s.Unit
		}
	}
	if unit == "" {
		unit = "per second"
	}
	v.Rate = svgLineChart(ChartHead{"rate:" + name, v.Title + ": throughput per second", unit}, rate)
	v.P99 = svgLineChart(ChartHead{"p99:" + name, v.Title + ": p99 response time per second", "p99 ms"}, p99)
	if len(rows) > 0 {
		v.Rows = svgLineChart(ChartHead{"rows:" + name, v.Title + ": rows inserted per second", "rows/s"}, rows)
	}
	if len(wkb) > 0 {
		v.WriteKB = svgLineChart(ChartHead{"wkb:" + name, v.Title + ": disk write KB/s per second (stalled seconds shaded)", "wKB/s"}, wkb)
	}
	return v
}

func htmlMetrics(t analysis.MetricTable) htmlMetric {
	v := htmlMetric{
		Title: fmt.Sprintf("%s, %d thread(s)", t.Test, t.Threads),
		Names: analysis.MetricNames(), HonestNames: analysis.HonestNames(),
		Cols: len(analysis.MetricNames()) + 1,
	}
	cats := make([]string, len(t.Rows))
	series := make([]svgBars, len(analysis.HonestNames()))
	for i, n := range analysis.HonestNames() {
		series[i] = svgBars{Name: strings.TrimSuffix(n, "_cpu_us/o"), Colour: svgColour(i)}
	}
	for ri, r := range t.Rows {
		line := func(vals []float64, n int, f func(int, float64) string) htmlMetricLine {
			l := htmlMetricLine{Label: r.Label, N: r.N, Op: r.Op}
			for j := 0; j < n; j++ {
				x := math.NaN()
				if j < len(vals) {
					x = vals[j]
				}
				l.Cells = append(l.Cells, f(j, x))
			}
			return l
		}
		v.Abs = append(v.Abs, line(r.Abs, len(analysis.MetricNames()), func(_ int, x float64) string { return htmlNum(x) }))
		if ri > 0 {
			v.Rel = append(v.Rel, line(r.Abs, len(analysis.MetricNames()), func(j int, _ float64) string {
				return r.RelAt(t.Rows[0], j)
			}))
		}
		v.Honest = append(v.Honest, line(r.Honest, len(analysis.HonestNames()), func(_ int, x float64) string { return htmlNum(x) }))
		cats[ri] = r.Label
		for i := range series {
			x := math.NaN()
			if i < len(r.Honest) {
				x = r.Honest[i]
			}
			series[i].Values = append(series[i].Values, x)
			series[i].Tips = append(series[i].Tips, fmt.Sprintf("%s %s: %s", r.Label, analysis.HonestNames()[i], htmlNum(x)))
		}
	}
	v.Chart = svgBarChart(ChartHead{fmt.Sprintf("cpu-us-op:%s:%d", t.Test, t.Threads), v.Title + ": CPU µs per op", "CPU µs/op"}, cats, series, false)
	v.Server = htmlServerOf(t)
	return v
}

// htmlHostKeys are the fingerprint fields shown side by side: required ones
// always, the others where some host has them.
var htmlHostKeys = []struct {
	key      string
	required bool
}{
	{"kernel", true}, {"cpu_model", true}, {"cpus", true}, {"mem_kb", true}, {"swap_kb", false},
	{"cpufreq_driver", true}, {"amd_pstate", false}, {"governor", false}, {"boost", false},
	{"intel_no_turbo", false}, {"smt_active", false}, {"transparent_hugepage", false},
	{"vm", true}, {"hypervisor", false}, {"steal_pct_since_boot", false}, {"risks", true}, {"agent", false},
}

func htmlHostsView(hs []Host) *htmlHosts {
	v := &htmlHosts{}
	objs := make([]map[string]any, len(hs))
	for i, h := range hs {
		head := fmt.Sprintf("host %d: %s", i+1, strings.Join(h.Labels, ", "))
		v.Heads = append(v.Heads, head)
		full := htmlHostFull{Head: head}
		if len(bytes.TrimSpace(h.Fingerprint)) == 0 {
			full.Note = "no fingerprint recorded"
		} else {
			d := json.NewDecoder(bytes.NewReader(h.Fingerprint))
			d.UseNumber()
			var obj map[string]any
			if err := d.Decode(&obj); err != nil {
				full.Note = "the fingerprint is not a JSON object: " + err.Error()
				full.JSON = string(h.Fingerprint)
			} else {
				objs[i] = obj
				var ind bytes.Buffer
				_ = json.Indent(&ind, h.Fingerprint, "", "  ") // it decoded, so it indents
				full.JSON = ind.String()
			}
		}
		v.Full = append(v.Full, full)
	}
	for _, k := range htmlHostKeys {
		row := htmlHostRow{Key: k.key}
		present := false
		for _, obj := range objs {
			cell, ok := htmlHostValue(obj, k.key)
			present = present || ok
			row.Cells = append(row.Cells, cell)
		}
		if !present && !k.required {
			continue
		}
		for _, c := range row.Cells[1:] {
			row.Differ = row.Differ || strings.Join(c, "\n") != strings.Join(row.Cells[0], "\n")
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// htmlHostValue is a fingerprint field as lines of text, and whether it is there.
func htmlHostValue(obj map[string]any, key string) ([]string, bool) {
	if obj == nil {
		return []string{"-"}, false
	}
	if key == "governor" { // per cpufreq policy
		ps, ok := obj["policies"].([]any)
		if !ok {
			return []string{"-"}, false
		}
		var gs []string
		for _, p := range ps {
			if m, ok := p.(map[string]any); ok {
				if g, ok := m["governor"].(string); ok && !slices.Contains(gs, g) {
					gs = append(gs, g)
				}
			}
		}
		if len(gs) == 0 {
			return []string{"-"}, false
		}
		return []string{strings.Join(gs, ", ")}, true
	}
	x, ok := obj[key]
	if !ok {
		return []string{"-"}, false
	}
	switch key {
	case "mem_kb", "swap_kb":
		if n, ok := x.(json.Number); ok {
			if kb, err := n.Float64(); err == nil {
				return []string{fmt.Sprintf("%s kB (%.1f GiB)", n, kb/(1<<20))}, true
			}
		}
	case "risks":
		rs, _ := x.([]any)
		if len(rs) == 0 {
			return []string{"none"}, true
		}
		var lines []string
		for _, r := range rs {
			if m, ok := r.(map[string]any); ok && m["name"] != nil {
				l := htmlJSONText(m["name"])
				if d := htmlJSONText(m["detail"]); d != "" && d != "-" {
					l += ": " + d
				}
				lines = append(lines, l)
				continue
			}
			lines = append(lines, htmlJSONText(r))
		}
		return lines, true
	}
	return []string{htmlJSONText(x)}, true
}

// htmlJSONText is a decoded JSON value as one line.
func htmlJSONText(x any) string {
	switch x := x.(type) {
	case nil:
		return "-"
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []any:
		ss := make([]string, len(x))
		for i, e := range x {
			ss[i] = htmlJSONText(e)
		}
		return strings.Join(ss, ", ")
	}
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

func htmlConfigsView(cs []Config) *htmlConfigs {
	v := &htmlConfigs{Base: cs[0]}
	for _, c := range cs[1:] {
		d := htmlConfigDiff{Config: c, Same: c.Content == cs[0].Content}
		if !d.Same {
			for _, l := range diffUnified(cs[0].Label+" "+cs[0].Name, c.Label+" "+c.Name, cs[0].Content, c.Content, 3) {
				cls := ""
				switch {
				case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
					cls = "hdr"
				case strings.HasPrefix(l, "@@"):
					cls = "hunk"
				case strings.HasPrefix(l, "-"):
					cls = "del"
				case strings.HasPrefix(l, "+"):
					cls = "add"
				}
				d.Lines = append(d.Lines, htmlDiffLine{Class: cls, Text: l})
			}
		}
		v.Others = append(v.Others, d)
	}
	return v
}

// htmlTemplate is the report's page (html.tmpl): what htmlBuildPage
// formats, laid out.
//
//go:embed html.tmpl
var htmlPageText string

// groupGeomeans are the geometric means of group g's relative values, per
// other label, from the rows the group's statistics describe (as "all"'s
// geomean is of every row's).
func groupGeomeans(c *analysis.Comparison, g string) []float64 {
	out := make([]float64, len(c.Others))
	for i := range c.Others {
		var rels []float64
		for _, r := range c.Rows {
			if r.Group == g && i < len(r.Others) && htmlFinite(r.Others[i].Rel) {
				rels = append(rels, r.Others[i].Rel)
			}
		}
		out[i] = math.NaN()
		if len(rels) > 0 {
			out[i] = result.GeoMean(rels)
		}
	}
	return out
}

// chartsScript counts the charts a browser drew (charts.js): inline in the
// report, served by the dashboard as /static/charts.js (ChartsScript).
//
//go:embed charts.js
var chartsScript string

// ChartsScript is the script that counts the charts a page drew, the
// report's and the dashboard's one.
func ChartsScript() string { return chartsScript }

var htmlTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"chartsScript": func() template.JS { return template.JS(chartsScript) }, // our own file, embedded
}).Parse(htmlPageText))
