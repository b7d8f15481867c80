package lang

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// An expression as \set, \if and \elif take it (pgbench's manual, "Built-in
// Operators" and "Built-in Functions"), parsed once and evaluated per run.

type tokKind int

const (
	tEOF tokKind = iota
	tInt
	tDouble
	tVar   // :name
	tIdent // a function name or a keyword
	tOp    // an operator or punctuation
)

type token struct {
	kind tokKind
	text string // the operator, the identifier (lower case), the variable's name
	i    int64
	f    float64
	pos  int // 1-based column in the expression
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// lexExpr splits an expression into tokens.
func lexExpr(s string) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			isDouble := false
			if j < len(s) && s[j] == '.' {
				isDouble = true
				j++
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					isDouble = true
					for k < len(s) && s[k] >= '0' && s[k] <= '9' {
						k++
					}
					j = k
				}
			}
			if j < len(s) && isIdentStart(s[j]) {
				return nil, fmt.Errorf("column %d: malformed number %q", i+1, s[i:j+1])
			}
			lit := s[i:j]
			t := token{pos: i + 1, text: lit}
			if isDouble {
				f, err := strconv.ParseFloat(lit, 64)
				if err != nil || math.IsInf(f, 0) {
					return nil, fmt.Errorf("column %d: double constant %s out of range", i+1, lit)
				}
				t.kind, t.f = tDouble, f
			} else {
				n, err := strconv.ParseInt(lit, 10, 64)
				if err != nil {
					// 9223372036854775808 is allowed after a unary minus.
					if lit == "9223372036854775808" {
						t.kind, t.text = tInt, lit
						out = append(out, t)
						i = j
						continue
					}
					return nil, fmt.Errorf("column %d: bigint constant %s out of range", i+1, lit)
				}
				t.kind, t.i = tInt, n
			}
			out = append(out, t)
			i = j
		case c == ':':
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("column %d: ':' must be followed by a variable name", i+1)
			}
			out = append(out, token{kind: tVar, text: s[i+1 : j], pos: i + 1})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			out = append(out, token{kind: tIdent, text: strings.ToLower(s[i:j]), pos: i + 1})
			i = j
		default:
			op := ""
			for _, o := range []string{"<=", ">=", "<>", "!=", "<<", ">>"} {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				if !strings.ContainsRune("+-*/%()<>=,&|#~", rune(c)) {
					return nil, fmt.Errorf("column %d: unexpected character %q", i+1, string(c))
				}
				op = string(c)
			}
			out = append(out, token{kind: tOp, text: op, pos: i + 1})
			i += len(op)
		}
	}
	out = append(out, token{kind: tEOF, pos: len(s) + 1})
	return out, nil
}

// node is a parsed expression.
type node interface{}

type (
	constNode struct{ v Value }
	varNode   struct{ name string }
	unaryNode struct {
		op string // "-", "~", "not", "isnull", "notnull"
		x  node
	}
	binNode struct {
		op   string
		l, r node
	}
	callNode struct {
		fn   *function
		args []node
	}
	caseNode struct {
		whens, thens []node
		els          node // nil: NULL
	}
)

type exprParser struct {
	toks []token
	p    int
}

// parseExpr parses a whole expression.
func parseExpr(s string) (node, error) {
	toks, err := lexExpr(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 1 {
		return nil, fmt.Errorf("missing expression")
	}
	ep := &exprParser{toks: toks}
	n, err := ep.expr(0)
	if err != nil {
		return nil, err
	}
	if t := ep.peek(); t.kind != tEOF {
		return nil, fmt.Errorf("column %d: unexpected %q after the expression", t.pos, t.text)
	}
	return n, nil
}

func (ep *exprParser) peek() token { return ep.toks[ep.p] }
func (ep *exprParser) next() token { t := ep.toks[ep.p]; ep.p++; return t }

func (ep *exprParser) isKw(kw string) bool {
	t := ep.peek()
	return t.kind == tIdent && t.text == kw
}
func (ep *exprParser) isOp(op string) bool {
	t := ep.peek()
	return t.kind == tOp && t.text == op
}

func (ep *exprParser) expect(op string) error {
	t := ep.peek()
	if t.kind == tOp && t.text == op || t.kind == tIdent && t.text == op {
		ep.p++
		return nil
	}
	return ep.unexpected(fmt.Sprintf("expected %q", op))
}

func (ep *exprParser) unexpected(what string) error {
	t := ep.peek()
	if t.kind == tEOF {
		return fmt.Errorf("column %d: unexpected end of expression (%s)", t.pos, what)
	}
	return fmt.Errorf("column %d: unexpected %q (%s)", t.pos, t.text, what)
}

// Binding powers, lowest first, as pgbench's grammar (SQL's order):
// OR; AND; NOT; IS [NOT] NULL, ISNULL, NOTNULL; comparisons (not
// associative); bitwise | # & << >>; + -; * / %; unary - + ~.
const (
	bpOr = 1 + iota
	bpAnd
	bpNot
	bpIs
	bpCmp
	bpBit
	bpAdd
	bpMul
	bpUnary
)

func binaryPower(t token) (string, int) {
	switch t.kind {
	case tIdent:
		switch t.text {
		case "or":
			return "or", bpOr
		case "and":
			return "and", bpAnd
		case "is", "isnull", "notnull":
			return t.text, bpIs
		}
	case tOp:
		switch t.text {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
			return t.text, bpCmp
		case "|", "#", "&", "<<", ">>":
			return t.text, bpBit
		case "+", "-":
			return t.text, bpAdd
		case "*", "/", "%":
			return t.text, bpMul
		}
	}
	return "", 0
}

// expr parses operators binding tighter than min.
func (ep *exprParser) expr(min int) (node, error) {
	left, err := ep.prefix()
	if err != nil {
		return nil, err
	}
	lastCmp := false
	for {
		op, bp := binaryPower(ep.peek())
		if bp == 0 || bp <= min {
			return left, nil
		}
		t := ep.next()
		switch op {
		case "isnull", "notnull":
			left = &unaryNode{op: op, x: left}
			continue
		case "is":
			neg := false
			if ep.isKw("not") {
				ep.next()
				neg = true
			}
			if !ep.isKw("null") {
				return nil, ep.unexpected("IS must be followed by [NOT] NULL")
			}
			ep.next()
			if neg {
				left = &unaryNode{op: "notnull", x: left}
			} else {
				left = &unaryNode{op: "isnull", x: left}
			}
			continue
		}
		if bp == bpCmp {
			if lastCmp {
				return nil, fmt.Errorf("column %d: comparisons do not chain (%q): use AND", t.pos, op)
			}
			lastCmp = true
		} else {
			lastCmp = false
		}
		right, err := ep.expr(bp)
		if err != nil {
			return nil, err
		}
		if op == "!=" {
			op = "<>"
		}
		left = &binNode{op: op, l: left, r: right}
	}
}

func (ep *exprParser) prefix() (node, error) {
	t := ep.next()
	switch t.kind {
	case tInt:
		if t.text == "9223372036854775808" {
			return nil, fmt.Errorf("column %d: bigint constant %s out of range", t.pos, t.text)
		}
		return &constNode{t.i}, nil
	case tDouble:
		return &constNode{t.f}, nil
	case tVar:
		return &varNode{t.text}, nil
	case tOp:
		switch t.text {
		case "(":
			n, err := ep.expr(0)
			if err != nil {
				return nil, err
			}
			if err := ep.expect(")"); err != nil {
				return nil, err
			}
			return n, nil
		case "-":
			if nt := ep.peek(); nt.kind == tInt && nt.text == "9223372036854775808" {
				ep.next()
				return &constNode{int64(math.MinInt64)}, nil
			}
			x, err := ep.expr(bpUnary - 1)
			if err != nil {
				return nil, err
			}
			return &unaryNode{op: "-", x: x}, nil
		case "+":
			return ep.expr(bpUnary - 1)
		case "~":
			x, err := ep.expr(bpUnary - 1)
			if err != nil {
				return nil, err
			}
			return &unaryNode{op: "~", x: x}, nil
		}
	case tIdent:
		switch t.text {
		case "true":
			return &constNode{true}, nil
		case "false":
			return &constNode{false}, nil
		case "null":
			return &constNode{nil}, nil
		case "not":
			x, err := ep.expr(bpNot - 1)
			if err != nil {
				return nil, err
			}
			return &unaryNode{op: "not", x: x}, nil
		case "case":
			return ep.caseExpr()
		}
		if isKeyword(t.text) {
			break
		}
		if !ep.isOp("(") {
			return nil, fmt.Errorf("column %d: %q is not a keyword, a number or a :variable (a function needs its parentheses)", t.pos, t.text)
		}
		ep.next()
		var args []node
		if !ep.isOp(")") {
			for {
				a, err := ep.expr(0)
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if ep.isOp(",") {
					ep.next()
					continue
				}
				break
			}
		}
		if err := ep.expect(")"); err != nil {
			return nil, err
		}
		fn, ok := functions[t.text]
		if !ok {
			return nil, fmt.Errorf("column %d: unknown function %q", t.pos, t.text)
		}
		if len(args) < fn.min || fn.max >= 0 && len(args) > fn.max {
			return nil, fmt.Errorf("column %d: %s takes %s, not %d", t.pos, t.text, fn.arity(), len(args))
		}
		return &callNode{fn: fn, args: args}, nil
	case tEOF:
		return nil, fmt.Errorf("column %d: unexpected end of expression", t.pos)
	}
	return nil, fmt.Errorf("column %d: unexpected %q", t.pos, t.text)
}

func isKeyword(s string) bool {
	switch s {
	case "and", "or", "not", "is", "isnull", "notnull", "null", "true", "false", "case", "when", "then", "else", "end":
		return true
	}
	return false
}

func (ep *exprParser) caseExpr() (node, error) {
	c := &caseNode{}
	for ep.isKw("when") {
		ep.next()
		w, err := ep.expr(0)
		if err != nil {
			return nil, err
		}
		if err := ep.expect("then"); err != nil {
			return nil, err
		}
		th, err := ep.expr(0)
		if err != nil {
			return nil, err
		}
		c.whens, c.thens = append(c.whens, w), append(c.thens, th)
	}
	if len(c.whens) == 0 {
		return nil, ep.unexpected("CASE needs at least one WHEN")
	}
	if ep.isKw("else") {
		ep.next()
		e, err := ep.expr(0)
		if err != nil {
			return nil, err
		}
		c.els = e
	}
	if err := ep.expect("end"); err != nil {
		return nil, err
	}
	return c, nil
}
