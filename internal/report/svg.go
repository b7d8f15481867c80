package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The charts are drawn here as SVG text. Every string that comes from the
// model goes through svgEsc; numbers are formatted by svgF. Data marks (bars,
// lines, isolated points) carry class "mark", which the page's script
// counts.

// svgPalette is the colour of the i-th label on every chart of a page
// (Tableau 10).
var svgPalette = []string{
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
}

func svgColour(i int) string { return svgPalette[i%len(svgPalette)] }

// svgEsc escapes s for SVG text and attribute values (valid XML as well as HTML).
func svgEsc(s string) string { return html.EscapeString(s) }

// svgF formats a coordinate.
func svgF(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// svgDoc builds one chart.
type svgDoc struct {
	b    strings.Builder
	w, h float64
}

// ChartHead is what names a chart: Name its id (the page's data-chart),
// Title the line drawn above it, YLabel what its y axis measures.
type ChartHead struct {
	Name, Title, YLabel string
}

// svgNew starts a chart of w × h headed by head's name and title.
func svgNew(head ChartHead, w, h float64) *svgDoc {
	s := &svgDoc{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img">`,
		svgEsc(head.Name), svgF(w), svgF(h), svgF(w), svgF(h))
	fmt.Fprintf(&s.b, `<title>%s</title>`, svgEsc(head.Title))
	fmt.Fprintf(&s.b, `<text class="ctitle" x="%s" y="16" text-anchor="middle">%s</text>`, svgF(w/2), svgEsc(head.Title))
	return s
}

func (s *svgDoc) raw(format string, a ...any) { fmt.Fprintf(&s.b, format, a...) }

func (s *svgDoc) done() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String()) // every model string in it went through svgEsc
}

// legend draws coloured swatches with names from (x, y), wrapping at the
// chart's width; it returns the y below it.
func (s *svgDoc) legend(x, y float64, names, colours []string) float64 {
	cx := x
	for i, n := range names {
		wd := 18 + 6.5*float64(utf8.RuneCountInString(n)) + 14
		if cx > x && cx+wd > s.w-10 {
			cx, y = x, y+16
		}
		s.raw(`<rect x="%s" y="%s" width="10" height="10" fill="%s"/>`, svgF(cx), svgF(y-9), svgEsc(colours[i]))
		s.raw(`<text class="legend" x="%s" y="%s">%s</text>`, svgF(cx+14), svgF(y), svgEsc(n))
		cx += wd
	}
	return y + 8
}

// plotFrame is where a chart's data go: the plot spans [x0, x0+pw] ×
// [top, bottom], and y is where a value goes on it.
type plotFrame struct {
	x0, pw, top, bottom float64
	y                   func(float64) float64
}

// yAxis draws a grid line and label (decimals for step) at each of ts, the
// axes of the plot f, and the axis label.
func (s *svgDoc) yAxis(f plotFrame, ts []float64, step float64, label string) {
	for _, t := range ts {
		yy := f.y(t)
		s.raw(`<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(f.x0), svgF(yy), svgF(f.x0+f.pw), svgF(yy))
		s.raw(`<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, svgF(f.x0-4), svgF(yy+4), svgEsc(svgTickLabel(t, step)))
	}
	s.raw(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(f.x0), svgF(f.top), svgF(f.x0), svgF(f.bottom))
	s.raw(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(f.x0), svgF(f.bottom), svgF(f.x0+f.pw), svgF(f.bottom))
	if label != "" {
		s.yLabel(f, math.Max(12, f.x0-50), label)
	}
}

// yLabel draws label rotated along the plot f's y axis, centred at x.
func (s *svgDoc) yLabel(f plotFrame, x float64, label string) {
	y := (f.top + f.bottom) / 2
	s.raw(`<text class="alabel" x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)">%s</text>`, svgF(x), svgF(y), svgF(x), svgF(y), svgEsc(label))
}

// svgNiceStep is 1, 2 or 5 times a power of ten, about span/n (NiceStep).
func svgNiceStep(span float64, n int) float64 { return NiceStep(span, n) }

// svgTicks are the multiples of step from lo to hi, a bounded list
// (AxisTicks).
func svgTicks(lo, hi, step float64) []float64 { return AxisTicks(lo, hi, step) }

func svgTickLabel(v, step float64) string {
	d := 0
	for d < 6 && math.Abs(step*math.Pow(10, float64(d))-math.Round(step*math.Pow(10, float64(d)))) > 1e-6 {
		d++
	}
	if math.Abs(v) < step*1e-9 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// svgRelAxis is the y range of a relative-QPS chart as the seeds draw it:
// not from 0, but from a bit below min(lo, 1) (on a grid of step/5, never
// below 0) to a bit above max(hi, 1) (on a multiple of step).
func svgRelAxis(lo, hi float64) (from, to, step float64) {
	lo, hi = math.Min(lo, 1), math.Max(hi, 1)
	pad := math.Max((hi-lo)*0.08, 0.02)
	step = svgNiceStep(hi-lo+2*pad, 6)
	from = math.Floor((lo-pad)/(step/5)) * (step / 5)
	to = Finite(math.Ceil((hi+pad)/step) * step)
	if from < 0 {
		from = 0
	}
	return from, to, step
}

// svgRelTicks are from and the multiples of step above it, but those less
// than gap above it.
func svgRelTicks(from, to, step, gap float64) []float64 {
	out := []float64{from}
	for _, t := range svgTicks(from, to, step) {
		if t >= from+gap {
			out = append(out, t)
		}
	}
	return out
}

// svgZeroAxis is a y range from 0 to a bit above hi.
func svgZeroAxis(hi float64) (to, step float64) {
	if !(hi > 0) {
		hi = 1
	}
	step = svgNiceStep(hi*1.05, 5)
	to = Finite(math.Ceil(hi*1.05/step) * step)
	return to, step
}

// svgBars is one coloured set of bars, a value per category (NaN: none).
type svgBars struct {
	Name   string
	Colour string
	Values []float64
	Tips   []string // per category, the bar's tooltip
}

// svgBarChart draws grouped vertical bars, a slot per category holding one bar
// per series, with rotated category labels. With rel the y axis spans
// svgRelAxis and a reference line is drawn at 1.0; otherwise it starts at 0.
func svgBarChart(head ChartHead, cats []string, series []svgBars, rel bool) template.HTML {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s.Values {
			if htmlFinite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return ""
	}
	var from, to, step float64
	if rel {
		from, to, step = svgRelAxis(lo, hi)
	} else {
		to, step = svgZeroAxis(hi)
	}

	maxLabel := 0
	for _, c := range cats {
		maxLabel = max(maxLabel, utf8.RuneCountInString(c))
	}
	const charW, plotH = 6.2, 220.0
	ns, nc := float64(len(series)), float64(max(len(cats), 1))
	slot := math.Max(ns*14+12, 26)             // the narrowest: 14 px a bar
	extent := float64(maxLabel) * charW * 0.72 // of a label rotated by 45°
	ml := math.Max(64, extent-slot/2+12)
	minW := 360.0
	if rel {
		// Room for the ticks' "0.80 (-20%)", and wide enough to read.
		ml, minW = math.Max(112, extent-slot/2+12), 720
	}
	// As wide as the bars need, the title (bold 14 px) and minW; then the
	// slots share the plot, with bars up to 40 px.
	w := math.Max(math.Max(ml+slot*nc+20, 7.8*float64(utf8.RuneCountInString(head.Title))+24), minW)
	pw := w - ml - 20
	slot = pw / nc
	barW := math.Min((slot-12)/ns, 40)

	names := make([]string, len(series))
	colours := make([]string, len(series))
	for i, s := range series {
		names[i], colours[i] = s.Name, s.Colour
	}
	// The legend's height depends on wrapping: draw it into a scratch doc first.
	scratch := &svgDoc{w: w}
	top := scratch.legend(ml, 38, names, colours) + 8
	h := top + plotH + extent + 24

	s := svgNew(head, w, h)
	s.legend(ml, 38, names, colours)
	bottom := top + plotH
	y := func(v float64) float64 { return bottom - (v-from)/(to-from)*plotH }
	f := plotFrame{x0: ml, pw: pw, top: top, bottom: bottom, y: y}
	if rel {
		// The seeds' axis (not from 0), each tick saying how much faster or
		// slower it is, and the axis what 1.0 means.
		ts := svgRelTicks(from, to, step, 14*(to-from)/plotH)
		s.yAxis(f, ts, step/5, "")
		for _, t := range ts {
			if d := math.Round((t - 1) * 100); d != 0 {
				s.raw(`<text class="tick rel" x="%s" y="%s" text-anchor="end">%s</text>`, svgF(ml-38), svgF(y(t)+4),
					svgEsc(fmt.Sprintf("%+.0f%%", d)))
			}
		}
		s.yLabel(f, 12, head.YLabel+" (1.0: as fast; 0.77: 23% slower)")
	} else {
		s.yAxis(f, svgTicks(from, to, step), step, head.YLabel)
	}
	for ci, c := range cats {
		x0 := ml + float64(ci)*slot + (slot-ns*barW)/2
		for si, sr := range series {
			if ci >= len(sr.Values) || !htmlFinite(sr.Values[ci]) {
				continue
			}
			v := sr.Values[ci]
			yv, yb := y(math.Max(v, from)), bottom
			if rel { // from the 1.0 line: up when faster, down when slower
				yv, yb = math.Min(y(math.Max(v, from)), y(1)), math.Max(y(math.Max(v, from)), y(1))
			}
			tip := ""
			if ci < len(sr.Tips) {
				tip = sr.Tips[ci]
			}
			s.raw(`<rect class="mark" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				svgF(x0+float64(si)*barW), svgF(yv), svgF(barW-2), svgF(math.Max(yb-yv, 1)), svgEsc(sr.Colour), svgEsc(tip))
		}
		lx, ly := ml+(float64(ci)+0.5)*slot, bottom+12
		s.raw(`<text class="xlabel" x="%s" y="%s" text-anchor="end" transform="rotate(-45 %s %s)">%s</text>`, svgF(lx), svgF(ly), svgF(lx), svgF(ly), svgEsc(c))
	}
	if rel {
		s.raw(`<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(ml), svgF(y(1)), svgF(ml+pw), svgF(y(1)))
	}
	return s.done()
}

// svgLine is one line of a line chart: a value per second, NaN where
// there is none (the line breaks there).
type svgLine struct {
	Name   string
	Colour string
	Values []float64
	Marks  []int // seconds shaded in the line's colour (stalls)
}

// The line charts' geometry: width, plot height, left and right margins,
// and the plot's width.
const lineW, linePlotH, lineML, lineMR = 900.0, 240.0, 72.0, 20.0
const linePW = lineW - lineML - lineMR

// svgLinesFrame starts a line chart of series: the document with its
// legend drawn, and the plot's frame (but where a value goes).
func svgLinesFrame(head ChartHead, series []svgLine) (*svgDoc, plotFrame) {
	names := make([]string, len(series))
	colours := make([]string, len(series))
	for i, l := range series {
		names[i], colours[i] = l.Name, l.Colour
	}
	scratch := &svgDoc{w: lineW}
	top := scratch.legend(lineML, 38, names, colours) + 8
	bottom := top + linePlotH
	s := svgNew(head, lineW, bottom+44)
	s.legend(lineML, 38, names, colours)
	return s, plotFrame{x0: lineML, pw: linePW, top: top, bottom: bottom}
}

// svgLineChart draws values per second, the y axis from 0.
func svgLineChart(head ChartHead, series []svgLine) template.HTML {
	n, hi, has := 0, 0.0, false
	for _, s := range series {
		n = max(n, len(s.Values))
		for _, v := range s.Values {
			if htmlFinite(v) {
				hi, has = math.Max(hi, v), true
			}
		}
	}
	if !has {
		return ""
	}
	s, f := svgLinesFrame(head, series)
	top, bottom := f.top, f.bottom
	to, step := svgZeroAxis(hi)
	xmax := math.Max(float64(n-1), 1)
	x := func(i float64) float64 { return lineML + i/xmax*linePW }
	y := func(v float64) float64 { return bottom - Scale(v, 0, to)*linePlotH }
	f.y = y
	s.yAxis(f, svgTicks(0, to, step), step, head.YLabel)
	xstep := math.Max(svgNiceStep(xmax, 10), 1)
	for _, t := range svgTicks(0, xmax, xstep) {
		s.raw(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(x(t)), svgF(bottom), svgF(x(t)), svgF(bottom+4))
		s.raw(`<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, svgF(x(t)), svgF(bottom+16), svgEsc(svgTickLabel(t, xstep)))
	}
	s.raw(`<text class="alabel" x="%s" y="%s" text-anchor="middle">second of the measured window</text>`, svgF(lineML+linePW/2), svgF(bottom+36))
	half := linePW / xmax / 2
	for _, sr := range series {
		for _, m := range sr.Marks {
			s.raw(`<rect class="stall" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.18"><title>%s: stalled in second %d</title></rect>`,
				svgF(math.Max(lineML, x(float64(m))-half)), svgF(top), svgF(2*half), svgF(linePlotH), svgEsc(sr.Colour), svgEsc(sr.Name), m)
		}
	}
	for _, sr := range series {
		var d strings.Builder
		ok := func(i int) bool {
			return i >= 0 && i < len(sr.Values) && htmlFinite(sr.Values[i])
		}
		for i, v := range sr.Values {
			if !ok(i) {
				continue
			}
			switch {
			case ok(i - 1):
				fmt.Fprintf(&d, " L%s %s", svgF(x(float64(i))), svgF(y(v)))
			case ok(i + 1):
				fmt.Fprintf(&d, " M%s %s", svgF(x(float64(i))), svgF(y(v)))
			default: // an isolated second: a dot, as a line needs two points
				s.raw(`<circle class="mark" cx="%s" cy="%s" r="2" fill="%s"/>`, svgF(x(float64(i))), svgF(y(v)), svgEsc(sr.Colour))
			}
		}
		if d.Len() > 0 {
			s.raw(`<path class="mark" d="%s" fill="none" stroke="%s" stroke-width="1.5"><title>%s</title></path>`,
				strings.TrimSpace(d.String()), svgEsc(sr.Colour), svgEsc(sr.Name))
		}
	}
	return s.done()
}

// svgSweepChart draws values against thread counts on a log₂ x axis (the
// seeds' concurrency charts), the y axis logarithmic when logY (response
// times that span decades) or from 0. Points missing (NaN) break a line.
func svgSweepChart(head ChartHead, xs []int, series []svgLine, logY bool) template.HTML {
	lo, hi, has := math.Inf(1), 0.0, false
	for _, s := range series {
		for _, v := range s.Values {
			if htmlFinite(v) && (!logY || v > 0) {
				lo, hi, has = math.Min(lo, v), math.Max(hi, v), true
			}
		}
	}
	if !has || len(xs) == 0 {
		return ""
	}
	s, f := svgLinesFrame(head, series)
	top, bottom := f.top, f.bottom
	x0, x1 := math.Log2(float64(xs[0])), math.Log2(float64(xs[len(xs)-1]))
	span := math.Max(x1-x0, 1)
	x := func(t int) float64 { return lineML + (math.Log2(float64(t))-x0)/span*linePW }
	var y func(float64) float64
	if logY {
		d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if d1 <= d0 {
			d1 = d0 + 1
		}
		y = func(v float64) float64 { return bottom - (math.Log10(v)-d0)/(d1-d0)*linePlotH }
		for d := d0; d <= d1; d += math.Max(1, math.Ceil((d1-d0)/MaxTicks)) { // a few decades however many the data span
			v := math.Pow(10, d)
			if v == 0 || math.IsInf(v, 0) { // beyond the floats (1e-324, 1e309)
				continue
			}
			s.raw(`<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(lineML), svgF(y(v)), svgF(lineML+linePW), svgF(y(v)))
			s.raw(`<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, svgF(lineML-6), svgF(y(v)+4), svgEsc(strconv.FormatFloat(v, 'g', -1, 64)))
		}
		s.raw(`<text class="alabel" transform="translate(%s %s) rotate(-90)" text-anchor="middle">%s (log)</text>`, svgF(16), svgF((top+bottom)/2), svgEsc(head.YLabel))
	} else {
		to, step := svgZeroAxis(hi)
		y = func(v float64) float64 { return bottom - Scale(v, 0, to)*linePlotH }
		f.y = y
		s.yAxis(f, svgTicks(0, to, step), step, head.YLabel)
	}
	for _, t := range xs {
		s.raw(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(x(t)), svgF(bottom), svgF(x(t)), svgF(bottom+4))
		s.raw(`<text class="tick" x="%s" y="%s" text-anchor="middle">%d</text>`, svgF(x(t)), svgF(bottom+16), t)
	}
	s.raw(`<text class="alabel" x="%s" y="%s" text-anchor="middle">clients (threads), log scale</text>`, svgF(lineML+linePW/2), svgF(bottom+36))
	for _, sr := range series {
		var d strings.Builder
		prev := false
		for i, v := range sr.Values {
			if i >= len(xs) || !htmlFinite(v) || (logY && v <= 0) {
				prev = false
				continue
			}
			cmd := "M"
			if prev {
				cmd = "L"
			}
			fmt.Fprintf(&d, " %s%s %s", cmd, svgF(x(xs[i])), svgF(y(v)))
			s.raw(`<circle class="mark" cx="%s" cy="%s" r="2.5" fill="%s"><title>%s, %d clients: %s</title></circle>`,
				svgF(x(xs[i])), svgF(y(v)), svgEsc(sr.Colour), svgEsc(sr.Name), xs[i], svgEsc(strconv.FormatFloat(v, 'g', 4, 64)))
			prev = true
		}
		if d.Len() > 0 {
			s.raw(`<path class="mark" d="%s" fill="none" stroke="%s" stroke-width="1.5"><title>%s</title></path>`,
				strings.TrimSpace(d.String()), svgEsc(sr.Colour), svgEsc(sr.Name))
		}
	}
	return s.done()
}
