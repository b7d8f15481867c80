// Package duration is how qpslab takes a length of time from its user:
// every duration flag and every duration parameter of a suite or a plan
// reads it the same way. A plain number is seconds (90, 1.5, 0), as the
// reference's scripts and sysbench's --time take them; a Go duration
// (6m, 90s, 6m30s, 250ms) says its unit. Negative, non-finite and
// unit-less-but-unknown values ("1w") are refused, and so is anything
// longer than a week, which no benchmark step needs and which keeps far
// from time.Duration's overflow. What qpslab records stays seconds, as
// plain numbers (Seconds), so that a history series does not split
// between "--secs 60" and "--secs 1m".
//
// Written here rather than taken from a library: time.ParseDuration does
// the unit forms and strconv the plain numbers; what is qpslab's is the
// rule that joins them, its bounds and its one-line errors.
package duration

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Max is the longest duration qpslab takes.
const Max = 7 * 24 * time.Hour

// Forms names the forms a duration takes, for error lines.
const Forms = "a number of seconds (90, 1.5, 0) or a duration (6m, 90s, 6m30s)"

// Parse reads s as a duration: a plain number of seconds or a Go duration,
// from 0 (only when zeroOK) to a week. Its error is one line naming what
// is wrong and the forms that are taken.
func Parse(s string, zeroOK bool) (time.Duration, error) {
	t := strings.TrimSpace(s)
	var d time.Duration
	if f, err := strconv.ParseFloat(t, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		switch {
		case err != nil && f > 0: // more digits than a float holds
			return 0, fmt.Errorf("%s seconds is more than a week: give at most 604800 (7 days, 168h)", quote(s))
		case err != nil && f < 0:
			return 0, fmt.Errorf("%s is negative: give %s", quote(s), Forms)
		case math.IsNaN(f) || math.IsInf(f, 0):
			return 0, fmt.Errorf("%s is not a finite number: give %s", quote(s), Forms)
		case f < 0:
			return 0, fmt.Errorf("%s is negative: give %s", quote(s), Forms)
		case f > Max.Seconds():
			return 0, fmt.Errorf("%s seconds is more than a week: give at most 604800 (7 days, 168h)", quote(s))
		}
		d = time.Duration(math.Round(f * float64(time.Second)))
	} else {
		var perr error
		d, perr = time.ParseDuration(t)
		switch {
		case perr != nil && wellFormed.MatchString(t): // time.ParseDuration's overflow
			return 0, fmt.Errorf("%s is more than a week: give at most 168h", quote(s))
		case perr != nil:
			return 0, fmt.Errorf("%s is not a duration: give %s", quote(s), Forms)
		case d < 0:
			return 0, fmt.Errorf("%s is negative: give %s", quote(s), Forms)
		case d > Max:
			return 0, fmt.Errorf("%s is more than a week: give at most 168h", quote(s))
		}
	}
	if d == 0 && !zeroOK {
		return 0, fmt.Errorf("%s is zero: give a duration above 0, %s", quote(s), Forms)
	}
	return d, nil
}

// wellFormed is a Go duration's syntax: a duration it matches that
// time.ParseDuration refuses is too long for time.Duration.
var wellFormed = regexp.MustCompile(`^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// Seconds is d as qpslab records it: its seconds as a plain number, with
// no more digits than it needs (60, 1.5, 0.25).
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// quote is s as an error line shows it: as typed, or quoted when it is
// empty, long, or holds spaces or control characters (the error stays one
// short line).
func quote(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "..."
	}
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r > 0x7e }) {
		return strconv.Quote(s)
	}
	return s
}

// Value is a duration flag (pflag.Value): it takes what Parse takes and
// shows its default as a Go duration (10s, 1m0s), as cobra's own duration
// flags do.
type Value struct {
	d      *time.Duration
	zeroOK bool
}

// Var is the flag value of the duration at p, set to def; zeroOK lets it
// be 0.
func Var(p *time.Duration, def time.Duration, zeroOK bool) *Value {
	*p = def
	return &Value{d: p, zeroOK: zeroOK}
}

func (v *Value) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}

// Set parses s (Parse).
func (v *Value) Set(s string) error {
	d, err := Parse(s, v.zeroOK)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

// Type is the flag's type as help shows it.
func (v *Value) Type() string { return "duration" }

// SecondsValue is a duration flag kept as a number of seconds (a float64
// field): it takes what Parse takes and shows its default in seconds.
type SecondsValue struct {
	f      *float64
	zeroOK bool
}

// SecondsVar is the flag value of the seconds at p, set to def; zeroOK
// lets it be 0.
func SecondsVar(p *float64, def float64, zeroOK bool) *SecondsValue {
	*p = def
	return &SecondsValue{f: p, zeroOK: zeroOK}
}

func (v *SecondsValue) String() string {
	if v.f == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.f, 'f', -1, 64)
}

// Set parses s (Parse).
func (v *SecondsValue) Set(s string) error {
	d, err := Parse(s, v.zeroOK)
	if err != nil {
		return err
	}
	*v.f = d.Seconds()
	return nil
}

// Type is the flag's type as help shows it.
func (v *SecondsValue) Type() string { return "duration" }
