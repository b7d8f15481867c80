package lang

import (
	"fmt"
	"math"
)

// eval computes n for the client whose state is s.
func (s *State) eval(n node) (Value, error) {
	switch x := n.(type) {
	case *constNode:
		return x.v, nil
	case *varNode:
		v, ok := s.vars[x.name]
		if !ok {
			return nil, fmt.Errorf("undefined variable %s", x.name)
		}
		nv, err := normalize(v)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", x.name, err)
		}
		return nv, nil
	case *unaryNode:
		v, err := s.eval(x.x)
		if err != nil {
			return nil, err
		}
		switch x.op {
		case "isnull":
			return v == nil, nil
		case "notnull":
			return v != nil, nil
		}
		if v == nil {
			return nil, nil
		}
		switch x.op {
		case "not":
			b, err := toBool(v)
			if err != nil {
				return nil, err
			}
			return !b, nil
		case "~":
			i, err := toInt(v)
			if err != nil {
				return nil, err
			}
			return ^i, nil
		case "-":
			return arith("-", int64(0), v)
		}
	case *binNode:
		if x.op == "and" || x.op == "or" {
			return s.logic(x)
		}
		l, err := s.eval(x.l)
		if err != nil {
			return nil, err
		}
		r, err := s.eval(x.r)
		if err != nil {
			return nil, err
		}
		if l == nil || r == nil {
			return nil, nil
		}
		return arith(x.op, l, r)
	case *callNode:
		args := make([]Value, len(x.args))
		null := false
		for i, a := range x.args {
			v, err := s.eval(a)
			if err != nil {
				return nil, err
			}
			args[i] = v
			null = null || v == nil
		}
		if null {
			return nil, nil
		}
		v, err := x.fn.eval(s, args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", x.fn.name, err)
		}
		return v, nil
	case *caseNode:
		for i, w := range x.whens {
			c, err := s.eval(w)
			if err != nil {
				return nil, err
			}
			if truth(c) {
				return s.eval(x.thens[i])
			}
		}
		if x.els == nil {
			return nil, nil
		}
		return s.eval(x.els)
	}
	return nil, fmt.Errorf("internal error: unknown expression node %T", n)
}

// logic is AND and OR as pgbench has them: the left side first (NULL
// gives NULL), the right one only when it decides.
func (s *State) logic(x *binNode) (Value, error) {
	l, err := s.eval(x.l)
	if err != nil || l == nil {
		return nil, err
	}
	lb, err := toBool(l)
	if err != nil {
		return nil, err
	}
	if x.op == "and" && !lb {
		return false, nil
	}
	if x.op == "or" && lb {
		return true, nil
	}
	r, err := s.eval(x.r)
	if err != nil || r == nil {
		return nil, err
	}
	return toBool(r)
}

// arith applies a binary operator to two non-NULL values: integer
// arithmetic when both are integers (overflow an error, as pgbench's
// "bigint add out of range"), double arithmetic otherwise.
func arith(op string, l, r Value) (Value, error) {
	switch op {
	case "%", "&", "|", "#", "<<", ">>":
		a, err := toInt(l)
		if err != nil {
			return nil, err
		}
		b, err := toInt(r)
		if err != nil {
			return nil, err
		}
		switch op {
		case "%":
			if b == 0 {
				return nil, fmt.Errorf("division by zero")
			}
			if b == -1 {
				return int64(0), nil
			}
			return a % b, nil
		case "&":
			return a & b, nil
		case "|":
			return a | b, nil
		case "#":
			return a ^ b, nil
		case "<<":
			return a << (uint64(b) & 63), nil
		default:
			return a >> (uint64(b) & 63), nil
		}
	}
	if _, ok := l.(bool); ok {
		return nil, fmt.Errorf("cannot coerce boolean to int")
	}
	if _, ok := r.(bool); ok {
		return nil, fmt.Errorf("cannot coerce boolean to int")
	}
	ai, lint := l.(int64)
	bi, rint := r.(int64)
	if lint && rint {
		switch op {
		case "+":
			s := ai + bi
			if (s > ai) != (bi > 0) {
				return nil, fmt.Errorf("bigint add out of range")
			}
			return s, nil
		case "-":
			d := ai - bi
			if (d < ai) != (bi > 0) {
				return nil, fmt.Errorf("bigint sub out of range")
			}
			return d, nil
		case "*":
			if ai != 0 && bi != 0 {
				p := ai * bi
				if p/bi != ai || (ai == -1 && bi == math.MinInt64) || (bi == -1 && ai == math.MinInt64) {
					return nil, fmt.Errorf("bigint mul out of range")
				}
				return p, nil
			}
			return int64(0), nil
		case "/":
			if bi == 0 {
				return nil, fmt.Errorf("division by zero")
			}
			if bi == -1 {
				if ai == math.MinInt64 {
					return nil, fmt.Errorf("bigint div out of range")
				}
				return -ai, nil
			}
			return ai / bi, nil
		}
		return compare(op, cmpInt(ai, bi))
	}
	a, err := toDouble(l)
	if err != nil {
		return nil, err
	}
	b, err := toDouble(r)
	if err != nil {
		return nil, err
	}
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		return a / b, nil
	}
	c := 0
	switch {
	case a < b:
		c = -1
	case a > b:
		c = 1
	case a != b: // NaN
		c = 2
	}
	return compare(op, c)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compare turns a three-way comparison into op's answer (c == 2: unordered).
func compare(op string, c int) (Value, error) {
	switch op {
	case "=":
		return c == 0, nil
	case "<>":
		return c != 0, nil
	case "<":
		return c == -1, nil
	case "<=":
		return c == -1 || c == 0, nil
	case ">":
		return c == 1, nil
	case ">=":
		return c == 1 || c == 0, nil
	}
	return nil, fmt.Errorf("internal error: unknown operator %q", op)
}
