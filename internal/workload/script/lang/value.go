package lang

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Value is a variable's value: an int64, float64, bool, string or nil
// (NULL), with pgbench's coercions. A string (a -D-like variable, a \gset
// column) is read as pgbench reads one when an expression uses it: NULL,
// a boolean word, an integer or a double, else an error.
type Value = any

// Format writes v as pgbench substitutes it into SQL text: integers as
// integers, doubles with 15 significant digits (%.15g: 0.333333333333333,
// 3e+20, 100, Infinity, NaN), booleans as true/false, NULL as NULL, a
// string as it is.
func Format(v Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return formatDouble(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', 15, 64)
}

// normalize turns a value as given (a Go int, a string) into one of the
// expression types: int64, float64, bool, nil; a string is parsed.
func normalize(v Value) (Value, error) {
	switch x := v.(type) {
	case nil, int64, float64, bool:
		return v, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return nil, fmt.Errorf("value %d out of bigint range", x)
		}
		return int64(x), nil
	case []byte:
		return parseValue(string(x))
	case string:
		return parseValue(x)
	}
	return nil, fmt.Errorf("unsupported value %v of type %T", v, v)
}

// parseValue reads a variable's text as pgbench does.
func parseValue(s string) (Value, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "null":
		return nil, nil
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off":
		return false, nil
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && t != "" && !strings.ContainsAny(t, "xXpP_") {
		return f, nil
	}
	return nil, fmt.Errorf("malformed variable value %q (not a number, a boolean or NULL)", s)
}

var errNull = errors.New("NULL")

func typeName(v Value) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case bool:
		return "boolean"
	case int64:
		return "int"
	case float64:
		return "double"
	}
	return fmt.Sprintf("%T", v)
}

// toInt coerces as pgbench: a double is rounded to the nearest integer
// (half to even) and must fit in a bigint; a boolean or NULL is refused.
func toInt(v Value) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		r := math.RoundToEven(x)
		if math.IsNaN(r) || r < -9.223372036854775808e18 || r >= 9.223372036854775808e18 {
			return 0, fmt.Errorf("double to int overflow for %s", formatDouble(x))
		}
		return int64(r), nil
	}
	return 0, fmt.Errorf("cannot coerce %s to int", typeName(v))
}

func toDouble(v Value) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	}
	return 0, fmt.Errorf("cannot coerce %s to double", typeName(v))
}

// toBool is AND, OR and NOT's coercion: booleans only.
func toBool(v Value) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, fmt.Errorf("cannot coerce %s to boolean", typeName(v))
}

// truth is \if's, \elif's and WHEN's: a boolean, a non-zero number; NULL
// is false.
func truth(v Value) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	}
	return false
}
