package serve

import (
	"html/template"
	"strconv"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/report"
)

// A history chart is drawn by report (report.HistoryChart), as the HTML
// report's charts are: one drawing, one axis and one way of naming a
// point (report.PointName) for the terminal, the report and the pages.

// maxBuckets is the most spans a chart draws (about two pixels each).
const maxBuckets = report.MaxBuckets

// Bucket is consecutive points of a series drawn as one.
type Bucket = report.Bucket

// pointName names a point as qpslab detect and the report do: its build,
// version and commit, or its time (report.PointName).
func pointName(p history.Point, order string) string { return report.PointName(p, order) }

// aggregate cuts points [from, to) into at most n spans of equal length.
func aggregate(pts []history.Point, order string, from, to, n int) []Bucket {
	return report.Aggregate(pts, order, from, to, n)
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

// changeLabel is how a chart and a page name a change point: its kind,
// its magnitude and where it arrived.
func changeLabel(c analysis.Change) string { return report.ChangeLabel(c) }

// chartLinks are what a history chart links its marks to: a point's runs
// (nil: none) and a change point's triage state ("" for none), and the
// noise band around it (0: none) with what it is.
type chartLinks struct {
	point     func(i int) string
	triage    func(c analysis.Change) string
	noise     float64
	noiseWhat string
}

// historyChart draws points [w.From, w.To) of s, its change points marked
// and annotated. href is the series' page, for the script's zoom.
func historyChart(s Series, w window, href string) template.HTML {
	return historyChartLinked(s, w, href, chartLinks{})
}

// historyChartLinked is historyChart with its points linked to their runs,
// its change points marked with their triage and its noise band.
func historyChartLinked(s Series, w window, href string, links chartLinks) template.HTML {
	return report.HistoryChart{Series: s.Series, Changes: s.Changes, Title: shortName(s.Name()), From: w.From,
		To: w.To, Href: href,
		Point: links.point, Triage: links.triage, Noise: links.noise, NoiseWhat: links.noiseWhat}.SVG()
}

// pointTime formats a point's time for tables ("" for none).
func pointTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04")
}
