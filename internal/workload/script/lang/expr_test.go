package lang

import (
	"strings"
	"testing"
)

// evalText evaluates one expression for client 0 with seed 1.
func evalText(t *testing.T, expr string) (Value, error) {
	t.Helper()
	n, err := parseExpr(expr)
	if err != nil {
		return nil, err
	}
	st := NewState(1, 0, map[string]Value{"scale": int64(10), "s": "42", "d": "2.5", "b": "on", "z": "NULL", "junk": "abc"})
	return st.eval(n)
}

// The manual's examples ("Built-in Operators", "Built-in Functions"), and
// what Debian's pgbench 15 printed for the rest (run as `\set x EXPR` then
// `SELECT :x` with -d: the value as pgbench substitutes it).
func TestExpressionValues(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		// The manual's documented results.
		{"abs(-17)", "17"},
		{"debug(3)", "3"},
		{"double(5432)", "5432"},
		{"exp(1.0)", "2.71828182845905"},
		{"greatest(5, 4, 3, 2)", "5"},
		{"int(5.4 + 3.8)", "9"},
		{"least(5, 4, 3, 2.1)", "2.1"},
		{"ln(2.718281828459045)", "1"},
		{"mod(54, 32)", "22"},
		{"mod(-54, 32)", "-22"},
		{"pi()", "3.14159265358979"},
		{"pow(2.0, 10)", "1024"},
		{"power(2.0, 10)", "1024"},
		{"sqrt(2.0)", "1.4142135623731"},
		{"5 % 3", "2"},
		{"-7 / 2", "-3"},
		{"5.0 / 2", "2.5"},
		{"5 / 2", "2"},
		{"2 + 3 * 4", "14"},
		{"(2 + 3) * 4", "20"},
		{"5 & 3", "1"},
		{"5 | 3", "7"},
		{"5 # 3", "6"},
		{"~5", "-6"},
		{"1 << 2", "4"},
		{"8 >> 2", "2"},
		{"5 < 3", "false"},
		{"5 <= 5", "true"},
		{"5 > 3", "true"},
		{"5 >= 6", "false"},
		{"5 = 5", "true"},
		{"5 <> 4", "true"},
		{"5 != 5", "false"},
		{"1.0 = 1", "true"},
		{"2.0 > 1", "true"},
		{"true AND false", "false"},
		{"true OR false", "true"},
		{"NOT true", "false"},
		{"1 IS NULL", "false"},
		{"1 IS NOT NULL", "true"},
		{"NULL ISNULL", "true"},
		{"2 NOTNULL", "true"},
		{"CASE WHEN 1 = 2 THEN 'x' = 'y' ELSE 7 END", ""}, // a syntax error: no strings
		{"CASE WHEN 1 = 2 THEN 5 WHEN 2 = 2 THEN 6 ELSE 7 END", "6"},
		{"CASE WHEN false THEN 5 END", "NULL"},
		{"CASE WHEN NULL THEN 1 ELSE 2 END", "2"},
		// What pgbench 15 printed.
		{"int(2.5)", "2"},
		{"int(3.5)", "4"},
		{"int(-2.7)", "-3"},
		{"5.5 % 2", "0"},
		{"NULL = 1", "NULL"},
		{"1 + NULL", "NULL"},
		{"NOT NULL", "NULL"},
		{"NULL OR true", "NULL"},
		{"NULL AND false", "NULL"},
		{"false AND NULL", "false"},
		{"true OR NULL", "true"},
		{"false OR NULL", "NULL"},
		{"abs(NULL)", "NULL"},
		{"greatest(1, NULL)", "NULL"},
		{"greatest(1, 2.0)", "2"},
		{"least(3, 1, 2)", "1"},
		{"random(1.6, 1.6)", "2"},
		{"7 % -1", "0"},
		{"-9223372036854775808 % -1", "0"},
		{"1 << 64", "1"},
		{"1 << -1", "-9223372036854775808"},
		{"-8 >> 1", "-4"},
		{"1.0 / 3", "0.333333333333333"},
		{"1e20 * 3", "3e+20"},
		{"1e-7", "1e-07"},
		{"100.0", "100"},
		{"1.0 / 0", "Infinity"},
		{"ln(0)", "-Infinity"},
		{"sqrt(-1)", "NaN"},
		{"abs(-17.5)", "17.5"},
		{"abs(-9223372036854775808)", "-9223372036854775808"},
		{"9223372036854775807 * 1.0", "9.22337203685478e+18"},
		{"hash_fnv1a(42, 5432)", "8300031466468664087"},
		{"hash_murmur2(42, 5432)", "-8888550574847118926"},
		{"hash_fnv1a(0, 0)", "-6284781860667377211"},
		{"hash_murmur2(-1, 1)", "1123455060992376216"},
		{"hash(42, 5432)", "-8888550574847118926"},
		// Variables, and strings read as pgbench reads them.
		{":scale * 2", "20"},
		{":s + 1", "43"},
		{":d * 2", "5"},
		{"NOT :b", "false"},
		{":z IS NULL", "true"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"- 9223372036854775807 - 1", "-9223372036854775808"},
		{".5 + 1.", "1.5"},
		{"2e3", "2000"},
		{"+3", "3"},
		{"- -3", "3"},
		{"-2 * 3", "-6"},
		{"1 + 2 = 3 AND 4 > 3 OR false", "true"},
		{"NOT 1 = 2", "true"},
		{"1 | 2 + 1", "3"},
	} {
		v, err := evalText(t, c.expr)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s = %s, want an error", c.expr, Format(v))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := Format(v); got != c.want {
			t.Errorf("%s = %s, want %s", c.expr, got, c.want)
		}
	}
}

// Errors as pgbench gives them.
func TestExpressionErrors(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"5 / 0", "division by zero"},
		{"5 % 0", "division by zero"},
		{"mod(5, 0)", "division by zero"},
		{"9223372036854775807 + 1", "bigint add out of range"},
		{"-9223372036854775808 - 1", "bigint sub out of range"},
		{"4611686018427387904 * 2", "bigint mul out of range"},
		{"-9223372036854775808 * -1", "bigint mul out of range"},
		{"-9223372036854775808 / -1", "bigint div out of range"},
		{"- (-9223372036854775808)", "bigint sub out of range"},
		{"int(1e30)", "double to int overflow"},
		{"true + 1", "cannot coerce boolean to int"},
		{"(1 = 1) = true", "cannot coerce boolean to int"},
		{"3 AND 0", "cannot coerce int to boolean"},
		{":nope + 1", "undefined variable nope"},
		{":junk + 1", `malformed variable value "abc"`},
		{"random(5, 1)", "empty range given to random"},
		{"random(-9223372036854775808, 9223372036854775807)", "random range is too large"},
		{"random_zipfian(1, 10, 1.0)", "zipfian parameter must be in range [1.001, 1000] (not 1.000000)"},
		{"random_zipfian(1, 10, 1001)", "zipfian parameter must be in range [1.001, 1000]"},
		{"random_gaussian(1, 10, 1.9)", "gaussian parameter must be at least 2.000000 (not 1.900000)"},
		{"random_exponential(1, 10, 0)", "exponential parameter must be greater than zero (not 0.000000)"},
		{"permute(1, 0)", "permute size parameter must be greater than zero"},
	} {
		v, err := evalText(t, c.expr)
		if err == nil {
			t.Errorf("%s = %s, want the error %q", c.expr, Format(v), c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want %q", c.expr, err, c.want)
		}
	}
}

// Syntax errors are found when the script is parsed, with the column.
func TestExpressionSyntax(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"1 +", "unexpected end of expression"},
		{"(1 + 2", `expected ")"`},
		{"1 < 2 < 3", "comparisons do not chain"},
		{"1 < 2 = true", "comparisons do not chain"},
		{"foo(1)", `unknown function "foo"`},
		{"abs(1, 2)", "abs takes 1 argument, not 2"},
		{"random(1)", "random takes 2 arguments, not 1"},
		{"pi(1)", "pi takes no argument"},
		{"1 -- c", `"c" is not a keyword`},
		{`"a"`, "unexpected character"},
		{"12abc", "malformed number"},
		{"99999999999999999999", "bigint constant 99999999999999999999 out of range"},
		{"9223372036854775808", "out of range"},
		{"1 2", `unexpected "2" after the expression`},
		{"CASE END", "CASE needs at least one WHEN"},
		{"CASE WHEN 1 THEN 2", `expected "end"`},
		{"1 IS 2", "IS must be followed by [NOT] NULL"},
		{": + 1", "':' must be followed by a variable name"},
		{"", "missing expression"},
	} {
		_, err := parseExpr(c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.expr, err, c.want)
		}
	}
}
