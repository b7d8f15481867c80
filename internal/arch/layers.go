// Package arch keeps qpslab's packages in their layers (docs/architecture.md):
// its tests hold the rules; this file holds what a test elsewhere needs to
// apply them too (a test that registers a suite of its own checks it as the
// registered suites are): the layer table, the suites' layer and what no
// suite may reach. Only tests import it: no package of a binary may (it
// has no layer).
package arch

import (
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"

	"github.com/qpslab/qpslab/internal/suite"
)

const module = "github.com/qpslab/qpslab/"

// layer is each package's rank: a package may import only packages of a
// lower rank. docs/architecture.md draws the same table. The suites are
// not in it: a registered suite's package is of the suites' layer
// (SuiteLayer), wherever it is.
var layer = map[string]int{
	// Foundations: data types and the edges of the system.
	"docs": 1, "internal/version": 1, "internal/home": 1, "internal/result": 1, "internal/changepoint": 1,
	"internal/client": 1, "internal/build": 1, "internal/config": 1, "internal/host": 1,
	"internal/workload/script/lang": 1,
	// The table model every listing and comparison table is built as;
	// replacing a file whole; what builds, configs and sandboxes may be
	// called; reading the files a user gives qpslab; the durations a user
	// types; how a result set is addressed (BUILD.CONFIG:ENGINE), which
	// every layer writes or reads.
	"internal/table": 0, "internal/atomicfile": 0, "internal/names": 0, "internal/input": 0,
	"internal/duration": 0, "internal/label": 0,
	// Running things and keeping them: each knows only foundations.
	"internal/engine": 2, "internal/metrics": 2, "internal/counters": 2, "internal/stacks": 2, "internal/sandbox": 2, "internal/store": 2, "internal/history": 2,
	"internal/fleet": 2,
	// What a suite is.
	"internal/suite": 3, "internal/testenv": 3, "internal/settle": 3, "internal/owned": 3, "internal/curate": 3,
	// Servers qpslab did not start (the suites are of this layer too).
	"internal/target": 4,
	// Orchestrating runs, importing others' results, keeping results,
	// concluding from them.
	"internal/workload": 5, "internal/plan": 5, "internal/importer": 5, "internal/recorder": 5, "internal/analysis": 5,
	// Presenting; selecting the runs a question is about, for every surface.
	"internal/report": 6, "internal/selector": 6,
	// The application layer, one concept a package. Serving what is
	// presented: the dashboard, its API and alerts; a version sweep.
	"internal/serve": 7, "internal/study": 7,
	// qpslab bisect: the walk and all its orchestration (the commands, a
	// step's plan, the fleet job's run), its plans run by the runner app
	// gives it (app.Env.ForBisect).
	"internal/bisect": 8,
	// Running plans for the commands (qpslab run, the fleet, the demo).
	"internal/app": 9,
	// Wiring.
	"cmd/qpslab": 10, "bench/changepoint": 10, "bench/servegen": 10,
}

// SuiteLayer is the rank of every registered suite's package: above what
// a suite is (internal/suite) and what it shares (owned, settle), below
// internal/workload, which imports each suite once.
const SuiteLayer = 4

// suiteForbidden is what no suite may reach, directly or through what it
// imports: the plan starts the servers (sandbox) and measures the host
// (metrics), the recorder keeps the runs (store); a suite declares its
// steps and runs its own tasks.
var suiteForbidden = []string{"internal/sandbox", "internal/store", "internal/plan", "internal/metrics"}

// Layer is the rank of pkg (a path in the module, internal/engine): the
// table's, or SuiteLayer for the package of a registered suite (suite.All);
// false for a package of neither.
func Layer(pkg string) (int, bool) {
	if l, ok := layer[pkg]; ok {
		return l, true
	}
	for _, s := range suite.All() {
		if p, ok := packageOf(s); ok && p == pkg {
			return SuiteLayer, true
		}
	}
	return 0, false
}

// packageOf is the package that declares s's type, as a path in the
// module; false for one outside it (a test's main package is "main").
func packageOf(s suite.Suite) (string, bool) {
	typ := reflect.TypeOf(s)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return strings.CutPrefix(typ.PkgPath(), module)
}

// CheckSuite says what is wrong with where suite s is and what it
// reaches (nothing: nil), under the module's root. A suite's code is the
// package that declares it, which is a package under internal/workload
// (internal/workload imports it) of the suites' layer: it imports only
// packages of lower layers, and reaches none of suiteForbidden through
// them. A suite a test declares (a toy, in no binary) is checked by the
// test file that declares it, which stands for its package.
func CheckSuite(root string, s suite.Suite) []string {
	c, err := codeOf(root, s)
	if err != nil {
		return []string{fmt.Sprintf("suite %s: %v", s.Name(), err)}
	}
	where := c.pkg
	var imports []string
	if c.file != "" {
		where = c.file
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, filepath.FromSlash(c.file)), nil, parser.ImportsOnly)
		if err != nil {
			return []string{fmt.Sprintf("suite %s: %v", s.Name(), err)}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			imports = append(imports, p)
		}
	} else {
		if !strings.HasPrefix(c.pkg, "internal/workload/") {
			return []string{fmt.Sprintf("suite %s is registered from %s: a suite is a package under internal/workload, imported once by internal/workload", s.Name(), c.pkg)}
		}
		bp, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(c.pkg)), 0)
		if err != nil {
			return []string{fmt.Sprintf("suite %s: %v", s.Name(), err)}
		}
		imports = bp.Imports
	}
	var problems []string
	for _, imp := range imports {
		dep, ok := strings.CutPrefix(imp, module)
		if !ok {
			continue
		}
		switch l, known := Layer(dep); {
		case !known:
			problems = append(problems, fmt.Sprintf("suite %s (%s) imports %s, which has no layer", s.Name(), where, dep))
		case l >= SuiteLayer:
			problems = append(problems, fmt.Sprintf("suite %s (%s, layer %d) imports %s (layer %d): a suite imports only what is below it", s.Name(), where, SuiteLayer, dep, l))
		}
		deps, err := moduleDeps(root, dep)
		if err != nil {
			problems = append(problems, fmt.Sprintf("suite %s: %v", s.Name(), err))
			continue
		}
		deps[dep] = where
		for d, via := range deps {
			for _, f := range suiteForbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					problems = append(problems, fmt.Sprintf("suite %s (%s) imports %s (through %s): a suite never starts servers or stores anything; the plan and the recorder do", s.Name(), where, d, via))
				}
			}
		}
	}
	return problems
}

// code is where a suite's code is: its package (a path in the module), and
// the test file that declares it ("" for a package's own code).
type code struct{ pkg, file string }

// codeOf finds where s is declared under root: the file that declares its
// Name method, in its package's folder.
func codeOf(root string, s suite.Suite) (code, error) {
	typ := reflect.TypeOf(s)
	file := ""
	for _, t := range []reflect.Type{typ, reflect.PointerTo(typ)} {
		if m, ok := t.MethodByName("Name"); ok {
			pc := m.Func.Pointer()
			if f, _ := runtime.FuncForPC(pc).FileLine(pc); strings.HasSuffix(f, ".go") {
				file = f // not a wrapper the compiler made ("<autogenerated>")
				break
			}
		}
	}
	rel, inModule := strings.CutPrefix(filepath.ToSlash(file), module) // built with -trimpath
	if !inModule {
		r, err := filepath.Rel(root, file)
		if err != nil || file == "" || strings.HasPrefix(r, "..") {
			return code{}, fmt.Errorf("registered from %s (%s), outside the module", reflect.TypeOf(s), file)
		}
		rel = filepath.ToSlash(r)
	}
	c := code{pkg: filepath.ToSlash(filepath.Dir(rel))}
	if strings.HasSuffix(rel, "_test.go") {
		c.file = rel
	}
	return c, nil
}

// moduleDeps are the module's packages pkg imports, directly or not, each
// with the package that imports it (the path a message can name).
func moduleDeps(root, pkg string) (map[string]string, error) {
	deps := map[string]string{}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		bp, err := build.ImportDir(filepath.Join(root, p), 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		for _, imp := range bp.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok || deps[dep] != "" || dep == pkg {
				continue
			}
			deps[dep] = p
			queue = append(queue, dep)
		}
	}
	return deps, nil
}
