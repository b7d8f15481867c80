package result

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Layouts: how a suite groups its tests in reports is data the suite owns
// (its Layouts, registered here by internal/suite when the suite registers)
// and is applied when runs are read, not when they are written. A run's
// stored placements (Run.Groups) are derived: for a suite that registers
// layouts, the registered layout decides each test's group, so that a
// corrected layout changes the summaries of old stores, results files and
// imports without rewriting them. Two kinds of stored placement stand as
// stored: one marked Own (it came with the data: an import that brings its
// own grouping), and one in a layout the suite does not register (a layout
// since removed, or a newer qpslab's).

// Placement is where a step sits in one of its suite's report layouts.
type Placement struct {
	Layout string `json:"layout"` // the layout's name: sysbench's "5" or "4"
	Group  string `json:"group"`  // point-1, range-2, writes, …
	Pos    int    `json:"pos"`    // the group's position in the layout's report order
	// Own: the placement came with the data (an import that brings its
	// own grouping), so the suite's registered layout does not replace it.
	Own bool `json:"own,omitempty"`
}

// Layout is one way a suite groups its tests in reports.
type Layout struct {
	Name   string   `json:"name"`   // as --groups names it: "5"
	Title  string   `json:"title"`  // "the 2023-2024 five-group layout"
	Groups []string `json:"groups"` // in report order
	// Members are each group's tests: labels (point-query.pre_range=100)
	// or path.Match globs over them (qr*, *.cached). A test is in the
	// first group, in report order, with a member that matches it; a test
	// none matches has no group in the layout.
	Members map[string][]string `json:"members"`
	// Steps: the suite runs a few dependent steps, and compare also prints
	// them as the reference's step tables (labels as rows, steps as
	// columns, goals marked) and its response-time buckets.
	Steps bool `json:"steps,omitempty"`
}

// Place is test's placement in l (false: the layout does not place it).
func (l Layout) Place(test string) (Placement, bool) {
	for i, g := range l.Groups {
		for _, m := range l.Members[g] {
			if ok, _ := path.Match(m, test); ok {
				return Placement{Layout: l.Name, Group: g, Pos: i}, true
			}
		}
	}
	return Placement{}, false
}

// Check says what is wrong with l's data, if anything: a name, groups
// named once, members only of its groups, globs that parse.
func (l Layout) Check() error {
	if l.Name == "" || strings.ContainsAny(l.Name, " \t\n,") {
		return fmt.Errorf("layout %q: give it a name without spaces or commas", l.Name)
	}
	if len(l.Groups) == 0 {
		return fmt.Errorf("layout %s: list its groups in report order", l.Name)
	}
	for i, g := range l.Groups {
		if g == "" || slices.Contains(l.Groups[:i], g) {
			return fmt.Errorf("layout %s: group %q is empty or named twice", l.Name, g)
		}
	}
	for g, ms := range l.Members {
		if !slices.Contains(l.Groups, g) {
			return fmt.Errorf("layout %s: members of %q, which is not one of its groups (%s)", l.Name, g, strings.Join(l.Groups, ", "))
		}
		for _, m := range ms {
			if _, err := path.Match(m, ""); err != nil {
				return fmt.Errorf("layout %s: group %s: member %q is not a glob (path.Match): %v", l.Name, g, m, err)
			}
		}
	}
	return nil
}

var layouts = struct {
	sync.RWMutex
	m map[string][]Layout
}{m: map[string][]Layout{}}

// RegisterLayouts makes ls (the default first) the layouts of suite's runs
// from now on, whatever their stored placements say, and returns what the
// suite had (nil if nothing). internal/suite calls it when a suite
// registers; bad data is a programming error.
func RegisterLayouts(suite string, ls []Layout) (previous []Layout) {
	for _, l := range ls {
		if err := l.Check(); err != nil {
			panic("result: suite " + suite + ": " + err.Error())
		}
	}
	layouts.Lock()
	defer layouts.Unlock()
	previous = layouts.m[suite]
	if ls == nil {
		delete(layouts.m, suite)
	} else {
		layouts.m[suite] = slices.Clone(ls)
	}
	return previous
}

// LayoutsOf are suite's registered layouts, the default first; ok is false
// for a suite that registers none (its runs' stored placements stand).
func LayoutsOf(suite string) (ls []Layout, ok bool) {
	layouts.RLock()
	defer layouts.RUnlock()
	ls, ok = layouts.m[suite]
	return ls, ok
}

// LayoutNames are suite's registered layouts' names, the default first.
func LayoutNames(suite string) []string {
	ls, _ := LayoutsOf(suite)
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	return out
}

// LayoutsHelp says, for a --groups flag, which layouts each suite offers,
// its default first: "db_bench: workload or ops; sysbench: 5 or 4". Suites
// with one layout are left out: there is no choice to make.
func LayoutsHelp() string {
	layouts.RLock()
	defer layouts.RUnlock()
	var suites []string
	for s, ls := range layouts.m {
		if len(ls) > 1 {
			suites = append(suites, s)
		}
	}
	sort.Strings(suites)
	var out []string
	for _, s := range suites {
		var names []string
		for _, l := range layouts.m[s] {
			names = append(names, l.Name)
		}
		out = append(out, s+": "+orList(names))
	}
	return strings.Join(out, "; ")
}

func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Placements are where r sits in each layout, the default first: for a
// suite that registers layouts, its registered layouts' (each replaced by
// r's own placement in it, if r carries one), then r's stored placements
// in layouts the suite does not register; for any other suite, r's stored
// placements.
func Placements(r Run) []Placement {
	ls, ok := LayoutsOf(r.Suite)
	if !ok {
		return r.Groups
	}
	var out []Placement
	for _, l := range ls {
		if p, own := ownIn(r, l.Name); own {
			out = append(out, p)
		} else if p, ok := l.Place(r.Test); ok {
			out = append(out, p)
		}
	}
	for _, p := range r.Groups {
		if !slices.ContainsFunc(ls, func(l Layout) bool { return l.Name == p.Layout }) {
			out = append(out, p)
		}
	}
	return out
}

func ownIn(r Run, layout string) (Placement, bool) {
	for _, p := range r.Groups {
		if p.Own && p.Layout == layout {
			return p, true
		}
	}
	return Placement{}, false
}

// Regroup sets r's placements to what they are now (Placements): every
// surface that reads runs (the store, a results file, an import) calls it,
// so that what it shows follows the suite's layouts.
func Regroup(r *Run) { r.Groups = Placements(*r) }

// Placement returns the run's group in layout ("" for its suite's
// default layout, the first), as Placements has it.
func (r Run) Placement(layout string) (Placement, bool) {
	for _, p := range Placements(r) {
		if layout == "" || p.Layout == layout {
			return p, true
		}
	}
	return Placement{}, false
}

// PlacementsOf are where suite's registered layouts put test, the
// default first: what `qpslab suites` shows and a new run is written with.
func PlacementsOf(suite, test string) []Placement {
	return Placements(Run{Suite: suite, Test: test})
}
