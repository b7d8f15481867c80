package sysbench

import (
	"slices"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// Layouts are the suite's report layouts as data: each group's tests by
// label (§1.5; docs/tests.md lists them). The suite registers them
// (suite.Register hands them to result.RegisterLayouts), and they decide
// the groups of every sysbench run when it is read: the store's, a results
// file's, an import's, whatever placements those were written with. A test
// no group lists (the load, the warm-ups) has no group in the layout.
//
// This is the one place a test's group is written: Test.Group5 and
// Test.Group4 are read from it.
var Layouts = []suite.Layout{
	{
		// The seeds' definition: "2 for point queries, 2 for range queries,
		// 1 for writes. For the range query microbenchmarks, part 1 has
		// queries that don't do aggregation while part 2 has queries that
		// do aggregation" (so scan is in range-1). The point queries are
		// split where the reference's summary lists them in two halves, by
		// file name (sum_qps_csv.sh's order), a test's .pre beside it:
		// docs/reference.md §1.5 gives each test's evidence.
		Name: "5", Title: "the 2023-2024 five-group layout", Groups: Layout5,
		Members: map[string][]string{Point1: point1, Point2: point2, Range1: rangeNoAgg, Range2: rangeAgg, Writes: writes},
	},
	{
		// The 2025 layout: the same range and write groups, the point
		// queries in one (a member's order within a group does not matter).
		Name: "4", Title: "the 2025 four-group layout", Groups: Layout4,
		Members: map[string][]string{Point: slices.Concat(point1, point2), RangeNoAgg: rangeNoAgg, RangeAgg: rangeAgg, Writes: writes},
	},
}

// point1 and point2 are the five-group layout's point queries, one layout's
// point group together.
var point1 = []string{"hot-points_range=100",
	"point-query.pre_range=100",
	"point-query_range=100",
	"points-covered-pk.pre_range=100",
	"points-covered-pk_range=100",
	"points-covered-si.pre_range=100",
	"points-covered-si_range=100",
	"points-notcovered-pk.pre_range=100",
	"points-notcovered-pk_range=100",
}

// point2: the rest of the point queries.
var point2 = []string{"points-notcovered-si.pre_range=100",
	"points-notcovered-si_range=100",
	"random-points.pre_range=1000",
	"random-points.pre_range=100",
	"random-points.pre_range=10",
	"random-points_range=1000",
	"random-points_range=100",
	"random-points_range=10",
}

// rangeNoAgg are the range queries without aggregation, scan among them.
var rangeNoAgg = []string{"range-covered-pk.pre_range=100",
	"range-covered-pk_range=100",
	"range-covered-si.pre_range=100",
	"range-covered-si_range=100",
	"range-notcovered-pk.pre_range=100",
	"range-notcovered-pk_range=100",
	"range-notcovered-si.pre_range=100",
	"range-notcovered-si_range=100",
	"scan_range=100",
}

// rangeAgg are the range queries with aggregation.
var rangeAgg = []string{"read-only.pre_range=10000",
	"read-only.pre_range=100",
	"read-only.pre_range=10",
	"read-only_range=10000",
	"read-only_range=100",
	"read-only_range=10",
	"read-only-simple_range=1000",
	"read-only-sum_range=1000",
	"read-only-order_range=1000",
	"read-only-distinct_range=1000",
	"read-only-count_range=1000",
}

// writes are the write tests.
var writes = []string{"update-inlist_range=100",
	"update-index_range=100",
	"update-nonindex_range=100",
	"update-one_range=100",
	"update-zipf_range=100",
	"write-only_range=10000",
	"read-write_range=10",
	"read-write_range=100",
	"delete_range=100",
	"insert_range=100",
}

// groupIn is label's group in the shipped layout named name ("" for none).
func groupIn(name, label string) string {
	for _, l := range Layouts {
		if l.Name == name {
			if p, ok := l.Place(label); ok {
				return p.Group
			}
		}
	}
	return ""
}

// Placements are t's groups in the suite's registered layouts (the
// shipped Layouts, unless something registered others since); a warm-up
// run has none.
func (t Test) Placements() []result.Placement {
	return result.PlacementsOf(Name, t.Label())
}
