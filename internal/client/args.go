package client

import (
	"database/sql/driver"
	"fmt"
	"math"
	"time"
)

// Arg is one argument of a statement: an integer, a float, a string, bytes,
// a bool, a time or NULL. A []Arg that a worker reuses from one statement to
// the next binds without allocating, which an []any cannot: an int64 in an
// any is a heap allocation (beyond 255), made before the call.
type Arg struct {
	kind argKind
	i    int64 // kInt, kUint (as bits), kBool (0 or 1); kFloat as bits
	s    string
	b    []byte
	t    time.Time
}

type argKind uint8

const (
	kNull argKind = iota
	kInt
	kUint
	kFloat
	kBool
	kString
	kBytes
	kTime
)

// Int is an integer argument.
func Int(v int64) Arg { return Arg{kind: kInt, i: v} }

// Str is a string argument.
func Str(s string) Arg { return Arg{kind: kString, s: s} }

// Bytes is a string argument held in b, which the statement reads when it
// runs (it need not outlive the call): a reused buffer binds without a
// string allocation.
func Bytes(b []byte) Arg { return Arg{kind: kBytes, b: b} }

// Float is a floating-point argument.
func Float(v float64) Arg { return Arg{kind: kFloat, i: int64(math.Float64bits(v))} }

// Null is a NULL argument.
func Null() Arg { return Arg{} }

// Value returns a as the value a driver takes (int64, uint64, float64, bool,
// string, []byte, time.Time or nil), for the drivers' paths and for tests.
func (a Arg) Value() any {
	switch a.kind {
	case kInt:
		return a.i
	case kUint:
		return uint64(a.i)
	case kFloat:
		return math.Float64frombits(uint64(a.i))
	case kBool:
		return a.i != 0
	case kString:
		return a.s
	case kBytes:
		return string(a.b) // a string argument, whatever holds it
	case kTime:
		return a.t
	}
	return nil
}

// argOf converts one of Exec's or Query's arguments. The common types are
// read out of the any without allocating; anything else goes through
// database/sql's conversion (a driver.Valuer, a named integer type, …).
func argOf(v any) (Arg, error) {
	switch x := v.(type) {
	case nil:
		return Arg{}, nil
	case int64:
		return Int(x), nil
	case int:
		return Int(int64(x)), nil
	case int32:
		return Int(int64(x)), nil
	case int16:
		return Int(int64(x)), nil
	case int8:
		return Int(int64(x)), nil
	case uint64:
		if x > math.MaxInt64 {
			return Arg{kind: kUint, i: int64(x)}, nil
		}
		return Int(int64(x)), nil
	case uint:
		return argOf(uint64(x))
	case uint32:
		return Int(int64(x)), nil
	case uint16:
		return Int(int64(x)), nil
	case uint8:
		return Int(int64(x)), nil
	case float64:
		return Float(x), nil
	case float32:
		return Float(float64(x)), nil
	case bool:
		a := Arg{kind: kBool}
		if x {
			a.i = 1
		}
		return a, nil
	case string:
		return Str(x), nil
	case []byte:
		if x == nil {
			return Arg{}, nil
		}
		return Bytes(x), nil
	case time.Time:
		return Arg{kind: kTime, t: x}, nil
	case Arg:
		return x, nil
	}
	dv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return Arg{}, err
	}
	if _, again := dv.(Arg); again {
		return Arg{}, fmt.Errorf("unsupported argument type %T", v)
	}
	return argOf(dv)
}

// argsOf converts args into buf (reused) and returns it.
func argsOf(buf []Arg, args []any) ([]Arg, error) {
	buf = buf[:0]
	for i, v := range args {
		a, err := argOf(v)
		if err != nil {
			return buf, fmt.Errorf("argument %d: %w", i+1, err)
		}
		buf = append(buf, a)
	}
	return buf, nil
}

// anyArgs converts args to the values the drivers take (the drivers'
// paths allocate here; the lean path never calls it).
func anyArgs(args []Arg) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value()
	}
	return out
}
