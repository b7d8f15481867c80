package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
)

// One way to name a point: detect's words, the charts' tooltips and the
// dashboard's tables name the commit, and the run's time in a series of
// one build's runs (time or file order).
func TestPointName(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := history.Point{Build: "ma10.2.7", Version: "10.2.7", Commit: "c0ffee07", Time: at}
	for _, c := range []struct{ order, name, tick string }{
		{history.OrderVersion, "ma10.2.7 10.2.7 commit c0ffee07", "ma10.2.7 10.2.7"},
		{history.OrderTime, "ma10.2.7 10.2.7 commit c0ffee07 at 2026-01-02 03:04:05", "2026-01-02 03:04"},
		{history.OrderFile, "ma10.2.7 10.2.7 commit c0ffee07 at 2026-01-02 03:04:05", "2026-01-02 03:04"},
	} {
		if got := PointName(p, c.order); got != c.name {
			t.Errorf("PointName in %s order = %q, want %q", c.order, got, c.name)
		}
		if got := PointTick(p, c.order); got != c.tick {
			t.Errorf("PointTick in %s order = %q, want %q", c.order, got, c.tick)
		}
	}
}

// A history chart's value axis never goes below 0 for values that cannot
// (a qps series holding a 0), and draws the noise band around each
// segment's median.
func TestHistoryChartAxisAndNoise(t *testing.T) {
	s := history.Series{Suite: "sysbench", Test: "t", Metric: "qps", Unit: "qps", Order: history.OrderVersion}
	for i, v := range []float64{0, 100000, 99000, 101000, 100500, 99500, 80000, 81000, 79000, 80500, 79500, 80000} {
		s.Points = append(s.Points, history.Point{Build: "b" + strconv.Itoa(i), Value: v, N: 1})
	}
	c := analysis.Change{Index: 6, Kind: "regression", Magnitude: -0.2, MeanBefore: 100000, MeanAfter: 80000,
		PValue: 0, Order: s.Order,
		Arrived: s.Points[6], Before: s.Points[5]}
	svg := string(HistoryChart{Series: s, Changes: []analysis.Change{c}, Title: s.Name(), From: 0, To: len(s.Points),
		Noise: 0.02, NoiseWhat: "floor"}.SVG())
	for _, m := range regexp.MustCompile(`<text class="tick" [^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		if strings.HasPrefix(m[1], "-") {
			t.Errorf("a tick at %s: the axis goes below 0 for a qps series", m[1])
		}
	}
	if n := strings.Count(svg, `class="noise"`); n != 2 {
		t.Errorf("%d noise bands, want one per segment (2)", n)
	}
	if !strings.Contains(svg, "±2.0 %") || !strings.Contains(svg, "p &lt; 1e-15") || strings.Contains(svg, "p=0") {
		t.Errorf("the chart does not say its band or writes p = 0: %.300s", svg)
	}
}

// Several series on one chart: each a line of its own colour, the legend
// naming what tells them apart.
func TestOverlayChart(t *testing.T) {
	var ss []history.Series
	for _, thr := range []int{1, 8, 32} {
		s := history.Series{Suite: "sysbench", Test: "point-query", Metric: "qps", Threads: thr, Config: "default",
			Order: history.OrderVersion}
		for i := 0; i < 5; i++ {
			s.Points = append(s.Points, history.Point{Build: "b" + strconv.Itoa(i+thr%3), Value: float64(1000 * thr)})
		}
		ss = append(ss, s)
	}
	labels := Distinguishing(ss)
	if strings.Join(labels, "|") != "thr=1|thr=8|thr=32" {
		t.Errorf("labels %q, want what tells the series apart", labels)
	}
	svg := string(OverlayChart("point-query qps", ss, labels, "", ""))
	if n := strings.Count(svg, `<path class="mark"`); n != 3 || !strings.Contains(svg, ">thr=32</text>") {
		t.Errorf("%d lines, want 3 with a legend: %.300s", n, svg)
	}
	// A range of builds: b2 to b4 of b1 … b6.
	if bs := OverlayBuilds(ss); strings.Join(bs, " ") != "b1 b2 b3 b4 b5 b6" {
		t.Errorf("the builds %q, want b1 to b6 in order", bs)
	}
	part := string(OverlayChart("point-query qps", ss, labels, "b2", "b4"))
	if ticks := regexp.MustCompile(`class="tick xlabel"[^>]*>([^<]*)<`).FindAllStringSubmatch(part, -1); len(ticks) != 3 ||
		ticks[0][1] != "b2" || ticks[2][1] != "b4" {
		t.Errorf("the builds b2 to b4 shown as %q", ticks)
	}
}

// The relative-QPS bars keep the seeds' axis (not from 0) but hang from
// the 1.0 line, each tick saying how much faster or slower it is, so that
// 0.77 reads as 23 % slower; a group's geomean is shown, not only "all"'s.
func TestRelativeBars(t *testing.T) {
	svg := string(svgBarChart(ChartHead{"rel:g", "g: QPS relative to base", "relative QPS"}, []string{"a", "b"},
		[]svgBars{{Name: "other", Colour: "#000", Values: []float64{0.77, 1.1}}}, true))
	bar := regexp.MustCompile(`<rect class="mark" x="[^"]*" y="([^"]*)" width="[^"]*" height="([^"]*)"`)
	bars := bar.FindAllStringSubmatch(svg, -1)
	ref := regexp.MustCompile(`<line class="ref" x1="[^"]*" y1="([^"]*)"`).FindStringSubmatch(svg)
	if len(bars) != 2 || ref == nil || bars[0][1] != ref[1] {
		t.Fatalf("the 0.77 bar does not hang from the 1.0 line: bars %q, the line %q", bars, ref)
	}
	if !strings.Contains(svg, "23% slower") || !strings.Contains(svg, ">-20%</text>") || !strings.Contains(svg,
		`width="720.0"`) {
		t.Errorf("the axis does not say what 0.77 means, or the chart is narrow: %.400s", svg)
	}
	c := &analysis.Comparison{Others: []string{"o"}, Rows: []analysis.Row{{Group: "g",
		Others: []analysis.Cell{{Rel: 0.5}}},
		{Group: "g", Others: []analysis.Cell{{Rel: 2}}}, {Group: "h", Others: []analysis.Cell{{Rel: 3}}}}}
	if g := groupGeomeans(c, "g"); len(g) != 1 || g[0] < 0.999 || g[0] > 1.001 {
		t.Errorf("group g's geomean %v, want 1", g)
	}
}
