package sysbench

import (
	"slices"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// The shipped layouts are sound data: each names only tests the suite
// knows, each test once, and places every reported test of both lists;
// they are what the registry holds for the suite, and a test's Placements
// are theirs.
func TestLayoutsData(t *testing.T) {
	reg, ok := result.LayoutsOf(Name)
	if !ok || len(reg) != len(Layouts) {
		t.Fatalf("registered layouts %+v", reg)
	}
	for i, l := range Layouts {
		if err := l.Check(); err != nil {
			t.Error(err)
		}
		if reg[i].Name != l.Name {
			t.Errorf("registered %s, shipped %s", reg[i].Name, l.Name)
		}
		seen := map[string]string{}
		for g, tests := range l.Members {
			for _, x := range tests {
				if _, err := Lookup(x); err != nil {
					t.Errorf("layout %s, group %s: %v", l.Name, g, err)
				}
				if prev, dup := seen[x]; dup {
					t.Errorf("layout %s: %s in %s and %s", l.Name, x, prev, g)
				}
				seen[x] = g
			}
		}
		for _, list := range [][]Test{Order2024(), OrderHEAD()} {
			for _, x := range list {
				if _, placed := l.Place(x.Label()); placed == x.Warm() {
					t.Errorf("layout %s: %s placed %v, warm-up %v", l.Name, x.Label(), placed, x.Warm())
				}
			}
		}
	}
	x, _ := Lookup("scan_range=100")
	want := []result.Placement{{Layout: "5", Group: Range2, Pos: slices.Index(Layout5, Range2)}, {Layout: "4", Group: RangeNoAgg, Pos: slices.Index(Layout4, RangeNoAgg)}}
	if got := x.Placements(); !slices.Equal(got, want) || x.Group5 != Range2 || x.Group4 != RangeNoAgg {
		t.Errorf("scan: %+v (%s, %s)", got, x.Group5, x.Group4)
	}
}
