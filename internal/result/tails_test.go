package result

import (
	"strings"
	"testing"
	"time"
)

// TailsCut: starved connections in the window, or in a slice of a run of
// slices, or a p99 of half a slice, cut the tails; a whole run's
// starved_1s (a wait longer than a second) does not.
func TestTailsCut(t *testing.T) {
	sliced := func(fig map[string]float64, p99us float64) Run {
		r := Run{Threads: 64, Pairing: PairedSlices, Duration: 2, Rounds: make([]Round, 8)} // 8 slices of 0.25 s
		r.Totals.Figures, r.Totals.Response.P99 = fig, p99us
		return r
	}
	for _, c := range []struct {
		name string
		r    Run
		n    int
		why  string
	}{
		{"fine", sliced(map[string]float64{"starved": 0, "starved_1s": 0}, 20_000), 0, ""},
		{"starved", sliced(map[string]float64{"starved": 3, "starved_1s": 9}, 20_000), 3, "3 of 64 connections completed nothing in the window"},
		{"starved in a slice", sliced(map[string]float64{"starved_1s": 9}, 20_000), 9, "9 of 64 connections completed nothing in a slice of 250ms"},
		{"p99 a quarter of a slice", sliced(nil, 65_000), 0, "p99 65ms is a quarter of its slices' 250ms or more"},
		{"p99 under a quarter of a slice", sliced(nil, 60_000), 0, ""},
		{"whole run, a long wait", Run{Threads: 64, Duration: 2, Totals: Totals{Figures: map[string]float64{"starved_1s": 9}, Response: Latency{P99: 1.5e6}}}, 0, ""},
	} {
		n, why := TailsCut(c.r)
		if n != c.n || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("%s: %d, %q; want %d, %q", c.name, n, why, c.n, c.why)
		}
	}
	if got := sliced(nil, 0).SliceLength(); got != 250*time.Millisecond {
		t.Errorf("slice length %v, want 250ms", got)
	}
}
