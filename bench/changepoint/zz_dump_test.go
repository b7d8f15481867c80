package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/qpslab/qpslab/internal/changepoint"
)

func TestZZDump(t *testing.T) {
	k, _ := strconv.Atoi(os.Getenv("FLATK"))
	seed, _ := strconv.ParseUint(os.Getenv("FLATSEED"), 10, 64)
	r := rand.New(rand.NewPCG(seed, 2))
	fa := 0
	for _, builds := range []int{6, 8, 12, 18, 24, 30} {
		for _, runs := range []int{1, 2, 3} {
			for _, cv := range []float64{0.03, 0.05} {
				c := sweepCase{n: builds, runs: runs, cv: cv}
				for range k {
					d := c.draw(r, stepAt(builds, builds, 0))
					res, _ := changepoint.DetectSweep(d, changepoint.Options{}, changepoint.HigherIsBetter)
					if len(res.ChangePoints) > 0 {
						fa++
						fmt.Printf("FA builds=%d runs=%d cv=%g pooled=%v outliers=%v unconf=%d\n", builds, runs, cv, res.Pooled, res.Outliers, len(res.Unconfirmed))
						for _, cp := range res.ChangePoints {
							fmt.Printf("   cp idx=%d p=%.3g before=%.1f after=%.1f\n", cp.Index, cp.PValue, cp.MeanBefore, cp.MeanAfter)
						}
						fmt.Printf("   data=")
						for _, b := range d {
							fmt.Printf(" [")
							for _, v := range b {
								fmt.Printf("%.0f ", v)
							}
							fmt.Printf("]")
						}
						fmt.Println()
					}
				}
			}
		}
	}
	fmt.Println("total", fa)
}
