package result

import (
	"strings"
	"testing"
)

// A results file the JSON decoder refuses is told in the JSON's words: the
// field's path, runs counted from 0 as the list is, what it holds against
// what it should; never a Go struct, field or type name. The old code said
// "cannot unmarshal string into Go struct field Totals.runs.totals.qps of
// type float64", with no run.
func TestDecodeErrorsInTheJSONsWords(t *testing.T) {
	run := func(s string) string { return `{"schema_version": 3, "runs": [{}, {}, {}, ` + s + `]}` }
	for _, c := range []struct{ json, want string }{
		{run(`{"totals": {"qps": "fast"}}`), `runs[3].totals.qps: a number is expected, got a string`},
		{run(`{"totals": {"qps": 1e400}}`),
			`runs[3].totals.qps: 1e400 is out of range: a number is at most 1.7976931348623157e+308 in size`},
		{run(`{"threads": 1.5}`),
			`runs[3].threads: a whole number from -9223372036854775808 to 9223372036854775807 is expected, got 1.5`},
		{run(`{"seed": -1}`), `runs[3].seed: a whole number from 0 to 18446744073709551615 is expected, got -1`},
		{run(`{"samples": [{}, {"s": "one"}]}`), `runs[3].samples[1].s: a whole number`},
		{run(`{"params": {"rows": 100000}}`), `runs[3].params.rows: a string is expected, got a number`},
		{run(`{"params": {"a b": true}}`), `runs[3].params["a b"]: a string is expected, got true or false`},
		{run(`{"totals": [1, 2]}`), `runs[3].totals: an object ({…}) is expected, got a list`},
		{run(`{"groups": {"layout": "5"}}`), `runs[3].groups: a list ([…]) is expected, got an object`},
		{run(`{"started": "soon"}`), `runs[3]: a time is expected (RFC 3339: "2024-05-01T12:00:00Z"), got "soon"`},
		{run(`{"started": 5}`), `runs[3]: a time is expected (RFC 3339: "2024-05-01T12:00:00Z"), got another value`},
		{`{"schema_version": "3", "runs": []}`, `schema_version: a whole number`},
		{`{"schema_version": 3, "runs": {}}`, `runs: a list ([…]) is expected, got an object`},
		{`[]`, `the JSON: an object ({…}) is expected, got a list`},
		{"{\"schema_version\": 3,\n \"runs\": [", `not JSON at line 2, column 11: unexpected end of JSON input`},
		{"{\"schema_version\": 3,\n \"runs\": [}", `not JSON at line 2, column 11: invalid character '}'`},
		{run(`{"totals": {"reported": -5}}`), `runs[3]: `},
	} {
		_, err := Decode([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.json, err, c.want)
			continue
		}
		for _, goWord := range []string{"Go ", "struct", "float64", "int64", "uint64", "unmarshal", "json:"} {
			if strings.Contains(err.Error(), goWord) {
				t.Errorf("%s: %q names Go's %q", c.json, err, goWord)
			}
		}
	}
}

// PathAt names the innermost value holding an offset: a scalar at its end,
// an object or list just inside it.
func TestPathAt(t *testing.T) {
	data := []byte(`{"a": [1, {"b": "x", "c d": [true]}], "e": {}}`)
	for _, c := range []struct {
		off  int64
		want string
	}{
		{int64(strings.Index(string(data), `1,`) + 1), "a[0]"},
		{int64(strings.Index(string(data), `"x"`) + 3), "a[1].b"},
		{int64(strings.Index(string(data), `true`) + 4), `a[1]["c d"][0]`},
		{int64(strings.Index(string(data), `{"b"`) + 1), "a[1]"},
		{int64(strings.Index(string(data), `{}`) + 1), "e"},
		{1, ""},
	} {
		if got := PathAt(data, c.off); got != c.want {
			t.Errorf("offset %d: %q, want %q", c.off, got, c.want)
		}
	}
}
