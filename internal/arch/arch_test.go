// Package arch holds the test that keeps qpslab's packages in their layers
// (docs/architecture.md): data flows plan → sandbox → engine → samples →
// store → analysis → report, and no package imports one above it.
package arch

import (
	"go/build"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/qpslab/qpslab/"

// layer is each package's rank: a package may import only packages of a
// lower rank. docs/architecture.md draws the same table.
var layer = map[string]int{
	// Foundations: data types and the edges of the system.
	"internal/version": 0, "internal/home": 0, "internal/result": 0, "internal/changepoint": 0,
	"internal/client": 0, "internal/build": 0, "internal/config": 0, "internal/host": 0,
	// Running things and keeping them: each knows only foundations.
	"internal/engine": 1, "internal/metrics": 1, "internal/counters": 1, "internal/stacks": 1, "internal/sandbox": 1, "internal/store": 1, "internal/history": 1,
	"internal/fleet": 1,
	// What a suite is.
	"internal/suite": 2, "internal/testenv": 2, "internal/settle": 2, "internal/owned": 2,
	// The suites.
	"internal/workload/sysbench": 3, "internal/workload/ibench": 3, "internal/workload/dbbench": 3,
	// Orchestrating runs, importing others' results, keeping results,
	// concluding from them.
	"internal/workload": 4, "internal/plan": 4, "internal/importer": 4, "internal/recorder": 4, "internal/analysis": 4,
	// Presenting.
	"internal/report": 5,
	// Serving what is presented: the dashboard, its API and alerts; and
	// running plans for the commands (qpslab run, the fleet, the demo).
	"internal/serve": 6, "internal/jobs": 6,
	// Wiring.
	"cmd/qpslab": 7, "bench/changepoint": 7,
}

// forbidden are imports the ranks alone would allow but the flow does not:
// analysis concludes from results it is given (it reads no store, runs
// nothing, knows no suite), the store keeps results without knowing who
// made them, and a suite never starts servers or stores anything.
var forbidden = map[string][]string{
	"internal/analysis":          {"internal/store", "internal/plan", "internal/engine", "internal/sandbox", "internal/suite", "internal/workload"},
	"internal/store":             {"internal/engine", "internal/sandbox", "internal/metrics"},
	"internal/history":           {"internal/store"},
	"internal/engine":            {"internal/client"},
	"internal/workload/sysbench": {"internal/sandbox", "internal/store", "internal/plan", "internal/metrics"},
	"internal/workload/ibench":   {"internal/sandbox", "internal/store", "internal/plan", "internal/metrics"},
	"internal/workload/dbbench":  {"internal/sandbox", "internal/store", "internal/plan", "internal/metrics"},
	"internal/suite":             {"internal/sandbox", "internal/store"},
	"internal/recorder":          {"internal/plan"},
	"internal/plan":              {"internal/store", "internal/workload", "internal/analysis", "internal/report"},
}

func TestImportsFollowTheFlow(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here, or only tests
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == "internal/arch" {
			return nil
		}
		seen[rel] = true
		rank, ok := layer[rel]
		if !ok {
			t.Errorf("package %s has no layer: add it to the table here and to docs/architecture.md", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			drank, known := layer[dep]
			switch {
			case !known:
				t.Errorf("%s imports %s, which has no layer", rel, dep)
			case drank >= rank:
				t.Errorf("%s (layer %d) imports %s (layer %d): against the flow; move the code down a layer or invert the dependency", rel, rank, dep, drank)
			}
			for _, f := range forbidden[rel] {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s imports %s: docs/architecture.md says why it must not", rel, dep)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for p := range layer {
		if !seen[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the layer table names packages that are gone: %v", missing)
	}
}

// The rule catches what it should: a package importing one above it.
func TestTheRuleCanFail(t *testing.T) {
	if layer["internal/store"] >= layer["internal/analysis"] || layer["internal/analysis"] >= layer["internal/report"] {
		t.Error("store, analysis and report are not in flow order")
	}
	if layer["internal/engine"] >= layer["internal/plan"] || layer["internal/sandbox"] >= layer["internal/plan"] {
		t.Error("the plan must sit above the sandbox and the engine it drives")
	}
}
