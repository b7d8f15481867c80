package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// BucketBounds are the upper bounds (µs) of the reference's response-time
// buckets (iibench.py's histograms, rth.sh's tables): ≤256 µs, 1 ms, 4 ms,
// 16 ms, 64 ms, 256 ms, 1 s, 4 s, 16 s; a last bucket holds the rest.
var BucketBounds = []int64{256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000}

// BucketNames head the bucket columns.
var BucketNames = []string{"256us", "1ms", "4ms", "16ms", "64ms", "256ms", "1s", "4s", "16s", "gt"}

// BucketRow is one label's response times of one operation kind at one
// step: the percentage of operations in each bucket (summed over repeats)
// and the largest response time in seconds.
type BucketRow struct {
	Label  string    `json:"label"`
	Count  int64     `json:"count"`
	Shares []float64 `json:"shares"` // per BucketNames, %
	MaxSec float64   `json:"max_sec"`
}

// BucketTable is one step, thread count and operation kind.
type BucketTable struct {
	Test       string      `json:"test"`
	Threads    int         `json:"threads"`
	Conditions string      `json:"conditions"`
	Kind       string      `json:"kind"`
	Rows       []BucketRow `json:"rows"`
}

// Buckets builds the reference's response-time tables from the runs'
// per-kind HDR histograms (response time, from the intended start where
// paced), for each step, thread count and kind, in the suites' order. Runs
// without per-kind histograms (sysbench tests, imports) have none.
func Buckets(sets []Set) ([]BucketTable, error) {
	type bk struct {
		test    string
		threads int
		cond    string
		kind    string
	}
	hists := make([]map[bk]*hdrhistogram.Histogram, len(sets))
	step := map[bk]int{}
	var keys []bk
	for i, s := range sets {
		hists[i] = map[bk]*hdrhistogram.Histogram{}
		for _, r := range s.Runs {
			if !r.Comparable() {
				continue
			}
			for _, o := range r.Totals.Ops {
				if len(o.ResponseHist) == 0 {
					continue
				}
				h, err := hdrhistogram.Decode(o.ResponseHist)
				if err != nil {
					return nil, fmt.Errorf("%s %s: the %s histogram: %w", s.Label, r.Test, o.Kind, err)
				}
				k := bk{r.Test, r.Threads, r.LabelConditions(), o.Kind}
				if hists[i][k] == nil {
					hists[i][k] = h
					if _, seen := step[k]; !seen {
						keys = append(keys, k)
						step[k] = r.Step
					}
					continue
				}
				hists[i][k].Merge(h)
			}
		}
	}
	sort.SliceStable(keys, func(a, b int) bool {
		ka, kb := keys[a], keys[b]
		if step[ka] != step[kb] {
			return step[ka] < step[kb]
		}
		if ka.threads != kb.threads {
			return ka.threads < kb.threads
		}
		if ka.cond != kb.cond {
			return ka.cond < kb.cond
		}
		return ka.kind < kb.kind
	})
	var out []BucketTable
	for _, k := range keys {
		t := BucketTable{Test: k.test, Threads: k.threads, Conditions: k.cond, Kind: k.kind}
		for i, s := range sets {
			h := hists[i][k]
			row := BucketRow{Label: s.Label, Shares: make([]float64, len(BucketNames)), MaxSec: math.NaN()}
			if h != nil && h.TotalCount() > 0 {
				row.Count = h.TotalCount()
				counts := make([]int64, len(BucketNames))
				for _, bar := range h.Distribution() {
					if bar.Count == 0 {
						continue
					}
					b := sort.Search(len(BucketBounds), func(j int) bool { return bar.To <= BucketBounds[j] })
					counts[b] += bar.Count
				}
				for j, c := range counts {
					row.Shares[j] = 100 * float64(c) / float64(row.Count)
				}
				row.MaxSec = float64(h.Max()) / 1e6
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}
	return out, nil
}
