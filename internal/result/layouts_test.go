package result

import (
	"slices"
	"strings"
	"testing"
)

// A layout places a test by label or glob, in the first group (in report
// order) that lists it; Check refuses data a layout cannot mean.
func TestLayoutPlaceAndCheck(t *testing.T) {
	l := Layout{Name: "steps", Groups: []string{"load", "rw"}, Members: map[string][]string{"load": {"l.i0", "l.x"}, "rw": {"qr*", "qp*", "l.x"}}}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	for test, want := range map[string]Placement{
		"l.x":   {Layout: "steps", Group: "load", Pos: 0},
		"qr250": {Layout: "steps", Group: "rw", Pos: 1},
	} {
		if p, ok := l.Place(test); !ok || p != want {
			t.Errorf("%s: %+v, %v; want %+v", test, p, ok, want)
		}
	}
	if _, ok := l.Place("l.i2"); ok {
		t.Error("l.i2 placed: no group lists it")
	}
	for _, bad := range []Layout{
		{Name: "", Groups: []string{"a"}},
		{Name: "x", Groups: nil},
		{Name: "x", Groups: []string{"a", "a"}},
		{Name: "x", Groups: []string{"a"}, Members: map[string][]string{"b": {"t"}}},
		{Name: "x", Groups: []string{"a"}, Members: map[string][]string{"a": {"[t"}}},
	} {
		if err := bad.Check(); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// A registered suite's runs are placed by its layouts now, whatever they
// stored, except a placement marked own and one in a layout the suite does
// not register; an unregistered suite's runs keep what they stored.
func TestPlacements(t *testing.T) {
	const s = "layouts-test"
	stored := []Placement{{Layout: "a", Group: "old", Pos: 3}, {Layout: "b", Group: "theirs", Pos: 0, Own: true}, {Layout: "gone", Group: "g", Pos: 1}}
	r := Run{Suite: s, Test: "t1", Groups: stored}
	if got := Placements(r); !slices.Equal(got, stored) {
		t.Errorf("unregistered: %+v", got)
	}
	prev := RegisterLayouts(s, []Layout{
		{Name: "a", Title: "A", Groups: []string{"x", "new"}, Members: map[string][]string{"new": {"t*"}}},
		{Name: "b", Title: "B", Groups: []string{"y"}, Members: map[string][]string{"y": {"t1"}}},
	})
	defer RegisterLayouts(s, prev)
	want := []Placement{{Layout: "a", Group: "new", Pos: 1}, {Layout: "b", Group: "theirs", Pos: 0, Own: true}, {Layout: "gone", Group: "g", Pos: 1}}
	if got := Placements(r); !slices.Equal(got, want) {
		t.Errorf("registered: %+v\nwant %+v", got, want)
	}
	if p, ok := r.Placement(""); !ok || p.Group != "new" {
		t.Errorf("default layout: %+v", p)
	}
	Regroup(&r)
	if !slices.Equal(r.Groups, want) {
		t.Errorf("Regroup: %+v", r.Groups)
	}
	if h := LayoutsHelp(); !strings.Contains(h, s+": a or b") {
		t.Errorf("LayoutsHelp: %s", h)
	}
	if n := LayoutNames(s); !slices.Equal(n, []string{"a", "b"}) {
		t.Errorf("LayoutNames: %v", n)
	}
}
