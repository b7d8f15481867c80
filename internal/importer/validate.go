package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// The bounds of what a run may name (docs/results.md, "What an import
// refuses"). No real name comes near them: they stop a name that would
// push every column of a page off it, not a long one.
const (
	// MaxName is the longest name (a build, config, test, version,
	// hostname, param, figure) in bytes.
	MaxName = 200
	// MaxText is the longest free text (a run's error, a verdict's
	// detail, a note) in bytes.
	MaxText = 16 << 10
	// maxHost is the largest host fingerprint: one of a host with
	// hundreds of CPUs, each with its cpufreq policy, is tens of KB.
	maxHost = 1 << 20
	// MaxProblems is how many problems one refusal lists; the rest are
	// counted.
	MaxProblems = 50
)

// Problems is why runs were refused: one line per problem, each naming
// the field and the run's index (runs[0].config), at most MaxProblems of
// them and the count of the rest.
type Problems struct {
	Lines []string
	More  int // problems found beyond Lines
}

func (p *Problems) Error() string {
	s := strings.Join(p.Lines, "\n")
	if p.More > 0 {
		s += fmt.Sprintf("\n… and %d more problem(s)", p.More)
	}
	return s
}

// Count is how many problems there are.
func (p *Problems) Count() int { return len(p.Lines) + p.More }

// Report is for a command, whose error is one line: a *Problems' lines
// go to w, one per problem, and the error returned counts them; any other
// error is returned as it is.
func Report(w io.Writer, err error) error {
	var p *Problems
	if !errors.As(err, &p) {
		return err
	}
	fmt.Fprintln(w, p.Error())
	return fmt.Errorf("nothing was imported: %d problem(s), listed above, one a line; fix the results and import again", p.Count())
}

func (p *Problems) add(format string, a ...any) {
	if len(p.Lines) >= MaxProblems {
		p.More++
		return
	}
	p.Lines = append(p.Lines, fmt.Sprintf(format, a...))
}

// Validate refuses runs that no qpslab run writes and no page can show or
// query back: a suite that is not registered, a status, loop, role or
// pairing outside its enum, threads below 1, names too long or holding
// control, bidirectional-formatting or other invisible characters
// (zero-width, joiners, soft hyphens, variation selectors: a name that
// shows as another) or invalid UTF-8, and names a label cannot
// round-trip (a label is BUILD.CONFIG split at its last dot, with :ENGINE
// and @HOST after it). Every surface that stores
// runs it did not measure calls it: the ingest API and qpslab import, for
// results files as for the importers' runs. It also refuses a figure
// outside its metric's plausible range (result.CheckFigures). nil, or a
// *Problems.
func Validate(runs []result.Run) error {
	p := &Problems{}
	for i, r := range runs {
		validateRun(p, fmt.Sprintf("runs[%d]", i), r)
		if err := result.CheckFigures(i, r); err != nil { // each figure within its metric's bounds
			p.add("%v", err)
		}
	}
	if len(p.Lines) == 0 {
		return nil
	}
	return p
}

// The enums of a run's fields.
var (
	statuses = []string{result.OK, result.Failed, result.Aborted, result.Saturated}
	loops    = []string{"closed", "open", ""} // none: closed, as result.Run.Conditions reads it
	roles    = []string{result.RoleTest, result.RoleLoad, result.RoleWarm}
	pairings = []string{"", result.PairedSlices, result.PairedTests, result.PairedPasses}
)

func validateRun(p *Problems, at string, r result.Run) {
	if _, err := suite.Get(r.Suite); err != nil {
		p.add("%s.suite = %s: not a registered suite: use one of %s (qpslab suites lists them)", at, quoted(r.Suite), strings.Join(suiteNames(), ", "))
	}
	oneOf(p, at+".status", r.Status, statuses)
	oneOf(p, at+".loop", r.Loop, loops)
	oneOf(p, at+".role", r.Role, roles)
	oneOf(p, at+".pairing", r.Pairing, pairings)
	if r.Threads < 1 {
		p.add("%s.threads = %d: a run has 1 thread or more", at, r.Threads)
	}

	// The label's parts: BUILD.CONFIG[:ENGINE][@HOST], split at the last
	// dot, the engine at a colon, the host at the last '@'.
	if r.Build == "" {
		p.add("%s.build is empty: name the build (its label is BUILD.CONFIG)", at)
	} else if name(p, at+".build", r.Build) && strings.Contains(r.Build, "@") {
		p.add("%s.build = %s: a build name cannot hold '@', since a label BUILD.CONFIG@HOST names a host after its last '@'; rename the build", at, quoted(r.Build))
	}
	cfg := result.ConfigName(r.Config) // name@hash: the label holds the name
	if _, hash, ok := strings.Cut(r.Config, "@"); ok {
		name(p, at+".config's hash (after @)", hash)
	}
	switch {
	case cfg == "":
		p.add("%s.config is empty: name the config (its label is BUILD.CONFIG)", at)
	case !name(p, at+".config", cfg):
	case strings.Contains(cfg, "."):
		p.add("%s.config = %s: a config name cannot hold '.', since a label BUILD.CONFIG splits at its last dot; rename the config", at, quoted(cfg))
	case strings.Contains(cfg, ":"):
		p.add("%s.config = %s: a config name cannot hold ':', since a label BUILD.CONFIG:ENGINE names the storage engine after it; rename the config", at, quoted(cfg))
	}
	if e, ok := r.Params["engine"]; ok && (strings.ContainsAny(e, ".:@") || e != strings.ToLower(e)) {
		p.add("%s.params[\"engine\"] = %s: an engine is named in lower case without '.', ':' or '@' (innodb, rocksdb), as a label BUILD.CONFIG:ENGINE gives it", at, quoted(e))
	}
	for _, f := range []struct{ field, v string }{
		{"test", r.Test}, {"flavor", r.Flavor}, {"version", r.Version}, {"arrivals", r.Arrivals}, {"plan", r.Plan},
		{"qpslab_version", r.QpslabVersion}, {"totals.reported_unit", r.Totals.ReportedUnit}, {"totals.series", r.Totals.Series},
	} {
		name(p, at+"."+f.field, f.v)
	}
	if r.Test == "" {
		p.add("%s.test is empty: name the test (qpslab run %s --list-tests lists them)", at, clip(r.Suite))
	}
	text(p, at+".error", r.Error)
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		if name(p, at+".params key", k) {
			value(p, fmt.Sprintf("%s.params[%q]", at, k), r.Params[k])
		}
	}
	for j, g := range r.Groups {
		name(p, fmt.Sprintf("%s.groups[%d].layout", at, j), g.Layout)
		name(p, fmt.Sprintf("%s.groups[%d].group", at, j), g.Group)
	}
	for j, o := range r.Totals.Ops {
		name(p, fmt.Sprintf("%s.totals.ops[%d].kind", at, j), o.Kind)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Totals.Figures)) {
		name(p, at+".totals.figures key", k)
	}
	for j, v := range r.Verdicts {
		name(p, fmt.Sprintf("%s.verdicts[%d].name", at, j), v.Name)
		text(p, fmt.Sprintf("%s.verdicts[%d].detail", at, j), v.Detail)
	}
	if len(r.Host) > 0 {
		validateHost(p, at+".host", r.Host)
	}
	if h := r.HW; h != nil {
		name(p, at+".hw.op", h.Op)
		for j, d := range h.Device {
			name(p, fmt.Sprintf("%s.hw.device[%d]", at, j), d)
		}
		for j, f := range h.Flags {
			name(p, fmt.Sprintf("%s.hw.flags[%d].name", at, j), f.Name)
			text(p, fmt.Sprintf("%s.hw.flags[%d].detail", at, j), f.Detail)
		}
		for j, n := range h.Notes {
			text(p, fmt.Sprintf("%s.hw.notes[%d]", at, j), n)
		}
	}
}

// validateHost checks the host fingerprint: the host check's JSON, whose
// names the host pages show.
func validateHost(p *Problems, at string, fp json.RawMessage) {
	if len(fp) > maxHost {
		p.add("%s is %d bytes: a host fingerprint (qpslab host check --json) is at most %d", at, len(fp), maxHost)
		return
	}
	var c host.Check
	if err := json.Unmarshal(fp, &c); err != nil {
		p.add("%s: not a host fingerprint (qpslab host check --json): %v", at, result.JSONErrorAt(at, fp, err))
		return
	}
	name(p, at+".kernel", c.Kernel)
	name(p, at+".cpu_model", c.CPUModel)
}

func oneOf(p *Problems, field, v string, enum []string) {
	if slices.Contains(enum, v) {
		return
	}
	var show []string
	for _, e := range enum {
		if e == "" {
			e = `"" (none)`
		}
		show = append(show, e)
	}
	p.add("%s = %s: use one of %s", field, quoted(v), strings.Join(show, ", "))
}

// name checks a name: at most MaxName bytes of valid UTF-8, no control,
// bidirectional formatting or other invisible characters, no space at either end (a
// query's value is trimmed). It says whether the name passed.
func name(p *Problems, field, v string) bool {
	if len(v) > MaxName {
		p.add("%s is %d bytes long: a name is at most %d bytes; shorten it", field, len(v), MaxName)
		return false
	}
	if why := badChars(v, false); why != "" {
		p.add("%s = %s: %s", field, quoted(v), why)
		return false
	}
	if strings.TrimSpace(v) != v {
		p.add("%s = %s: a name cannot begin or end with a space, since a query's value is trimmed; remove it", field, quoted(v))
		return false
	}
	return true
}

// value checks a param's value, which may list (a config set's
// settings, a suite's lists): at most MaxText bytes, and a name's
// characters.
func value(p *Problems, field, v string) {
	if len(v) > MaxText {
		p.add("%s is %d bytes long: a value is at most %d bytes; shorten it", field, len(v), MaxText)
		return
	}
	if why := badChars(v, false); why != "" {
		p.add("%s = %s: %s", field, quoted(v), why)
	}
}

// text checks free text (an error, a detail): at most MaxText bytes of
// valid UTF-8, no control characters but newlines and tabs, no
// bidirectional formatting characters.
func text(p *Problems, field, v string) {
	if len(v) > MaxText {
		p.add("%s is %d bytes long: a text is at most %d bytes; shorten it", field, len(v), MaxText)
		return
	}
	if why := badChars(v, true); why != "" {
		p.add("%s = %s: %s", field, quoted(v), why)
	}
}

// badChars says what is wrong with s's characters, "" when nothing: a
// control character (but newlines and tabs in lines), a bidirectional
// formatting character, or, in a name (not lines), any other invisible
// one (result.Invisible), each named with its position, counted in
// characters from 1.
func badChars(s string, lines bool) string {
	if !utf8.ValidString(s) {
		return "not valid UTF-8: give the name in UTF-8"
	}
	n := 0
	for _, c := range s {
		n++
		switch {
		case lines && (c == '\n' || c == '\t'):
		case unicode.Is(unicode.Bidi_Control, c):
			return fmt.Sprintf("holds %U, a bidirectional formatting character, at character %d, "+
				"which makes what a page shows differ from what is stored; remove it", c, n)
		case unicode.IsControl(c):
			return fmt.Sprintf("holds the control character %U at character %d; remove it", c, n)
		case !lines && result.Invisible(c):
			return fmt.Sprintf("holds %U, an invisible character (a format character, a default-ignorable one or "+
				"a variation selector), at character %d, which makes the name show as another; remove it", c, n)
		}
	}
	return ""
}

// quoted is s shortened (clip) and quoted as %q quotes it, with each
// invisible character (result.Invisible) escaped too: %q shows a
// variation selector or a Hangul filler as itself, and the line would
// show the name as the one it imitates.
func quoted(s string) string {
	s = clip(s)
	var b strings.Builder
	b.WriteByte('"')
	for s != "" {
		i := strings.IndexFunc(s, result.Invisible)
		if i < 0 {
			i = len(s)
		}
		q := strconv.Quote(s[:i])
		b.WriteString(q[1 : len(q)-1])
		if i == len(s) {
			break
		}
		c, n := utf8.DecodeRuneInString(s[i:])
		if c > 0xFFFF {
			fmt.Fprintf(&b, `\U%08x`, c)
		} else {
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		s = s[i+n:]
	}
	b.WriteByte('"')
	return b.String()
}

// clip shortens a value for a message: an error line stays a line.
func clip(s string) string {
	if len(s) <= 60 {
		return s
	}
	i := 57
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func suiteNames() []string {
	var out []string
	for _, s := range suite.All() {
		out = append(out, s.Name())
	}
	return out
}
