package report

import (
	"bytes"
	"fmt"
	"io"

	"github.com/qpslab/qpslab/internal/result"
)

// Parts of the HTML report for pages that show them among others (qpslab
// serve): the same markup, colours and charts as the report file, from the
// same template.

// HTMLStyle is the report's style sheet.
func HTMLStyle() (string, error) {
	var b bytes.Buffer
	if err := htmlTemplate.ExecuteTemplate(&b, "style", nil); err != nil {
		return "", fmt.Errorf("html style: %w", err)
	}
	return b.String(), nil
}

// HTMLHead writes the report's heading: its title, what it compares and
// the links to its sections.
func HTMLHead(w io.Writer, m Model) error {
	if err := htmlTemplate.ExecuteTemplate(w, "head", htmlBuildPage(m)); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// HTMLSections writes the report's sections that m has (the comparison,
// its group statistics and charts, steps, timelines, hardware per op,
// hosts, configs), without the page around them.
func HTMLSections(w io.Writer, m Model) error {
	if err := htmlTemplate.ExecuteTemplate(w, "sections", htmlBuildPage(m)); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// RunSeries is a run's per-second throughput and p99 response time, as a
// timeline shows them; nil when the run has no samples.
func RunSeries(label string, r result.Run) *Series {
	if len(r.Samples) == 0 {
		return nil
	}
	s := seriesOf(label, r)
	return &s
}

// LabelColour is the colour of the i-th label of a page (the base is 0).
func LabelColour(i int) string { return svgColour(i) }

// Num formats an absolute value as the report does: whole from 100 on,
// else four significant digits; "-" for none.
func Num(v float64) string { return htmlNum(v) }
