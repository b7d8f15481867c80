package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/result"
)

// A history chart (the dashboard's test pages, its attention entries'
// sparklines) is drawn here, with the report's other charts: the same
// document (svgDoc), axis, palette and point names (PointName), so that
// the terminal, the HTML report and the dashboard name and draw a point
// one way. A long history is cut into as many spans of consecutive
// points as the plot has room for (MaxBuckets), each drawn as its
// minimum-to-maximum bar and its mean, so that a page of 100,000 points
// holds a few hundred marks.

// MaxBuckets is the most spans a history chart draws (about two pixels
// each).
const MaxBuckets = 400

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

// Aggregate cuts points [from, to) into at most n spans of equal length.
func Aggregate(pts []history.Point, order string, from, to, n int) []Bucket {
	count := to - from
	if count <= 0 || n <= 0 {
		return nil
	}
	size := (count + n - 1) / n
	var out []Bucket
	for i := from; i < to; i += size {
		j := min(i+size, to)
		b := Bucket{From: i, To: j - 1, N: j - i, Min: math.Inf(1), Max: math.Inf(-1),
			First: PointTick(pts[i], order), Last: PointTick(pts[j-1], order)}
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

// PointName names a point as every surface does (qpslab detect, the HTML
// report, the dashboard and its alerts): its build (and version) and
// commit, or its time; in a series ordered by time or by a file's rows
// (runs of one build), the run's time follows.
func PointName(p history.Point, order string) string { return timedName(p, order) }

// PointTick is a point's name on a chart's axis: its time in a series of
// one build's runs (ordered by time or by a file), else its build and
// version (the commit is in PointName, the point's tooltip).
func PointTick(p history.Point, order string) string {
	if (order == history.OrderTime || order == history.OrderFile) && !p.Time.IsZero() {
		return p.Time.UTC().Format("2006-01-02 15:04")
	}
	if p.Build == "" && p.Commit != "" {
		return p.Commit
	}
	if p.Build == "" {
		return p.Time.UTC().Format("2006-01-02 15:04")
	}
	if p.Version != "" && p.Version != p.Build {
		return p.Build + " " + p.Version
	}
	return p.Build
}

// ChangeLabel is how a chart and a page name a change point: its kind,
// its magnitude and where it arrived.
func ChangeLabel(c analysis.Change) string {
	return fmt.Sprintf("%s %+.1f%% in %s", c.Kind, 100*c.Magnitude, PointTick(c.Arrived, c.Order))
}

// HistoryChart is one series' history as a chart draws it.
type HistoryChart struct {
	Series   history.Series
	Changes  []analysis.Change
	Title    string // shown above the plot (Series.Name() whole is the chart's tooltip)
	From, To int    // the points drawn: [From, To)
	Href     string // the series' page, for the script's zoom ("" for none)
	// Point is a point's link ("" for none); Triage a change point's
	// triage state ("" for none). Either may be nil.
	Point  func(i int) string
	Triage func(c analysis.Change) string
	// Noise is the half-width of the noise band drawn around each
	// segment's median (between change points), a fraction (0.02: ±2 %);
	// 0 draws none. NoiseWhat says where it comes from, in the legend.
	Noise     float64
	NoiseWhat string
}

// SeriesSpread is a series' own noise, for a band where its host has no
// noise floor: the median of the points' distances from their segment's
// median (segments split at the change points), relative to it.
func SeriesSpread(pts []history.Point, changes []analysis.Change) float64 {
	var devs []float64
	for _, seg := range segments(len(pts), changes) {
		vals := make([]float64, 0, seg[1]-seg[0])
		for _, p := range pts[seg[0]:seg[1]] {
			if htmlFinite(p.Value) {
				vals = append(vals, p.Value)
			}
		}
		if len(vals) < 2 {
			continue
		}
		med := history.Median(vals)
		if !(math.Abs(med) > 0) {
			continue
		}
		for _, v := range vals {
			devs = append(devs, math.Abs(v-med)/math.Abs(med))
		}
	}
	if len(devs) == 0 {
		return 0
	}
	return history.Median(devs)
}

// segments are the points' spans [from, to) between change points.
func segments(n int, changes []analysis.Change) [][2]int {
	var cuts []int
	for _, c := range changes {
		if c.Index > 0 && c.Index < n {
			cuts = append(cuts, c.Index)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out [][2]int
	from := 0
	for _, c := range append(cuts, n) {
		if c > from {
			out = append(out, [2]int{from, c})
		}
		from = c
	}
	return out
}

// SVG draws the chart: "" when no point in [From, To) has a value.
func (h HistoryChart) SVG() template.HTML {
	const W, H, ml, mr, top, plotH = 960.0, 300.0, 76.0, 24.0, 58.0, 210.0
	pw := W - ml - mr
	bottom := top + plotH
	s := h.Series
	pts := s.Points
	from, to := max(h.From, 0), min(h.To, len(pts))
	count := to - from
	if count <= 0 {
		return ""
	}
	aggregated := count > MaxBuckets
	var buckets []Bucket
	if aggregated {
		buckets = Aggregate(pts, s.Order, from, to, MaxBuckets)
	}
	segs := segments(len(pts), h.Changes)
	meds := make([]float64, len(segs))
	lo, hi, have := math.Inf(1), math.Inf(-1), false
	for i, seg := range segs {
		var vals []float64
		for _, p := range pts[seg[0]:seg[1]] {
			if htmlFinite(p.Value) {
				vals = append(vals, p.Value)
			}
		}
		meds[i] = math.NaN()
		if len(vals) > 0 {
			meds[i] = history.Median(vals)
		}
		if h.Noise > 0 && seg[1] > from && seg[0] < to && htmlFinite(meds[i]) {
			lo, hi = math.Min(lo, meds[i]*(1-h.Noise)), math.Max(hi, meds[i]*(1+h.Noise))
		}
	}
	allPositive := true
	for _, p := range pts[from:to] {
		if !math.IsNaN(p.Value) {
			lo, hi, have = math.Min(lo, p.Value), math.Max(hi, p.Value), true
			allPositive = allPositive && p.Value >= 0
		}
	}
	if !have {
		return ""
	}
	// The axis and where a value goes, for any values: finite, bounded
	// ticks (Axis); never below 0 for values that cannot be.
	ylo, yhi, step := Axis(lo, hi, 5)
	if allPositive && ylo < 0 {
		ylo = 0
	}
	y := func(v float64) float64 { return bottom - Scale(v, ylo, yhi)*plotH }
	span := math.Max(float64(count-1), 1)
	x := func(i float64) float64 { return ml + (i-float64(from))/span*pw }
	if count == 1 {
		x = func(float64) float64 { return ml + pw/2 }
	}

	name := s.Name()
	d := &svgDoc{w: W, h: H}
	d.raw(`<svg xmlns="http://www.w3.org/2000/svg" class="chart history" viewBox="0 0 %s %s" width="%s" height="%s" `+
		`role="img" data-chart="history" data-from="%d" data-to="%d" data-n="%d" data-x0="%s" data-pw="%s" data-w="%s" `+
		`data-href="%s" data-aggregated="%t">`,
		svgF(W), svgF(H), svgF(W), svgF(H), from, to, len(pts), svgF(ml), svgF(pw), svgF(W), svgEsc(h.Href), aggregated)
	d.raw(`<title>%s</title>`, svgEsc(name))
	d.raw(`<text class="ctitle" x="%s" y="16" text-anchor="middle">%s</text>`, svgF(W/2), svgEsc(h.Title))
	what := fmt.Sprintf("points %d to %d of %d", from, to-1, len(pts))
	if aggregated {
		what += fmt.Sprintf(", %d per bar (min to max, line: mean)", buckets[0].N)
	}
	if h.Noise > 0 {
		what += fmt.Sprintf("; band: ±%.1f %% around each segment's median (%s)", 100*h.Noise, h.NoiseWhat)
	}
	if len(pts) > 1 && h.Href != "" {
		what += ": drag to zoom"
	}
	d.raw(`<text class="legend" x="%s" y="32" text-anchor="middle">%s</text>`, svgF(W/2), svgEsc(what))
	label := s.Metric
	if s.Unit != "" {
		label += " (" + s.Unit + ")"
	}
	f := plotFrame{x0: ml, pw: pw, top: top, bottom: bottom, y: y}
	d.yAxis(f, AxisTicks(ylo, yhi, step), step, "")
	d.yLabel(f, 14, label)
	// x ticks: about six points named by build (or time), level, each
	// label cut to the room between ticks (the point's tooltip has it
	// whole) and kept inside the chart
	const charW = 6.2 // of an 11 px label
	tickStep := max(1, int(math.Ceil(float64(count)/6)))
	room := int(pw/math.Max(1, math.Ceil(float64(count)/float64(tickStep)))/charW) - 1
	for i := from; i < to; i += tickStep {
		xx := x(float64(i))
		tick := []rune(PointTick(pts[i], s.Order))
		if len(tick) > room && room > 1 {
			tick = append(tick[:room-1], '…')
		}
		half := float64(len(tick)) * charW / 2
		tx := math.Min(math.Max(xx, 4+half), W-4-half)
		d.raw(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(xx), svgF(bottom), svgF(xx), svgF(bottom+4))
		d.raw(`<text class="tick xlabel" x="%s" y="%s" text-anchor="middle">%s</text>`, svgF(tx), svgF(bottom+16),
			svgEsc(string(tick)))
	}
	colour := svgColour(0)
	// The noise band: each segment's median, ± the noise, over the
	// segment's points in view.
	if h.Noise > 0 {
		for i, seg := range segs {
			a, b := max(seg[0], from), min(seg[1], to)
			if a >= b || !htmlFinite(meds[i]) {
				continue
			}
			x0, x1 := x(float64(a)), x(float64(b-1))
			if a > from {
				x0 = x(float64(a) - 0.5)
			}
			if b < to {
				x1 = x(float64(b) - 0.5)
			}
			if x1-x0 < 2 {
				x0, x1 = x0-1, x1+1
			}
			yt, yb := y(meds[i]*(1+h.Noise)), y(meds[i]*(1-h.Noise))
			d.raw(`<rect class="noise" x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.12">`+
				`<title>%s</title></rect>`,
				svgF(x0), svgF(math.Min(yt, yb)), svgF(x1-x0), svgF(math.Max(math.Abs(yb-yt), 1)), colour,
				svgEsc(fmt.Sprintf("median %s, ±%.1f %% (%s)", Num(meds[i]), 100*h.Noise, h.NoiseWhat)))
			d.raw(`<line class="median" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-opacity="0.5" `+
				`stroke-dasharray="2 2"/>`,
				svgF(x0), svgF(y(meds[i])), svgF(x1), svgF(y(meds[i])), colour)
		}
	}
	if aggregated {
		var band, mean strings.Builder
		for i, bk := range buckets {
			xx := x(float64(bk.From+bk.To) / 2)
			fmt.Fprintf(&band, "M%s %sV%s", svgF(xx), svgF(y(bk.Max)), svgF(math.Max(y(bk.Min),
				y(bk.Max)+1))) // a pixel at least
			if i == 0 {
				fmt.Fprintf(&mean, "M%s %s", svgF(xx), svgF(y(bk.Mean)))
			} else {
				fmt.Fprintf(&mean, " L%s %s", svgF(xx), svgF(y(bk.Mean)))
			}
		}
		d.raw(`<path class="band" d="%s" stroke="%s" stroke-opacity="0.35" stroke-width="2" fill="none"/>`,
			band.String(), colour)
		d.raw(`<path class="mark" d="%s" stroke="%s" stroke-width="1.5" fill="none"><title>%s</title></path>`,
			mean.String(), colour, svgEsc(name+": mean per bar"))
	} else {
		var line strings.Builder
		for i := from; i < to; i++ {
			cmd := " L"
			if i == from {
				cmd = "M"
			}
			fmt.Fprintf(&line, "%s%s %s", cmd, svgF(x(float64(i))), svgF(y(pts[i].Value)))
		}
		if count > 1 {
			d.raw(`<path class="mark" d="%s" stroke="%s" stroke-width="1.5" fill="none"><title>%s</title></path>`,
				strings.TrimSpace(line.String()), colour, svgEsc(name))
		}
		for i := from; i < to; i++ {
			p := pts[i]
			link := ""
			if h.Point != nil {
				link = h.Point(i)
			}
			if link != "" {
				d.raw(`<a class="ptlink" href="%s">`, svgEsc(link))
			}
			d.raw(`<circle class="mark pt" cx="%s" cy="%s" r="3" fill="%s" data-index="%d">`+
				`<title>%s: %s %s (n=%d)</title></circle>`,
				svgF(x(float64(i))), svgF(y(p.Value)), colour, i, svgEsc(PointName(p,
					s.Order)), svgEsc(Num(p.Value)), svgEsc(s.Unit), p.N)
			if link != "" {
				d.raw(`</a>`)
			}
		}
	}
	// change points: a dashed line between the last point before and the
	// first after, annotated with the change and the build where it arrived
	for k, c := range h.Changes {
		if c.Index < from || c.Index >= to {
			continue
		}
		xx := x(float64(c.Index))
		if c.Index > from && count > 1 {
			xx = x(float64(c.Index) - 0.5)
		}
		cls := "cp cp-" + c.Kind
		label := ChangeLabel(c)
		triage := ""
		if h.Triage != nil {
			triage = h.Triage(c)
		}
		if triage != "" {
			cls += " triage-" + triage
			label += " · " + triage
		}
		d.raw(`<g class="%s" data-build="%s" data-version="%s" data-kind="%s" data-index="%d" data-magnitude="%s" `+
			`data-triage="%s">`, svgEsc(cls), svgEsc(c.Arrived.Build), svgEsc(c.Arrived.Version), svgEsc(c.Kind), c.Index,
			strconv.FormatFloat(c.Magnitude, 'f', 4, 64), svgEsc(triage))
		d.raw(`<line class="cpline" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(xx), svgF(top-8), svgF(xx), svgF(bottom))
		anchor := "start"
		tx := xx + 4
		if xx > ml+pw*0.6 {
			anchor, tx = "end", xx-4
		}
		ty := top - 10 + float64(k%3)*12
		d.raw(`<text class="cplabel" x="%s" y="%s" text-anchor="%s">%s</text>`, svgF(tx), svgF(ty), anchor, svgEsc(label))
		d.raw(`<title>%s</title></g>`, svgEsc(fmt.Sprintf("%s: %s → %s %s, %s, arrived in %s, after %s", label,
			Num(c.MeanBefore), Num(c.MeanAfter), s.Unit,
			PValue(c.PValue), PointName(c.Arrived, c.Order), PointName(c.Before, c.Order))))
	}
	return d.done()
}

// Sparkline is a series' trend in a line of text: its points (the last
// MaxBuckets, as spans beyond), the change point's place marked, w × h px.
// It names the series, its first and last points and the change in its
// tooltip.
func Sparkline(s history.Series, c analysis.Change, w, h float64) template.HTML {
	pts := s.Points
	if len(pts) == 0 {
		return ""
	}
	n := len(pts)
	vals := make([]float64, 0, n)
	idx := make([]float64, 0, n)
	if n > MaxBuckets {
		for _, b := range Aggregate(pts, s.Order, 0, n, MaxBuckets/4) {
			vals, idx = append(vals, b.Mean), append(idx, float64(b.From+b.To)/2)
		}
	} else {
		for i, p := range pts {
			vals, idx = append(vals, p.Value), append(idx, float64(i))
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if htmlFinite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		return ""
	}
	ylo, yhi, _ := Axis(lo, hi, 2)
	const pad = 2.0
	x := func(i float64) float64 { return pad + i/math.Max(float64(n-1), 1)*(w-2*pad) }
	y := func(v float64) float64 { return h - pad - Scale(v, ylo, yhi)*(h-2*pad) }
	d := &svgDoc{w: w, h: h}
	d.raw(`<svg xmlns="http://www.w3.org/2000/svg" class="chart spark" data-chart="spark" viewBox="0 0 %s %s" `+
		`width="%s" height="%s" role="img">`, svgF(w), svgF(h), svgF(w), svgF(h))
	d.raw(`<title>%s</title>`, svgEsc(fmt.Sprintf("%s: %d points, %s to %s; %s (%s → %s %s)", s.Name(), n,
		PointTick(pts[0], s.Order), PointTick(pts[n-1], s.Order),
		ChangeLabel(c), Num(c.MeanBefore), Num(c.MeanAfter), s.Unit)))
	if c.Index > 0 && c.Index < n {
		cx := x(float64(c.Index) - 0.5)
		d.raw(`<line class="cpline" x1="%s" y1="0" x2="%s" y2="%s" stroke="#e15759"/>`, svgF(cx), svgF(cx), svgF(h))
	}
	var line strings.Builder
	for i, v := range vals {
		if !htmlFinite(v) {
			continue
		}
		cmd := " L"
		if line.Len() == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&line, "%s%s %s", cmd, svgF(x(idx[i])), svgF(y(v)))
	}
	if len(vals) == 1 {
		d.raw(`<circle class="mark" cx="%s" cy="%s" r="2" fill="%s"/>`, svgF(x(idx[0])), svgF(y(vals[0])), svgColour(0))
	} else {
		d.raw(`<path class="mark" d="%s" stroke="%s" stroke-width="1.2" fill="none"/>`,
			strings.TrimSpace(line.String()), svgColour(0))
	}
	return d.done()
}

// PValue writes a p-value as a reader takes it: "p < 1e-15" below what a
// float's sum can tell from 0 (never "p = 0"), else two digits.
func PValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "p = -"
	case p < 1e-15:
		return "p < 1e-15"
	}
	return "p = " + strconv.FormatFloat(p, 'g', 2, 64)
}

// overlayPoint is a point of an overlaid line: its build (or time) on
// the axis, its time, its value.
type overlayPoint struct {
	key string
	t   float64
	v   float64
}

// overlayLines are the lines of an overlaid chart and the builds of its
// axis, in order (none when it is by time: every series one build's runs,
// or the builds too many to merge in order, as hundreds of long histories).
func overlayLines(series []history.Series) (lines [][]overlayPoint, keys []string, byTime bool) {
	byTime, total := true, 0
	for _, s := range series {
		byTime = byTime && (s.Order == history.OrderTime || s.Order == history.OrderFile)
		total += min(len(s.Points), MaxBuckets)
	}
	byTime = byTime || total > 4000
	lines = make([][]overlayPoint, len(series))
	at := map[string]int{}
	for i, s := range series {
		add := func(p history.Point, v float64) {
			lines[i] = append(lines[i], overlayPoint{key: PointTick(p, s.Order), t: float64(p.Time.Unix()), v: v})
		}
		if len(s.Points) > MaxBuckets {
			for _, b := range Aggregate(s.Points, s.Order, 0, len(s.Points), MaxBuckets) {
				add(s.Points[(b.From+b.To)/2], b.Mean)
			}
		} else {
			for _, p := range s.Points {
				add(p, p.Value)
			}
		}
		if byTime {
			continue
		}
		// Each new build goes right after this series' build before it.
		prev := -1
		for _, p := range lines[i] {
			if j, ok := at[p.key]; ok {
				prev = j
				continue
			}
			keys = slices.Insert(keys, prev+1, p.key)
			prev++
			for k, key := range keys {
				at[key] = k
			}
		}
	}
	return lines, keys, byTime
}

// OverlayBuilds are the builds an overlaid chart of series puts on its
// axis, in order: what a range of them (OverlayChart's first and last) is
// chosen from; none for a chart by time.
func OverlayBuilds(series []history.Series) []string {
	_, keys, _ := overlayLines(series)
	return keys
}

// OverlayChart draws several series of one metric on one plot (a test's
// thread counts, configs or hosts), each line in its palette colour
// (LabelColour of its index), so that a test of a hundred series is one
// chart. x is the union of the series' builds in order (their times when
// every series is one build's runs), from build first to build last
// (OverlayBuilds; "" for either end); a series longer than MaxBuckets
// points is drawn as the means of MaxBuckets spans. labels name the lines
// in the legend (drawn for 12 series or fewer; a page lists the others).
func OverlayChart(title string, series []history.Series, labels []string, first, last string) template.HTML {
	if len(series) == 0 {
		return ""
	}
	type pt = overlayPoint
	lines, keys, byTime := overlayLines(series)
	fi, li := slices.Index(keys, first), slices.Index(keys, last)
	if !byTime && (fi > 0 || (li >= 0 && li < len(keys)-1)) {
		if fi < 0 {
			fi = 0
		}
		if li < 0 {
			li = len(keys) - 1
		}
		if fi > li {
			fi, li = li, fi
		}
		keep := map[string]bool{}
		for _, k := range keys[fi : li+1] {
			keep[k] = true
		}
		keys = keys[fi : li+1]
		for i, l := range lines {
			lines[i] = slices.DeleteFunc(slices.Clone(l), func(p pt) bool { return !keep[p.key] })
		}
	}
	at := map[string]int{}
	for k, key := range keys {
		at[key] = k
	}
	lo, hi, allPositive := math.Inf(1), math.Inf(-1), true
	for _, l := range lines {
		for _, p := range l {
			if htmlFinite(p.v) {
				lo, hi, allPositive = math.Min(lo, p.v), math.Max(hi, p.v), allPositive && p.v >= 0
			}
		}
	}
	if math.IsInf(lo, 0) {
		return ""
	}
	const W, ml, mr, plotH = 960.0, 76.0, 24.0, 260.0
	pw := W - ml - mr
	names := make([]string, len(series))
	colours := make([]string, len(series))
	for i := range series {
		names[i], colours[i] = labels[i], svgColour(i)
	}
	top := 48.0
	if len(series) <= 12 {
		scratch := &svgDoc{w: W}
		top = scratch.legend(ml, 38, names, colours) + 8
	}
	bottom := top + plotH
	H := bottom + 30
	ylo, yhi, step := Axis(lo, hi, 5)
	if allPositive && ylo < 0 {
		ylo = 0
	}
	y := func(v float64) float64 { return bottom - Scale(v, ylo, yhi)*plotH }
	var x func(p pt) float64
	if byTime {
		t0, t1 := math.Inf(1), math.Inf(-1)
		for _, l := range lines {
			for _, p := range l {
				t0, t1 = math.Min(t0, p.t), math.Max(t1, p.t)
			}
		}
		x = func(p pt) float64 { return ml + Scale(p.t, t0, math.Max(t1, t0+1))*pw }
	} else {
		span := math.Max(float64(len(keys)-1), 1)
		x = func(p pt) float64 { return ml + float64(at[p.key])/span*pw }
	}
	d := svgNew(ChartHead{Name: "overlay", Title: title}, W, H)
	if len(series) <= 12 {
		d.legend(ml, 38, names, colours)
	}
	f := plotFrame{x0: ml, pw: pw, top: top, bottom: bottom, y: y}
	d.yAxis(f, AxisTicks(ylo, yhi, step), step, "")
	label := series[0].Metric
	if series[0].Unit != "" {
		label += " (" + series[0].Unit + ")"
	}
	d.yLabel(f, 14, label)
	if byTime {
		t0, t1 := math.Inf(1), math.Inf(-1)
		for _, l := range lines {
			for _, p := range l {
				t0, t1 = math.Min(t0, p.t), math.Max(t1, p.t)
			}
		}
		for k := 0; k <= 4 && t1 > t0; k++ {
			t := t0 + float64(k)/4*(t1-t0)
			xx := x(pt{t: t})
			d.raw(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(xx), svgF(bottom), svgF(xx), svgF(bottom+4))
			d.raw(`<text class="tick xlabel" x="%s" y="%s" text-anchor="middle">%s</text>`, svgF(math.Min(math.Max(xx,
				52), W-52)), svgF(bottom+16),
				time.Unix(int64(t), 0).UTC().Format("2006-01-02 15:04"))
		}
	}
	if !byTime && len(keys) > 0 {
		const charW = 6.2
		tickStep := max(1, int(math.Ceil(float64(len(keys))/6)))
		room := int(pw/math.Max(1, math.Ceil(float64(len(keys))/float64(tickStep)))/charW) - 1
		for i := 0; i < len(keys); i += tickStep {
			xx := x(pt{key: keys[i]})
			tick := []rune(keys[i])
			if len(tick) > room && room > 1 {
				tick = append(tick[:room-1], '…')
			}
			half := float64(len(tick)) * charW / 2
			d.raw(`<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, svgF(xx), svgF(bottom), svgF(xx), svgF(bottom+4))
			d.raw(`<text class="tick xlabel" x="%s" y="%s" text-anchor="middle">%s</text>`, svgF(math.Min(math.Max(xx,
				4+half), W-4-half)), svgF(bottom+16), svgEsc(string(tick)))
		}
	}
	for i, l := range lines {
		var b strings.Builder
		for _, p := range l {
			if !htmlFinite(p.v) {
				continue
			}
			cmd := " L"
			if b.Len() == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&b, "%s%s %s", cmd, svgF(x(p)), svgF(y(p.v)))
		}
		tip := svgEsc(series[i].Name())
		if len(l) == 1 {
			d.raw(`<circle class="mark" cx="%s" cy="%s" r="3" fill="%s"><title>%s</title></circle>`, svgF(x(l[0])),
				svgF(y(l[0].v)), colours[i], tip)
		} else if b.Len() > 0 {
			d.raw(`<path class="mark" d="%s" stroke="%s" stroke-width="1.5" fill="none"><title>%s</title></path>`,
				strings.TrimSpace(b.String()), colours[i], tip)
		}
	}
	return d.done()
}

// Distinguishing are the series' names without the words every one of
// them has (the suite, the test, the metric, a host they share): what
// tells them apart, as a legend names them.
func Distinguishing(series []history.Series) []string {
	out := make([]string, len(series))
	if len(series) == 0 {
		return out
	}
	common := map[string]int{}
	for _, s := range series {
		seen := map[string]bool{}
		for _, w := range strings.Fields(s.Name()) {
			if !seen[w] {
				seen[w] = true
				common[w]++
			}
		}
	}
	for i, s := range series {
		var kept []string
		for _, w := range strings.Fields(s.Name()) {
			if len(series) == 1 || common[w] < len(series) {
				kept = append(kept, w)
			}
		}
		out[i] = strings.Join(kept, " ")
		if out[i] == "" {
			out[i] = s.Name()
		}
	}
	return out
}
