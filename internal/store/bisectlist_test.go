package store

import (
	"testing"

	"github.com/qpslab/qpslab/internal/result"
)

// A step's rel and interval are turned for a metric where lower is
// better, as the walk's notes say them (above 1: better); qps's are not.
func TestStepCellsTurned(t *testing.T) {
	result.Register(result.Metric{Name: "bisect_test_ms", Class: result.ClassFigure})
	b := Bisection{Good: "g", Metric: "bisect_test_ms"}
	s := BisectStep{Commit: "c", Base: "g", Rel: 1.25, Lo: 1.2, Hi: 1.25 * 1.25}
	if _, rel, iv := BisectStepCells(b, s); rel != "0.800" || iv != "[0.640, 0.833]" {
		t.Errorf("lower is better: %s %s", rel, iv)
	}
	b.Metric = HeadlineMetric
	if _, rel, iv := BisectStepCells(b, s); rel != "1.250" || iv != "[1.200, 1.562]" {
		t.Errorf("qps: %s %s", rel, iv)
	}
}
