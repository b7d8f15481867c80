package duration

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"6m", 6 * time.Minute}, {"90s", 90 * time.Second}, {"6m30s", 390 * time.Second},
		{"90", 90 * time.Second}, {"1.5", 1500 * time.Millisecond}, {"0", 0}, {" 60 ", time.Minute},
		{"250ms", 250 * time.Millisecond}, {"604800", Max}, {"168h", Max},
	} {
		got, err := Parse(c.in, true)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, says string }{
		{"-1", "negative"}, {"-1s", "negative"}, {"1w", "not a duration"}, {"NaN", "not a finite number"},
		{"Inf", "not a finite number"}, {"604801", "more than a week"}, {"169h", "more than a week"},
		{"1e300", "more than a week"}, {"9999999999999h", "more than a week"}, {"", "not a duration"},
		{"6 m", "not a duration"}, {"1s\x1b[2J", "not a duration"}, {strings.Repeat("9", 5000), "more than a week"},
	} {
		_, err := Parse(c.in, true)
		if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") || len(err.Error()) > 200 {
			t.Errorf("Parse(%q): %v; want one short line saying %q", c.in, err, c.says)
		}
	}
	if _, err := Parse("0", false); err == nil || !strings.Contains(err.Error(), "zero") {
		t.Errorf("Parse(0) with zero refused: %v", err)
	}
	if _, err := Parse("0s", false); err == nil {
		t.Errorf("Parse(0s) with zero refused: no error")
	}
}

// What is recorded is seconds as a plain number, so "60" and "1m" record
// the same.
func TestSecondsRecordsAsToday(t *testing.T) {
	for in, want := range map[string]string{"60": "60", "1m": "60", "1.5": "1.5", "250ms": "0.25", "0": "0", "600": "600", "10m": "600"} {
		d, err := Parse(in, true)
		if err != nil || Seconds(d) != want {
			t.Errorf("Seconds(Parse(%q)) = %q, %v; want %q", in, Seconds(d), err, want)
		}
	}
}

func TestFlagValues(t *testing.T) {
	var d time.Duration
	v := Var(&d, 10*time.Second, false)
	if v.String() != "10s" || v.Type() != "duration" {
		t.Errorf("default %q type %q", v.String(), v.Type())
	}
	if err := v.Set("600"); err != nil || d != 10*time.Minute {
		t.Errorf("Set(600): %v, %v", d, err)
	}
	if err := v.Set("0"); err == nil {
		t.Errorf("Set(0) on a flag that refuses zero: no error")
	}
	var f float64
	s := SecondsVar(&f, 480, true)
	if s.String() != "480" {
		t.Errorf("default %q", s.String())
	}
	if err := s.Set("6m"); err != nil || f != 360 {
		t.Errorf("Set(6m): %v, %v", f, err)
	}
	if err := s.Set("1w"); err == nil || f != 360 {
		t.Errorf("Set(1w): %v, %v", f, err)
	}
}
