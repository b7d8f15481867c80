package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// JSONError is err, encoding/json's refusal of data, in the JSON's own
// words: the path of the field (runs[3].totals.qps, params["rows"]) and
// what it holds against what it should (a number is expected, got a
// string), or where the text stops being JSON (line and column); never a
// Go type or struct name. Any other error loses only encoding/json's
// "json: " prefix.
func JSONError(data []byte, err error) error { return JSONErrorAt("", data, err) }

// JSONErrorAt is JSONError for data that is the value at the path at of
// a larger JSON (runs[3]): the paths it names start there.
func JSONErrorAt(at string, data []byte, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		p := PathAt(data, te.Offset)
		switch {
		case at == "" && p == "":
			p = "the JSON"
		case p == "" || p[0] == '[':
			p = at + p
		case at != "":
			p = at + "." + p
		}
		return fmt.Errorf("%s: %s", p, mismatch(te))
	case errors.As(err, &se):
		off := se.Offset // after the character refused, or the end
		if off > 0 && off < int64(len(data)) || strings.HasPrefix(se.Error(), "invalid character") {
			off--
		}
		line, col := lineCol(data, off)
		if at != "" {
			at += ": "
		}
		return fmt.Errorf("%snot JSON at line %d, column %d: %s", at, line, col, se.Error())
	}
	// The rest name no field: a time's own refusal, an unknown field.
	msg := strings.TrimPrefix(err.Error(), "json: ")
	var pe *time.ParseError
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		msg = f + " is not a field here"
	} else if errors.As(err, &pe) || strings.HasPrefix(msg, "Time.UnmarshalJSON") {
		got := "another value"
		if pe != nil {
			got = strconv.Quote(pe.Value)
		}
		msg = "a time is expected (RFC 3339: \"2024-05-01T12:00:00Z\"), got " + got
	}
	if at != "" {
		msg = at + ": " + msg
	}
	return errors.New(msg)
}

// mismatch says what a field holds against what its type takes.
func mismatch(te *json.UnmarshalTypeError) string {
	got, literal := te.Value, ""
	if v, ok := strings.CutPrefix(got, "number "); ok {
		got, literal = "number", v
	}
	t := te.Type
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := "another kind of value"
	if t != nil {
		switch t.Kind() {
		case reflect.Float32, reflect.Float64:
			want = "a number"
			if literal != "" {
				return fmt.Sprintf("%s is out of range: a number is at most %g in size", literal, maxFloat(t.Bits()))
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			lo := int64(-1) << (t.Bits() - 1)
			want = fmt.Sprintf("a whole number from %d to %d", lo, -(lo + 1))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			want = fmt.Sprintf("a whole number from 0 to %s", strconv.FormatUint(math.MaxUint64>>(64-t.Bits()), 10))
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		case reflect.Slice, reflect.Array:
			want = "a list ([…])"
		case reflect.Map, reflect.Struct:
			want = "an object ({…})"
		}
	}
	if literal == "" {
		literal = map[string]string{"string": "a string", "number": "a number", "bool": "true or false",
			"array": "a list", "object": "an object"}[got]
	}
	if literal == "" {
		literal = got
	}
	return fmt.Sprintf("%s is expected, got %s", want, literal)
}

func maxFloat(bits int) float64 {
	if bits == 32 {
		return math.MaxFloat32
	}
	return math.MaxFloat64
}

// lineCol is the line and column (from 1, in bytes) of offset in data.
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	return line, int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// ident is an object key a path writes after a dot; any other key is
// written quoted in brackets.
var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// PathAt is the JSON path (runs[3].totals.qps) of the innermost value of
// data (valid JSON) that holds the byte offset off, as encoding/json's
// errors give it: the end of a value, or just inside an object or list.
// "" for the whole text.
func PathAt(data []byte, off int64) string {
	type frame struct {
		path    string
		start   int64
		array   bool
		n       int    // the element an array is at
		key     string // the key an object is at
		wantKey bool
	}
	var stack []*frame
	var last struct {
		path       string
		start, end int64
	}
	last.start = -1
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		switch {
		case f.array:
			return fmt.Sprintf("%s[%d]", f.path, f.n)
		case !ident.MatchString(f.key):
			return f.path + "[" + strconv.Quote(f.key) + "]"
		case f.path == "":
			return f.key
		}
		return f.path + "." + f.key
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		start := dec.InputOffset()
		if start >= off {
			break
		}
		tok, err := dec.Token()
		if err != nil {
			break
		}
		end := dec.InputOffset()
		if len(stack) > 0 {
			if f := stack[len(stack)-1]; f.wantKey {
				if k, ok := tok.(string); ok {
					f.key, f.wantKey = k, false
					continue
				}
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			open := tok == json.Delim('{')
			stack = append(stack, &frame{path: child(), start: start, array: !open, wantKey: open})
			continue
		case json.Delim('}'), json.Delim(']'):
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			last.path, last.start, last.end = f.path, f.start, end
		default:
			last.path, last.start, last.end = child(), start, end
		}
		if len(stack) > 0 { // a value ended: its parent moves on
			if f := stack[len(stack)-1]; f.array {
				f.n++
			} else {
				f.wantKey = true
			}
		}
	}
	if last.start >= 0 && last.start < off && off <= last.end {
		return last.path
	}
	if len(stack) > 0 {
		return stack[len(stack)-1].path
	}
	return ""
}
