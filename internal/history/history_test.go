package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

func TestCompareVersions(t *testing.T) {
	ordered := []string{"5.6.51", "8.0", "8.0.1", "8.0.30", "8.0.100", "10.2.11", "10.2.44", "10.11.7", "10.11.14", "11.4.1", "11.4.1-rc2"}
	for i := range ordered {
		for j := range ordered {
			got := CompareVersions(ordered[i], ordered[j])
			if (i < j && got >= 0) || (i > j && got <= 0) || (i == j && got != 0) {
				t.Errorf("CompareVersions(%s, %s) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}

func run(build, version, test string, threads int, qps float64, at time.Time) result.Run {
	return result.Run{Build: build, Version: version, Config: "default@abc", Test: test, Threads: threads, Status: result.OK, Started: at,
		Totals: result.Totals{Reported: qps, ReportedUnit: "qps", Response: result.Latency{Count: 1, P99: qps * 10}}}
}

// Builds in version order, one point per build (the median of its
// repeats); a single build's runs by time.
func TestFromRuns(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := []result.Run{
		run("ma1011", "10.11.7", "point-query_range=100", 1, 90, t0),
		run("ma1002", "10.2.44", "point-query_range=100", 1, 100, t0.Add(time.Hour)),
		run("ma1104", "11.4.1", "point-query_range=100", 1, 80, t0.Add(2*time.Hour)),
		run("ma1011", "10.11.7", "point-query_range=100", 1, 94, t0.Add(3*time.Hour)),
		run("ma1011", "10.11.7", "point-query_range=100", 1, 70, t0.Add(4*time.Hour)),
		run("ma1104", "11.4.1", "point-query_range=100", 4, 300, t0),
		run("ma1104", "11.4.1", "point-query_range=100", 4, 310, t0.Add(time.Hour)),
		{Build: "x", Test: "point-query_range=100", Threads: 1, Status: result.Failed, Totals: result.Totals{Reported: 1}},
	}
	qps, _ := result.MetricNamed("qps")
	s := FromRuns(runs, qps, func(result.Run) string { return "" })
	if len(s) != 2 {
		t.Fatalf("%d series", len(s))
	}
	a := s[0]
	if a.Threads != 1 || a.Order != "version" || len(a.Points) != 3 || a.Points[0].Version != "10.2.44" || a.Points[1].Value != 90 || a.Points[1].N != 3 || a.Points[2].Version != "11.4.1" || !a.HigherIsBetter {
		t.Errorf("by version: %+v", a)
	}
	if b := s[1]; b.Order != "time" || len(b.Points) != 2 || b.Points[1].Value != 310 {
		t.Errorf("by time: %+v", b)
	}
	p99, _ := result.MetricNamed("p99")
	if s := FromRuns(runs, p99, func(result.Run) string { return "" }); len(s) == 0 || len(s[0].Points) == 0 {
		t.Errorf("p99: %d series, want the runs' p99", len(s))
	} else if s[0].HigherIsBetter || s[0].Points[0].Value != 1 {
		t.Errorf("p99: %+v", s[0])
	}
	if _, err := result.MetricNamed("qpsx"); err == nil || !strings.Contains(err.Error(), "cpu/o") {
		t.Errorf("unknown metric: %v", err)
	}
}

// Export and read back: Otava CSV and Nyrkiö JSON keep the values, order,
// commits and directions. The times written are the runs' own: where they
// fall as the versions rise, the Otava CSV keeps the version order in its
// rows (Otava reads rows in file order), and Nyrkiö, which orders by time,
// is refused in one line that names the builds and the fix.
func TestFormatsRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(rising bool) []Series {
		var runs []result.Run
		for i, v := range []string{"10.2.44", "10.11.7", "11.4.1", "11.8.2"} {
			at := t0.Add(time.Duration(3-i) * time.Hour) // times fall as versions rise
			if rising {
				at = t0.Add(time.Duration(i) * time.Hour)
			}
			r := run("ma"+v, v, "update-index_range=100", 1, float64(100+i), at)
			r.Params = map[string]string{"commit": "c" + v}
			runs = append(runs, r)
		}
		qps, _ := result.MetricNamed("qps")
		p99, _ := result.MetricNamed("p99")
		return append(FromRuns(runs, qps, func(result.Run) string { return "h1" }), FromRuns(runs, p99, func(result.Run) string { return "h1" })...)
	}
	check := func(what string, series, back []Series) {
		t.Helper()
		if len(back) != 2 || back[0].Metric != "qps" || !back[0].HigherIsBetter || back[1].HigherIsBetter || len(back[0].Points) != 4 {
			t.Fatalf("%s: %+v", what, back)
		}
		for i, p := range back[0].Points {
			if p.Value != float64(100+i) || p.Commit != series[0].Points[i].Commit || !p.Time.Equal(series[0].Points[i].Time) {
				t.Errorf("%s: point %d is %+v, want %+v", what, i, p, series[0].Points[i])
			}
		}
	}
	series := mk(false)
	dir := t.TempDir()
	files, err := WriteOtavaCSV(dir, series)
	if err != nil || len(files) != 2 {
		t.Fatalf("%v %v", files, err)
	}
	b, _ := os.ReadFile(files[0])
	if lines := strings.Split(string(b), "\n"); len(lines) < 2 || !strings.HasPrefix(lines[1], "2026-01-01 03:00:00 +0000,ma10.2.44,10.2.44,c10.2.44,100,") {
		t.Errorf("the first row is not 10.2.44 at its own time:\n%s", b)
	}
	back, err := Read(files[0], "", nil)
	if err != nil {
		t.Fatal(err)
	}
	check("otava csv", series, back)
	nd := filepath.Join(t.TempDir(), "nyrkio")
	jf, err := WriteNyrkioJSON(nd, series)
	if err == nil || !strings.Contains(err.Error(), "build ma10.11.7 10.11.7 ran before ma10.2.44 10.2.44") || !strings.Contains(err.Error(), "export otava-csv") || strings.Contains(err.Error(), "\n") {
		t.Errorf("nyrkio-json of falling times: %v %v", jf, err)
	}
	if _, err := os.Stat(nd); !os.IsNotExist(err) {
		t.Errorf("a refused export made %s", nd)
	}

	series = mk(true)
	jf, err = WriteNyrkioJSON(dir, series)
	if err != nil || len(jf) != 1 {
		t.Fatalf("%v %v", jf, err)
	}
	back, err = Read(jf[0], "", nil)
	if err != nil {
		t.Fatal(err)
	}
	check("nyrkio json", series, back)
}

// Builds without a version and without a time are points in natural name
// order, whatever order the runs came in (never the store's); with some
// versioned, those come first in version order. Without versions but with
// times, a point is a run in time order, as before.
func TestFromRunsWithoutVersions(t *testing.T) {
	qps, _ := result.MetricNamed("qps")
	order := func(s Series) string {
		var b []string
		for _, p := range s.Points {
			b = append(b, p.Build)
		}
		return strings.Join(b, " ")
	}
	var zero time.Time
	runs := []result.Run{
		run("ma10_rel", "", "update-index_range=100", 1, 20, zero),
		run("ma100244_rel", "", "update-index_range=100", 1, 30, zero),
		run("ma9_rel", "", "update-index_range=100", 1, 10, zero),
		run("ma10_rel", "", "update-index_range=100", 1, 22, zero),
		run("ma11_rel", "", "update-index_range=100", 1, 25, zero),
	}
	s := FromRuns(runs, qps, func(result.Run) string { return "" })
	if len(s) != 1 || s[0].Order != OrderName || !s[0].ByName() || order(s[0]) != "ma9_rel ma10_rel ma11_rel ma100244_rel" || s[0].Points[1].Value != 21 || s[0].Points[1].N != 2 {
		t.Errorf("by name: %+v", s)
	}
	// Versioned builds first, in version order; the rest after them by name.
	runs[1].Version, runs[4].Version = "10.2.44", "10.11.7"
	s = FromRuns(runs, qps, func(result.Run) string { return "" })
	if s[0].Order != OrderVersionName || !s[0].ByName() || order(s[0]) != "ma100244_rel ma11_rel ma9_rel ma10_rel" {
		t.Errorf("versions, then names: %s %q", s[0].Order, order(s[0]))
	}
	// Exported, the rows keep that order and have no time: none is made up.
	files, err := WriteOtavaCSV(t.TempDir(), s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(files[0])
	want := "time,build,version,commit,qps\n,ma100244_rel,10.2.44,,30\n,ma11_rel,10.11.7,,25\n,ma9_rel,,,10\n,ma10_rel,,,21\n"
	if string(b) != want {
		t.Errorf("otava csv:\n%s\nwant\n%s", b, want)
	}
	back, err := Read(files[0], "", nil)
	if err != nil || len(back) != 1 || order(back[0]) != order(s[0]) || back[0].Order != OrderFile || !back[0].Points[0].Time.IsZero() {
		t.Errorf("read back: %+v %v", back, err)
	}
	if _, err := WriteNyrkioJSON(t.TempDir(), s); err == nil || !strings.Contains(err.Error(), "build ma100244_rel 10.2.44 has none (imported without --time)") {
		t.Errorf("nyrkio-json without times: %v", err)
	}
	// Every run timed: a point per run, in time order.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range runs {
		runs[i].Version = ""
		runs[i].Started = t0.Add(time.Duration(len(runs)-i) * time.Minute)
	}
	s = FromRuns(runs, qps, func(result.Run) string { return "" })
	if s[0].Order != OrderTime || s[0].ByName() || order(s[0]) != "ma11_rel ma10_rel ma9_rel ma100244_rel ma10_rel" {
		t.Errorf("by time: %s %q", s[0].Order, order(s[0]))
	}
}

// Otava's and Nyrkiö's public TigerBeetle series reads as one metric.
func TestReadTigerBeetle(t *testing.T) {
	// The public series is committed once, with the detector's other
	// validation data (its README says where it comes from).
	s, err := Read(filepath.Join("..", "changepoint", "testdata", "validation", "tigerbeetle_load_accepted.csv"), "time", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || len(s[0].Points) == 0 {
		t.Fatalf("%d series, want one of 365 points: %+v", len(s), s)
	}
	if s[0].Metric != "value" || len(s[0].Points) != 365 || s[0].Points[0].Value != 26705 || s[0].Points[0].Commit == "" {
		t.Errorf("%s: %d points, the first %+v", s[0].Metric, len(s[0].Points), s[0].Points[0])
	}
	if _, err := Read("x.txt", "", nil); err == nil {
		t.Error("a .txt read")
	}
}

// Metrics with different points (a run without hardware figures) export
// into the right builds' rows; attribute columns never read back as metrics.
func TestExportJoinsByBuild(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var runs []result.Run
	for i, v := range []string{"1.1", "1.2", "1.3", "1.4"} {
		r := run("b"+v, v, "insert_range=100", 1, float64(100+i), t0.Add(time.Duration(i)*time.Hour))
		if v != "1.2" {
			r.HW = &result.HW{Samples: 3, OpsPerSec: 100, CPUPerOp: float64(i)}
		}
		runs = append(runs, r)
	}
	qps, _ := result.MetricNamed("qps")
	cpu, _ := result.MetricNamed("cpu/o")
	series := append(FromRuns(runs, qps, func(result.Run) string { return "" }), FromRuns(runs, cpu, func(result.Run) string { return "" })...)
	files, err := WriteOtavaCSV(t.TempDir(), series)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 || !strings.HasSuffix(lines[2], ",b1.2,1.2,,101,") || !strings.HasSuffix(lines[3], ",b1.3,1.3,,102,2") {
		t.Errorf("rows:\n%s", b)
	}
	back, err := Read(files[0], "", nil)
	if err != nil || len(back) != 2 || back[1].Metric != "cpu/o" || len(back[1].Points) != 3 || back[1].Points[1].Value != 2 {
		t.Errorf("read back: %+v %v", back, err)
	}
}

// A value that is not finite is refused with the file and the line; so is
// a time that is no time.
func TestReadRefusesNonFinite(t *testing.T) {
	for _, c := range []struct{ name, content, want string }{
		{"nan.csv", "time,qps\n1700000000,1\n1700000100,nan\n", `:3: column "qps": value "nan" is not finite: fix or remove the row`},
		{"inf.csv", "time,note,qps\n1700000000,\"two\nlines\",1\n1700000100,x,-Inf\n", `:4: column "qps": value "-Inf" is not finite: fix or remove the row`},
		{"huge.csv", "time,qps\n1700000000,1e400\n1700000100,2\n", `:2: column "qps": value "1e400" is not finite: fix or remove the row`},
		{"time.csv", "time,qps\n1700000000,1\nnan,2\n", `:3: time "nan" is out of range (unix seconds of years 1 to 9999)`},
		{"huge.json", "[\n {\"timestamp\": 1700000000, \"metrics\": [{\"name\": \"qps\", \"value\": 1}]},\n {\"timestamp\": 1700000100,\n  \"metrics\": [{\"name\": \"qps\", \"value\": 1e400}]}\n]\n",
			`:3: metric "qps": value "1e400" is not finite: fix or remove the result`},
		{"type.json", "[\n {\"timestamp\": 1700000000, \"metrics\": [{\"name\": \"qps\", \"value\": 1}]},\n\n {\"timestamp\": \"soon\",\n  \"metrics\": []}]", `:4: not a Nyrkiö result array: json: cannot unmarshal string`},
		{"syntax.json", "[{\"timestamp\": 1700000000,\n \"metrics\": [{\"name\": \"qps\", \"value\": NaN}]}]", `:2: not a Nyrkiö result array: invalid character 'N'`},
		{"when.json", "[{\"timestamp\": 9223372036854775807, \"metrics\": [{\"name\": \"qps\", \"value\": 1}]}]", `:1: timestamp 9223372036854775807 is out of range`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), c.name)
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Read(p, "", nil)
			if err == nil || !strings.HasPrefix(err.Error(), p+c.want) {
				t.Errorf("want an error starting %q, got %v (%d series)", p+c.want, err, len(s))
			}
		})
	}
}

// Open- and closed-loop runs of one test are two series, named by their
// conditions; a test run one way only keeps its plain name.
func TestSeriesSplitByConditions(t *testing.T) {
	mk := func(build, version string, v float64, loop string) result.Run {
		r := result.Run{Suite: "sysbench", Test: "point-query_range=100", Build: build, Version: version, Threads: 1, Status: result.OK, Loop: loop,
			Totals: result.Totals{Reported: v, ReportedUnit: "qps"}}
		if loop == "open" {
			r.Rate, r.Arrivals = 30000, "poisson"
		}
		return r
	}
	runs := []result.Run{mk("a", "1.0", 33000, "closed"), mk("b", "1.1", 34000, "closed"), mk("a", "1.0", 4100, "open"), mk("b", "1.1", 4200, "open")}
	qps, _ := result.MetricNamed("qps")
	s := FromRuns(runs, qps, func(result.Run) string { return "" })
	if len(s) != 2 {
		t.Fatalf("%d series, want closed and open apart", len(s))
	}
	for _, x := range s {
		if len(x.Points) != 2 || !strings.Contains(x.Name(), "[") || !strings.Contains(x.Name(), "loop=") {
			t.Errorf("series %q: %d points", x.Name(), len(x.Points))
		}
		if x.Points[0].Value > 30000 != strings.Contains(x.Name(), "loop=closed") {
			t.Errorf("series %q holds %v", x.Name(), x.Points[0].Value)
		}
	}
	one := FromRuns(runs[:2], qps, func(result.Run) string { return "" })
	if len(one) != 1 || strings.Contains(one[0].Name(), "[") {
		t.Errorf("a test run one way: %q", one[0].Name())
	}
}

// A MySQL and a MariaDB build under one config name are two series, each
// in its own version order, named apart (and exported to two files); a
// flavor alone under its config is named as before.
func TestFlavorsApart(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var runs []result.Run
	for i, v := range []string{"10.6.1", "10.6.2", "10.6.3"} {
		r := run("ma"+v, v, "point-query_range=100", 1, 1000, t0.Add(time.Duration(i)*time.Hour))
		r.Flavor = "mariadb"
		runs = append(runs, r)
	}
	for i, v := range []string{"8.0.1", "8.0.2"} {
		r := run("my"+v, v, "point-query_range=100", 1, 500, t0.Add(time.Duration(i)*time.Hour))
		r.Flavor = "mysql"
		runs = append(runs, r)
	}
	other := run("pg", "16.1", "scan_range=100", 1, 10, t0)
	other.Flavor = "postgres"
	runs = append(runs, other)
	qps, _ := result.MetricNamed("qps")
	s := FromRuns(runs, qps, func(result.Run) string { return "" })
	if len(s) != 3 {
		t.Fatalf("%d series, want mariadb's, mysql's and the scan's: %+v", len(s), s)
	}
	ma, my := s[0], s[1]
	if ma.Flavor != "mariadb" || len(ma.Points) != 3 || my.Flavor != "mysql" || len(my.Points) != 2 || ma.Points[0].Value != 1000 || my.Points[0].Value != 500 {
		t.Errorf("series: %+v / %+v", ma, my)
	}
	if ma.Name() == my.Name() || !strings.Contains(ma.Name(), "flavor=mariadb") || strings.Contains(s[2].Name(), "flavor=") {
		t.Errorf("names: %q %q %q", ma.Name(), my.Name(), s[2].Name())
	}
	dir := t.TempDir()
	files, err := WriteOtavaCSV(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	csvs := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".csv") {
			csvs++
		}
	}
	if csvs != 3 {
		t.Errorf("files %v: want a CSV per series", files)
	}
}
