package report

import (
	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// StepSections are, for a suite whose default layout runs in steps (the
// Insert Benchmark), the reference's step tables: throughput (and relative
// to the base), and the background insert rate of the read+write steps
// against their target. None for other suites.
func StepSections(sets []analysis.Set, suiteName string) ([]StepSection, error) {
	s, err := suite.Get(suiteName)
	if err != nil || len(s.Layouts()) == 0 || !s.Layouts()[0].Steps {
		return nil, nil
	}
	var out []StepSection
	for _, x := range []struct {
		metric, title string
		rel, targets  bool
	}{
		{"qps", "Throughput: rows/s for the load steps (indexed rows/s for l.x), queries/s for the read+write steps; * the column's best among steps that met their SLA, ! missed it", true, false},
		{"ips", "Background insert rate (rows/s) in the read+write steps; ! below 95 % of the target", false, true},
	} {
		m, err := result.MetricNamed(x.metric)
		if err != nil {
			return nil, err
		}
		ts, err := analysis.Steps(sets, m, x.targets)
		if err != nil {
			continue // no run has it: nothing to show
		}
		for _, t := range ts {
			out = append(out, StepSection{Title: x.title, Table: t, Relative: x.rel})
		}
	}
	return out, nil
}
