package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// mytoolsDir is a hand-built result folder in the formats run.sh and an.sh
// write (testdata/README.md has its numbers).
var mytoolsDir = filepath.Join("testdata", "mytools", "x.my8043_rel_o2nofp.z12a_c8r32.pk1")

// copyMytools copies the fixture folder to a temporary one to break.
func copyMytools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(mytoolsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(mytoolsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
}

// find returns the run of a test at a thread count.
func find(t *testing.T, runs []result.Run, test string, threads int) result.Run {
	t.Helper()
	for _, r := range runs {
		if r.Test == test && r.Threads == threads {
			return r
		}
	}
	t.Fatalf("no run %s at %d threads", test, threads)
	return result.Run{}
}

func TestMytoolsFolder(t *testing.T) {
	runs, err := Mytools(ctx, mytoolsDir, src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, fmt.Sprintf("%s@%d", r.Test, r.Threads))
	}
	// scan ran at 1 thread only: one table, and run.sh's 0 for dop 4 is no run.
	want := "point-query.pre_range=100@1 point-query.pre_range=100@4 read-only_range=10@1 read-only_range=10@4 scan_range=100@1"
	if strings.Join(got, " ") != want {
		t.Fatalf("runs %v, want %s", got, want)
	}

	pq := find(t, runs, "point-query.pre_range=100", 4)
	checkParams(t, pq, map[string]string{
		"source": "mytools", "file": "sb.o.point-query.pre.range100.pk1.dop4", "met_file": "sb.met.point-query.pre.range100.pk1.dop4",
		"engine": "innodb", "pk": "1", "sysbench_version": "1.1.0-3ceba0b", "range": "100", "name": "point-query",
		"variant": "pre", "table_size": "20000000", "db_driver": "mysql",
	})
	checkGroups(t, pq, "point-1", "point")
	if pq.Build != src.Build || pq.Config != src.Config || pq.Status != result.OK || pq.SchemaVersion != result.SchemaVersion || pq.Suite != "sysbench" {
		t.Errorf("run header wrong: %+v", pq)
	}
	tot := pq.Totals
	if tot.Events != 24370441 || tot.Statements != 24370441 || tot.ReportedUnit != "qps" {
		t.Errorf("totals wrong: %+v", tot)
	}
	check(t, "qps", tot.QPS, 81234.56)
	check(t, "tps", tot.TPS, 81234.56)
	check(t, "reported", tot.Reported, 81234.56)
	check(t, "seconds", tot.Seconds, 300.0009)
	check(t, "warmup", pq.Warmup, 5)
	check(t, "mean µs", tot.Response.Mean, 50)
	check(t, "p95 µs", tot.Response.P95, 60)
	check(t, "max µs", tot.Response.Max, 23400)

	hw := pq.HW
	if hw == nil {
		t.Fatal("no HW from sb.met")
	}
	if hw.Op != "statement" || hw.Samples != 633 || hw.CPUs != 8 || len(hw.Notes) != 1 ||
		hw.Notes[0] != "imported from mytools sb.met: vmstat/iostat averages as an.sh computed them" {
		t.Errorf("HW header wrong: %+v", hw)
	}
	check(t, "cpu/o", hw.CPUPerOp, 0.000597)
	check(t, "cs/o", hw.CSPerOp, 4.001)
	check(t, "r/o", hw.ReadsPerOp, 0.038)
	check(t, "rKB/o", hw.ReadKBPerOp, 0.615)
	check(t, "wKB/o", hw.WriteKBPerOp, 0.026)
	check(t, "o/s", hw.OpsPerSec, 81234.56)
	check(t, "r/s", hw.Avg.Reads, 3120.5)
	check(t, "rkB/s", hw.Avg.ReadKB, 48.8*1024)
	check(t, "w/s", hw.Avg.Writes, 95.2)
	check(t, "wkB/s", hw.Avg.WriteKB, 2.1*1024)
	check(t, "cs/s", hw.Avg.CS, 325000)

	pq1 := find(t, runs, "point-query.pre_range=100", 1)
	check(t, "dop1 qps", pq1.Totals.QPS, 24515.07)
	check(t, "dop1 cpu/o", pq1.HW.CPUPerOp, 0.000518)

	ro := find(t, runs, "read-only_range=10", 4)
	if ro.Totals.Events != 1411470 || ro.Totals.Statements != 1411470*16 {
		t.Errorf("read-only: events %d statements %d", ro.Totals.Events, ro.Totals.Statements)
	}
	check(t, "read-only qps", ro.Totals.QPS, 75278.12)
	check(t, "read-only tps", ro.Totals.TPS, 4704.88)
	checkParams(t, ro, map[string]string{"statements_per_event": "16"})
	checkGroups(t, ro, "range-2", "range-agg")

	scan := find(t, runs, "scan_range=100", 1)
	if scan.Totals.ReportedUnit != "Krows/s" || scan.HW == nil || scan.HW.Op != "Krow" {
		t.Errorf("scan: unit %q HW %+v", scan.Totals.ReportedUnit, scan.HW)
	}
	check(t, "scan reported (sb.r.qps)", scan.Totals.Reported, 6919)
	check(t, "scan o/s", scan.HW.OpsPerSec, 6919)
	check(t, "scan tps", scan.Totals.TPS, 0.34)
	check(t, "scan mean µs", scan.Totals.Response.Mean, 2890400)

	// What was imported survives the result file.
	p := filepath.Join(t.TempDir(), "r.json")
	if err := result.Write(p, runs); err != nil {
		t.Fatal(err)
	}
	f, err := result.Read(p)
	if err != nil || len(f.Runs) != len(runs) || f.Runs[1].HW.CPUPerOp != 0.000597 {
		t.Errorf("round trip: %v, %d runs", err, len(f.Runs))
	}
}

// The archives in mytools bench/arc keep sb.o and sb.met but no sb.r files.
func TestMytoolsWithoutSbR(t *testing.T) {
	dir := copyMytools(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "sb.r.") {
			remove(t, dir, e.Name())
		}
	}
	runs, err := Mytools(ctx, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 5 {
		t.Fatalf("%d runs, want 5", len(runs))
	}
	pq := find(t, runs, "point-query.pre_range=100", 4)
	check(t, "reported", pq.Totals.Reported, 81234.56)
	if _, ok := pq.Params["engine"]; ok {
		t.Errorf("engine comes from sb.r files only, got %q", pq.Params["engine"])
	}
	scan := find(t, runs, "scan_range=100", 1)
	check(t, "scan Krows/s from --table-size and avg", scan.Totals.Reported, 20000000.0/1000/(2890.40/1000))
}

// Where a thread count has sb.met and sb.r values but no sb.o.
func TestMytoolsFromSbROnly(t *testing.T) {
	dir := copyMytools(t)
	remove(t, dir, "sb.o.point-query.pre.range100.pk1.dop1")
	runs, err := Mytools(ctx, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	r := find(t, runs, "point-query.pre_range=100", 1)
	if r.Totals.Events != 0 || r.Params["file"] != "sb.r.qps.point-query.pre.range100.pk1" || r.HW == nil {
		t.Errorf("run from sb.r: %+v", r)
	}
	check(t, "qps", r.Totals.QPS, 24515)
	check(t, "tps", r.Totals.TPS, 24515)
	check(t, "reported", r.Totals.Reported, 24515)
	check(t, "mean µs", r.Totals.Response.Mean, 40)
	check(t, "p95 µs", r.Totals.Response.P95, 40)
	check(t, "max µs", r.Totals.Response.Max, 19180)
}

// run.sh of 2024 reported scan as Mrows/s of all tables and gave an.sh rows/s.
func TestMytoolsScanMrows(t *testing.T) {
	dir := copyMytools(t)
	write(t, dir, "sb.r.qps.scan.range100.pk1", "0.066\t0\tinnodb scan range=100\n")
	runs, err := Mytools(ctx, dir, src)
	if err != nil {
		t.Fatal(err)
	}
	scan := find(t, runs, "scan_range=100", 1)
	if scan.Totals.ReportedUnit != "Mrows/s" || scan.HW.Op != "row" {
		t.Errorf("unit %q op %q", scan.Totals.ReportedUnit, scan.HW.Op)
	}
	check(t, "reported", scan.Totals.Reported, 0.066)

	write(t, dir, "sb.r.qps.scan.range100.pk1", "5000\t0\tinnodb scan range=100\n")
	_, err = Mytools(ctx, dir, src)
	if err == nil || !strings.Contains(err.Error(), "sb.r.qps.scan.range100.pk1:1: scan value 5000 for dop 1 is neither Krows/s") {
		t.Errorf("want an error about the scan value, got %v", err)
	}
}

func TestMytoolsEmptyFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "notes.txt", "nothing here\n")
	runs, err := Mytools(ctx, dir, src)
	if err == nil || runs != nil || !strings.Contains(err.Error(), "sb.r.qps.<test>.range<R>.pk<P>") ||
		!strings.Contains(err.Error(), "sb.o.<test>.range<R>.pk<P>.dop<N>") || !strings.Contains(err.Error(), dir) {
		t.Errorf("want an error naming the expected files, got %v", err)
	}
	if _, err := Mytools(ctx, filepath.Join(dir, "missing"), src); err == nil {
		t.Error("a missing folder imported")
	}
}

func TestMytoolsBadInput(t *testing.T) {
	const (
		pqQPS = "sb.r.qps.point-query.pre.range100.pk1"
		pqMet = "sb.met.point-query.pre.range100.pk1.dop4"
		pqO4  = "sb.o.point-query.pre.range100.pk1.dop4"
	)
	for _, c := range []struct {
		name string
		edit func(t *testing.T, dir string)
		file string // the file the error must name
		want string // after "<file>:": a line number, or " " when the error is about the whole file
	}{
		{"more values than thread counts", func(t *testing.T, dir string) {
			write(t, dir, pqQPS, "24515\t81235\t90000\tinnodb point-query.pre range=100\n")
		}, pqQPS, "1: 3 values, but the sb.o/sb.met files give 2 thread counts (dop 1, 4)"},
		{"thread counts out of order", func(t *testing.T, dir string) {
			write(t, dir, pqQPS, "81235\t24515\tinnodb point-query.pre range=100\n")
		}, pqQPS, "1: value 1 (81235) is for dop 1, but sb.o.point-query.pre.range100.pk1.dop1 says queries/s 24515.07"},
		{"trailer of another test", func(t *testing.T, dir string) {
			write(t, dir, pqQPS, "24515\t81235\tinnodb point-query range=100\n")
		}, pqQPS, `1: ends "innodb point-query range=100"`},
		{"not a number", func(t *testing.T, dir string) {
			write(t, dir, pqQPS, "24515\tfast\tinnodb point-query.pre range=100\n")
		}, pqQPS, `1: figure 2: value "fast" is not a number: fix or remove the file`},
		{"sb.r value overflows", func(t *testing.T, dir string) {
			write(t, dir, pqQPS, "24515\t1e305\tinnodb point-query.pre range=100\n")
		}, pqQPS, `1: figure 2: value "1e305" is out of range (above 1e9): fix or remove the file`},
		{"negative sb.r value", func(t *testing.T, dir string) {
			write(t, dir, pqQPS, "-24515\t81235\tinnodb point-query.pre range=100\n")
		}, pqQPS, `1: figure 1: value "-24515" is negative: fix or remove the file`},
		{"empty sb.r", func(t *testing.T, dir string) { write(t, dir, pqQPS, "") }, pqQPS, "1: empty"},
		{"rt95 disagrees", func(t *testing.T, dir string) {
			write(t, dir, "sb.r.rt95.point-query.pre.range100.pk1", "0.04\t0.09\tinnodb point-query.pre range=100\n")
		}, "sb.r.rt95.point-query.pre.range100.pk1", "1: value 2 (0.09) is for dop 4"},
		{"bad sb.met value", func(t *testing.T, dir string) {
			write(t, dir, pqMet, "iostat, vmstat normalized by operation rate\nsamp\tr/s\trMB/s\tw/s\twMB/s\tr/o\trKB/o\twKB/o\to/s\n"+
				"604\t3120.5\t48.8\t95.2\t2.1\t0.038\t0.615\t0.026\t81234.56\n\nsamp\tcs/s\tcpu/s\tcs/o\tcpu/o\n633\t325000\t48.5\t4.001\tinf\n")
		}, pqMet, `6: cpu/o: value "inf" is not finite: fix or remove the file`},
		{"negative sb.met value", func(t *testing.T, dir string) {
			write(t, dir, pqMet, "iostat, vmstat normalized by operation rate\nsamp\tr/s\trMB/s\tw/s\twMB/s\tr/o\trKB/o\twKB/o\to/s\n"+
				"604\t3120.5\t48.8\t-95.2\t2.1\t0.038\t0.615\t0.026\t81234.56\n\nsamp\tcs/s\tcpu/s\tcs/o\tcpu/o\n633\t325000\t48.5\t4.001\t0.6\n")
		}, pqMet, `3: w/s: value "-95.2" is negative: fix or remove the file`},
		{"sb.o count overflows", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, pqO4))
			write(t, dir, pqO4, regexp.MustCompile(`transactions: +\d+`).ReplaceAllString(string(b), "transactions: 99999999999999999999"))
		}, pqO4, `40: cannot read "transactions:" line: value "99999999999999999999" is out of range (above 2^63-1): fix or remove the file`},
		{"sb.met without vmstat", func(t *testing.T, dir string) {
			write(t, dir, pqMet, "iostat, vmstat normalized by operation rate\nsamp\tr/s\trMB/s\tw/s\twMB/s\tr/o\trKB/o\twKB/o\to/s\n"+
				"604\t3120.5\t48.8\t95.2\t2.1\t0.038\t0.615\t0.026\t81234.56\n")
		}, pqMet, `3: no "samp cs/s cpu/s cs/o cpu/o" header: is this an an.sh sb.met file?`},
		{"sb.met short line", func(t *testing.T, dir string) {
			write(t, dir, pqMet, "iostat, vmstat normalized by operation rate\nsamp\tr/s\trMB/s\tw/s\twMB/s\tr/o\trKB/o\twKB/o\to/s\n604\t3120.5\n")
		}, pqMet, `3: want 9 values under the "samp r/s rMB/s w/s wMB/s r/o rKB/o wKB/o o/s" header`},
		{"sb.o cut short", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, pqO4))
			write(t, dir, pqO4, strings.Split(string(b), "    queries:")[0])
		}, pqO4, `40: no "queries:" line: is this sysbench run output?`},
		{"sb.o of another thread count", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, pqO4))
			write(t, dir, pqO4, strings.Replace(string(b), "Number of threads: 4", "Number of threads: 8", 1))
		}, pqO4, "6: sysbench ran 8 threads, but the file name says dop4"},
		{"unknown test", func(t *testing.T, dir string) {
			write(t, dir, "sb.r.qps.update-rate.range100.pk1", "1000\tinnodb update-rate range=100\n")
		}, "sb.r.qps.update-rate.range100.pk1", ` unknown test "update-rate_range=100": want a qpslab label <testType>[.<variant>]_range=<R>`},
		{"no thread counts", func(t *testing.T, dir string) {
			remove(t, dir, "sb.o.read-only.range10.pk1.dop1", "sb.o.read-only.range10.pk1.dop4",
				"sb.met.read-only.range10.pk1.dop1", "sb.met.read-only.range10.pk1.dop4")
		}, "sb.r.qps.read-only.range10.pk1", " cannot tell the thread counts: no sb.o.read-only.range10.pk1.dop<N> or sb.met.read-only.range10.pk1.dop<N> files"},
		{"sb.met alone", func(t *testing.T, dir string) {
			write(t, dir, "sb.met.update-one.range100.pk1.dop1", "")
		}, "sb.met.update-one.range100.pk1.dop1", " no sb.o.update-one.range100.pk1.dop1 or sb.r.qps.update-one.range100.pk1 to go with it"},
		{"sb.met without its sb.o", func(t *testing.T, dir string) {
			remove(t, dir, "sb.r.qps.read-only.range10.pk1", "sb.o.read-only.range10.pk1.dop4")
		}, "sb.met.read-only.range10.pk1.dop4", " no sb.o.read-only.range10.pk1.dop4 or sb.r.qps.read-only.range10.pk1 to go with it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyMytools(t)
			c.edit(t, dir)
			runs, err := Mytools(ctx, dir, src)
			want := "import mytools " + filepath.Join(dir, c.file) + ":" + c.want
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("want an error starting\n\t%s\ngot\n\t%v", want, err)
			} else if strings.HasSuffix(want, "fix or remove the file") && err.Error() != want {
				t.Errorf("want the error\n\t%s\ngot\n\t%v", want, err)
			}
			if runs != nil {
				t.Errorf("an error must come with no runs, got %d", len(runs))
			}
		})
	}
}
