package report

import "html/template"

// RelBars is a chart of relative values as the seeds draw them: a slot per
// category (a test), a bar per series (a build against the base), the y
// axis not from 0 (svgRelAxis) with a reference line at 1.0. values are
// [series][category], NaN where a series has none. A study draws one per
// group; "" when there is nothing to draw.
func RelBars(head ChartHead, cats, series []string, values [][]float64) template.HTML {
	bars := make([]svgBars, len(series))
	for i, s := range series {
		bars[i] = svgBars{Name: s, Colour: svgColour(i), Values: values[i]}
		for j, v := range values[i] {
			tip := s + ": " + cats[j] + " "
			if htmlFinite(v) {
				tip += htmlDec(v, 2)
			}
			bars[i].Tips = append(bars[i].Tips, tip)
		}
	}
	return svgBarChart(head, cats, bars, true)
}
