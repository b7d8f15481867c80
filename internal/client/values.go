package client

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"unsafe"
)

// Values is one result row's columns as text (as the text protocol gives
// them: integers in decimal, DECIMAL as written, floats in Go's 'g' form,
// dates 2006-01-02 15:04:05[.ffffff]), held in buffers the connection
// reuses from one row to the next: valid only until the callback
// (Stmt.QueryEach's each) returns. On PostgreSQL the text is the server's
// own (its DataRow values, referenced in place).
type Values struct {
	cols [][]byte // each column's text; nil for NULL
	buf  []byte   // the text this side wrote for the row (numbers, dates from the binary protocol)
}

// Len is the number of columns.
func (v *Values) Len() int { return len(v.cols) }

// Null reports whether column i is NULL.
func (v *Values) Null(i int) bool { return v.cols[i] == nil }

// Bytes is column i's text, nil for NULL; valid until the callback returns.
func (v *Values) Bytes(i int) []byte { return v.cols[i] }

// String is column i's text as a new string ("" for NULL): it allocates,
// for the rare values a caller keeps.
func (v *Values) String(i int) string { return string(v.cols[i]) }

// Int is column i as an integer; an error names the column and its text
// when that is not an integer (or NULL).
func (v *Values) Int(i int) (int64, error) {
	b := v.cols[i]
	if b == nil {
		return 0, fmt.Errorf("column %d is NULL, not an integer", i+1)
	}
	n, err := strconv.ParseInt(unsafeString(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("column %d: %q is not an integer", i+1, string(b))
	}
	return n, nil
}

// Float is column i as a floating-point number (a DECIMAL's text too); an
// error names the column and its text when that is not a number (or NULL).
func (v *Values) Float(i int) (float64, error) {
	b := v.cols[i]
	if b == nil {
		return 0, fmt.Errorf("column %d is NULL, not a number", i+1)
	}
	f, err := strconv.ParseFloat(unsafeString(b), 64)
	if err != nil {
		return 0, fmt.Errorf("column %d: %q is not a number", i+1, string(b))
	}
	return f, nil
}

// unsafeString views b as a string for a parse that does not keep it (the
// errors above copy the text).
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// valueTextMax bounds the text a binary value becomes: a float's 'g' form
// (24 bytes), a DATETIME(6) (26), a TIME of many days.
const valueTextMax = 40

// empty is a zero-length value that is not NULL.
var empty = []byte{}

// start begins a row of n columns that this side writes as text: the
// buffer takes them all without moving (it grows only while warming up).
func (v *Values) start(n int) {
	v.cols = v.cols[:0]
	if need := n * valueTextMax; cap(v.buf) < need {
		v.buf = make([]byte, 0, need)
	}
	v.buf = v.buf[:0]
}

// null adds a NULL column.
func (v *Values) null() { v.cols = append(v.cols, nil) }

// view adds a column whose text is b, which must stay put until the
// callback returns.
func (v *Values) view(b []byte) {
	if b == nil {
		b = empty
	}
	v.cols = append(v.cols, b)
}

// wrote adds the column whose text was appended to buf from s on.
func (v *Values) wrote(s int) {
	v.cols = append(v.cols, v.buf[s:len(v.buf):len(v.buf)])
}

// driverRow fills v with a row of driver values (Options.Driver), written
// as text the way textOf does.
func (v *Values) driverRow(dest []driver.Value) {
	v.start(len(dest))
	for _, x := range dest {
		s := len(v.buf)
		switch x := x.(type) {
		case nil:
			v.null()
			continue
		case []byte:
			v.view(x)
			continue
		case string:
			v.buf = append(v.buf, x...)
		case int64:
			v.buf = strconv.AppendInt(v.buf, x, 10)
		case uint64:
			v.buf = strconv.AppendUint(v.buf, x, 10)
		case float64:
			v.buf = strconv.AppendFloat(v.buf, x, 'g', -1, 64)
		case float32:
			v.buf = strconv.AppendFloat(v.buf, float64(x), 'g', -1, 32)
		case bool:
			v.buf = strconv.AppendBool(v.buf, x)
		default:
			v.buf = fmt.Append(v.buf, x)
		}
		v.wrote(s)
	}
}
