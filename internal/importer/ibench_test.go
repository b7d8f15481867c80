package importer

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/workload/ibench"
)

// ibenchDir is a hand-made Insert Benchmark run of the reference harness:
// iq.sh's step folders with np.sh's and iibench.py's files, 2 clients
// (testdata/README.md has its numbers).
var ibenchDir = filepath.Join("testdata", "ibench", "ma100433_rel.cz11a_c8r32")

var ibSrc = Source{Build: "ma100433_rel", Config: "cz11a_c8r32"}

// copyIbench copies the fixture folder to a temporary one to break.
func copyIbench(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(ibenchDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ibenchDir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// edit replaces old by new in a file of dir, once; the fixture must hold old.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not hold %q", file, old)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ibStepFigures are each step's o.res figures (testdata/README.md): P
// processes, R rows per process, T seconds, Q queries, and the IPS and QPS
// np.sh printed from them.
var ibStepFigures = []struct {
	test     string
	p, r, t  int64
	q        int64
	ips, qps float64
	rpc      int64
}{
	{"l.i0", 2, 100000, 24, 0, 8333.3, 0, 100},
	{"l.x", 2, 100050, 5, 0, 40020.0, 0, 100},
	{"l.i1", 2, 16000, 11, 0, 2909.0, 0, 50},
	{"l.i2", 2, 4000, 11, 0, 727.2, 0, 5},
	{"qr100", 2, 2000, 21, 73010, 190.4, 3476.6, 50},
	{"qp100", 2, 2000, 21, 132278, 190.4, 6298.9, 50},
	{"qr500", 2, 10000, 21, 64842, 952.3, 3087.7, 50},
	{"qp500", 2, 10000, 21, 116379, 952.3, 5541.8, 50},
	{"qr1000", 2, 20000, 27, 54776, 1481.4, 2028.7, 50},
	{"qp1000", 2, 20000, 23, 97838, 1739.1, 4253.8, 50},
}

// cut1 is bc's scale=1 division: the reference's IPS and QPS.
func cut1(a, b int64) float64 { return math.Floor(float64(a)*10/float64(b)) / 10 }

func findTest(t *testing.T, runs []result.Run, test string) result.Run {
	t.Helper()
	for _, r := range runs {
		if r.Test == test {
			return r
		}
	}
	t.Fatalf("no run %s", test)
	return result.Run{}
}

// The folder imports as ten ibench runs whose headline figures are the
// reference's own: IPS = rows / seconds for the load steps, indexed rows/s
// for l.x, QPS = queries / seconds for the read+write steps, each cut to
// one decimal as bc does; and whose SLA verdicts follow the 95 % rule.
func TestIbenchFolder(t *testing.T) {
	runs, err := Mytools(ctx, ibenchDir, ibSrc) // the folder is told from a sysbench one by its files
	if err != nil {
		t.Fatal(err)
	}
	direct, err := Ibench(ctx, ibenchDir, ibSrc)
	if err != nil || len(direct) != len(runs) {
		t.Fatalf("Ibench: %v, %d runs", err, len(direct))
	}
	if len(runs) != len(ibStepFigures) {
		t.Fatalf("%d runs, want %d", len(runs), len(ibStepFigures))
	}
	sla := map[string]bool{"qr100": true, "qp100": true, "qr500": true, "qp500": true, "qr1000": false, "qp1000": false}
	for i, f := range ibStepFigures {
		r := runs[i]
		if r.Test != f.test || r.Step != i || r.Suite != ibench.Name || r.Threads != 2 || r.Status != result.OK ||
			r.Build != ibSrc.Build || r.Config != ibSrc.Config || r.Loop != "closed" || r.SchemaVersion != result.SchemaVersion {
			t.Errorf("run %d: %s step %d suite %q threads %d status %s %s.%s", i, r.Test, r.Step, r.Suite, r.Threads, r.Status, r.Build, r.Config)
		}
		if err := r.Check(); err != nil {
			t.Errorf("%s: %v", r.Test, err)
		}
		group, pos := ibench.GroupLoad, 0
		if f.q > 0 {
			group, pos = ibench.GroupRW, 1
		}
		if p, ok := r.Placement("steps"); !ok || p.Group != group || p.Pos != pos {
			t.Errorf("%s: groups %+v, want %s", r.Test, r.Groups, group)
		}
		rows := f.p * f.r
		tot := r.Totals
		if tot.Rows != rows || tot.Seconds != float64(f.t) {
			t.Errorf("%s: rows %d seconds %g, want %d and %d", r.Test, tot.Rows, tot.Seconds, rows, f.t)
		}
		check(t, r.Test+" rows/s", tot.RowsPerSec, float64(rows)/float64(f.t))
		check(t, r.Test+" ips figure", tot.Figures["ips"], float64(rows)/float64(f.t))
		if f.q == 0 {
			// IPS (indexed rows/s for l.x): np.sh's rows over its seconds.
			check(t, r.Test+" reported = the reference's formula", tot.Reported, cut1(rows, f.t))
			check(t, r.Test+" reported = o.res", tot.Reported, f.ips)
			unit, series := "rows/s", result.SeriesRows
			if tot.ReportedUnit != unit || tot.Series != series {
				t.Errorf("%s: unit %q series %q", r.Test, tot.ReportedUnit, tot.Series)
			}
			if len(r.Verdicts) != 0 {
				t.Errorf("%s: a load step has no SLA, got %+v", r.Test, r.Verdicts)
			}
		} else {
			check(t, r.Test+" reported = the reference's formula", tot.Reported, cut1(f.q, f.t))
			check(t, r.Test+" reported = o.res", tot.Reported, f.qps)
			check(t, r.Test+" background IPS", cut1(rows, f.t), f.ips)
			if tot.ReportedUnit != "queries/s" || tot.Series != result.SeriesOp("query") {
				t.Errorf("%s: unit %q series %q", r.Test, tot.ReportedUnit, tot.Series)
			}
			q, ok := tot.Op("query")
			if !ok || q.Count != f.q {
				t.Errorf("%s: queries %+v, want %d", r.Test, q, f.q)
			}
			check(t, r.Test+" query rate", q.Rate, float64(f.q)/float64(f.t))
			// The SLA: the average insert rate at least 95 % of clients × rate.
			rate := map[string]float64{"qr100": 100, "qp100": 100, "qr500": 500, "qp500": 500, "qr1000": 1000, "qp1000": 1000}[r.Test]
			want := f.ips >= 0.95*2*rate
			if want != sla[r.Test] {
				t.Fatalf("%s: the fixture's SLA outcome changed: IPS %g against %g", r.Test, f.ips, 0.95*2*rate)
			}
			if len(r.Verdicts) != 1 || r.Verdicts[0].Name != "insert SLA" || r.Verdicts[0].OK != want {
				t.Errorf("%s: verdicts %+v, want insert SLA ok=%v", r.Test, r.Verdicts, want)
			}
			if r.Params["insert_rate"] != strings.TrimLeft(r.Test, "qrp") {
				t.Errorf("%s: insert_rate %q", r.Test, r.Params["insert_rate"])
			}
		}
		// The clients' statements: t_ins / rows per INSERT.
		ins, _ := tot.Op("insert")
		if ins.Count != rows/f.rpc && r.Test != "l.x" {
			t.Errorf("%s: %d inserts, want %d", r.Test, ins.Count, rows/f.rpc)
		}
		// Every row the clients inserted is in a second.
		var sum int64
		for _, s := range r.Samples {
			sum += s.Rows
		}
		if want := rows; r.Test == "l.x" {
			if sum != 200 { // 100 rows per client; the rest was indexed
				t.Errorf("l.x: samples hold %d rows, want 200", sum)
			}
		} else if sum != want {
			t.Errorf("%s: samples hold %d rows, want %d", r.Test, sum, want)
		}
		if r.Params["transport"] != "iibench" || r.Params["source"] != "mytools" || r.Params["pacing"] != "reference" {
			t.Errorf("%s: params %v", r.Test, r.Params)
		}
	}

	qr := findTest(t, runs, "qr100")
	checkParams(t, qr, map[string]string{
		"file": "qr100.L1/o.res.dop2", "met_file": "qr100.L1/o.res.dop2", "clients": "2", "processes": "2", "tables": "2",
		"rows": "200000", "rows2": "40000", "query_secs": "20", "delete_per_insert": "true", "prepared": "false",
		"rows_per_commit": "50", "dbms": "mysql", "engine": "innodb", "deletes": "yes",
	})
	if c := qr.Conditions(); c != "delete_per_insert=true,loop=closed,pacing=reference,prepared=false,rows2=40000,rows=200000,tables=2,transport=iibench" {
		t.Errorf("conditions %q", c)
	}
	// Client 2 starts 1 s after client 1: second 0 and 20 hold one client's 100 rows.
	if len(qr.Samples) != 21 || qr.Samples[0].Rows != 100 || qr.Samples[1].Rows != 200 || qr.Samples[19].Rows != 200 || qr.Samples[20].Rows != 100 {
		t.Errorf("qr100 samples: %d seconds, %+v … %+v", len(qr.Samples), qr.Samples[0], qr.Samples[len(qr.Samples)-1])
	}
	// Sorted descending, the seconds' rates are 200 ×19 then 100 ×2: 90 %
	// of 21 seconds beat 200, 95 % beat 100.
	check(t, "qr100 insert/s@p90", qr.Totals.Figures["insert/s@p90"], 200)
	check(t, "qr100 insert/s@p95", qr.Totals.Figures["insert/s@p95"], 100)
	check(t, "qr100 sla%", qr.Totals.Figures["sla%"], 100*19.0/21)
	if v := qr.Verdicts[0].Detail; v != "target 200 rows/s, average 190.5 (95.2%), 90% of 21 seconds at >= 95%" {
		t.Errorf("qr100 verdict %q", v)
	}
	if q, _ := qr.Totals.Op("query"); q.Response.Count != 0 || q.Response.Max != 6712 || q.Response.P99 != 0 {
		t.Errorf("qr100 query latency %+v: only the max is known (the longest max_q)", q.Response)
	}

	// l.i0: client 2 starts 10 s after client 1, which creates its table.
	l0 := findTest(t, runs, "l.i0")
	checkParams(t, l0, map[string]string{"delete_per_insert": "false", "rows_per_commit": "100", "deletes": "no"})
	if n := len(l0.Samples); n != 23 || l0.Samples[22].Second != 22 {
		t.Errorf("l.i0: %d seconds, want 0 … 22", n)
	}
	check(t, "l.i0 db_mb", l0.Totals.Figures["db_mb"], 0.021*1024)
	check(t, "l.i0 datadir_mb", l0.Totals.Figures["datadir_mb"], 0.382*1024)
	if _, ok := l0.Totals.Op("query"); ok {
		t.Error("l.i0 ran no queries")
	}

	// Hardware: ios.sh's block by the insert rate for load steps, by the
	// query rate for read+write steps.
	hw := l0.HW
	if hw == nil || hw.Op != "insert" || hw.Samples != 4 || !hw.NoCPUTime || !hw.Measured() {
		t.Fatalf("l.i0 HW %+v", hw)
	}
	check(t, "l.i0 cpu/o", hw.CPUPerOp, 0.004632)
	check(t, "l.i0 cs/o", hw.CSPerOp, 2.578)
	check(t, "l.i0 wKB/o", hw.WriteKBPerOp, 7.422)
	check(t, "l.i0 o/s", hw.OpsPerSec, 8333.3)
	check(t, "l.i0 w/s", hw.Avg.Writes, 402.6)
	check(t, "l.i0 wkB/s", hw.Avg.WriteKB, 60.4*1024)
	check(t, "l.i0 cs/s", hw.Avg.CS, 21480)
	if lx := findTest(t, runs, "l.x"); lx.HW == nil || lx.HW.Op != "row" || lx.HW.Measured() {
		t.Errorf("l.x HW %+v: indexed rows, one iostat sample (not measured)", lx.HW)
	}
	q1 := findTest(t, runs, "qr1000")
	if q1.HW == nil || q1.HW.Op != "query" || q1.HW.Samples != 5 {
		t.Fatalf("qr1000 HW %+v", q1.HW)
	}
	check(t, "qr1000 cpu/o", q1.HW.CPUPerOp, 0.019175)
	check(t, "qr1000 cs/o", q1.HW.CSPerOp, 7.507)
	check(t, "qr1000 rKB/o", q1.HW.ReadKBPerOp, 0.004)
	check(t, "qr1000 wKB/o", q1.HW.WriteKBPerOp, 7.207)
	check(t, "qr1000 o/s", q1.HW.OpsPerSec, 2028.7)
	check(t, "qr1000 sla%", q1.Totals.Figures["sla%"], 0)
	if ins, _ := q1.Totals.Op("insert"); ins.Response.Max != 430063 { // o.res's "Max insert": 0.430 s
		t.Errorf("qr1000 insert max %g µs, want the stall's 430063", ins.Response.Max)
	}

	// What was imported survives the result file.
	p := filepath.Join(t.TempDir(), "r.json")
	if err := result.Write(p, runs); err != nil {
		t.Fatal(err)
	}
	if f, err := result.Read(p); err != nil || len(f.Runs) != len(runs) || f.Runs[8].Verdicts[0].OK {
		t.Errorf("round trip: %v", err)
	}
}

// A folder of some steps only keeps each step's place in the order.
func TestIbenchSomeSteps(t *testing.T) {
	dir := copyIbench(t)
	for _, s := range []string{"l.i0", "l.x", "qr100.L1", "qp500.L4"} {
		if err := os.RemoveAll(filepath.Join(dir, s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "end"), 0o755); err != nil { // iq.sh's, empty
		t.Fatal(err)
	}
	runs, err := Mytools(ctx, dir, ibSrc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Test+"@"+string(rune('0'+r.Step)))
	}
	if s := strings.Join(got, " "); s != "l.i1@2 l.i2@3 qp100@5 qr500@6 qr1000@8 qp1000@9" {
		t.Errorf("runs %s", s)
	}
	if _, ok := runs[0].Params["rows"]; ok {
		t.Errorf("without l.i0 the rows loaded are unknown, got %q", runs[0].Params["rows"])
	}
}

func TestIbenchNeither(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "o.res.dop2", "2 processes, 100000 rows-per-process, 24 seconds\n")
	if err := os.Mkdir(filepath.Join(dir, "l.i9"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Mytools(ctx, dir, ibSrc)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "neither sysbench nor Insert Benchmark") ||
		!strings.Contains(err.Error(), "sb.r.qps.<test>.range<R>.pk<P>") || !strings.Contains(err.Error(), "l.i0, l.x, l.i1, l.i2, qr100.L1") {
		t.Errorf("want one line naming both layouts, got %v", err)
	}
	if _, err := Ibench(ctx, dir, ibSrc); err == nil || !strings.Contains(err.Error(), "no Insert Benchmark steps") {
		t.Errorf("Ibench of no steps: %v", err)
	}
}

func TestIbenchBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(t *testing.T, dir string)
		file string // the file (or folder) the error must name
		want string // after "<file>:": a line number, or " " for the file as a whole
	}{
		{"IPS is not rows over seconds", func(t *testing.T, dir string) {
			edit(t, dir, "l.i0/o.res.dop2", "8333.3 rows-per-second,", "8433.3 rows-per-second,")
		}, "l.i0/o.res.dop2", "1: 8433.3 rows-per-second, but 2 processes × 100000 rows in 24 seconds are 8333.3: np.sh divides its rows by its seconds"},
		{"rows do not fit the seconds", func(t *testing.T, dir string) {
			edit(t, dir, "l.i1/o.res.dop2", "11 seconds,", "12 seconds,")
		}, "l.i1/o.res.dop2", "1: 2909.0 rows-per-second, but 2 processes × 16000 rows in 12 seconds are 2666.6"},
		{"queries are not the clients' sum", func(t *testing.T, dir string) {
			edit(t, dir, "qr100.L1/o.res.dop2", "73010 queries,", "73011 queries,")
		}, "qr100.L1/o.res.dop2", "1: 73011 queries, but the last per-second lines of o.ib.dop2.* add up to 73010: np.sh sums them"},
		{"QPS is not queries over seconds", func(t *testing.T, dir string) {
			edit(t, dir, "qr100.L1/o.res.dop2", "3476.6 queries-per-second", "3477.6 queries-per-second")
		}, "qr100.L1/o.res.dop2", "1: 3477.6 queries-per-second, but 73010 queries in 21 seconds are 3476.6"},
		{"first line of another layout", func(t *testing.T, dir string) {
			edit(t, dir, "qp100.L2/o.res.dop2", "2000 rows-per-process", "2000 rows")
		}, "qp100.L2/o.res.dop2", `1: figure 2 is "2000 rows": want "P processes, R rows-per-process`},
		{"negative rate", func(t *testing.T, dir string) {
			edit(t, dir, "qp100.L2/o.res.dop2", "190.4 rows-per-second,", "-190.4 rows-per-second,")
		}, "qp100.L2/o.res.dop2", `1: rows-per-second: value "-190.4" is negative: fix or remove the file`},
		{"zero seconds", func(t *testing.T, dir string) {
			edit(t, dir, "qp100.L2/o.res.dop2", " 21 seconds,", " 0 seconds,")
		}, "qp100.L2/o.res.dop2", `1: seconds: value "0" is out of range (np.sh counts 1 second at least): fix or remove the file`},
		{"not finite in the block used", func(t *testing.T, dir string) {
			edit(t, dir, "qr1000.L5/o.res.dop2", "7.507\t0.019175", "7.507\tinf")
		}, "qr1000.L5/o.res.dop2", `15: cpu/q: value "inf" is not finite: fix or remove the file`},
		{"short values line", func(t *testing.T, dir string) {
			edit(t, dir, "l.i2/o.res.dop2", "2\t41260\t36.2\t56.738\t0.049780", "2\t41260")
		}, "l.i2/o.res.dop2", `8: want 5 values under the "nsamp cs/s cpu/s cs/q cpu/q" header`},
		{"bad dbGB", func(t *testing.T, dir string) {
			edit(t, dir, "l.x/o.res.dop2", "dbGB\t0.029", "dbGB\tnan")
		}, "l.x/o.res.dop2", `15: dbGB: value "nan" is not finite: fix or remove the file`},
		{"processes not the dop", func(t *testing.T, dir string) {
			edit(t, dir, "l.i2/o.res.dop2", "2 processes,", "3 processes,")
		}, "l.i2/o.res.dop2", "1: 3 processes, but the file name says dop2"},
		{"a client's file missing", func(t *testing.T, dir string) {
			remove(t, dir, "qp500.L4/o.ib.dop2.2")
		}, "qp500.L4/o.res.dop2", "1: 2 processes, but there is no o.ib.dop2.2: np.sh writes each client's output there"},
		{"a client too many", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "qp500.L4/o.ib.dop2.2"))
			write(t, dir, "qp500.L4/o.ib.dop2.3", string(b))
		}, "qp500.L4/o.ib.dop2.3", " no client 3 of 2: o.res.dop2 says 2 processes"},
		{"no o.res", func(t *testing.T, dir string) {
			remove(t, dir, "l.i2/o.res.dop2")
		}, "l.i2", " no o.res.dop<N>: np.sh writes it when the step ends; finish the run or remove the step's folder"},
		{"two o.res", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "l.i2/o.res.dop2"))
			write(t, dir, "l.i2/o.res.dop4", string(b))
		}, "l.i2", " o.res files of dop 2, 4: a step's folder holds one run of np.sh"},
		{"files of another dop", func(t *testing.T, dir string) {
			for _, f := range []string{"o.res.dop2", "o.ib.dop2.1", "o.ib.dop2.2"} {
				if err := os.Rename(filepath.Join(dir, "qp1000.L6", f), filepath.Join(dir, "qp1000.L6", strings.Replace(f, "dop2", "dop1", 1))); err != nil {
					t.Fatal(err)
				}
			}
		}, "qp1000.L6/o.res.dop1", "1: 2 processes, but the file name says dop1"},
		{"a step of another dop", func(t *testing.T, dir string) {
			// qp1000 as client 1 alone would have run it: 20000 rows in 23 s
			// (869.5 rows/s), its 49185 queries (2138.4/s).
			edit(t, dir, "qp1000.L6/o.res.dop2", "2 processes, 20000 rows-per-process, 23 seconds, 1739.1", "1 processes, 20000 rows-per-process, 23 seconds, 869.5")
			edit(t, dir, "qp1000.L6/o.res.dop2", "97838 queries, 4253.8", "49185 queries, 2138.4")
			remove(t, dir, "qp1000.L6/o.ib.dop2.2")
			for _, f := range []string{"o.res.dop2", "o.ib.dop2.1"} {
				if err := os.Rename(filepath.Join(dir, "qp1000.L6", f), filepath.Join(dir, "qp1000.L6", strings.Replace(f, "dop2", "dop1", 1))); err != nil {
					t.Fatal(err)
				}
			}
		}, "qp1000.L6/o.res.dop1", " dop1, but l.i0/o.res.dop2 is dop2: a folder holds one run of iq.sh, at one client count"},
		{"a rate of 0", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "qr100.L1"), filepath.Join(dir, "qr0.L1")); err != nil {
				t.Fatal(err)
			}
		}, "qr0.L1", ` the rate of a read+write step: value "0" is out of range (1 to 1000000): fix or remove the file`},
		{"not a per-second number", func(t *testing.T, dir string) {
			edit(t, dir, "qr500.L3/o.ib.dop2.2", "1.0\t1.0\t498\t", "1.0\t1.0\tfast\t")
		}, "qr500.L3/o.ib.dop2.2", `3: i_ips: value "fast" is not a number: fix or remove the file`},
		{"a total that shrinks", func(t *testing.T, dir string) {
			edit(t, dir, "l.i0/o.ib.dop2.1", "\t16200\t0\t0\t0\t0\t0\n", "\t1620\t0\t0\t0\t0\t0\n")
		}, "l.i0/o.ib.dop2.1", `4: t_ins 1620 is below the line before's 8100: iibench.py's totals only grow`},
		{"no command line", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "l.i1/o.ib.dop2.1"))
			write(t, dir, "l.i1/o.ib.dop2.1", string(b[bytes.IndexByte(b, '\n')+1:]))
		}, "l.i1/o.ib.dop2.1", "1: not an iibench.py command line"},
		{"no per-second lines", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "l.i1/o.ib.dop2.1"))
			write(t, dir, "l.i1/o.ib.dop2.1", string(b[:bytes.IndexByte(b, '\n')+1]))
		}, "l.i1/o.ib.dop2.1", " no per-second lines (17 fields, as iibench.py prints them with --secs_per_report=1)"},
		{"the folder's rate is not the client's", func(t *testing.T, dir string) {
			edit(t, dir, "qr100.L1/o.ib.dop2.2", "--inserts_per_second=100", "--inserts_per_second=200")
		}, "qr100.L1/o.ib.dop2.2", "1: --inserts_per_second=200, but the folder qr100.L1 is a step at 100 rows/s"},
		{"point queries in a range step", func(t *testing.T, dir string) {
			edit(t, dir, "qr500.L3/o.ib.dop2.1", "--delete_per_insert", "--delete_per_insert --query_pk_only")
		}, "qr500.L3/o.ib.dop2.1", "1: the client ran point queries (--query_pk_only), but the folder is qr500.L3"},
		{"no rows per commit", func(t *testing.T, dir string) {
			edit(t, dir, "l.i2/o.ib.dop2.2", "--rows_per_commit=5 ", "")
		}, "l.i2/o.ib.dop2.2", "1: no --rows_per_commit on the command line: np.sh always passes it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyIbench(t)
			c.edit(t, dir)
			runs, err := Mytools(ctx, dir, ibSrc)
			want := "import mytools " + filepath.Join(dir, c.file) + ":" + c.want
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("want one error line starting\n\t%s\ngot\n\t%v", want, err)
			} else if strings.HasSuffix(want, "fix or remove the file") && err.Error() != want {
				t.Errorf("want the error\n\t%s\ngot\n\t%v", want, err)
			}
			if runs != nil {
				t.Errorf("an error must come with no runs, got %d", len(runs))
			}
		})
	}
}

// A load step's query block is empty (ios.sh's awk divides by the query
// rate, 0) or whatever it holds: it is not read. A missing block leaves the
// hardware cost unknown.
func TestIbenchUnusedBlock(t *testing.T) {
	dir := copyIbench(t)
	edit(t, dir, "l.i0/o.res.dop2", "wKB/q\tqps\n", "wKB/q\tqps\n4\t0.4\tinf\n")
	edit(t, dir, "l.i1/o.res.dop2", "iostat, vmstat normalized by insert rate", "iostat, vmstat by something else")
	runs, err := Mytools(ctx, dir, ibSrc)
	if err != nil {
		t.Fatal(err)
	}
	if l0 := findTest(t, runs, "l.i0"); l0.HW == nil || l0.HW.CPUPerOp != 0.004632 {
		t.Errorf("l.i0 HW %+v", l0.HW)
	}
	if l1 := findTest(t, runs, "l.i1"); l1.HW != nil || l1.Params["met_file"] != "" {
		t.Errorf("l.i1 without ios.sh's insert block: HW %+v", l1.HW)
	}
}

// FuzzIbenchRes: an o.res.dop<N> file (np.sh's summary and ios.sh's blocks).
func FuzzIbenchRes(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const p = "qr100.L1/o.res.dop2"
		res, err := parseIbRes(p, bytes.NewReader(data))
		if err != nil {
			refused(t, err, p)
			return
		}
		accepted(t, "res", res)
		if res.secs < 1 || res.procs < 1 {
			t.Fatalf("accepted %d processes in %d seconds", res.procs, res.secs)
		}
		for _, section := range []string{"insert", "query"} {
			hw, err := res.hw(section, "query", float64(res.secs))
			if err != nil {
				refused(t, err, p)
				continue
			}
			accepted(t, "hw", hw)
		}
	})
}

// FuzzIbenchClient: a client's o.ib.dop<N>.<n> file (np.sh's command line,
// iibench.py's per-second lines).
func FuzzIbenchClient(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const p = "qr100.L1/o.ib.dop2.1"
		c, err := parseIbClient(p, bytes.NewReader(data))
		if err != nil {
			refused(t, err, p)
			return
		}
		accepted(t, "client", c.secs)
		if len(c.secs) == 0 {
			t.Fatal("accepted a client without per-second lines")
		}
		if rpc, err := c.rpc(); err != nil {
			refused(t, err, p)
		} else if rpc < 1 {
			t.Fatalf("accepted %d rows per commit", rpc)
		}
	})
}
