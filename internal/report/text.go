package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/table"
)

const (
	ansiRed   = table.ANSIRed
	ansiGreen = table.ANSIGreen
	ansiReset = table.ANSIReset
)

func textNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// relCell is a relative value as printed: two decimals, "~" when repeats
// showed no significant difference, coloured on a terminal.
func relCell(c analysis.Cell, colour bool) string {
	if c.Missing || math.IsNaN(c.Rel) {
		return "-"
	}
	s := fmt.Sprintf("%.2f", c.Rel)
	if h := halfWidth(c.Verdict); h != "" {
		s += h
	}
	s += verdictMark(c.Verdict)
	if colour {
		switch c.Verdict.Colour() {
		case "red":
			s = ansiRed + s + ansiReset
		case "green":
			s = ansiGreen + s + ansiReset
		}
	}
	return s
}

// halfWidth is a verdict's interval as "±h%": half its width on the log
// scale, in per cent of the value ("" where it has none).
func halfWidth(v analysis.Verdict) string {
	if !(v.Lo > 0) || !(v.Hi > 0) || math.IsInf(v.Hi, 0) {
		return ""
	}
	h := 100 * (math.Sqrt(v.Hi/v.Lo) - 1)
	switch {
	case math.IsNaN(h) || math.IsInf(h, 0):
		return ""
	case h < 10:
		return fmt.Sprintf("±%.1f%%", h)
	}
	return fmt.Sprintf("±%.0f%%", h)
}

// metricMark is verdictMark without its space, "" where nothing was
// tested.
func metricMark(v analysis.Verdict) string {
	m := strings.TrimSpace(verdictMark(v))
	if v.NotAfterFDR {
		m += "*" // a change the correction over the tests does not keep
	}
	return m
}

// verdictMark is what follows a relative value: + better and - worse
// (beyond the noise), ≈ the same within the floor, ~ no significant
// change (undecided), = significant but inside the noise floor, ? cannot
// tell; nothing where there was nothing to test with (one imported value
// a side).
func verdictMark(v analysis.Verdict) string {
	switch v.Kind {
	case analysis.KindBetter:
		return " +"
	case analysis.KindWorse:
		return " -"
	case analysis.KindSame:
		return " ~"
	case analysis.KindInsideNoise:
		return " ="
	case analysis.KindEquivalent:
		return " ≈"
	}
	if v.Method == analysis.MethodNone {
		return ""
	}
	return " ?"
}

// verdictLegend says what the relative values, their intervals and marks
// mean in this comparison.
func verdictLegend(c *analysis.Comparison) []string {
	var out []string
	if n := c.Pairings[result.PairedSlices] + c.Pairings[result.PairedTests] + c.Pairings[result.PairedPasses]; n > 0 {
		var how []string
		for _, p := range []struct{ k, what string }{
			{result.PairedSlices, "test-level, slices alternating between the servers"},
			{result.PairedTests, "test-level, whole tests alternating"},
			{result.PairedPasses, "pass-level, each label's whole pass in turn (rounds minutes apart)"},
		} {
			if c.Pairings[p.k] > 0 {
				how = append(how, fmt.Sprintf("%d %s", c.Pairings[p.k], p.what))
			}
		}
		looks := ""
		if c.Looks > 1 {
			looks = fmt.Sprintf(" (the level of each of up to %d looks, --until-decided, so that all of them together stay within α = %g)", c.Looks, c.Alpha)
		}
		out = append(out, fmt.Sprintf("paired rows (%s): rel is a geometric mean of per-repeat ratios (each repeat's the geometric mean of its rounds', wild ones left out; one repeat: its rounds' trimmed mean), ±h%% half its %.1f %% interval%s; a change where the interval excludes 1", strings.Join(how, "; "), 100*c.Confidence, looks))
	}
	for i, ps := range c.Pools {
		for _, p := range ps {
			if p.Tests == 0 {
				continue
			}
			effect := fmt.Sprintf("no repeat effect over %d tests (F test p=%.2g)", p.Tests, p.P)
			if p.Repeats() {
				effect = fmt.Sprintf("the repeats differ beyond their rounds' noise over %d tests (intraclass correlation %.2f, F test p=%.2g)", p.Tests, p.ICC, p.P)
			}
			prior := "each test's variance its own (too few tests for a prior)"
			if p.PriorDF > 0 {
				prior = fmt.Sprintf("each test's variance moderated toward the pool's (empirical Bayes, %.0f prior degrees of freedom)", p.PriorDF)
			}
			first := ""
			if p.FirstOut {
				first = fmt.Sprintf("; its first repeats differ from the later ones (%+.1f %%, t test p=%.2g over its tests) and are left out as a warm-up", 100*p.FirstEffect, p.FirstP)
			}
			out = append(out, fmt.Sprintf("%s, %s: %s; each test's interval is on its repeats (each the mean of its rounds, wild ones left out), %s%s", c.Others[i], p.Name, effect, prior, first))
		}
	}
	if lo, hi, ok := runSigmas(c); ok {
		out = append(out, fmt.Sprintf("the paired intervals take in another run's variance on this host (σ %.1f to %.1f %% of the ratio: each test's from the A/A plans stored, at least %d, else the default %.0f %%; over the plans a test was measured in), the floor staying the margin of a call", 100*lo, 100*hi, analysis.MinRunEffects, 100*analysis.DefaultRunSigma))
	}
	if n := c.Pairings["unpaired"]; n > 0 {
		out = append(out, fmt.Sprintf("%d unpaired row(s): rel is the ratio of medians (repeats: Mann-Whitney U; one run a side: each run's own seconds, which miss the drift between runs)", n))
	}
	floor := fmt.Sprintf("±%.0f %% (the default; qpslab run --aa measures this host's noise floor)", 100*analysis.DefaultFloor)
	if calibrated(c) {
		floor = "this host's noise floor (the NOISE column, from qpslab run --aa), ±5 % where it is not known"
	}
	out = append(out, fmt.Sprintf("+ better, - worse: significant at α = %.2f and its interval beyond %s; ≈ the same within the floor (its %.0f %% interval inside it); ~ undecided: no significant change, or a significant one whose interval reaches across the floor, not shown within it either (more repeats, or --until-decided); = significant but inside the floor; ? cannot tell (too few rounds or seconds); colour only for + and -; a change whose p-value the false-discovery correction over the label's tests (Benjamini–Hochberg at the same level) does not keep is listed as such", c.Alpha, floor, 100*(1-2*(1-c.Confidence))))
	return out
}

// runSigmas are the smallest and largest between-run σ the verdicts took
// in, and whether any did.
func runSigmas(c *analysis.Comparison) (lo, hi float64, ok bool) {
	lo = math.Inf(1)
	for _, r := range c.Rows {
		for _, o := range r.Others {
			if s := o.Verdict.RunSigma; s > 0 {
				lo, hi, ok = math.Min(lo, s), math.Max(hi, s), true
			}
		}
	}
	return lo, hi, ok
}

// calibrated says whether some row has this host's noise floor.
func calibrated(c *analysis.Comparison) bool {
	for _, r := range c.Rows {
		for _, o := range r.Others {
			if o.Verdict.Calibrated {
				return true
			}
		}
	}
	return false
}

// noiseCell is a row's noise floor, "±x%", or "-" where not calibrated.
func noiseCell(r analysis.Row) string {
	for _, o := range r.Others {
		if o.Verdict.Calibrated {
			return fmt.Sprintf("±%.1f%%", 100*o.Verdict.Floor)
		}
	}
	return "-"
}

// VerdictSummary leads a comparison: per other label, which tests changed
// beyond the noise, by how much, with the interval, and how many did not.
func VerdictSummary(w io.Writer, c *analysis.Comparison) {
	for i, o := range c.Others {
		t := c.Tally[i]
		fdr := ""
		if t.NotAfterFDR > 0 {
			fdr = fmt.Sprintf(", %d of them not after false-discovery correction", t.NotAfterFDR)
		}
		fmt.Fprintf(w, "Verdict for %s against %s: %d test(s) changed beyond the noise (%d worse, %d better%s); %d the same within the floor; %d undecided; %d inside the noise floor; %d cannot tell\n",
			o, c.Base, t.Better+t.Worse, t.Worse, t.Better, fdr, t.Equivalent, t.Same, t.Inside, t.CannotTell)
		for _, kind := range []string{analysis.KindWorse, analysis.KindBetter} {
			for _, r := range c.Rows {
				v := r.Others[i].Verdict
				if v.Kind != kind || r.Group == "load" {
					continue
				}
				iv := ""
				if v.Lo > 0 && v.Hi > 0 {
					iv = fmt.Sprintf(" [%.2f, %.2f]", v.Lo, v.Hi)
				}
				how := v.Method
				if v.Method == analysis.MethodPaired {
					how = fmt.Sprintf("%d rounds, %s", v.N, v.Pairing)
				}
				if v.NotAfterFDR {
					how += fmt.Sprintf("; not after false-discovery correction, q=%.2g", v.Q)
				}
				fmt.Fprintf(w, "  %-6s %s, %d thread(s): %.2f%s (%s)\n", kind, rowName(c, r), r.Threads, v.Rel, iv, how)
			}
		}
		// The cost beside the rate: the server's CPU per operation.
		if t.CostTested > 0 {
			cfdr := ""
			if t.CostNotAfterFDR > 0 {
				cfdr = fmt.Sprintf(", %d of them not after false-discovery correction", t.CostNotAfterFDR)
			}
			fmt.Fprintf(w, "  cost (server CPU per operation, lower is better; a cost, not a rate, and not in the counts above): %d of %d test(s) changed beyond the noise, %d lower, %d higher%s\n",
				t.CostBetter+t.CostWorse, t.CostTested, t.CostBetter, t.CostWorse, cfdr)
			for _, kind := range []string{analysis.KindWorse, analysis.KindBetter} {
				for _, r := range c.Rows {
					cv := r.Others[i].Cost
					if cv == nil || cv.Kind != kind || r.Group == "load" {
						continue
					}
					word := map[string]string{analysis.KindWorse: "higher", analysis.KindBetter: "lower"}[kind]
					rate := analysis.VerdictWords(r.Others[i].Verdict)
					both := ""
					if v := r.Others[i].Verdict; v.Changed() && v.Kind != kind {
						both = "; the rate and the cost disagree: both are real"
					}
					if cv.NotAfterFDR {
						both += fmt.Sprintf("; not after false-discovery correction, q=%.2g", cv.Q)
					}
					fmt.Fprintf(w, "    cost %-6s %s, %d thread(s): server CPU/op %.2f [%.2f, %.2f] (rate %s%s)\n", word, rowName(c, r), r.Threads, cv.Rel, cv.Lo, cv.Hi, rate, both)
				}
			}
		}
		// The unstable: slices in two modes, on either label.
		for _, r := range c.Rows {
			if r.Group == "load" || i >= len(r.Others) {
				continue
			}
			var parts []string
			for _, s := range []struct {
				label string
				m     *analysis.Modes
			}{{c.Base, r.Base.Modes}, {o, r.Others[i].Modes}} {
				if s.m != nil {
					parts = append(parts, fmt.Sprintf("%s's %d slices in two modes, %s (%.0f %%) and %s (%.0f %%)", s.label, s.m.Slices,
						textNum(s.m.Low), 100*s.m.LowShare, textNum(s.m.High), 100*s.m.HighShare))
				}
			}
			if len(parts) > 0 {
				fmt.Fprintf(w, "  unstable %s, %d thread(s): %s; its interval covers the geometric mean of the paired slices' ratios (each repeat's mean log ratio), not the ratio of mean rates\n", rowName(c, r), r.Threads, strings.Join(parts, "; "))
			}
		}
		// The undecided, with what would decide them.
		var more []string
		for _, r := range c.Rows {
			if v := r.Others[i].Verdict; v.Kind == analysis.KindSame && v.More > 0 && r.Group != "load" {
				more = append(more, fmt.Sprintf("%s (%d)", rowName(c, r), v.More))
			}
		}
		if len(more) > 0 {
			fmt.Fprintf(w, "  undecided, with about how many more repeats like theirs would decide each: %s\n", strings.Join(more, ", "))
		}
	}
	for _, ic := range c.Idle {
		most := ""
		if ic.MaxTest != "" {
			most = fmt.Sprintf(", at most %.1f %% (%s)", ic.Max, ic.MaxTest)
		}
		fmt.Fprintf(w, "The other servers' CPU while %s was measured: median %.1f %% of one CPU%s\n", ic.Label, ic.Median, most)
	}
	StateSummary(w, c)
}

// StateSummary says whether each test's repeats found the same database
// (analysis.State): how many tests' state figure agrees within
// analysis.StateAgrees across their repeats on every label, and each
// one that does not, with its values per repeat.
func StateSummary(w io.Writer, c *analysis.Comparison) {
	if len(c.State) == 0 {
		return
	}
	tests, off := map[string]bool{}, map[string]bool{}
	var odd []analysis.StateRow
	for _, r := range c.State {
		k := r.Test + "/" + strconv.Itoa(r.Threads)
		tests[k] = true
		if !(r.Spread <= analysis.StateAgrees) {
			off[k] = true
			odd = append(odd, r)
		}
	}
	fmt.Fprintf(w, "Database state per repeat (%s): agrees within %.0f %% across the repeats of %d of %d test(s) on every label\n",
		c.State[0].Figure, 100*analysis.StateAgrees, len(tests)-len(off), len(tests))
	for _, r := range odd {
		vals := make([]string, len(r.Values))
		for i, v := range r.Values {
			vals[i] = strconv.FormatFloat(v, 'g', 4, 64)
		}
		fmt.Fprintf(w, "  %s on %s: %s by repeat\n", r.Test, r.Label, strings.Join(vals, " "))
	}
}

func absCell(s analysis.Summary) string {
	if s.N == 0 {
		return "-"
	}
	v := textNum(s.Center)
	if s.N > 1 && s.Center != 0 {
		// Only where an interval exists: too few repeats give none, and
		// the header says how many it takes.
		if pct := 100 * math.Max(s.Hi-s.Center, s.Center-s.Lo) / s.Center; !math.IsInf(pct, 0) && !math.IsNaN(pct) {
			v += fmt.Sprintf(" ±%.0f%%", pct)
		}
	}
	return v
}

// marked is s's marks: "!" when one of its runs missed its goal, "#"
// when one had stalls.
func marked(s analysis.Summary) string {
	m := ""
	if s.Missed > 0 {
		m += missedMark
	}
	if s.Stalled > 0 {
		m += stallMark
	}
	return m
}

// stallMark follows a value whose run had stalled seconds.
const stallMark = " #"

// missedMark follows a value whose run missed a goal it was judged by
// (the Insert Benchmark's insert SLA): shown, and marked.
const missedMark = " !"

// missedLegend says what the mark means, when a comparison has one.
func missedLegend(c *analysis.Comparison) string {
	var missed, stalled string
	for _, r := range c.Rows {
		for _, s := range append([]analysis.Summary{r.Base}, cellSummaries(r.Others)...) {
			if s.Missed > 0 && missed == "" {
				missed = fmt.Sprintf("!: a run of the step missed its %s (see the run's verdict); its value is shown, not excluded", s.MissedWhat)
			}
			if s.Stalled > 0 && stalled == "" {
				stalled = fmt.Sprintf("#: a run of the test stalled: seconds below %.0f %% of its median second (listed below the table)", 100*result.StallFraction)
			}
		}
	}
	return strings.TrimSpace(missed + "\n" + stalled)
}

func cellSummaries(cs []analysis.Cell) []analysis.Summary {
	out := make([]analysis.Summary, len(cs))
	for i, c := range cs {
		out[i] = c.Summary
	}
	return out
}

// versionOf is " (version)" of label i (0 the base), or "" when unknown or
// the label says it already.
func versionOf(c *analysis.Comparison, i int) string {
	if i >= len(c.Versions) || c.Versions[i] == "" {
		return ""
	}
	label := c.Base
	if i > 0 {
		label = c.Others[i-1]
	}
	if strings.Contains(label, c.Versions[i]) {
		return ""
	}
	return " (" + c.Versions[i] + ")"
}

// Compare writes a comparison in format f ("text" colours when colour is
// set): compareDoc.
func Compare(w io.Writer, c *analysis.Comparison, f string, colour bool) error {
	return compareDoc(c).Write(w, f, colour)
}

// stallList names the tests whose runs stalled, per label.
func stallList(w io.Writer, c *analysis.Comparison) {
	var lines []string
	for _, r := range c.Rows {
		for i, s := range append([]analysis.Summary{r.Base}, cellSummaries(r.Others)...) {
			if s.Stalled == 0 {
				continue
			}
			label := c.Base
			if i > 0 {
				label = c.Others[i-1]
			}
			lines = append(lines, fmt.Sprintf("  %s, %d thread(s), %s: %d of %d run(s), the longest stall %.0f s", rowName(c, r), r.Threads, label, s.Stalled, s.N, s.StallMax))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "Stalls (seconds below 10 % of the run's median second):")
		fmt.Fprintln(w, strings.Join(lines, "\n"))
		fmt.Fprintln(w)
	}
}

// rowName is a row's test, with its conditions when the comparison's rows
// differ in them (open and closed loop side by side).
func rowName(c *analysis.Comparison, r analysis.Row) string {
	if !c.MixedConditions {
		return r.Test
	}
	return r.Test + " [" + r.Conditions + "]"
}

func unitSuffix(u string) string {
	if u == "" || u == "qps" {
		return ""
	}
	return " " + u
}

var writeTest = regexp.MustCompile(`delete|insert|update|write`)

// qpsTSV writes the reference's sum_qps_csv.sh layout: the inputs as
// "col-N : label", a blank line, a "col-1<TAB>col-2…" header, then one line
// per test with a value per column and the test name, in three groups (point:
// names with "point"; write: delete, insert, update, write; range: the rest),
// sorted by the reference's file name (sb.r.qps.<test>.range<R>) within each.
// The relative file has a column per other label: its QPS / the base's,
// printed %.2f.
func qpsTSV(w io.Writer, c *analysis.Comparison, rel bool) error {
	labels := append([]string{c.Base}, c.Others...)
	for i, l := range labels {
		fmt.Fprintf(w, "col-%d : %s\n", i+1, l)
	}
	fmt.Fprintln(w)
	var head []string
	for i := range labels {
		if rel && i == 0 {
			continue
		}
		head = append(head, fmt.Sprintf("col-%d", i+1))
	}
	fmt.Fprintln(w, strings.Join(head, "\t"))
	group := func(test string) int {
		switch {
		case strings.Contains(test, "point"):
			return 0
		case writeTest.MatchString(test):
			return 2
		}
		return 1
	}
	fileName := func(test string) string { // point-query.pre_range=100 → point-query.pre.range100
		return strings.Replace(test, "_range=", ".range", 1)
	}
	var rows []analysis.Row
	for _, r := range c.Rows {
		if r.Test != "load" { // the reference's layout has the tests only
			rows = append(rows, r)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		gi, gj := group(rows[i].Test), group(rows[j].Test)
		if gi != gj {
			return gi < gj
		}
		if fi, fj := fileName(rows[i].Test), fileName(rows[j].Test); fi != fj {
			return fi < fj
		}
		return rows[i].Threads < rows[j].Threads
	})
	for _, r := range rows {
		var cells []string
		if !rel {
			cells = append(cells, fmt.Sprintf("%.0f", r.Base.Center))
		}
		for _, o := range r.Others {
			switch {
			case o.Missing:
				cells = append(cells, "")
			case rel:
				cells = append(cells, fmt.Sprintf("%.2f", o.Rel))
			default:
				cells = append(cells, fmt.Sprintf("%.0f", o.Center))
			}
		}
		fmt.Fprintln(w, strings.Join(cells, "\t")+"\t"+r.Test)
	}
	return nil
}

// finite turns v into maps, slices and values encoding/json writes as it
// would write v (field names from json tags, omitempty, embedded structs
// flattened, omitzero, marshalers kept), with NaN and ±Inf as nil. No library does
// this: encoding/json has no option for non-finite floats.
func finite(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type().Implements(reflect.TypeFor[json.Marshaler]()) && v.Kind() != reflect.Pointer {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return finite(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface()
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = finite(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			out[fmt.Sprint(k.Interface())] = finite(v.MapIndex(k))
		}
		return out
	case reflect.Struct:
		out := map[string]any{}
		structFields(v, out)
		return out
	}
	return v.Interface()
}

func structFields(v reflect.Value, out map[string]any) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			if fv.Kind() == reflect.Struct {
				inner := map[string]any{}
				structFields(fv, inner)
				for k, x := range inner {
					if _, ok := out[k]; !ok { // the outer struct's fields win
						out[k] = x
					}
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if fv.IsZero() && slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" }) {
			continue
		}
		out[name] = finite(fv)
	}
}

// absMetric prints a per-op figure as sum_met.sh does: cpu/o with six
// decimals, o/s whole, the rest with three; 0 as "0".
func absMetric(i int, v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	case i == 0:
		return fmt.Sprintf("%.6f", v)
	case i == 5:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// Metrics writes the seed's per-op table for each test: absolute
// `cpu/o cs/o r/o rKB/o wKB/o o/s dbms`, then relative to the first
// result, then the CPU µs per op in honest units.
func Metrics(w io.Writer, tables []analysis.MetricTable, f string) error {
	return metricsDoc(tables).Write(w, f, false)
}

// flatTable is a table whose headers are the keys as given (a csv file's
// names: cpu/o, rKB/o).
func flatTable(names ...string) *table.Table {
	t := &table.Table{}
	for _, n := range names {
		t.Columns = append(t.Columns, table.Column{Name: n, Key: n})
	}
	return t
}

// metricTable is a per-op table: the figures (numbers) and last the label.
func metricTable(head []string, rows [][]string) *table.Table {
	t := &table.Table{}
	for i, h := range head {
		t.Columns = append(t.Columns, table.Column{Name: h, Number: i < len(head)-1})
	}
	for _, r := range rows {
		t.Add(r...)
	}
	return t
}

// metricsDoc is qpslab metrics: per test and thread count, the per-op
// tables (absolute, relative to the first label, CPU µs per op, per
// inserted row, the server's own figures); one row per label and test in
// csv; the tables as data in json.
func metricsDoc(tables []analysis.MetricTable) Doc {
	d := Doc{Data: tables, What: "qpslab metrics"}
	head := []string{"test", "threads", "conditions", "dbms", "n", "op"}
	head = append(append(head, analysis.MetricNames()...), analysis.HonestNames()...)
	dev := false
	for _, t := range tables {
		dev = dev || hasDevice(t)
	}
	if dev {
		head = append(head, analysis.DeviceNames()...)
	}
	d.Flat = flatTable(head...)
	for _, t := range tables {
		for _, r := range t.Rows {
			rec := []string{t.Test, strconv.Itoa(t.Threads), t.Conditions, r.Label, strconv.Itoa(r.N), r.Op}
			vals := append(append([]float64{}, r.Abs...), r.Honest...)
			if dev {
				vals = append(vals, deviceOf(r)...)
			}
			for _, v := range vals {
				rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
			}
			d.Flat.Add(rec...)
		}
	}
	put := func(head []string, rows [][]string) {
		d.Put(metricTable(head, rows))
		d.Gap()
	}
	for _, t := range tables {
		cond := ""
		if t.Mixed {
			cond = " [" + t.Conditions + "]"
		}
		d.Sayf("%s, %d thread(s)%s", t.Test, t.Threads, cond)
		d.Gap()
		head := append([]string{}, analysis.MetricNames()...)
		dev := hasDevice(t) // the disk's request sizes, beside the per-op columns (db_bench's runs)
		if dev {
			head = append(head, analysis.DeviceNames()...)
		}
		head = append(head, "dbms")
		var abs, rel, honest [][]string
		base := t.Rows[0]
		for _, r := range t.Rows {
			var a, re, h []string
			for i, v := range r.Abs {
				a = append(a, absMetric(i, v))
				rs := r.RelAt(base, i)
				if i < len(r.Verdicts) && rs != "-" {
					rs += metricMark(r.Verdicts[i])
				}
				re = append(re, rs)
			}
			if dev {
				for i, v := range deviceOf(r) {
					a = append(a, analysis.DeviceMetrics()[i].Format(v))
					re = append(re, analysis.RelString(deviceOf(base)[i], v))
				}
			}
			for _, v := range r.Honest {
				h = append(h, textNum(v))
			}
			abs = append(abs, append(a, r.Label))
			if r.Label != base.Label {
				rel = append(rel, append(re, r.Label))
			}
			honest = append(honest, append(h, r.Label))
		}
		put(head, abs)
		d.Sayf("relative to first result (%s); + better, - worse (significant, the interval beyond ±5 %%), ≈ the same within ±5 %%, ~ undecided, = significant but within ±5 %%, ? cannot tell (too few rounds or repeats); * not kept by the false-discovery correction over this metric's tests", base.Label)
		d.Gap()
		put(head, rel)
		op := base.Op
		if op == "" {
			op = "op"
		}
		d.Sayf("CPU µs per %s: the whole host, the server's processes, the client", op)
		d.Gap()
		put(append(append([]string{}, analysis.HonestNames()...), "dbms"), honest)
		var ins [][]string
		for _, r := range t.Rows {
			if r.Insert == nil {
				continue
			}
			var row []string
			for i, v := range r.Insert {
				row = append(row, absMetric(map[bool]int{true: 0, false: 1}[i == 0], v))
			}
			ins = append(ins, append(row, r.Label))
		}
		if len(ins) > 0 && op != "insert" {
			d.Sayf("per inserted row (the reference's per-insert columns)")
			d.Gap()
			put(append(append([]string{}, analysis.InsertNames()...), "dbms"), ins)
		}
		d.Blocks = append(d.Blocks, serverBlocks(t)...)
	}
	return d
}

// Effects writes what each grid setting moved: per setting and value, the
// median over the label pairs that differ only in it of their geomean of
// relative values (green ≥ 1.05, red ≤ 0.95 on a terminal).
func Effects(w io.Writer, effects []analysis.Effect, colour bool) {
	Doc{Blocks: effectsBlocks(effects)}.Write(w, "text", colour)
}

// effectsBlocks are Effects' line and table (none without effects).
func effectsBlocks(effects []analysis.Effect) []Block {
	if len(effects) == 0 {
		return nil
	}
	var d Doc
	d.Gap()
	d.Sayf("What each setting moved (geomean of the relative values over labels that differ only in it):")
	t := table.New("SETTING", "FROM", "TO", "PAIRS", "MEDIAN", "PER PAIR")
	for _, e := range effects {
		var per []string
		for _, g := range e.Geomean {
			per = append(per, fmt.Sprintf("%.2f", g))
		}
		t.AddCells(table.Cell{Text: e.Setting}, table.Cell{Text: e.From}, table.Cell{Text: e.To}, table.Cell{Text: strconv.Itoa(e.Pairs)},
			table.Cell{Text: fmt.Sprintf("%.2f", e.Median), Colour: analysis.Colour(e.Median)}, table.Cell{Text: strings.Join(per, " ")})
	}
	d.Put(t)
	return d.Blocks
}

// hasDevice says whether a row of t has the disk's request sizes.
func hasDevice(t analysis.MetricTable) bool {
	for _, r := range t.Rows {
		if r.Device != nil {
			return true
		}
	}
	return false
}

// deviceOf is a row's request sizes, NaN (printed "-") where it has none.
func deviceOf(r analysis.MetricRow) []float64 {
	if r.Device != nil {
		return r.Device
	}
	out := make([]float64, len(analysis.DeviceNames()))
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
