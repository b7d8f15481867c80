package dbbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// FuzzParse feeds the output parser arbitrary text (seeded with every
// recorded and written output): it never panics, and the totals of any
// result line it finds are either refused or a run result.Run.Check takes.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "db_bench-*.txt"))
	for _, p := range files {
		if strings.HasSuffix(p, "-help.txt") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("readrandom : 1e999 micros/op 5 ops/sec;\nMicroseconds per read:\nCount: 3 Average: -1  StdDev: 0\nMin: -2  Median: 1  Max: 3\n[ 0, 1 ] 3 1% 1%\n")
	f.Fuzz(func(t *testing.T, text string) {
		o, err := Parse(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, b := range o.Benchmarks {
			tot, err := totals(o, b.Name, nil)
			if err != nil {
				continue
			}
			if err := (result.Run{Test: b.Name, Totals: tot}).Check(); err != nil {
				t.Fatalf("totals of %q pass, but: %v", b.Name, err)
			}
		}
		for _, h := range o.Hists {
			h.Percentile(95)
		}
	})
}
