package history

import (
	"slices"
	"testing"
)

// OfMetrics keeps the series of the metrics asked for, each once and in the
// series' order; Metrics names each metric held once.
func TestOfMetrics(t *testing.T) {
	series := []Series{{Test: "a", Metric: "qps"}, {Test: "a", Metric: "p99"}, {Test: "b", Metric: "qps"}, {Test: "b", Metric: "tput"}}
	var got []string
	for _, s := range OfMetrics(series, []string{"qps", "tput", "qps"}) {
		got = append(got, s.Test+"/"+s.Metric)
	}
	if want := []string{"a/qps", "b/qps", "b/tput"}; !slices.Equal(got, want) {
		t.Errorf("OfMetrics = %v, want %v", got, want)
	}
	if keep := OfMetrics(series, []string{"cpu/o"}); len(keep) != 0 {
		t.Errorf("OfMetrics(cpu/o) = %v, want none", keep)
	}
	if got, want := Metrics(series), []string{"qps", "p99", "tput"}; !slices.Equal(got, want) {
		t.Errorf("Metrics = %v, want %v", got, want)
	}
}
