package report

import (
	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// StepSections are, for a suite whose default layout runs in steps (the
// Insert Benchmark), the reference's step tables the suite names
// (suite.StepTabler): throughput (and relative to the base), and the
// background insert rate of the read+write steps against their target.
// None for other suites.
func StepSections(sets []analysis.Set, suiteName string) ([]StepSection, error) {
	s, err := suite.Get(suiteName)
	if err != nil || len(s.Layouts()) == 0 || !s.Layouts()[0].Steps {
		return nil, nil
	}
	st, ok := s.(suite.StepTabler)
	if !ok {
		return nil, nil
	}
	var out []StepSection
	for _, x := range st.StepTables() {
		m, err := result.MetricNamed(x.Metric)
		if err != nil {
			return nil, err
		}
		ts, err := analysis.Steps(sets, m, x.Targets)
		if err != nil {
			continue // no run has it: nothing to show
		}
		for _, t := range ts {
			out = append(out, StepSection{Title: x.Title, Table: t, Relative: x.Relative})
		}
	}
	return out, nil
}
