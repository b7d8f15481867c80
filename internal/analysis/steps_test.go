package analysis

import (
	"math"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/qpslab/qpslab/internal/result"
)

func stepRun(test string, step int, reported, ips float64, rate string, ok bool) result.Run {
	r := result.Run{Suite: "ibench", Test: test, Step: step, Threads: 2, Status: result.OK,
		Params: map[string]string{"rows": "1000"},
		Totals: result.Totals{Reported: reported, ReportedUnit: "rows/s", Seconds: 10, Figures: map[string]float64{"ips": ips}}}
	if rate != "" {
		r.Params["insert_rate"] = rate
		r.Verdicts = []result.Verdict{{Name: "insert SLA", OK: ok}}
	}
	return r
}

// The step table: steps in their suite's order, labels as rows, medians
// over repeats, the column best only among labels that met their goal,
// and targets for the steps judged against one.
func TestSteps(t *testing.T) {
	a := Set{Label: "a", Runs: []result.Run{
		stepRun("qr100", 4, 900, 200, "100", true), stepRun("l.i0", 0, 1000, 1000, "", false),
		stepRun("l.i0", 0, 3000, 3000, "", false), stepRun("l.i0", 0, 2000, 2000, "", false),
	}}
	b := Set{Label: "b", Runs: []result.Run{
		stepRun("l.i0", 0, 1500, 1500, "", false), stepRun("qr100", 4, 2000, 150, "100", false),
	}}
	qps, _ := result.MetricNamed("qps")
	ts, err := Steps([]Set{a, b}, qps, false)
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v, %d tables", err, len(ts))
	}
	st := ts[0]
	if len(st.Steps) != 2 || st.Steps[0] != "l.i0" || st.Steps[1] != "qr100" {
		t.Fatalf("steps %v", st.Steps)
	}
	if st.Values[0][0] != 2000 || st.Values[1][1] != 2000 {
		t.Errorf("values %v", st.Values)
	}
	// b's qr100 is higher but missed its SLA: a keeps the column's best.
	if !st.Missed[1][1] || st.Missed[0][1] || st.Best[1] != 0 || st.Best[0] != 0 {
		t.Errorf("missed %v best %v", st.Missed, st.Best)
	}
	if st.Targets[1] != 200 || !math.IsNaN(st.Targets[0]) {
		t.Errorf("targets %v, want - and 2 clients × 100", st.Targets)
	}
	ips, _ := result.MetricNamed("ips")
	ts, err = Steps([]Set{a, b}, ips, true)
	if err != nil || len(ts) != 1 || len(ts[0].Steps) != 1 || ts[0].Steps[0] != "qr100" {
		t.Fatalf("targeted: %v %+v", err, ts)
	}
}

// Response-time buckets from per-kind HDR histograms, summed over
// repeats: the share of operations at or under each bound, and the max.
func TestBuckets(t *testing.T) {
	hist := func(us ...int64) []byte {
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		for _, v := range us {
			h.RecordValue(v)
		}
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	run := func(us ...int64) result.Run {
		r := stepRun("l.i1", 2, 1, 1, "", false)
		r.Totals.Ops = []result.OpTotals{{OpSample: result.OpSample{Kind: "insert", Count: int64(len(us)), ResponseHist: hist(us...)}}}
		return r
	}
	bt, err := Buckets([]Set{{Label: "a", Runs: []result.Run{run(100, 200, 900), run(3000, 20_000_000)}}})
	if err != nil || len(bt) != 1 {
		t.Fatalf("%v %+v", err, bt)
	}
	row := bt[0].Rows[0]
	if row.Count != 5 || row.Shares[0] != 40 || row.Shares[1] != 20 || row.Shares[2] != 20 || row.Shares[9] != 20 {
		t.Errorf("row %+v", row)
	}
	if row.MaxSec < 19.9 || row.MaxSec > 20.1 {
		t.Errorf("max %v s, want 20", row.MaxSec)
	}
}
