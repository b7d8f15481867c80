package history

import (
	"slices"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// A build's point carries its runs' values, ascending, for comparing
// builds by their repeats; a run's point carries none.
func TestPointValues(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	qps, _ := result.MetricNamed("qps")
	s := FromRuns([]result.Run{
		run("ma1011", "10.11.7", "t", 1, 94, t0), run("ma1011", "10.11.7", "t", 1, 70, t0.Add(time.Hour)), run("ma1011", "10.11.7", "t", 1, 90, t0.Add(2*time.Hour)),
		run("ma1002", "10.2.44", "t", 1, 100, t0),
		run("ma1104", "11.4.1", "u", 1, 80, t0), run("ma1104", "11.4.1", "u", 1, 81, t0.Add(time.Hour)),
	}, qps, func(result.Run) string { return "" })
	if len(s) != 2 || s[0].Order != "version" || !slices.Equal(s[0].Points[0].Values, []float64{100}) || !slices.Equal(s[0].Points[1].Values, []float64{70, 90, 94}) || s[0].Points[1].Value != 90 {
		t.Errorf("builds: %+v", s)
	}
	if s[1].Order != "time" || s[1].Points[0].Values != nil {
		t.Errorf("runs: %+v", s[1])
	}
}
