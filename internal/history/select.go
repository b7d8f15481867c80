package history

import "slices"

// OfMetrics keeps the series whose metric is one of metrics, in their order.
func OfMetrics(series []Series, metrics []string) []Series {
	var keep []Series
	for _, s := range series {
		if slices.Contains(metrics, s.Metric) {
			keep = append(keep, s)
		}
	}
	return keep
}

// Metrics are the metrics series hold, each once, in order of first
// appearance.
func Metrics(series []Series) []string {
	var ms []string
	for _, s := range series {
		if !slices.Contains(ms, s.Metric) {
			ms = append(ms, s.Metric)
		}
	}
	return ms
}
