package importer

import (
	"fmt"
	"strings"

	"github.com/qpslab/qpslab/internal/result"
)

// SysbenchFiles imports sysbench run output, one file per thread count or
// repeat, as test's runs.
func SysbenchFiles(files []string, src Source, test string) ([]result.Run, error) {
	var runs []result.Run
	for _, f := range files {
		r, err := Sysbench(f, src, test)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// ResultsFiles reads the runs of qpslab results files (qpslab run --out);
// files that hold none are an error.
func ResultsFiles(files []string) ([]result.Run, error) {
	var runs []result.Run
	for _, f := range files {
		rf, err := result.Read(f)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rf.Runs...)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s hold no runs", strings.Join(files, ", "))
	}
	return runs, nil
}
