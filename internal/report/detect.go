package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/table"
)

// Detection is what qpslab detect found: the change points of the series
// long enough for them, the neighbouring builds of the shorter ones
// compared by their repeats, and, with --fail-on, the gate and what trips
// it.
type Detection struct {
	Series  int                    `json:"series"`
	Changes []analysis.Change      `json:"change_points"`
	Builds  []analysis.BuildChange `json:"builds"`
	Gate    *GateResult            `json:"gate,omitempty"`
	series  []history.Series       // for the note on their order
}

// NewDetection is what detect found in series: their change points, the
// few builds' verdicts and, with a gate (--fail-on), its outcome.
func NewDetection(series []history.Series, changes []analysis.Change, builds []analysis.BuildChange, gate *analysis.Gate) Detection {
	d := Detection{Series: len(series), Changes: changes, Builds: builds, series: series}
	if gate != nil {
		d.Gate = NewGateResult(*gate, d)
	}
	return d
}

// GateResult is the outcome of --fail-on.
type GateResult struct {
	Spec    string                 `json:"spec"`
	Min     float64                `json:"min_magnitude"`
	Failed  bool                   `json:"failed"`
	Changes []analysis.Change      `json:"change_points"`
	Builds  []analysis.BuildChange `json:"builds"`
	// Unconfirmed are the newest build's unconfirmed regressions of at
	// least Min: said, but no failure (one build of a run or two, or a
	// lead short of a sweep's call).
	Unconfirmed []analysis.Change `json:"unconfirmed,omitempty"`
}

// NewGateResult checks g against what detect found.
func NewGateResult(g analysis.Gate, d Detection) *GateResult {
	cs, bs := g.Failures(d.Changes, d.Builds)
	r := &GateResult{Spec: g.Spec, Min: g.Min, Failed: len(cs)+len(bs) > 0, Changes: cs, Builds: bs}
	for _, c := range d.Changes {
		if c.Kind == "unconfirmed regression" && c.Last && math.Abs(c.Magnitude) >= g.Min {
			r.Unconfirmed = append(r.Unconfirmed, c)
		}
	}
	return r
}

// Detect writes d in format f: text (one line per change point and per
// pair of builds compared, then a count), md or markdown (a summary a CI
// job can post: the gate's outcome, then tables), csv or tsv (one row per
// change point or pair of builds), json.
func Detect(w io.Writer, d Detection, f string, colour bool) error {
	return detectDoc(d).Write(w, f, colour)
}

// kindColour is a change's colour on a terminal.
func kindColour(kind string) string {
	switch kind {
	case "regression":
		return "red"
	case "improvement":
		return "green"
	}
	return ""
}

// detectDoc is Detect's doc: on a terminal a line per change point and
// per pair of builds (the kind in its colour) and the count; in Markdown
// the CI summary (detectMarkdown); one row each in csv; the detection in
// json.
func detectDoc(d Detection) Doc {
	data := d
	if data.Changes == nil {
		data.Changes = []analysis.Change{}
	}
	if data.Builds == nil {
		data.Builds = []analysis.BuildChange{}
	}
	doc := Doc{Data: data, Flat: detectFlat(d), What: "qpslab detect"}
	var text Doc
	for _, c := range d.Changes {
		text.Say(table.Plain(c.Series+": "), table.Span{Text: c.Kind, Colour: kindColour(c.Kind)},
			table.Plain(fmt.Sprintf(" %+.1f%% (%s → %s, p=%.2g), %s%s", 100*c.Magnitude, textNum(c.MeanBefore), textNum(c.MeanAfter), c.PValue, arrived(c), changeNotes(c))))
	}
	for _, b := range d.Builds {
		text.Say(table.Plain(b.Series+": "), table.Span{Text: b.Kind, Colour: kindColour(b.Kind)}, table.Plain(buildLine(b, func(string) string { return "" })))
	}
	text.Sayf("%s", detectCounts(d))
	doc.Only(table.Text, text)
	doc.Only(table.Markdown, detectMarkdown(d))
	return doc
}

// changeNotes are what a change point says besides its figures: what
// would confirm an unconfirmed one, and compare's other answer on the two
// builds either side of it.
func changeNotes(c analysis.Change) string {
	var s string
	if c.Confirm != "" {
		s += ": " + c.Confirm
	}
	if c.Note != "" {
		s += "; " + c.Note
	}
	return s
}

// GateLines writes one line per regression that trips the gate, and one
// per unconfirmed regression in the newest build (which does not).
func GateLines(w io.Writer, g *GateResult) {
	for _, c := range g.Unconfirmed {
		fmt.Fprintf(w, "unconfirmed regression in the newest build (the gate passes it by): %s: %+.1f%% (%s → %s, p=%.2g), %s: %s\n", c.Series, 100*c.Magnitude, textNum(c.MeanBefore), textNum(c.MeanAfter), c.PValue, arrived(c), c.Confirm)
	}
	for _, c := range g.Changes {
		fmt.Fprintf(w, "regression in the newest build: %s: %+.1f%% (%s → %s, p=%.2g), %s\n", c.Series, 100*c.Magnitude, textNum(c.MeanBefore), textNum(c.MeanAfter), c.PValue, arrived(c))
	}
	for _, b := range g.Builds {
		fmt.Fprintf(w, "regression in the newest build: %s: %s\n", b.Series, buildLine(b, func(k string) string { return k }))
	}
}

// GateSummary is one line on the gate's outcome.
func GateSummary(g *GateResult) string {
	return fmt.Sprintf("--fail-on %s: %s: %s", g.Spec, gateVerdict(g), gateText(g))
}

func gateVerdict(g *GateResult) string {
	if g.Failed {
		return "failed"
	}
	return "passed"
}

// gateText says how many regressions trip the gate.
func gateText(g *GateResult) string {
	n := len(g.Changes) + len(g.Builds)
	at := ""
	if g.Min > 0 {
		at = fmt.Sprintf(" of %s%% or more", strconv.FormatFloat(100*g.Min, 'f', -1, 64))
	}
	if n == 0 {
		return fmt.Sprintf("no regression%s in the newest build", at)
	}
	return fmt.Sprintf("%d regression(s)%s in the newest build", n, at)
}

// buildLine is a pair of builds compared: "regression between A and B:
// −12.3% (5538 → 4857, 5 and 5 runs, p=0.008, 99.2% confidence)".
func buildLine(b analysis.BuildChange, kind func(string) string) string {
	s := fmt.Sprintf("%s between %s and %s: %+.1f%% (%s → %s", kind(b.Kind), pointName(b.From), pointName(b.To), 100*b.Magnitude, textNum(b.From.Value), textNum(b.To.Value))
	switch {
	case b.Tested && b.Method == analysis.MethodPaired:
		s += fmt.Sprintf(", %d paired rounds (%s), interval %.3f–%.3f, p=%.2g)", b.Rounds, b.Pairing, b.Lo, b.Hi, b.PValue)
	case b.Tested:
		s += fmt.Sprintf(", %s, p=%.2g, %.1f%% confidence)", runCount(b), b.PValue, 100*b.Confidence)
	default:
		s += ", " + runCount(b) + ")"
	}
	if b.Why != "" {
		s += ": " + b.Why
	}
	if b.Note != "" {
		s += "; " + b.Note
	}
	return s
}

func runCount(b analysis.BuildChange) string {
	nf, nt := len(b.From.Values), len(b.To.Values)
	if nf == nt {
		if nf == 1 {
			return "1 run each"
		}
		return fmt.Sprintf("%d runs each", nf)
	}
	return fmt.Sprintf("%d and %d runs", nf, nt)
}

// detectCounts is the closing line: the change points and the builds
// compared.
func detectCounts(d Detection) string {
	var s string
	unconfirmed := 0
	for _, c := range d.Changes {
		if c.Unconfirmed {
			unconfirmed++
		}
	}
	switch n := len(d.Changes) - unconfirmed; {
	case n == 0 && unconfirmed == 0:
		s = fmt.Sprintf("no change points in %d series", d.Series)
	case unconfirmed == 0:
		s = fmt.Sprintf("%d change point(s) in %d series", n, d.Series)
	default:
		s = fmt.Sprintf("%d change point(s) and %d unconfirmed in %d series", n, unconfirmed, d.Series)
	}
	if len(d.Builds) > 0 {
		count := map[string]int{}
		series := map[string]bool{}
		for _, b := range d.Builds {
			count[b.Kind]++
			series[b.Series] = true
		}
		var parts []string
		for _, k := range []struct{ kind, one, many string }{
			{"regression", "regression", "regressions"},
			{"improvement", "improvement", "improvements"},
			{analysis.NoChange, "without a significant change", "without a significant change"},
			{analysis.CannotTell, "cannot tell", "cannot tell"},
		} {
			switch n := count[k.kind]; {
			case n == 1:
				parts = append(parts, "1 "+k.one)
			case n > 1:
				parts = append(parts, fmt.Sprintf("%d %s", n, k.many))
			}
		}
		paired := false
		for _, b := range d.Builds {
			paired = paired || b.Method == analysis.MethodPaired
		}
		if paired {
			s += fmt.Sprintf("; neighbouring builds compared in %d series by compare's verdict on their paired rounds where one plan ran them, else by their runs (Student's t on their logarithms), α %g: %s", len(series), d.Builds[0].Alpha, strings.Join(parts, ", "))
		} else {
			s += fmt.Sprintf("; neighbouring builds compared by their runs in %d series (Student's t on their logarithms, α %g): %s", len(series), d.Builds[0].Alpha, strings.Join(parts, ", "))
		}
	}
	return s
}

// pointName names a point: the build (and version) or commit, or its time.
// In a series ordered by time (runs of one build), the run's time follows.
func timedName(p history.Point, order string) string {
	s := pointName(p)
	if (order == history.OrderTime || order == history.OrderFile) && !p.Time.IsZero() && (p.Build != "" || p.Commit != "") {
		s += " at " + p.Time.Format("2006-01-02 15:04:05")
	}
	return s
}

func pointName(p history.Point) string {
	s := p.Build
	if p.Version != "" && p.Version != p.Build {
		s += " " + p.Version
	}
	if p.Commit != "" {
		if s != "" {
			s += " "
		}
		s += "commit " + p.Commit
	}
	if s == "" {
		s = p.Time.Format("2006-01-02 15:04")
	}
	return s
}

// arrived names where a change arrived: the build (and version) or commit
// of the first point after it and of the last point before, and the
// points its 95 % interval spans when that is more than one.
func arrived(c analysis.Change) string {
	out := "arrived in " + timedName(c.Arrived, c.Order)
	if c.Index > 0 {
		out += ", after " + timedName(c.Before, c.Order)
	}
	if e, l := timedName(c.Earliest, c.Order), timedName(c.Latest, c.Order); e != l {
		out += fmt.Sprintf(" (95%%: from %s to %s)", e, l)
	}
	return out
}

// detectFlat is a detection as csv and tsv give it: one row per change
// point and per pair of builds compared.
func detectFlat(d Detection) *table.Table {
	t := flatTable("test", "threads", "config", "host", "metric", "kind", "magnitude", "mean_before", "mean_after", "pvalue", "index", "points",
		"arrived_build", "arrived_version", "arrived_commit", "arrived_time", "before_build", "before_version",
		"source", "earliest_build", "earliest_version", "latest_build", "latest_version", "runs_before", "runs_after", "note")
	num := func(v float64, fm byte, prec int) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, fm, prec, 64)
	}
	for _, c := range d.Changes {
		t.Add(c.Test, strconv.Itoa(c.Threads), c.Config, c.Host, c.Metric, c.Kind, num(c.Magnitude, 'f', 4),
			num(c.MeanBefore, 'g', 6), num(c.MeanAfter, 'g', 6), num(c.PValue, 'g', 3),
			strconv.Itoa(c.Index), strconv.Itoa(c.Points), c.Arrived.Build, c.Arrived.Version, c.Arrived.Commit, c.Arrived.Time.Format("2006-01-02T15:04:05Z"),
			c.Before.Build, c.Before.Version, "change point", c.Earliest.Build, c.Earliest.Version, c.Latest.Build, c.Latest.Version,
			strconv.Itoa(c.Before.N), strconv.Itoa(c.Arrived.N), strings.TrimPrefix(strings.TrimPrefix(changeNotes(c), ": "), "; "))
	}
	for _, b := range d.Builds {
		t.Add(b.Test, strconv.Itoa(b.Threads), b.Config, b.Host, b.Metric, b.Kind, num(b.Magnitude, 'f', 4),
			num(b.From.Value, 'g', 6), num(b.To.Value, 'g', 6), num(b.PValue, 'g', 3),
			"", "", b.To.Build, b.To.Version, b.To.Commit, b.To.Time.Format("2006-01-02T15:04:05Z"),
			b.From.Build, b.From.Version, "builds", "", "", "", "", strconv.Itoa(len(b.From.Values)), strconv.Itoa(len(b.To.Values)), b.Note)
	}
	return t
}

// detectMarkdown is the summary for a CI job (a pull-request comment, a
// job summary): the gate's outcome first, then a table of the change
// points and one of the builds compared.
func detectMarkdown(d Detection) Doc {
	var doc Doc
	doc.Sayf("### qpslab detect")
	doc.Gap()
	if g := d.Gate; g != nil {
		doc.Sayf("**Gate %s** (`--fail-on %s`): %s.", gateVerdict(g), g.Spec, gateText(g))
		doc.Gap()
		if g.Failed {
			for _, c := range g.Changes {
				doc.Item(fmt.Sprintf("`%s`: %+.1f%% (%s → %s, p=%.2g), %s", c.Series, 100*c.Magnitude, textNum(c.MeanBefore), textNum(c.MeanAfter), c.PValue, arrived(c)))
			}
			for _, b := range g.Builds {
				doc.Item(fmt.Sprintf("`%s`: %s", b.Series, buildLine(b, func(k string) string { return k })))
			}
			doc.Gap()
		}
		if len(g.Unconfirmed) > 0 {
			doc.Sayf("%d unconfirmed regression(s) in the newest build (no failure: one build of a run or two, or a lead short of a call):", len(g.Unconfirmed))
			doc.Gap()
			for _, c := range g.Unconfirmed {
				doc.Item(fmt.Sprintf("`%s`: %+.1f%% (%s → %s, p=%.2g), %s: %s", c.Series, 100*c.Magnitude, textNum(c.MeanBefore), textNum(c.MeanAfter), c.PValue, arrived(c), c.Confirm))
			}
			doc.Gap()
		}
	}
	doc.Sayf("%s.", mdEscape(detectCounts(d)))
	if len(d.Changes) > 0 {
		doc.Gap()
		t := table.New("series", "change", "before → after", "p", "arrived in", "after", "95 % interval", "note")
		for _, c := range d.Changes {
			interval := timedName(c.Earliest, c.Order)
			if l := timedName(c.Latest, c.Order); l != interval {
				interval += " … " + l
			}
			before := ""
			if c.Index > 0 {
				before = timedName(c.Before, c.Order)
			}
			t.Add(c.Series, fmt.Sprintf("%s %+.1f %%", c.Kind, 100*c.Magnitude), textNum(c.MeanBefore)+" → "+textNum(c.MeanAfter), fmt.Sprintf("%.2g", c.PValue),
				timedName(c.Arrived, c.Order), before, interval, strings.TrimPrefix(strings.TrimPrefix(changeNotes(c), ": "), "; "))
		}
		doc.Put(t)
	}
	if len(d.Builds) > 0 {
		doc.Gap()
		t := table.New("series", "from", "to", "verdict", "change", "medians", "runs", "p")
		for _, b := range d.Builds {
			p := "-"
			if b.Tested {
				p = fmt.Sprintf("%.2g", b.PValue)
			}
			verdict := b.Kind
			if b.Why != "" {
				verdict += " (" + b.Why + ")"
			}
			if b.Note != "" {
				verdict += "; " + b.Note
			}
			t.Add(b.Series, pointName(b.From), pointName(b.To), verdict, fmt.Sprintf("%+.1f %%", 100*b.Magnitude), textNum(b.From.Value)+" → "+textNum(b.To.Value),
				runCount(b), p)
		}
		doc.Put(t)
	}
	return doc
}

// mdEscape keeps a cell in its table cell.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
