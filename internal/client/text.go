package client

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// template is a statement's text cut at its placeholders, so that the lean
// path can send it as text with the arguments written in (--no-prepare)
// into a reused buffer. go-sql-driver interpolates only into a new string
// per statement, and pgx's sanitizer is internal to it.
type template struct {
	q     string
	parts []string // the text around the placeholders: len(slots)+1 pieces
	slots []int    // the argument each placeholder takes, 0-based
	n     int      // arguments the statement takes
}

// parseTemplate cuts q at its placeholders: ? for MySQL, $1, $2, … for
// PostgreSQL, outside quoted strings, quoted names and comments.
func parseTemplate(p Protocol, q string) template {
	t := template{q: q}
	last := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || (c == '`' && p != Postgres):
			i = skipQuoted(p, q, i)
		case c == '-' && i+1 < len(q) && q[i+1] == '-', c == '#' && p != Postgres:
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			if end := strings.Index(q[i+2:], "*/"); end >= 0 {
				i += end + 3
			} else {
				i = len(q)
			}
		case c == '?' && p != Postgres:
			t.parts = append(t.parts, q[last:i])
			t.slots = append(t.slots, len(t.slots))
			last = i + 1
		case c == '$' && p == Postgres:
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				n, err := strconv.Atoi(q[i+1 : j])
				if err == nil && n >= 1 {
					t.parts = append(t.parts, q[last:i])
					t.slots = append(t.slots, n-1)
					t.n = max(t.n, n)
					last = j
				}
				i = j - 1
				continue
			}
			// A dollar-quoted string: $tag$ … $tag$.
			k := j
			for k < len(q) && (q[k] == '_' || q[k] >= 'a' && q[k] <= 'z' || q[k] >= 'A' && q[k] <= 'Z' || q[k] >= '0' && q[k] <= '9') {
				k++
			}
			if k < len(q) && q[k] == '$' && (i == 0 || !isIdent(q[i-1])) {
				tag := q[i : k+1]
				if end := strings.Index(q[k+1:], tag); end >= 0 {
					i = k + end + len(tag)
				} else {
					i = len(q)
				}
			}
		}
	}
	t.parts = append(t.parts, q[last:])
	if p != Postgres {
		t.n = len(t.slots)
	}
	return t
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skipQuoted returns the index of the quote that closes the one at q[i].
func skipQuoted(p Protocol, q string, i int) int {
	quote := q[i]
	// PostgreSQL's E'…' strings take backslash escapes; MySQL's strings do
	// too (unless NO_BACKSLASH_ESCAPES, where a backslash before the quote
	// is rare enough in a statement's own text to ignore).
	backslash := p != Postgres && quote != '`' || p == Postgres && i > 0 && (q[i-1] == 'E' || q[i-1] == 'e')
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			if backslash {
				j++
			}
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++ // a doubled quote
				continue
			}
			return j
		}
	}
	return len(q)
}

// appendText writes t with args in place of its placeholders. It returns
// false when an argument cannot be written here (a string with a backslash
// or a NUL byte, whose quoting depends on the server's settings; a NaN):
// the caller then leaves the statement to the driver.
func (t *template) appendText(p Protocol, b []byte, args []Arg) ([]byte, bool) {
	for i, part := range t.parts {
		b = append(b, part...)
		if i == len(t.slots) {
			break
		}
		var ok bool
		if b, ok = appendLiteral(p, b, args[t.slots[i]]); !ok {
			return b, false
		}
	}
	return b, true
}

// appendLiteral writes a as an SQL literal.
func appendLiteral(p Protocol, b []byte, a Arg) ([]byte, bool) {
	switch a.kind {
	case kNull:
		return append(b, "NULL"...), true
	case kInt:
		if a.i < 0 { // in parentheses: "x-$1" must not become a comment
			b = append(b, '(')
			b = strconv.AppendInt(b, a.i, 10)
			return append(b, ')'), true
		}
		return strconv.AppendInt(b, a.i, 10), true
	case kUint:
		return strconv.AppendUint(b, uint64(a.i), 10), true
	case kFloat:
		f := math.Float64frombits(uint64(a.i))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, false
		}
		b = append(b, '(')
		b = strconv.AppendFloat(b, f, 'g', -1, 64)
		return append(b, ')'), true
	case kBool:
		if p == Postgres {
			if a.i != 0 {
				return append(b, "TRUE"...), true
			}
			return append(b, "FALSE"...), true
		}
		return append(b, byte('0'+a.i)), true
	case kString:
		return appendQuoted(b, a.s)
	case kBytes:
		return appendQuoted(b, a.b)
	case kTime:
		b = append(b, '\'')
		if p == Postgres {
			b = a.t.AppendFormat(b, time.RFC3339Nano)
		} else {
			b = a.t.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999")
		}
		return append(b, '\''), true
	}
	return b, false
}

// appendQuoted writes s in single quotes, doubling any quote in it (which
// both servers read the same way whatever their escaping mode).
func appendQuoted[T string | []byte](b []byte, s T) ([]byte, bool) {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', 0:
			return b, false
		case '\'':
			b = append(b, '\'', '\'')
		default:
			b = append(b, c)
		}
	}
	return append(b, '\''), true
}
