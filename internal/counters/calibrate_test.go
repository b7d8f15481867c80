package counters

import (
	"strings"
	"testing"
)

// The reader's own costs, from rounds whose truth is built: a full read
// adds 2 questions and 560 handler writes, a level reading 1 and 12. A
// stray statement of another connection (a COM_QUIT the server counts
// late) lands in one round at a time, in either difference; the costs
// come out exact. The code before rounds took one round as it came, and
// the stray between the first two reads made a level reading cost
// nothing: each of the window's level readings then counted as work (CI
// saw questions 505 for the window's 500 statements).
func TestOwnCostsWithStrays(t *testing.T) {
	own := func(name string) bool { return !strings.HasPrefix(name, "innodb_") }
	const fullQ, fullW, levelQ, levelW = 2, 560, 1, 12
	round := func(start float64, strayAB, strayBC float64) calibration {
		a := map[string]float64{"questions": start, "handler_write": 10 * start, "innodb_x": 7}
		b := map[string]float64{"questions": start + fullQ + strayAB, "handler_write": 10*start + fullW, "innodb_x": 9}
		c := map[string]float64{"questions": b["questions"] + levelQ + fullQ + strayBC, "handler_write": b["handler_write"] + levelW + fullW, "innodb_x": 9}
		return calibration{a, b, c}
	}
	for _, tc := range []struct {
		name   string
		rounds []calibration
	}{
		{"no stray", []calibration{round(100, 0, 0), round(120, 0, 0), round(140, 0, 0)}},
		{"a stray between a and b, first round", []calibration{round(100, 1, 0), round(120, 0, 0), round(140, 0, 0)}},
		{"a stray between b and c, last round", []calibration{round(100, 0, 0), round(120, 0, 0), round(140, 0, 3)}},
		{"strays in every round, in different places", []calibration{round(100, 1, 0), round(120, 0, 2), round(140, 1, 0)}},
	} {
		full, level := ownCosts(tc.rounds, own)
		if full["questions"] != fullQ || level["questions"] != levelQ || full["handler_write"] != fullW || level["handler_write"] != levelW {
			t.Errorf("%s: full %v, level %v; want questions %d and %d, handler_write %d and %d", tc.name, full, level, fullQ, levelQ, fullW, levelW)
		}
		if _, ok := full["innodb_x"]; ok {
			t.Errorf("%s: a counter the reader does not move has a cost: %v", tc.name, full)
		}
	}
	// One round alone, hit between its first two reads: what the code
	// before did with it (the case of the failure).
	full, level := ownCosts([]calibration{round(100, 1, 0)}, own)
	if full["questions"] != fullQ+1 || level["questions"] != 0 {
		t.Errorf("one round with a stray: full %v level %v", full["questions"], level["questions"])
	}
	// A counter reset during calibration has no cost.
	r := round(100, 0, 0)
	r.c["questions"] = 0
	full, _ = ownCosts([]calibration{round(100, 0, 0), r}, own)
	if _, ok := full["questions"]; ok {
		t.Errorf("a counter that went down has a cost: %v", full)
	}
}
