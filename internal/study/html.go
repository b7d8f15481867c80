package study

import (
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/qpslab/qpslab/internal/report"
)

// Chart is one group's chart of relative QPS: the tests, a bar per build
// other than the base (report.RelBars, the y axis not from 0).
func (s *Study) Chart(group string) template.HTML {
	var cats []string
	var series []string
	vals := make([][]float64, len(s.Others))
	for _, i := range s.Others {
		series = append(series, s.Labels[i])
	}
	for _, r := range s.Cmp.Rows {
		if r.Group != group {
			continue
		}
		cats = append(cats, s.rowName(r.Test, r.Threads, r.Conditions))
		for j, c := range r.Others {
			v := c.Rel
			if c.Missing {
				v = math.NaN()
			}
			vals[j] = append(vals[j], v)
		}
	}
	return report.RelBars(report.ChartHead{Name: "rel-" + group, Title: group + ": relative QPS against " + s.Labels[s.Base], YLabel: "relative QPS"}, cats, series, vals)
}

type htmlCell struct {
	Text string
	Bold bool
}

type htmlSection struct {
	section
	Chart template.HTML
	Head  []string
	Rows  [][]htmlCell
}

// HTML writes the study as one self-contained page, its charts inline.
func (s *Study) HTML(w io.Writer) error {
	var secs []htmlSection
	for _, sec := range s.doc() {
		h := htmlSection{section: sec}
		if sec.Chart != "" {
			h.Chart = s.Chart(sec.Chart)
		}
		if t := sec.Table; t != nil && len(t.Rows) > 0 {
			h.Head = t.Head
			for _, r := range t.Rows {
				var row []htmlCell
				for _, c := range r {
					bold := strings.HasPrefix(c, "**") && strings.HasSuffix(c, "**") && len(c) > 4
					if bold {
						c = c[2 : len(c)-2]
					}
					row = append(row, htmlCell{c, bold})
				}
				h.Rows = append(h.Rows, row)
			}
		}
		secs = append(secs, h)
	}
	return page.Execute(w, map[string]any{"Title": s.title(), "Sections": secs, "ChartStyle": template.CSS(chartStyle)})
}

var page = template.Must(template.New("study").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f4f4f4}
pre{background:#f4f4f4;padding:1em;overflow-x:auto}
{{.ChartStyle}}
</style></head><body>
<h1>{{.Title}}</h1>
{{range .Sections}}
{{if .Title}}{{if eq .Level 2}}<h2>{{.Title}}</h2>{{else}}<h3>{{.Title}}</h3>{{end}}{{end}}
{{range .Text}}<p>{{.}}</p>{{end}}
{{if .Items}}<ul>{{range .Items}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Chart}}{{.Chart}}{{end}}
{{if .Head}}<table><thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td>{{if .Bold}}<b>{{.Text}}</b>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{range .After}}<p>{{.}}</p>{{end}}
{{if .Code}}<pre>{{range .Code}}{{.}}
{{end}}</pre>{{end}}
{{end}}
</body></html>
`))

// chartStyle is the charts' style, on the page and in each chart file.
const chartStyle = `.chart{display:block;margin:1em 0;font-family:system-ui,sans-serif}
.chart .ctitle{font-weight:bold;font-size:14px}
.chart .tick,.chart .xlabel,.chart .legend,.chart .alabel{font-size:11px}
.chart .grid{stroke:#e4e4e4}
.chart .axis{stroke:#444}
.chart .ref{stroke:#222;stroke-dasharray:4 3}`
