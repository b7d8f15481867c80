package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// placements are where a suite (sysbench, here written out) puts the
// tests these cases use: analysis knows no suite, only what runs carry.
var placements = map[string]struct {
	step   int
	role   string
	g5, g4 string
}{
	"point-query.warm_range=100": {1, result.RoleWarm, "", ""},
	"point-query.pre_range=100":  {2, "", "point-1", "point"},
	"update-index_range=100":     {20, "", "writes", "writes"},
	"point-query_range=100":      {30, "", "point-1", "point"},
	"scan_range=100":             {40, "", "range-1", "range-noagg"},
	"hot-points_range=100":       {35, "", "point-1", "point"},
	"insert_range=100":           {42, "", "writes", "writes"},
}

var (
	layout5 = []string{"point-1", "point-2", "range-1", "range-2", "writes"}
	layout4 = []string{"point", "range-noagg", "range-agg", "writes"}
)

func run(test string, threads int, qps float64) result.Run {
	r := result.Run{Suite: "sysbench", Test: test, Threads: threads, Status: result.OK, Totals: result.Totals{Reported: qps, ReportedUnit: "qps"}}
	if p, ok := placements[test]; ok {
		r.Step, r.Role = p.step, p.role
		if p.g5 != "" {
			r.Groups = []result.Placement{{Layout: "5", Group: p.g5, Pos: slices.Index(layout5, p.g5)}, {Layout: "4", Group: p.g4, Pos: slices.Index(layout4, p.g4)}}
		}
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Known numbers: four tests in three groups of the 5-group layout, one
// test missing on the other side, a warm step and a failed run ignored.
func TestCompareKnownNumbers(t *testing.T) {
	base := Set{Label: "a.c", Runs: []result.Run{
		run("point-query.pre_range=100", 1, 1000), run("point-query_range=100", 1, 2000),
		run("scan_range=100", 1, 500), run("update-index_range=100", 1, 400), run("insert_range=100", 1, 100),
		run("point-query.warm_range=100", 1, 9), failed(run("hot-points_range=100", 1, 5)),
	}}
	other := Set{Label: "b.c", Runs: []result.Run{
		run("point-query.pre_range=100", 1, 900), run("point-query_range=100", 1, 2200),
		run("scan_range=100", 1, 500), run("update-index_range=100", 1, 600),
	}}
	c, err := Compare(base, []Set{other}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Rows {
		got = append(got, r.Test+"/"+r.Group)
	}
	// Group order point-1, point-2, range-1, range-2, writes; the run order within.
	want := "point-query.pre_range=100/point-1 point-query_range=100/point-1 scan_range=100/range-1 update-index_range=100/writes insert_range=100/writes"
	if strings.Join(got, " ") != want {
		t.Errorf("rows:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	rel := map[string]float64{}
	for _, r := range c.Rows {
		rel[r.Test] = r.Others[0].Rel
	}
	if !near(rel["point-query.pre_range=100"], 0.9) || !near(rel["update-index_range=100"], 1.5) || !math.IsNaN(rel["insert_range=100"]) {
		t.Errorf("relative: %v", rel)
	}
	// All four relative values: 0.9, 1.5, 1.1, 1.0.
	a := c.All[0]
	if a.N != 4 || !near(a.Avg, 1.125) || !near(a.Median, 1.05) || !near(a.Min, 0.9) || !near(a.Max, 1.5) ||
		!near(a.Stddev, math.Sqrt((0.225*0.225+0.375*0.375+0.025*0.025+0.125*0.125)/3)) {
		t.Errorf("all: %+v", a)
	}
	if !near(c.Geomean[0], math.Pow(0.9*1.5*1.1*1.0, 0.25)) {
		t.Errorf("geomean %v", c.Geomean[0])
	}
	for _, g := range c.Groups {
		if g.Name == "writes" && (g.Stats[0].N != 1 || !near(g.Stats[0].Avg, 1.5)) {
			t.Errorf("writes: %+v", g.Stats[0])
		}
	}
	if Colour(0.9) != "red" || Colour(0.954) != "red" || Colour(0.956) != "" || Colour(1.05) != "green" || Colour(1.0) != "" {
		t.Error("colour thresholds")
	}
	// The 4-group layout puts scan with the range queries without aggregation.
	c4, _ := Compare(base, []Set{other}, Options{Layout: "4"})
	if c4.Rows[0].Group != "point" {
		t.Errorf("4-group first row: %+v", c4.Rows[0])
	}
	if _, err := Compare(base, []Set{other}, Options{Layout: "3"}); err == nil {
		t.Error("--groups 3 accepted")
	}
	if _, err := Compare(Set{Label: "x.y"}, []Set{other}, Options{}); err == nil || !strings.Contains(err.Error(), "no comparable results for x.y") {
		t.Errorf("empty base: %v", err)
	}
}

func failed(r result.Run) result.Run { r.Status = result.Failed; return r }

// The load is compared in a group of its own, after the tests, and never
// counts in "all" nor the geomean; a test without a group goes to "other".
func TestCompareLoadAndOther(t *testing.T) {
	load := func(v float64) result.Run {
		return result.Run{Suite: "sysbench", Test: "load", Threads: 2, Status: result.OK, Role: result.RoleLoad, Totals: result.Totals{Reported: v, ReportedUnit: "rows/s"}}
	}
	base := Set{Label: "a.c", Runs: []result.Run{load(100), run("point-query_range=100", 1, 1000), run("mystery", 1, 10)}}
	other := Set{Label: "b.c", Runs: []result.Run{load(200), run("point-query_range=100", 1, 1100), run("mystery", 1, 20)}}
	c, err := Compare(base, []Set{other}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Rows {
		got = append(got, r.Test+"/"+r.Group+"/"+r.Unit)
	}
	if want := "point-query_range=100/point-1/qps mystery/other/qps load/load/rows/s"; strings.Join(got, " ") != want {
		t.Errorf("rows %s, want %s", strings.Join(got, " "), want)
	}
	if a := c.All[0]; a.N != 2 || !near(c.Geomean[0], math.Sqrt(1.1*2)) {
		t.Errorf("all %+v geomean %v: the load must stay out", a, c.Geomean[0])
	}
	if c.Layout != "5" {
		t.Errorf("default layout %q, want the runs' first (5)", c.Layout)
	}
}

// Labels that share no test say why; runs of two suites are not mixed.
func TestCompareRefusals(t *testing.T) {
	a := Set{Label: "a.c", Runs: []result.Run{run("point-query_range=100", 1, 1000)}}
	b := Set{Label: "b.c", Runs: []result.Run{run("point-query_range=100", 4, 1000)}}
	_, err := Compare(a, []Set{b}, Options{})
	if err == nil || !strings.Contains(err.Error(), "other thread counts (1 against 4)") {
		t.Errorf("thread counts apart: %v", err)
	}
	other := run("point-query_range=100", 1, 1000)
	other.Suite = "insert-benchmark"
	_, err = Compare(a, []Set{{Label: "b.c", Runs: []result.Run{other}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "--suite") {
		t.Errorf("two suites: %v", err)
	}
	if n := IntervalN(0.95); n < 3 || n > 10 {
		t.Errorf("IntervalN(0.95) = %d", n)
	}
}

// With repeats, a clear change is significant and noise is not ("~").
func TestCompareSignificance(t *testing.T) {
	var a, b []result.Run
	for _, v := range []float64{1000, 1010, 990, 1005, 995, 1002} {
		a = append(a, run("point-query_range=100", 1, v), run("scan_range=100", 1, v))
	}
	for _, v := range []float64{1200, 1190, 1210, 1205, 1195, 1201} {
		b = append(b, run("point-query_range=100", 1, v))
	}
	for _, v := range []float64{1001, 1011, 989, 1004, 996, 1003} {
		b = append(b, run("scan_range=100", 1, v))
	}
	c, err := Compare(Set{"a.c", a}, []Set{{"b.c", b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Repeats || len(c.Rows) != 2 {
		t.Fatalf("%+v", c)
	}
	pq, scan := c.Rows[0].Others[0], c.Rows[1].Others[0]
	if !pq.Tested || !pq.Significant || pq.P >= 0.05 || pq.N != 6 || pq.Lo > pq.Center || pq.Hi < pq.Center {
		t.Errorf("a 20%% change: %+v", pq)
	}
	if !scan.Tested || scan.Significant {
		t.Errorf("noise called significant: %+v", scan)
	}
}

// Seed 000's worked example (update-inlist.range100.pk1.dop1, MariaDB LTS
// builds): the absolute rows, and "relative to first result" as the seed
// printed it.
func TestMetricsSeedExample(t *testing.T) {
	abs := []struct {
		label string
		v     [6]float64
	}{
		{"ma100244", [6]float64{0.006937, 36.076, 0, 0, 90.665, 3966}},
		{"ma100339", [6]float64{0.007467, 35.345, 0, 0, 89.534, 3845}},
		{"ma100433", [6]float64{0.007336, 35.395, 0, 0, 91.588, 3722}},
		{"ma100524", [6]float64{0.005755, 37.579, 0, 0, 7.408, 4126}},
		{"ma100617", [6]float64{0.004227, 8.442, 0, 0, 33.077, 3890}},
		{"ma101107", [6]float64{0.004253, 8.595, 0.077, 0.306, 33.099, 3856}},
		{"ma110401", [6]float64{0.004430, 8.462, 0.034, 0.136, 32.22, 3650}},
	}
	var sets []Set
	for _, a := range abs {
		hw := &result.HW{Op: "statement", Samples: 60, CPUPerOp: a.v[0], CSPerOp: a.v[1], ReadsPerOp: a.v[2], ReadKBPerOp: a.v[3], WriteKBPerOp: a.v[4], OpsPerSec: a.v[5]}
		sets = append(sets, Set{Label: a.label + ".c", Runs: []result.Run{{Test: "update-inlist_range=100", Threads: 1, Status: result.OK, HW: hw}}})
	}
	tables, err := Metrics(sets, "update-inlist*")
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || len(tables[0].Rows) != 7 {
		t.Fatalf("%+v", tables)
	}
	rows := tables[0].Rows
	rel := func(i int) string {
		var s []string
		for j := range MetricNames() {
			s = append(s, RelString(rows[0].Abs[j], rows[i].Abs[j]))
		}
		return strings.Join(s, " ")
	}
	for i, want := range map[int]string{1: "1.08 0.98 1 1 0.99 0.97", 3: "0.83 1.04 1 1 0.08 1.04", 5: "0.61 0.24 inf inf 0.37 0.97"} {
		if got := rel(i); got != want {
			t.Errorf("%s relative to the first: %s, the seed printed %s", rows[i].Label, got, want)
		}
	}
	if _, err := Metrics(sets, "nosuch*"); err == nil {
		t.Error("no error for a test with no results")
	}
}

// Figures a result lacks are unknown (NaN, printed "-"), never zero: an
// import's CPU time per op, a disk that was not measured.
func TestMetricsUnmeasuredIsNotZero(t *testing.T) {
	imported := &result.HW{Op: "statement", Samples: 10, OpsPerSec: 1000, CPUPerOp: 0.01, CSPerOp: 2, NoCPUTime: true}
	noDisk := &result.HW{Op: "statement", Samples: 10, OpsPerSec: 1000, CPUPerOp: 0.01, HostCPUUsOp: 50, ServerCPUUsOp: 30, ClientCPUUsOp: 10, NoDisk: true}
	mk := func(label string, hw *result.HW) Set {
		r := run("point-query_range=100", 1, 1000)
		r.HW = hw
		return Set{Label: label, Runs: []result.Run{r}}
	}
	tables, err := Metrics([]Set{mk("imp.c", imported), mk("run.c", noDisk)}, "")
	if err != nil || len(tables) != 1 {
		t.Fatalf("%v %v", tables, err)
	}
	imp, own := tables[0].Rows[0], tables[0].Rows[1]
	for i, v := range imp.Honest {
		if !math.IsNaN(v) {
			t.Errorf("imported %s = %v, want unknown", HonestNames()[i], v)
		}
	}
	if imp.Abs[0] != 0.01 || !math.IsNaN(own.Abs[2]) || !math.IsNaN(own.Abs[4]) || own.Honest[1] != 30 {
		t.Errorf("imported %v, run without a disk %v %v", imp.Abs, own.Abs, own.Honest)
	}
}

// Runs that differ in what their figures mean are never repeats: open and
// closed loop of one test, two table sizes. Within a label they are rows of
// their own, named; between labels they share nothing, and compare says why.
func TestCompareConditions(t *testing.T) {
	open := func(r result.Run) result.Run { r.Loop, r.Rate, r.Arrivals = "open", 30000, "poisson"; return r }
	closed := run("point-query_range=100", 1, 33243)
	a := Set{Label: "a.c", Runs: []result.Run{closed, open(run("point-query_range=100", 1, 4148))}}
	b := Set{Label: "b.c", Runs: []result.Run{run("point-query_range=100", 1, 30000), open(run("point-query_range=100", 1, 5000))}}
	c, err := Compare(a, []Set{b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 2 || !c.MixedConditions || c.Rows[0].Base.N != 1 || c.Rows[1].Base.N != 1 {
		t.Fatalf("open and closed loop merged: %+v", c.Rows)
	}
	if !strings.Contains(c.Rows[0].Conditions+c.Rows[1].Conditions, "loop=open,rate=30000") || !near(c.Rows[0].Others[0].Rel*c.Rows[1].Others[0].Rel, 30000.0/33243*5000/4148) {
		t.Errorf("rows: %+v", c.Rows)
	}
	big := run("point-query_range=100", 1, 1000)
	big.Params = map[string]string{"rows": "1000000"}
	_, err = Compare(Set{Label: "x.c", Runs: []result.Run{closed}}, []Set{{Label: "y.c", Runs: []result.Run{open(big)}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "loop=closed against loop=open") || !strings.Contains(err.Error(), "rows=- against rows=1000000") {
		t.Errorf("no common conditions: %v", err)
	}
}

// InnoDB's and MyRocks' runs of one build and config are two labels, and
// compare and metrics set them side by side test by test: the engine,
// which the labels tell apart, is not a condition between them.
func TestCompareEngines(t *testing.T) {
	engine := func(r result.Run, e string) result.Run {
		r.Params = map[string]string{"engine": e, "rows": "100000"}
		r.HW = &result.HW{Samples: 5, OpsPerSec: r.Totals.Reported, CPUPerOp: 0.001}
		return r
	}
	inno := Set{Label: "mariadb-system.myrocks", Runs: []result.Run{engine(run("point-query_range=100", 1, 10000), "innodb"), engine(run("update-index_range=100", 1, 4000), "innodb")}}
	rocks := Set{Label: "mariadb-system.myrocks:rocksdb", Runs: []result.Run{engine(run("point-query_range=100", 1, 8000), "rocksdb"), engine(run("update-index_range=100", 1, 5000), "rocksdb")}}
	c, err := Compare(inno, []Set{rocks}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rel := map[string]float64{}
	for _, r := range c.Rows {
		rel[r.Test] = r.Others[0].Rel
	}
	if len(c.Rows) != 2 || c.MixedConditions || !near(rel["point-query_range=100"], 0.8) || !near(rel["update-index_range=100"], 1.25) {
		t.Errorf("InnoDB against MyRocks: mixed %v, rows %+v", c.MixedConditions, c.Rows)
	}
	tables, err := Metrics([]Set{inno, rocks}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || len(tables[0].Rows) != 2 {
		t.Errorf("metrics of both engines: %+v", tables)
	}
}
