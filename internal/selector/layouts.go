package selector

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// userLayout is the user's layout a comparison's --groups names by its
// file's path (nil when it names a layout of the runs, or nothing): read,
// and checked against the tests of the runs' suite and the runs.
func (s Selection) userLayout(sets []analysis.Set, arg string) (*result.Layout, error) {
	if !s.LayoutFiles || arg == "" {
		return nil, nil
	}
	suiteName := ""
	tests := []string{}
	named := false
	for _, set := range sets {
		for _, r := range set.Runs {
			suiteName = r.Suite
			if !slices.Contains(tests, r.Test) {
				tests = append(tests, r.Test)
			}
			for _, p := range result.Placements(r) {
				named = named || p.Layout == arg
			}
		}
	}
	if named {
		return nil, nil
	}
	if _, err := os.Stat(arg); errors.Is(err, fs.ErrNotExist) {
		if names := result.LayoutNames(suiteName); len(names) > 0 {
			return nil, bad("--groups %s: neither one of %s's layouts nor a file: name a layout (%s) or give a YAML layout file's path (docs/results.md)", arg, suiteName, strings.Join(names, ", "))
		}
		return nil, bad("--groups %s: no such file: give a YAML layout file's path (docs/results.md)", arg)
	}
	l, err := result.ReadLayout(arg)
	if err != nil {
		return nil, bad("--groups %s: the layout file %v", arg, err)
	}
	if slices.Contains(result.LayoutNames(suiteName), l.Name) {
		return nil, bad("--groups %s: the file's layout is named %s, as one of %s's shipped layouts: give it a name of its own", arg, l.Name, suiteName)
	}
	if st, err := suite.Get(suiteName); err == nil {
		for _, t := range st.Tests() {
			if !slices.Contains(tests, t.Name) {
				tests = append(tests, t.Name)
			}
		}
	}
	if err := l.CheckTests(tests); err != nil {
		return nil, bad("--groups %s: %v", arg, err)
	}
	return &l, nil
}
