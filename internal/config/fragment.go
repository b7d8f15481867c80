package config

// Fragments are parsed by hand: layering needs a parser that keeps every line
// as written (comments, order, spelling) and follows the servers' own rules
// for what names the same option (MySQL's loose-/skip- prefixes and dash or
// underscore, PostgreSQL's case-insensitive names, both servers' end-of-line
// comments). INI libraries rewrite the file and know none of these rules.

import (
	"fmt"
	"regexp"
	"strings"
)

type lineKind int

const (
	blankLine     lineKind = iota // empty, or only a comment
	sectionLine                   // [name] (MySQL family)
	settingLine                   // an option (MySQL family) or name = value (PostgreSQL)
	directiveLine                 // !include, !includedir … (MySQL family)
)

// line is one line of a fragment.
type line struct {
	kind    lineKind
	text    string // as written, without the line end
	section string // the section it is in, lower case: "mysqld" before any header; "" for PostgreSQL
	key     string // what names the option: normalised (setting, directive)
	name    string // the option as written (setting, directive)
	value   string // as written, end comment removed, trimmed; "" for a MySQL option without =
	eq      bool   // MySQL family: the option has "=" (a value, possibly empty)
	// openQuote: the line ends inside a quote, so the MySQL family would read
	// a comment added at its end as part of the value.
	openQuote bool
	from      string // the config the line comes from
}

// fragment is a parsed config fragment: its lines, in order.
type fragment struct {
	fam   Family
	lines []line
}

const mysqlImplicitSection = "mysqld" // the sandbox puts options before any [section] under [mysqld]

// parse reads a fragment; from names the config its lines come from. Errors
// name the line (1-based) and the fix.
func parse(fam Family, content []byte, from string) (fragment, error) {
	f := fragment{fam: fam}
	text := string(content)
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return f, nil
	}
	section := ""
	if fam == MySQL {
		section = mysqlImplicitSection
	}
	for i, raw := range strings.Split(text, "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		var l line
		var err error
		switch fam {
		case Postgres:
			l, err = parsePostgresLine(raw)
		case RocksDB:
			l, err = parseFlagLine(raw)
		default:
			l, err = parseMySQLLine(raw)
		}
		if err != nil {
			return fragment{}, fmt.Errorf("line %d: %w", i+1, err)
		}
		if l.kind == sectionLine {
			section = l.section
		}
		l.section = section
		l.text = raw
		l.from = from
		f.lines = append(f.lines, l)
	}
	return f, nil
}

const mysqlSpace = " \t\v\f\r" // my_isspace in latin1, less the newline that ends a line

// parseMySQLLine follows my_default.c (search_default_file_with_buffers): a
// comment line starts with # or ;, a section is [name] (whatever follows ] is
// ignored), a ! line is a directive, anything else is an option, name or
// name=value, and a # outside quotes ends it.
func parseMySQLLine(raw string) (line, error) {
	t := strings.TrimLeft(raw, mysqlSpace)
	switch {
	case t == "" || t[0] == '#' || t[0] == ';':
		return line{kind: blankLine}, nil
	case t[0] == '[':
		end := strings.IndexByte(t, ']')
		if end < 0 {
			return line{}, fmt.Errorf("%q opens a section without closing it: write [section]", t)
		}
		name := strings.Trim(t[1:end], mysqlSpace)
		if name == "" {
			return line{}, fmt.Errorf("%q is a section without a name: write e.g. [mysqld]", t)
		}
		return line{kind: sectionLine, section: asciiLower(name)}, nil
	case t[0] == '!':
		d := strings.TrimLeft(t[1:], mysqlSpace)
		word, rest := d, ""
		if i := strings.IndexAny(d, mysqlSpace); i >= 0 {
			word, rest = d[:i], d[i:]
		}
		return line{kind: directiveLine, key: "!" + word, name: "!" + word, value: strings.Trim(rest, mysqlSpace)}, nil
	}
	body, open := removeEndComment(t)
	l := line{kind: settingLine, openQuote: open}
	if name, value, ok := strings.Cut(body, "="); ok {
		l.name, l.value, l.eq = strings.TrimRight(name, mysqlSpace), strings.Trim(value, mysqlSpace), true
	} else {
		l.name = strings.TrimRight(body, mysqlSpace)
	}
	if l.name == "" {
		return line{}, fmt.Errorf("%q has a value but no option name: write name=value", t)
	}
	l.key = mysqlKey(l.name)
	return l, nil
}

// removeEndComment is my_default.c's remove_end_comment: it cuts s at the
// first # outside single or double quotes (a backslash escapes a quote inside
// quotes), and says whether s ends inside a quote.
func removeEndComment(s string) (string, bool) {
	var quote byte
	escape := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '\'' || c == '"') && !escape {
			if quote == 0 {
				quote = c
			} else if quote == c {
				quote = 0
			}
		} else if quote == 0 && c == '#' {
			return s[:i], false
		}
		escape = quote != 0 && c == '\\' && !escape
	}
	return s, quote != 0
}

// mysqlKey is what names an option for the MySQL family's option parser
// (my_getopt): dash and underscore are the same character, the loose- prefix
// only makes an unknown option a warning, and skip-, disable- and enable- set
// the option they prefix (skip-log-bin is log-bin off). Option names are
// case-sensitive there, so case is kept.
func mysqlKey(name string) string {
	k := strings.ReplaceAll(name, "-", "_")
	if rest, ok := strings.CutPrefix(k, "loose_"); ok && rest != "" {
		k = rest
	}
	for _, p := range []string{"skip_", "disable_", "enable_"} {
		if rest, ok := strings.CutPrefix(k, p); ok && rest != "" {
			return rest
		}
	}
	return k
}

const pgSpace = " \t\r" // guc-file.l's whitespace

func pgLetter(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func pgLetterOrDigit(c byte) bool { return pgLetter(c) || c >= '0' && c <= '9' }

// pgID returns the length of the identifier at the start of s (guc-file.l's
// ID: a letter, then letters and digits), 0 if there is none.
func pgID(s string) int {
	if s == "" || !pgLetter(s[0]) {
		return 0
	}
	n := 1
	for n < len(s) && pgLetterOrDigit(s[n]) {
		n++
	}
	return n
}

// parsePostgresLine follows guc-file.l: a line is empty, a comment (#), or
// NAME [=] VALUE [# comment], where NAME is an identifier or two joined by a
// dot (a custom option), and VALUE is a single-quoted string (a quote inside
// doubled or after a backslash) or a word. Names are case-insensitive.
func parsePostgresLine(raw string) (line, error) {
	t := strings.TrimLeft(raw, pgSpace)
	if t == "" || t[0] == '#' {
		return line{kind: blankLine}, nil
	}
	n := pgID(t)
	if n == 0 {
		return line{}, fmt.Errorf("%q does not start with a setting name: write name = value", t)
	}
	if n < len(t) && t[n] == '.' {
		m := pgID(t[n+1:])
		if m == 0 {
			return line{}, fmt.Errorf("%q: a dotted setting name needs a name after the dot (e.g. auto_explain.log_min_duration)", t)
		}
		n += 1 + m
	}
	l := line{kind: settingLine, name: t[:n], key: asciiLower(t[:n])}
	rest := strings.TrimLeft(t[n:], pgSpace)
	if strings.HasPrefix(rest, "=") {
		rest = strings.TrimLeft(rest[1:], pgSpace)
	}
	var v int
	if strings.HasPrefix(rest, "'") {
		v = pgStringEnd(rest)
		if v < 0 {
			return line{}, fmt.Errorf("the value of %s opens a quote without closing it: write %s = '...' (a quote inside is '')", l.name, l.name)
		}
	} else {
		v = strings.IndexAny(rest, pgSpace+"#")
		if v < 0 {
			v = len(rest)
		}
	}
	if v == 0 {
		return line{}, fmt.Errorf("%s has no value: write %s = value", l.name, l.name)
	}
	l.value = rest[:v]
	if after := strings.TrimLeft(rest[v:], pgSpace); after != "" && after[0] != '#' {
		return line{}, fmt.Errorf("%q follows the value of %s: quote a value that holds spaces ('...')", after, l.name)
	}
	return l, nil
}

// pgStringEnd returns the length of the quoted string s starts with, or -1 if
// it is not closed.
func pgStringEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
	}
	return -1
}

// cumulative options add to earlier lines instead of replacing them, so
// layering keeps the base's lines and appends the config's own. Directives
// (!include …) are cumulative too.
var cumulative = map[Family]map[string]bool{
	MySQL: {
		"plugin_load_add": true, "optimizer_switch": true,
		"replicate_do_db": true, "replicate_ignore_db": true, "replicate_do_table": true, "replicate_ignore_table": true,
		"replicate_wild_do_table": true, "replicate_wild_ignore_table": true, "replicate_rewrite_db": true,
		"binlog_do_db": true, "binlog_ignore_db": true,
	},
	Postgres: {"include": true, "include_if_exists": true, "include_dir": true},
}

func (f fragment) isCumulative(l line) bool {
	return l.kind == directiveLine || cumulative[f.fam][l.key]
}

// asciiLower folds ASCII letters only, as both servers do for section and
// setting names.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// settingsKey is what a setting is looked up by: its section, whether it is a
// directive, and its key.
func settingsKey(l line) string {
	return fmt.Sprintf("%s\x00%d\x00%s", l.section, l.kind, l.key)
}

// settings is what the server reads from f: per section and key, the value of
// the last line (later wins), or of every line for a cumulative option, each
// as "name=value" as written ("name" for a MySQL option without =).
func (f fragment) settings() map[string][]string {
	out := map[string][]string{}
	for _, l := range f.lines {
		if l.kind != settingLine && l.kind != directiveLine {
			continue
		}
		v := l.name
		if l.eq || l.kind == directiveLine || f.fam == Postgres {
			v += "=" + l.value
		}
		k := settingsKey(l)
		if f.isCumulative(l) {
			out[k] = append(out[k], v)
		} else {
			out[k] = []string{v}
		}
	}
	return out
}

var baseLineRE = regexp.MustCompile(`(?i)^[ \t]*[#;][ \t]*qpslab:[ \t]*base\b`)
var baseLineFullRE = regexp.MustCompile(`(?i)^[ \t]*[#;][ \t]*qpslab:[ \t]*base[ \t]*=[ \t]*(\S+)[ \t\r]*$`)

// NoBase is the base name that means "not layered" (configs add --base none).
const NoBase = "none"

// baseOf returns the base a fragment names in its "# qpslab: base=NAME" line:
// "" without one, NoBase for "base=none". The line is a comment to the servers.
func baseOf(content []byte) (string, error) {
	base, at := "", 0
	for i, l := range strings.Split(string(content), "\n") {
		if !baseLineRE.MatchString(l) {
			continue
		}
		m := baseLineFullRE.FindStringSubmatch(l)
		if m == nil {
			return "", fmt.Errorf("line %d: write the base line as # qpslab: base=NAME", i+1)
		}
		if at != 0 {
			return "", fmt.Errorf("lines %d and %d both name a base: keep one", at, i+1)
		}
		if m[1] != NoBase && !validName(m[1]) {
			return "", fmt.Errorf("line %d: base %q is not a config name: use letters, digits, _ and -", i+1, m[1])
		}
		base, at = m[1], i+1
	}
	return base, nil
}

// isComment says whether l is a comment line (not blank, not the base line).
func isComment(l line) bool {
	t := strings.TrimSpace(l.text)
	return l.kind == blankLine && t != "" && !baseLineRE.MatchString(l.text)
}

// overlay returns base with own's settings laid over it, by section and key:
// a setting own shares with base replaces base's (last) line in place, a new
// one goes after the last line of its section (a new section at the end), a
// cumulative one after base's lines. Comment lines right above one of own's
// settings travel with it; own's other comments and blank lines are dropped.
func overlay(base, own fragment) fragment {
	out := fragment{fam: base.fam, lines: append([]line(nil), base.lines...)}
	var notes []line // own's comments right above the next setting
	for _, l := range own.lines {
		switch {
		case l.kind == sectionLine || l.kind == blankLine && !isComment(l):
			notes = nil
			continue
		case l.kind == blankLine:
			notes = append(notes, l)
			continue
		}
		at, replace := -1, false
		if !out.isCumulative(l) {
			for i, o := range out.lines {
				if (o.kind == settingLine || o.kind == directiveLine) && settingsKey(o) == settingsKey(l) {
					at, replace = i, true
				}
			}
		}
		if !replace {
			for i, o := range out.lines {
				if o.kind != blankLine && o.section == l.section {
					at = i + 1
				}
			}
		}
		add := append(notes, l)
		notes = nil
		if at < 0 { // a section base does not have, or an empty base
			if out.fam == MySQL {
				header := line{kind: sectionLine, text: "[" + l.section + "]", section: l.section, from: l.from}
				add = append([]line{header}, add...)
			}
			at = len(out.lines)
		}
		tail := append(add, out.lines[at+boolInt(replace):]...)
		out.lines = append(out.lines[:at:at], tail...)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// render writes f out. The lines of configs other than root carry a mark
// "# from NAME": at the line's end where that is a comment to the server,
// else on a line of its own above.
func (f fragment) render(header, root string) []byte {
	var b strings.Builder
	if header != "" {
		b.WriteString(header)
	}
	for _, l := range f.lines {
		marked := l.from != root && (l.kind == settingLine || l.kind == directiveLine)
		switch {
		case !marked:
			b.WriteString(l.text)
		case l.kind == settingLine && !l.openQuote && f.fam != RocksDB: // a flag's value runs to the line's end
			b.WriteString(l.text + "  # from " + l.from)
		default:
			b.WriteString("# from " + l.from + ":\n" + l.text)
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
