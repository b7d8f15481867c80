package result

import (
	"reflect"
	"testing"
)

// A series with injected zero seconds: seconds 4-6 stall (a run of 3),
// second 9 is missing altogether (no sample: zero), second 2 dips to 15 %
// of the median, which is no stall at 10 %.
func TestStalls(t *testing.T) {
	var s []Sample
	for i := 0; i < 12; i++ {
		n := int64(1000)
		switch i {
		case 2:
			n = 150
		case 4, 5, 6:
			n = 0
		case 9:
			continue
		}
		s = append(s, Sample{Second: i, Statements: n})
	}
	stalled, longest := Stalls(s, SeriesStatements, 12, StallFraction)
	if !reflect.DeepEqual(stalled, []int{4, 5, 6, 9}) || longest != 3 {
		t.Errorf("stalled %v longest %d, want [4 5 6 9] and 3", stalled, longest)
	}
	// A per-kind series and a partial last second: only whole seconds.
	k := []Sample{{Second: 0, Ops: []OpSample{{Kind: "query", Count: 10}}}, {Second: 1, Ops: []OpSample{{Kind: "query", Count: 10}}},
		{Second: 2, Ops: []OpSample{{Kind: "query", Count: 10}}}, {Second: 3}}
	if st, _ := Stalls(k, SeriesOp("query"), 3.5, StallFraction); len(st) != 0 {
		t.Errorf("stalls %v in a steady series", st)
	}
	if st, _ := Stalls(k, SeriesOp("query"), 4, StallFraction); !reflect.DeepEqual(st, []int{3}) {
		t.Errorf("stalls %v, want [3]", st)
	}
	if st, _ := Stalls(s, SeriesStatements, 2, StallFraction); st != nil {
		t.Errorf("a 2 s window has stalls %v", st)
	}
}
