// Package lang is pgbench's script language (PostgreSQL 15–17's manual):
// parsing a script file into SQL commands and meta-commands (\set, \sleep,
// \gset, \if/\elif/\else/\endif), the expressions \set and \if take with
// their operators and functions, and running a script for one client: its
// variables, its random generator, substitution into statements as
// placeholders. What pgbench has and qpslab does not (\shell, pipelines,
// \aset, …) is refused by Parse with the line and the reason.
//
// It is a pure package: it talks to no database (an Executor given to Run
// does), starts nothing and stores nothing; it imports nothing of qpslab's.
package lang

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Script is one parsed script file.
type Script struct {
	Name       string
	Statements []Statement // every SQL command, in file order (index = position here)
	body       []cmd
}

// Statement is one SQL command of a script as a database sees it.
type Statement struct {
	Index  int    // position in Script.Statements
	Line   int    // first line in the file
	Text   string // the SQL as written (for reports, like pgbench -r)
	Gset   bool   // \gset follows: store the first row's columns as variables
	Prefix string // \gset's prefix

	segs []string // the text around the variables: len(vars)+1
	vars []string
}

// SQL returns the statement with each :var replaced by a placeholder made
// by ph(n) (n = 1, 2, … in order: "$1" for PostgreSQL, "?" for MySQL), and
// the variable names in placeholder order (a variable used twice is there
// twice). The terminating ';' is left out.
func (st Statement) SQL(ph func(n int) string) (sql string, vars []string) {
	var b strings.Builder
	for i, s := range st.segs {
		b.WriteString(s)
		if i < len(st.vars) {
			b.WriteString(ph(i + 1))
		}
	}
	return b.String(), append([]string(nil), st.vars...)
}

// Vars returns the variables the statement uses, in placeholder order.
func (st Statement) Vars() []string { return append([]string(nil), st.vars...) }

// cmd is one command of a script's body.
type cmd interface{ line() int }

type (
	setCmd struct {
		ln   int
		name string
		expr node
	}
	sleepCmd struct {
		ln   int
		n    int64  // the constant, when varName is ""
		vr   string // :var
		unit time.Duration
	}
	sqlCmd struct {
		ln  int
		idx int
	}
	ifCmd struct {
		ln     int
		conds  []node
		clines []int   // each condition's line (\if, then each \elif)
		bodies [][]cmd // one per condition
		els    []cmd
		hasEls bool
	}
)

func (c *setCmd) line() int   { return c.ln }
func (c *sleepCmd) line() int { return c.ln }
func (c *sqlCmd) line() int   { return c.ln }
func (c *ifCmd) line() int    { return c.ln }

// refused are pgbench's meta-commands qpslab does not run, with why.
var refused = map[string]string{
	"shell":         `\shell is not supported: a script runs no shell commands in qpslab (run them before the benchmark)`,
	"setshell":      `\setshell is not supported: a script runs no shell commands in qpslab; compute the value with \set or pass it as a variable`,
	"aset":          `\aset is not supported: end each SQL command with ';' and use \gset after those whose row you need`,
	"cset":          `\cset is not supported (it never shipped in a pgbench release): use \gset after each SQL command`,
	"startpipeline": `\startpipeline is not supported: qpslab's client sends one statement at a time (no pipeline mode)`,
	"endpipeline":   `\endpipeline is not supported: qpslab's client sends one statement at a time (no pipeline mode)`,
	"syncpipeline":  `\syncpipeline is not supported: qpslab's client sends one statement at a time (no pipeline mode)`,
	"setrandom":     `\setrandom is not supported (removed in pgbench 10): use \set x random(lo, hi)`,
}

// ParseError is a script error: the file, the line and why.
type ParseError struct {
	Name   string
	Line   int
	Reason string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Reason) }

type frame struct {
	ifc   *ifCmd
	outer *[]cmd
	// target is where commands go now: a condition's body or the else.
	target *[]cmd
}

type parser struct {
	name   string
	src    string
	pos    int
	line   int
	sc     *Script
	target *[]cmd
	stack  []frame
	// lastSQL is the statement a \gset may still apply to (the command
	// just before), or -1.
	lastSQL int
}

func (p *parser) errf(line int, format string, a ...any) error {
	return &ParseError{Name: p.name, Line: line, Reason: fmt.Sprintf(format, a...)}
}

// Parse reads one script file's text; name is how errors call it (the file
// name, or "builtin:tpcb-like"). Errors are one line, "NAME:LINE: reason",
// e.g. `a.sql:3: \setrandom is not supported (removed in pgbench 10): use
// \set x random(lo, hi)`.
func Parse(name, text string) (*Script, error) {
	sc := &Script{Name: name}
	p := &parser{name: name, src: text, line: 1, sc: sc, lastSQL: -1}
	p.target = &sc.body
	for {
		p.skipSpaceAndComments()
		if p.pos >= len(p.src) {
			break
		}
		var err error
		if p.src[p.pos] == '\\' {
			err = p.meta()
		} else {
			err = p.sql()
		}
		if err != nil {
			return nil, err
		}
	}
	if n := len(p.stack); n > 0 {
		return nil, p.errf(p.stack[n-1].ifc.ln, `\if without a matching \endif`)
	}
	if len(sc.Statements) == 0 && len(sc.body) == 0 {
		return nil, p.errf(1, "the script is empty: it needs at least one command")
	}
	return sc, nil
}

// skipSpaceAndComments skips blank space and whole "--" comments between
// commands.
func (p *parser) skipSpaceAndComments() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "--"):
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// sql reads one SQL command: up to a ';' outside quotes, dollar quotes and
// comments, to a meta-command (which ends it, as in pgbench) or to the end
// of the file.
func (p *parser) sql() error {
	start, startLine := p.pos, p.line
	st := Statement{Line: startLine}
	segStart := start
	s := p.src
	end := -1 // where the text ends (exclusive)
	i := p.pos
	line := p.line
	for i < len(s) && end < 0 {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ';':
			i++
			end = i
		case c == '\\':
			end = i // a meta-command ends the SQL command
		case c == '\'' || c == '"' || c == '`':
			esc := c == '\'' && i > start && (s[i-1] == 'e' || s[i-1] == 'E') && (i-1 == start || !isIdentChar(s[i-2]))
			j, nl, ok := skipQuoted(s, i, c, esc)
			if !ok {
				return p.errf(line, "unterminated quoted %s", quoteWhat(c))
			}
			line += nl
			i = j
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j, nl, ok := skipBlockComment(s, i)
			if !ok {
				return p.errf(line, "unterminated /* comment")
			}
			line += nl
			i = j
		case c == '$':
			if tag, ok := dollarTag(s, i); ok {
				k := strings.Index(s[i+len(tag):], tag)
				if k < 0 {
					return p.errf(line, "unterminated dollar-quoted string %s", tag)
				}
				body := s[i : i+len(tag)+k+len(tag)]
				line += strings.Count(body, "\n")
				i += len(body)
			} else {
				i++
			}
		case c == ':':
			switch {
			case i+1 < len(s) && s[i+1] == ':':
				i += 2 // a cast
			case i+1 < len(s) && isIdentStart(s[i+1]) && s[i+1] < 0x80 && (i == start || s[i-1] != ':'):
				j := i + 1
				for j < len(s) && isIdentChar(s[j]) && s[j] < 0x80 {
					j++
				}
				st.segs = append(st.segs, s[segStart:i])
				st.vars = append(st.vars, s[i+1:j])
				segStart = j
				i = j
			default:
				i++ // :'x', :"x", a lone ':' (an array slice): text
			}
		default:
			i++
		}
	}
	if end < 0 {
		end = i
	}
	last := s[segStart:end]
	text := strings.TrimRightFunc(s[start:end], isSpace)
	st.Text = text
	last = strings.TrimRightFunc(last, isSpace)
	last = strings.TrimSuffix(last, ";")
	last = strings.TrimRightFunc(last, isSpace)
	st.segs = append(st.segs, last)
	p.pos = end
	p.line = line
	if strings.TrimSpace(strings.TrimSuffix(text, ";")) == "" {
		return nil // a lone ';'
	}
	st.Index = len(p.sc.Statements)
	p.sc.Statements = append(p.sc.Statements, st)
	*p.target = append(*p.target, &sqlCmd{ln: startLine, idx: st.Index})
	p.lastSQL = st.Index
	return nil
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
}

func quoteWhat(c byte) string {
	switch c {
	case '\'':
		return "string ('…' never closed)"
	case '"':
		return `identifier ("…" never closed)`
	}
	return "identifier (`…` never closed)"
}

// skipQuoted skips a quoted string or identifier starting at s[i] (the
// quote q): a doubled quote is one quote; with esc (E'…'), a backslash
// escapes the next character. It returns the index after the closing quote
// and the newlines inside.
func skipQuoted(s string, i int, q byte, esc bool) (int, int, bool) {
	nl := 0
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\n':
			nl++
		case '\\':
			if esc && j+1 < len(s) {
				if s[j+1] == '\n' {
					nl++
				}
				j++
			}
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1, nl, true
		}
	}
	return len(s), nl, false
}

// skipBlockComment skips a /* comment */ (nested, as PostgreSQL's).
func skipBlockComment(s string, i int) (int, int, bool) {
	depth, nl := 0, 0
	for j := i; j < len(s); j++ {
		switch {
		case s[j] == '\n':
			nl++
		case s[j] == '/' && j+1 < len(s) && s[j+1] == '*':
			depth++
			j++
		case s[j] == '*' && j+1 < len(s) && s[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1, nl, true
			}
		}
	}
	return len(s), nl, false
}

// dollarTag returns the $tag$ starting at s[i], if one does ($1 is a
// parameter, not a tag).
func dollarTag(s string, i int) (string, bool) {
	if i > 0 && isIdentChar(s[i-1]) {
		return "", false // part of an identifier (a$b)
	}
	j := i + 1
	if j < len(s) && s[j] >= '0' && s[j] <= '9' {
		return "", false
	}
	for j < len(s) && isIdentChar(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '$' {
		return s[i : j+1], true
	}
	return "", false
}

// meta reads one meta-command: from the backslash to the end of the line,
// a line ending in a backslash continuing on the next.
func (p *parser) meta() error {
	line := p.line
	s := p.src
	i := p.pos + 1
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == '\n' {
			b.WriteByte(' ')
			i += 2
			p.line++
			continue
		}
		if c == '\\' && i+2 < len(s) && s[i+1] == '\r' && s[i+2] == '\n' {
			b.WriteByte(' ')
			i += 3
			p.line++
			continue
		}
		if c == '\n' {
			break
		}
		b.WriteByte(c)
		i++
	}
	p.pos = i
	text := strings.TrimRight(b.String(), " \t\r")
	word, rest, _ := strings.Cut(text, " ")
	if k := strings.IndexAny(word, "\t"); k >= 0 {
		word, rest = word[:k], word[k+1:]+" "+rest
	}
	rest = strings.TrimSpace(rest)
	lw := strings.ToLower(word)
	if lw != "gset" {
		p.lastSQL = -1
	}
	if why, ok := refused[lw]; ok {
		return p.errf(line, "%s", why)
	}
	switch lw {
	case "set":
		name, expr, _ := strings.Cut(rest, " ")
		if k := strings.IndexAny(name, "\t"); k >= 0 {
			name, expr = name[:k], name[k+1:]+" "+expr
		}
		if name == "" || strings.TrimSpace(expr) == "" {
			return p.errf(line, `\set needs a variable name and an expression: \set NAME EXPR`)
		}
		if !validName(name) {
			return p.errf(line, `\set: invalid variable name %q (letters, digits and '_', not starting with a digit)`, name)
		}
		n, err := parseExpr(expr)
		if err != nil {
			return p.errf(line, `\set %s: %v`, name, err)
		}
		*p.target = append(*p.target, &setCmd{ln: line, name: name, expr: n})
	case "sleep":
		f := strings.Fields(rest)
		if len(f) == 0 || len(f) > 2 {
			return p.errf(line, `\sleep takes a duration and an optional unit: \sleep N [us|ms|s] (N a number or a :variable)`)
		}
		c := &sleepCmd{ln: line, unit: time.Second}
		if len(f) == 2 {
			switch strings.ToLower(f[1]) {
			case "us":
				c.unit = time.Microsecond
			case "ms":
				c.unit = time.Millisecond
			case "s":
			default:
				return p.errf(line, `\sleep: unknown time unit %q: use us, ms or s`, f[1])
			}
		}
		if v, ok := strings.CutPrefix(f[0], ":"); ok {
			if !validName(v) {
				return p.errf(line, `\sleep: invalid variable name %q`, v)
			}
			c.vr = v
		} else {
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return p.errf(line, `\sleep: %q is not an integer or a :variable`, f[0])
			}
			c.n = n
		}
		*p.target = append(*p.target, c)
	case "gset":
		if strings.ContainsAny(rest, " \t") {
			return p.errf(line, `\gset takes at most one argument, the variables' prefix`)
		}
		if p.lastSQL < 0 || p.sc.Statements[p.lastSQL].Gset {
			return p.errf(line, `\gset must follow an SQL command`)
		}
		if rest != "" && !validName(rest) {
			return p.errf(line, `\gset: invalid prefix %q (letters, digits and '_')`, rest)
		}
		st := &p.sc.Statements[p.lastSQL]
		st.Gset, st.Prefix = true, rest
		p.lastSQL = -1
	case "if":
		if rest == "" {
			return p.errf(line, `\if needs an expression`)
		}
		n, err := parseExpr(rest)
		if err != nil {
			return p.errf(line, `\if: %v`, err)
		}
		c := &ifCmd{ln: line, conds: []node{n}, clines: []int{line}, bodies: [][]cmd{nil}}
		*p.target = append(*p.target, c)
		p.stack = append(p.stack, frame{ifc: c, outer: p.target})
		p.target = &c.bodies[0]
	case "elif":
		if len(p.stack) == 0 {
			return p.errf(line, `\elif without a matching \if`)
		}
		f := &p.stack[len(p.stack)-1]
		if f.ifc.hasEls {
			return p.errf(line, `\elif after \else (the \if is at line %d)`, f.ifc.ln)
		}
		if rest == "" {
			return p.errf(line, `\elif needs an expression`)
		}
		n, err := parseExpr(rest)
		if err != nil {
			return p.errf(line, `\elif: %v`, err)
		}
		f.ifc.conds = append(f.ifc.conds, n)
		f.ifc.clines = append(f.ifc.clines, line)
		f.ifc.bodies = append(f.ifc.bodies, nil)
		p.target = &f.ifc.bodies[len(f.ifc.bodies)-1]
	case "else":
		if len(p.stack) == 0 {
			return p.errf(line, `\else without a matching \if`)
		}
		if rest != "" {
			return p.errf(line, `\else takes no argument`)
		}
		f := &p.stack[len(p.stack)-1]
		if f.ifc.hasEls {
			return p.errf(line, `\else after \else (the \if is at line %d)`, f.ifc.ln)
		}
		f.ifc.hasEls = true
		p.target = &f.ifc.els
	case "endif":
		if len(p.stack) == 0 {
			return p.errf(line, `\endif without a matching \if`)
		}
		if rest != "" {
			return p.errf(line, `\endif takes no argument`)
		}
		f := p.stack[len(p.stack)-1]
		p.stack = p.stack[:len(p.stack)-1]
		p.target = f.outer
	case "":
		return p.errf(line, `a lone backslash: a meta-command needs a name (\set, \sleep, \gset, \if, …)`)
	default:
		if strings.HasPrefix(word, ";") {
			return p.errf(line, `\; (several SQL commands sent as one) is not supported: end each command with ';'`)
		}
		return p.errf(line, `unknown meta-command \%s (qpslab has \set, \sleep, \gset, \if, \elif, \else, \endif)`, word)
	}
	return nil
}

// validName: letters, digits and '_', not starting with a digit.
func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentChar(s[i]) || s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Executor is what running a script needs from a database connection.
type Executor interface {
	// Exec runs statement st with args (the values of st's vars, in
	// order). When st.Gset, it returns the first row's column names and
	// values (exactly one row, else an error as pgbench); otherwise nil,
	// nil.
	Exec(ctx context.Context, st Statement, args []Value) (cols []string, row []Value, err error)
	// Sleep waits d (\sleep), or until ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
}

// RunError is an error running a script: the file, the line and the
// cause, which errors.Is and errors.As reach (a driver's error).
type RunError struct {
	Name string
	Line int
	Err  error
}

func (e *RunError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *RunError) Unwrap() error { return e.Err }

// Run runs the script once (one "transaction" in pgbench's sense) for the
// client whose state is st: \set, \if/\elif/\else/\endif, \sleep, SQL with
// \gset. Errors name the file and line ("a.sql:5: undefined variable
// aid"); an Executor's error is wrapped with them, errors.Is and errors.As
// still reaching it.
func (sc *Script) Run(ctx context.Context, st *State, ex Executor) error {
	return sc.run(ctx, st, ex, sc.body)
}

func (sc *Script) fail(line int, err error) error {
	return &RunError{Name: sc.Name, Line: line, Err: err}
}

func (sc *Script) run(ctx context.Context, st *State, ex Executor, body []cmd) error {
	for _, c := range body {
		switch c := c.(type) {
		case *setCmd:
			v, err := st.eval(c.expr)
			if err != nil {
				return sc.fail(c.ln, err)
			}
			st.vars[c.name] = v
		case *sleepCmd:
			n := c.n
			if c.vr != "" {
				v, ok := st.vars[c.vr]
				if !ok {
					return sc.fail(c.ln, fmt.Errorf("undefined variable %s", c.vr))
				}
				nv, err := normalize(v)
				if err == nil {
					n, err = toInt(nv)
				}
				if err != nil {
					return sc.fail(c.ln, fmt.Errorf(`\sleep :%s: %w`, c.vr, err))
				}
			}
			if n > 0 {
				if err := ex.Sleep(ctx, time.Duration(n)*c.unit); err != nil {
					return sc.fail(c.ln, err)
				}
			}
		case *sqlCmd:
			stmt := sc.Statements[c.idx]
			args := make([]Value, len(stmt.vars))
			for i, name := range stmt.vars {
				v, ok := st.vars[name]
				if !ok {
					return sc.fail(c.ln, fmt.Errorf("undefined variable %s", name))
				}
				if iv, ok := v.(int); ok {
					v = int64(iv)
				}
				args[i] = v
			}
			if err := ctx.Err(); err != nil {
				return sc.fail(c.ln, err)
			}
			cols, row, err := ex.Exec(ctx, stmt, args)
			if err != nil {
				return sc.fail(c.ln, err)
			}
			if stmt.Gset {
				if len(cols) != len(row) {
					return sc.fail(c.ln, fmt.Errorf(`\gset: %d column names for %d values`, len(cols), len(row)))
				}
				for i, col := range cols {
					name := stmt.Prefix + col
					if !validName(name) {
						return sc.fail(c.ln, fmt.Errorf(`\gset: invalid variable name %q: name the column (AS name)`, name))
					}
					st.vars[name] = row[i]
				}
			}
		case *ifCmd:
			ran := false
			for i, cond := range c.conds {
				v, err := st.eval(cond)
				if err != nil {
					return sc.fail(c.clines[i], err)
				}
				if truth(v) {
					if err := sc.run(ctx, st, ex, c.bodies[i]); err != nil {
						return err
					}
					ran = true
					break
				}
			}
			if !ran {
				if err := sc.run(ctx, st, ex, c.els); err != nil {
					return err
				}
			}
		default:
			return sc.fail(c.line(), errors.New("internal error: unknown command"))
		}
	}
	return nil
}
