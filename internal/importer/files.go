package importer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/qpslab/qpslab/internal/input"
	"github.com/qpslab/qpslab/internal/result"
)

// SysbenchFiles imports sysbench run output, one file per thread count or
// repeat, as test's runs (the output does not name its test).
func SysbenchFiles(ctx context.Context, files []string, src Source, test string) ([]result.Run, error) {
	if test == "" {
		return nil, fmt.Errorf("name the test the output is of with --test (e.g. point-query_range=100; see qpslab run sysbench --list-tests)")
	}
	var runs []result.Run
	for _, f := range files {
		r, err := Sysbench(ctx, f, src, test)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// ResultsFiles reads the runs of qpslab results files (qpslab run --out),
// each file's validated (Validate; its problems named by the file); files
// that hold none are an error. Each is a regular file within
// resultsLimits, read until ctx ends.
func ResultsFiles(ctx context.Context, files []string) ([]result.Run, error) {
	var runs []result.Run
	all := &Problems{}
	for _, f := range files {
		b, err := input.ReadFile(ctx, f, resultsLimits)
		if err != nil {
			return nil, fmt.Errorf("import results: %w", err)
		}
		rf, err := result.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("results %s: %w: fix or remove the file", f, err)
		}
		var p *Problems
		if errors.As(Validate(rf.Runs), &p) {
			for _, l := range p.Lines {
				all.add("%s: %s", f, l)
			}
			all.More += p.More
		}
		runs = append(runs, rf.Runs...)
	}
	if all.Count() > 0 {
		return nil, all
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s hold no runs", strings.Join(files, ", "))
	}
	return runs, nil
}
