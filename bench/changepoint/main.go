// Command changepoint runs qpslab's change point detector
// (internal/changepoint) on series read from a JSON file and prints the
// change points and the time the detection took, for bench/changepoint.sh
// and bench/changepoint-calibrate.sh, which run Apache Otava on the same
// file (bench/changepoint_otava.py) and compare.
//
//	changepoint [flags] FILE
//
// FILE holds {"series": [[v, …], …]}; null values are missing. The output
// is one JSON object: {"mode", "change_points": [[i, …], …], "intervals":
// [[[lo, hi], …], …], "seconds": [per series], "total_seconds"}. Times cover the detection only (parsing
// and process start are not included). -mode append times
// Analysis.Append of each series' last point after Extend of the others.
//
//	changepoint -mode sweeps [-sweeps K] [-flat F]
//	changepoint -mode flat [-flat F] [-seed S]
//	changepoint -mode bound [-flat F] [-sweeps K]
//
// calibrates DetectSweep on generated sweeps of builds instead (no FILE;
// sweeps.go, bound.go) and prints markdown tables.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/qpslab/qpslab/internal/changepoint"
)

type input struct {
	Series [][]*float64 `json:"series"`
}

type output struct {
	Mode         string     `json:"mode"`
	ChangePoints [][]int    `json:"change_points"`
	Intervals    [][][2]int `json:"intervals"`
	Seconds      []float64  `json:"seconds"`
	TotalSeconds float64    `json:"total_seconds"`
}

func main() {
	var o changepoint.Options
	flag.IntVar(&o.Window, "window", 0, "window (0: default 50)")
	flag.Float64Var(&o.PValue, "pvalue", 0, "p-value (0: default 0.001)")
	flag.Float64Var(&o.MinMagnitude, "min-magnitude", 0, "minimum relative magnitude")
	flag.IntVar(&o.MinSegment, "min-segment", 0, "minimum segment (0: default 3)")
	method := flag.String("method", "", "detect and append: calibrated (the default) or otava (Otava's t-test with qpslab's minimum segment)")
	mode := flag.String("mode", "detect", "detect (qpslab's rules), otava (DetectOtava: Otava 0.8's rules), append (time Append of the last point), sweeps (calibrate DetectSweep on generated sweeps), flat (false alarms of DetectSweep on -flat flat sweeps per cell, seeded by -seed) or bound (what any test of a dip can find on 12 builds of one run: the likelihood ratio's exact thresholds from -flat × 1,000 flat sweeps, its power and DetectSweep's on -sweeps × 10 dips; then the issue's −10 % step at ±10 % noise and its own sweeps, -sweeps draws each)")
	sweeps := flag.Int("sweeps", 200, "sweeps: sweeps per size and cell")
	flat := flag.Int("flat", 2000, "sweeps and flat: flat sweeps per cell of the false-alarm table")
	seed := flag.Uint64("seed", 2, "flat: the generator's seed (another than the sweeps mode's own)")
	lower := flag.Bool("lower-is-better", false, "the metric is lower-is-better")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: changepoint [flags] FILE, or changepoint -mode sweeps [-sweeps K] [-flat F]")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.Method = changepoint.Method(*method)
	if *mode == "sweeps" {
		if flag.NArg() != 0 || *sweeps < 10 || *flat < 1 {
			flag.Usage()
			os.Exit(2)
		}
		runSweeps(*sweeps, *flat)
		return
	}
	if *mode == "bound" {
		if flag.NArg() != 0 || *flat < 1 || *sweeps < 10 {
			flag.Usage()
			os.Exit(2)
		}
		runBound(*flat*1000, *sweeps*10)
		runNoiseStep(*sweeps)
		runIssueCases(*sweeps)
		return
	}
	if *mode == "flat" {
		if flag.NArg() != 0 || *flat < 1 {
			flag.Usage()
			os.Exit(2)
		}
		runFlat(*flat, *seed, o)
		return
	}
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), o, *mode, *lower); err != nil {
		fmt.Fprintln(os.Stderr, "changepoint:", err)
		os.Exit(1)
	}
}

func run(path string, o changepoint.Options, mode string, lower bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var in input
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dir := changepoint.HigherIsBetter
	if lower {
		dir = changepoint.LowerIsBetter
	}
	out := output{Mode: mode, ChangePoints: [][]int{}, Intervals: [][][2]int{}, Seconds: []float64{}}
	for _, s := range in.Series {
		v := make([]float64, len(s))
		for i, x := range s {
			if x == nil {
				v[i] = math.NaN()
			} else {
				v[i] = *x
			}
		}
		var cps []changepoint.ChangePoint
		var d time.Duration
		switch mode {
		case "detect":
			t0 := time.Now()
			cps, err = changepoint.Detect(v, o, dir)
			d = time.Since(t0)
		case "otava":
			t0 := time.Now()
			cps, err = changepoint.DetectOtava(v, o, dir)
			d = time.Since(t0)
		case "append":
			if len(v) == 0 {
				return fmt.Errorf("append: empty series")
			}
			var a *changepoint.Analysis
			if a, err = changepoint.NewAnalysis(o, dir); err == nil {
				if _, err = a.Extend(v[:len(v)-1]...); err == nil {
					t0 := time.Now()
					cps, err = a.Append(v[len(v)-1])
					d = time.Since(t0)
				}
			}
		default:
			return fmt.Errorf("mode %q is not detect, otava or append", mode)
		}
		if err != nil {
			return err
		}
		idx, iv := []int{}, [][2]int{}
		for _, c := range cps {
			idx = append(idx, c.Index)
			iv = append(iv, [2]int{c.Lo, c.Hi})
		}
		out.ChangePoints = append(out.ChangePoints, idx)
		out.Intervals = append(out.Intervals, iv)
		out.Seconds = append(out.Seconds, d.Seconds())
		out.TotalSeconds += d.Seconds()
	}
	enc := json.NewEncoder(os.Stdout)
	return enc.Encode(out)
}
