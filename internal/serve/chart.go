package serve

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
)

// A history chart is drawn on the server as SVG text. A long history is
// cut into as many spans of consecutive points as the plot has room for
// (maxBuckets), each drawn as its minimum-to-maximum bar and its mean, so
// that a page of 100,000 points holds a few hundred marks; zooming (a
// range of points, from and to in the page's address) draws the points
// themselves once few enough remain. Every string from the store goes
// through esc. No charting library draws server-side SVG with per-span
// aggregation and change-point marks; report's charts are for short
// per-label series.

// maxBuckets is the most spans a chart draws (about two pixels each).
const maxBuckets = 400

// Bucket is consecutive points of a series drawn as one.
type Bucket struct {
	From  int     `json:"from"` // the first point's index
	To    int     `json:"to"`   // the last point's index
	N     int     `json:"n"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	First string  `json:"first"` // the first and last points' builds (or times)
	Last  string  `json:"last"`
}

// pointName names a point on an axis: its build and version, or its time
// for a history of one build's runs.
func pointName(p history.Point, order string) string {
	if order == history.OrderTime && !p.Time.IsZero() {
		return p.Time.UTC().Format("2006-01-02 15:04")
	}
	if p.Version != "" && p.Version != p.Build {
		return p.Build + " " + p.Version
	}
	return p.Build
}

// aggregate cuts points [from, to) into at most n spans of equal length.
func aggregate(pts []history.Point, order string, from, to, n int) []Bucket {
	count := to - from
	if count <= 0 {
		return nil
	}
	size := (count + n - 1) / n
	var out []Bucket
	for i := from; i < to; i += size {
		j := min(i+size, to)
		b := Bucket{From: i, To: j - 1, N: j - i, Min: math.Inf(1), Max: math.Inf(-1), First: pointName(pts[i], order), Last: pointName(pts[j-1], order)}
		vals := make([]float64, 0, j-i)
		for _, p := range pts[i:j] {
			b.Min, b.Max = math.Min(b.Min, p.Value), math.Max(b.Max, p.Value)
			vals = append(vals, p.Value)
		}
		b.Mean = result.Mean(vals) // no overflow near the largest float
		out = append(out, b)
	}
	return out
}

// window is the part of a series a page shows: points [From, To).
type window struct{ From, To, N int }

// clampWindow reads from and to ("" for the ends) over n points.
func clampWindow(from, to string, n int) (window, error) {
	w := window{0, n, n}
	if from != "" {
		v, err := strconv.Atoi(from)
		if err != nil || v < 0 {
			return w, badInput("from=%s: give the index of the first point to show (0 or more)", from)
		}
		w.From = min(v, n)
	}
	if to != "" {
		v, err := strconv.Atoi(to)
		if err != nil || v < 1 {
			return w, badInput("to=%s: give the index after the last point to show (1 or more)", to)
		}
		w.To = min(v, n)
	}
	if w.From >= w.To && n > 0 {
		return w, badInput("from=%d to=%d: from must be below to (the series has %d points)", w.From, w.To, n)
	}
	return w, nil
}

func esc(s string) string { return html.EscapeString(s) }

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// changeLabel is how a chart and a page name a change point: its kind,
// its magnitude and where it arrived.
func changeLabel(c analysis.Change) string {
	return fmt.Sprintf("%s %+.1f%% in %s", c.Kind, 100*c.Magnitude, pointName(c.Arrived, c.Order))
}

// chartLinks are what a history chart links its marks to: a point's runs
// (nil: none) and a change point's triage state ("" for none).
type chartLinks struct {
	point  func(i int) string
	triage func(c analysis.Change) string
}

// historyChart draws points [w.From, w.To) of s, its change points marked
// and annotated. href is the series' page, for the script's zoom.
func historyChart(s Series, w window, href string) template.HTML {
	return historyChartLinked(s, w, href, chartLinks{})
}

// historyChartLinked is historyChart with its points linked to their runs
// and its change points marked with their triage.
func historyChartLinked(s Series, w window, href string, links chartLinks) template.HTML {
	const W, H, ml, mr, top, plotH = 960.0, 300.0, 76.0, 24.0, 58.0, 210.0
	pw := W - ml - mr
	bottom := top + plotH
	pts := s.Points
	count := w.To - w.From
	aggregated := count > maxBuckets
	var buckets []Bucket
	if aggregated {
		buckets = aggregate(pts, s.Order, w.From, w.To, maxBuckets)
	}
	lo, hi, have := math.Inf(1), math.Inf(-1), false
	for _, p := range pts[w.From:w.To] {
		if !math.IsNaN(p.Value) {
			lo, hi, have = math.Min(lo, p.Value), math.Max(hi, p.Value), true
		}
	}
	if !have {
		return ""
	}
	// The axis and where a value goes, for any values: finite, bounded
	// ticks (report.Axis).
	ylo, yhi, step := report.Axis(lo, hi, 5)
	y := func(v float64) float64 { return bottom - report.Scale(v, ylo, yhi)*plotH }
	span := math.Max(float64(count-1), 1)
	x := func(i float64) float64 { return ml + (i-float64(w.From))/span*pw }
	if count == 1 {
		x = func(float64) float64 { return ml + pw/2 }
	}

	var b strings.Builder
	title := s.Name()
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart history" viewBox="0 0 %s %s" width="%s" height="%s" role="img" data-chart="history" data-from="%d" data-to="%d" data-n="%d" data-x0="%s" data-pw="%s" data-w="%s" data-href="%s" data-aggregated="%t">`,
		f1(W), f1(H), f1(W), f1(H), w.From, w.To, w.N, f1(ml), f1(pw), f1(W), esc(href), aggregated)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(title))
	fmt.Fprintf(&b, `<text class="ctitle" x="%s" y="16" text-anchor="middle">%s</text>`, f1(W/2), esc(shortName(title)))
	what := fmt.Sprintf("points %d to %d of %d", w.From, w.To-1, w.N)
	if aggregated {
		what += fmt.Sprintf(", %d per bar (min to max, line: mean): drag to zoom", buckets[0].N)
	} else if w.N > 1 {
		what += ": drag to zoom"
	}
	fmt.Fprintf(&b, `<text class="legend" x="%s" y="32" text-anchor="middle">%s</text>`, f1(W/2), esc(what))
	// y axis and grid
	for _, t := range report.AxisTicks(ylo, yhi, step) {
		yy := y(t)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(ml), f1(yy), f1(ml+pw), f1(yy))
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, f1(ml-4), f1(yy+4), esc(report.Num(t)))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(ml), f1(top), f1(ml), f1(bottom))
	fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(ml), f1(bottom), f1(ml+pw), f1(bottom))
	unit := s.Metric
	if s.Unit != "" {
		unit += " (" + s.Unit + ")"
	}
	lx, ly := 14.0, (top+bottom)/2
	fmt.Fprintf(&b, `<text class="alabel" x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">%s</text>`, f1(lx), f1(ly), f1(lx), f1(ly), esc(unit))
	// x ticks: about six points named by build (or time), level, each
	// label cut to the room between ticks (the point's tooltip has it
	// whole) and kept inside the chart
	const charW = 6.2 // of an 11 px label
	tickStep := max(1, int(math.Ceil(float64(count)/6)))
	room := int(pw/math.Max(1, math.Ceil(float64(count)/float64(tickStep)))/charW) - 1
	for i := w.From; i < w.To; i += tickStep {
		xx := x(float64(i))
		name := []rune(pointName(pts[i], s.Order))
		if len(name) > room && room > 1 {
			name = append(name[:room-1], '…')
		}
		half := float64(len(name)) * charW / 2
		lx := math.Min(math.Max(xx, 4+half), W-4-half)
		fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(xx), f1(bottom), f1(xx), f1(bottom+4))
		fmt.Fprintf(&b, `<text class="tick xlabel" x="%s" y="%s" text-anchor="middle">%s</text>`, f1(lx), f1(bottom+16), esc(string(name)))
	}
	colour := report.LabelColour(0)
	if aggregated {
		var band, mean strings.Builder
		for i, bk := range buckets {
			xx := x(float64(bk.From+bk.To) / 2)
			fmt.Fprintf(&band, "M%s %sV%s", f1(xx), f1(y(bk.Max)), f1(math.Max(y(bk.Min), y(bk.Max)+1))) // a pixel at least
			if i == 0 {
				fmt.Fprintf(&mean, "M%s %s", f1(xx), f1(y(bk.Mean)))
			} else {
				fmt.Fprintf(&mean, " L%s %s", f1(xx), f1(y(bk.Mean)))
			}
		}
		fmt.Fprintf(&b, `<path class="band" d="%s" stroke="%s" stroke-opacity="0.35" stroke-width="2" fill="none"/>`, band.String(), colour)
		fmt.Fprintf(&b, `<path class="mark" d="%s" stroke="%s" stroke-width="1.5" fill="none"><title>%s</title></path>`, mean.String(), colour, esc(title+": mean per bar"))
	} else {
		var d strings.Builder
		for i := w.From; i < w.To; i++ {
			cmd := " L"
			if i == w.From {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%s %s", cmd, f1(x(float64(i))), f1(y(pts[i].Value)))
		}
		if count > 1 {
			fmt.Fprintf(&b, `<path class="mark" d="%s" stroke="%s" stroke-width="1.5" fill="none"><title>%s</title></path>`, strings.TrimSpace(d.String()), colour, esc(title))
		}
		for i := w.From; i < w.To; i++ {
			p := pts[i]
			link := ""
			if links.point != nil {
				link = links.point(i)
			}
			if link != "" {
				fmt.Fprintf(&b, `<a class="ptlink" href="%s">`, esc(link))
			}
			fmt.Fprintf(&b, `<circle class="mark pt" cx="%s" cy="%s" r="3" fill="%s" data-index="%d"><title>%s: %s (n=%d)</title></circle>`,
				f1(x(float64(i))), f1(y(p.Value)), colour, i, esc(pointName(p, s.Order)), esc(report.Num(p.Value)), p.N)
			if link != "" {
				b.WriteString(`</a>`)
			}
		}
	}
	// change points: a dashed line between the last point before and the
	// first after, annotated with the change and the build where it arrived
	for k, c := range s.Changes {
		if c.Index < w.From || c.Index >= w.To {
			continue
		}
		xx := x(float64(c.Index))
		if c.Index > w.From && count > 1 {
			xx = x(float64(c.Index) - 0.5)
		}
		cls := "cp cp-" + c.Kind
		label := changeLabel(c)
		triage := ""
		if links.triage != nil {
			triage = links.triage(c)
		}
		if triage != "" {
			cls += " triage-" + triage
			label += " · " + triage
		}
		fmt.Fprintf(&b, `<g class="%s" data-build="%s" data-version="%s" data-kind="%s" data-index="%d" data-magnitude="%s" data-triage="%s">`,
			esc(cls), esc(c.Arrived.Build), esc(c.Arrived.Version), esc(c.Kind), c.Index, strconv.FormatFloat(c.Magnitude, 'f', 4, 64), esc(triage))
		fmt.Fprintf(&b, `<line class="cpline" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(xx), f1(top-8), f1(xx), f1(bottom))
		anchor := "start"
		tx := xx + 4
		if xx > ml+pw*0.6 {
			anchor, tx = "end", xx-4
		}
		ty := top - 10 + float64(k%3)*12
		fmt.Fprintf(&b, `<text class="cplabel" x="%s" y="%s" text-anchor="%s">%s</text>`, f1(tx), f1(ty), anchor, esc(label))
		fmt.Fprintf(&b, `<title>%s</title></g>`, esc(fmt.Sprintf("%s: %s → %s, p=%.2g, after %s", label, report.Num(c.MeanBefore), report.Num(c.MeanAfter), c.PValue, pointName(c.Before, c.Order))))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every stored string in it went through esc
}

// pointTime formats a point's time for tables ("" for none).
func pointTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04")
}
