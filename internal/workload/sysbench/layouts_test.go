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
	want := []result.Placement{{Layout: "5", Group: Range1, Pos: slices.Index(Layout5, Range1)}, {Layout: "4", Group: RangeNoAgg, Pos: slices.Index(Layout4, RangeNoAgg)}}
	if got := x.Placements(); !slices.Equal(got, want) || x.Group5 != Range1 || x.Group4 != RangeNoAgg {
		t.Errorf("scan: %+v (%s, %s)", got, x.Group5, x.Group4)
	}
}

// Every reported test's group in both shipped layouts, as docs/reference.md
// §1.5 gives it with its evidence: the seeds' five groups (points in the
// reference's two halves, ranges without aggregation, scan included, then
// with it, writes) and the 2025 four. The 42 of 2023-2024 and the five
// read-only-* of HEAD; warm-ups are in none.
func TestLayoutMembership(t *testing.T) {
	want := []struct{ test, g5, g4 string }{
		{"hot-points_range=100", Point1, Point},
		{"point-query.pre_range=100", Point1, Point},
		{"point-query_range=100", Point1, Point},
		{"points-covered-pk.pre_range=100", Point1, Point},
		{"points-covered-pk_range=100", Point1, Point},
		{"points-covered-si.pre_range=100", Point1, Point},
		{"points-covered-si_range=100", Point1, Point},
		{"points-notcovered-pk.pre_range=100", Point1, Point},
		{"points-notcovered-pk_range=100", Point1, Point},
		{"points-notcovered-si.pre_range=100", Point2, Point},
		{"points-notcovered-si_range=100", Point2, Point},
		{"random-points.pre_range=1000", Point2, Point},
		{"random-points.pre_range=100", Point2, Point},
		{"random-points.pre_range=10", Point2, Point},
		{"random-points_range=1000", Point2, Point},
		{"random-points_range=100", Point2, Point},
		{"random-points_range=10", Point2, Point},
		{"range-covered-pk.pre_range=100", Range1, RangeNoAgg},
		{"range-covered-pk_range=100", Range1, RangeNoAgg},
		{"range-covered-si.pre_range=100", Range1, RangeNoAgg},
		{"range-covered-si_range=100", Range1, RangeNoAgg},
		{"range-notcovered-pk.pre_range=100", Range1, RangeNoAgg},
		{"range-notcovered-pk_range=100", Range1, RangeNoAgg},
		{"range-notcovered-si.pre_range=100", Range1, RangeNoAgg},
		{"range-notcovered-si_range=100", Range1, RangeNoAgg},
		{"scan_range=100", Range1, RangeNoAgg},
		{"read-only.pre_range=10", Range2, RangeAgg},
		{"read-only.pre_range=100", Range2, RangeAgg},
		{"read-only.pre_range=10000", Range2, RangeAgg},
		{"read-only_range=10", Range2, RangeAgg},
		{"read-only_range=100", Range2, RangeAgg},
		{"read-only_range=10000", Range2, RangeAgg},
		{"update-inlist_range=100", Writes, Writes},
		{"update-index_range=100", Writes, Writes},
		{"update-nonindex_range=100", Writes, Writes},
		{"update-one_range=100", Writes, Writes},
		{"update-zipf_range=100", Writes, Writes},
		{"write-only_range=10000", Writes, Writes},
		{"read-write_range=10", Writes, Writes},
		{"read-write_range=100", Writes, Writes},
		{"delete_range=100", Writes, Writes},
		{"insert_range=100", Writes, Writes},
		// HEAD only (2025 on).
		{"read-only-simple_range=1000", Range2, RangeAgg},
		{"read-only-sum_range=1000", Range2, RangeAgg},
		{"read-only-order_range=1000", Range2, RangeAgg},
		{"read-only-distinct_range=1000", Range2, RangeAgg},
		{"read-only-count_range=1000", Range2, RangeAgg},
	}
	listed := map[string]bool{}
	for _, w := range want {
		listed[w.test] = true
		x, err := Lookup(w.test)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range x.Placements() {
			got[p.Layout] = p.Group
		}
		if got["5"] != w.g5 || got["4"] != w.g4 || x.Group5 != w.g5 || x.Group4 != w.g4 {
			t.Errorf("%s: 5 %q, 4 %q (Group5 %q, Group4 %q); want %s, %s", w.test, got["5"], got["4"], x.Group5, x.Group4, w.g5, w.g4)
		}
	}
	n42 := 0
	for _, x := range Order2024() {
		if !x.Warm() {
			n42++
		}
		if !x.Warm() && !listed[x.Label()] {
			t.Errorf("%s is reported but has no expected groups here", x.Label())
		}
	}
	if n42 != 42 {
		t.Errorf("the 2023-2024 order reports %d tests, want 42", n42)
	}
	for _, x := range OrderHEAD() {
		if !x.Warm() && !listed[x.Label()] {
			t.Errorf("%s is reported but has no expected groups here", x.Label())
		}
	}
}
