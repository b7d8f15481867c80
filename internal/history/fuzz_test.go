package history

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fuzz targets feed the history readers arbitrary bytes (seeds in
// testdata/fuzz/FuzzXxx) and hold them to what they promise: no panic; an
// error is one line naming the file; what is accepted is series of finite
// values, in time order for Nyrkiö JSON (Otava CSV keeps the file's order,
// as Otava does). Values may be negative here: a history's metric
// can be a difference or a score. `make fuzz` runs them.

func fuzzRead(f *testing.F, name string, timeOrdered bool, read func(path string) ([]Series, error)) {
	p := filepath.Join(f.TempDir(), name) // one file, rewritten: each worker calls in turn
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		series, err := read(p)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, p) {
				t.Fatalf("the error is not one line naming %s: %q", p, msg)
			}
			return
		}
		if len(series) == 0 {
			t.Fatal("no series and no error")
		}
		for _, s := range series {
			if len(s.Points) == 0 {
				t.Fatalf("series %s has no points", s.Metric)
			}
			for i, pt := range s.Points {
				if math.IsNaN(pt.Value) || math.IsInf(pt.Value, 0) {
					t.Fatalf("series %s point %d: accepted %v", s.Metric, i, pt.Value)
				}
				if timeOrdered && i > 0 && pt.Time.Before(s.Points[i-1].Time) {
					t.Fatalf("series %s: point %d at %v comes before point %d at %v", s.Metric, i, pt.Time, i-1, s.Points[i-1].Time)
				}
			}
		}
	})
}

// FuzzReadOtavaCSV: an Otava CSV test file.
func FuzzReadOtavaCSV(f *testing.F) {
	fuzzRead(f, "fuzz.csv", false, func(p string) ([]Series, error) { return ReadOtavaCSV(p, "time", nil) })
}

// FuzzReadNyrkioJSON: a Nyrkiö upload array.
func FuzzReadNyrkioJSON(f *testing.F) {
	fuzzRead(f, "fuzz.json", true, func(p string) ([]Series, error) { return ReadNyrkioJSON(p, nil) })
}
