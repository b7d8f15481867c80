package client

import (
	"encoding/binary"
	"math"
	"strconv"
)

// MySQL's column types (https://dev.mysql.com/doc/dev/mysql-server/latest/field__types_8h.html),
// those a result row's values are read by.
const (
	myColTiny      = 0x01
	myColShort     = 0x02
	myColLong      = 0x03
	myColFloat     = 0x04
	myColDouble    = 0x05
	myColNull      = 0x06
	myColTimestamp = 0x07
	myColLongLong  = 0x08
	myColInt24     = 0x09
	myColDate      = 0x0a
	myColTime      = 0x0b
	myColDateTime  = 0x0c
	myColYear      = 0x0d
	myColNewDate   = 0x0e
)

// binaryRow writes a binary protocol row (COM_STMT_EXECUTE's: a 0x00
// header, a NULL bitmap whose first two bits are unused, then the values)
// into v as text, the way go-sql-driver turns each into a driver value
// and textOf that into text: integers in decimal, floats in Go's 'g' form
// (FLOAT as a float32), dates and times as the text protocol writes them,
// with as many fractional digits as the column has; every other type
// (DECIMAL, strings, BLOBs, BIT, JSON …) is a length-encoded string,
// referenced in place. false: the row does not fit its columns.
func (v *Values) binaryRow(cols []myCol, p []byte) bool {
	nb := (len(cols) + 9) / 8
	if len(p) < 1+nb {
		return false
	}
	nulls := p[1 : 1+nb]
	pos := 1 + nb
	v.start(len(cols))
	for i, c := range cols {
		if nulls[(i+2)/8]&(1<<((i+2)%8)) != 0 || c.typ == myColNull {
			v.null()
			continue
		}
		size := 0
		switch c.typ {
		case myColTiny:
			size = 1
		case myColShort, myColYear:
			size = 2
		case myColLong, myColInt24, myColFloat:
			size = 4
		case myColLongLong, myColDouble:
			size = 8
		}
		if size > 0 {
			if pos+size > len(p) {
				return false
			}
			v.number(c, p[pos:pos+size])
			pos += size
			continue
		}
		n, k := lenenc(p[pos:])
		if k == 0 || n > uint64(len(p)-pos-k) {
			return false
		}
		b := p[pos+k : pos+k+int(n) : pos+k+int(n)]
		pos += k + int(n)
		switch c.typ {
		case myColDate, myColNewDate, myColDateTime, myColTimestamp:
			if !v.dateTime(c, b) {
				return false
			}
		case myColTime:
			if !v.time(c, b) {
				return false
			}
		default:
			v.view(b)
		}
	}
	return true
}

// number writes a fixed-size binary value, b, of column c.
func (v *Values) number(c myCol, b []byte) {
	s := len(v.buf)
	switch c.typ {
	case myColTiny:
		if c.unsigned {
			v.buf = strconv.AppendUint(v.buf, uint64(b[0]), 10)
		} else {
			v.buf = strconv.AppendInt(v.buf, int64(int8(b[0])), 10)
		}
	case myColShort, myColYear:
		x := binary.LittleEndian.Uint16(b)
		if c.unsigned || c.typ == myColYear {
			v.buf = strconv.AppendUint(v.buf, uint64(x), 10)
		} else {
			v.buf = strconv.AppendInt(v.buf, int64(int16(x)), 10)
		}
	case myColLong, myColInt24:
		x := binary.LittleEndian.Uint32(b)
		if c.unsigned {
			v.buf = strconv.AppendUint(v.buf, uint64(x), 10)
		} else {
			v.buf = strconv.AppendInt(v.buf, int64(int32(x)), 10)
		}
	case myColLongLong:
		x := binary.LittleEndian.Uint64(b)
		if c.unsigned {
			v.buf = strconv.AppendUint(v.buf, x, 10)
		} else {
			v.buf = strconv.AppendInt(v.buf, int64(x), 10)
		}
	case myColFloat:
		v.buf = strconv.AppendFloat(v.buf, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 'g', -1, 32)
	case myColDouble:
		v.buf = strconv.AppendFloat(v.buf, math.Float64frombits(binary.LittleEndian.Uint64(b)), 'g', -1, 64)
	}
	v.wrote(s)
}

// fraction is how many fractional digits a column's times show: its
// decimals, when 1 to 6 (0x1f marks a type without them).
func fraction(c myCol) int {
	if c.decimals >= 1 && c.decimals <= 6 {
		return int(c.decimals)
	}
	return 0
}

// zeroDateTime is the text of a date or time the server sends as zero
// bytes (all its fields zero).
const zeroDateTime = "0000-00-00 00:00:00.000000"

// dateTime writes a binary DATE, DATETIME or TIMESTAMP: 0, 4 (the date),
// 7 (and the time) or 11 bytes (and microseconds).
func (v *Values) dateTime(c myCol, b []byte) bool {
	s := len(v.buf)
	length := 10 // a DATE
	if c.typ != myColDate && c.typ != myColNewDate {
		length = 19
		if f := fraction(c); f > 0 {
			length += 1 + f
		}
	}
	switch len(b) {
	case 0:
		v.buf = append(v.buf, zeroDateTime[:length]...)
	case 4, 7, 11:
		v.buf = append2(append2(v.buf, int(binary.LittleEndian.Uint16(b))/100), int(binary.LittleEndian.Uint16(b))%100)
		v.buf = append2(append(v.buf, '-'), int(b[2]))
		v.buf = append2(append(v.buf, '-'), int(b[3]))
		if length == 10 {
			break
		}
		if len(b) == 4 {
			v.buf = append(v.buf, zeroDateTime[10:length]...)
			break
		}
		v.buf = append2(append(v.buf, ' '), int(b[4]))
		v.buf = append2(append(v.buf, ':'), int(b[5]))
		v.buf = append2(append(v.buf, ':'), int(b[6]))
		v.micro(b[7:], length-20)
	default:
		return false
	}
	v.wrote(s)
	return true
}

// time writes a binary TIME: 0, 8 or 12 bytes (sign, days, hours,
// minutes, seconds, microseconds), as [-]HH:MM:SS[.ffffff] with the days
// counted in the hours.
func (v *Values) time(c myCol, b []byte) bool {
	s := len(v.buf)
	f := fraction(c)
	switch len(b) {
	case 0:
		v.buf = append(v.buf, zeroDateTime[11:19]...)
		if f > 0 {
			v.buf = append(v.buf, zeroDateTime[19:20+f]...)
		}
	case 8, 12:
		if b[0] == 1 {
			v.buf = append(v.buf, '-')
		}
		hours := int64(binary.LittleEndian.Uint32(b[1:5]))*24 + int64(b[5])
		if hours >= 100 {
			v.buf = strconv.AppendInt(v.buf, hours, 10)
		} else {
			v.buf = append2(v.buf, int(hours))
		}
		v.buf = append2(append(v.buf, ':'), int(b[6]))
		v.buf = append2(append(v.buf, ':'), int(b[7]))
		v.micro(b[8:], f)
	default:
		return false
	}
	v.wrote(s)
	return true
}

// micro writes the first digits of a binary value's microseconds (b: 4
// bytes, or none for 0).
func (v *Values) micro(b []byte, digits int) {
	if digits <= 0 {
		return
	}
	var us uint32
	if len(b) >= 4 {
		us = binary.LittleEndian.Uint32(b)
	}
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + us%10)
		us /= 10
	}
	v.buf = append(append(v.buf, '.'), d[:digits]...)
}

// append2 writes n (0 to 99) in two digits.
func append2(b []byte, n int) []byte { return append(b, byte('0'+n/10%10), byte('0'+n%10)) }

// textRow writes a text protocol row (COM_QUERY's: a length-encoded
// string per column, 0xfb for NULL) into v, referencing the values in
// place but for those go-sql-driver reads into numbers: floats are
// rewritten in Go's 'g' form, and integers lose a ZEROFILL's leading
// zeros. false: the row does not fit its columns.
func (v *Values) textRow(cols []myCol, p []byte) bool {
	pos := 0
	v.start(len(cols))
	for _, c := range cols {
		if pos >= len(p) {
			return false
		}
		if p[pos] == 0xfb {
			pos++
			v.null()
			continue
		}
		n, k := lenenc(p[pos:])
		if k == 0 || n > uint64(len(p)-pos-k) {
			return false
		}
		b := p[pos+k : pos+k+int(n) : pos+k+int(n)]
		pos += k + int(n)
		switch c.typ {
		case myColFloat, myColDouble:
			bits := 64
			if c.typ == myColFloat {
				bits = 32
			}
			if f, err := strconv.ParseFloat(unsafeString(b), bits); err == nil {
				s := len(v.buf)
				v.buf = strconv.AppendFloat(v.buf, f, 'g', -1, bits)
				v.wrote(s)
				continue
			}
		case myColTiny, myColShort, myColLong, myColInt24, myColLongLong, myColYear:
			for len(b) > 1 && b[0] == '0' {
				b = b[1:]
			}
		}
		v.view(b)
	}
	return true
}
