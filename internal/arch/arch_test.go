// Package arch holds the test that keeps qpslab's packages in their layers
// (docs/architecture.md): data flows plan → sandbox → engine → samples →
// store → analysis → report, and no package imports one above it.
package arch

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
	_ "github.com/qpslab/qpslab/internal/workload" // every figure's owner and every suite registers itself
)

// forbidden are imports the ranks alone would allow but the flow does not:
// analysis concludes from results it is given (it reads no store, runs
// nothing, knows no suite), the store keeps results without knowing who
// made them. That a suite never starts servers or stores anything is
// checked for every registered suite (TestSuitesStartNothing), not by name.
var forbidden = map[string][]string{
	"internal/analysis": {"internal/store", "internal/plan", "internal/engine", "internal/sandbox", "internal/suite", "internal/workload"},
	"internal/store":    {"internal/engine", "internal/sandbox", "internal/metrics"},
	"internal/history":  {"internal/store"},
	"internal/engine":   {"internal/client"},
	"internal/suite":    {"internal/sandbox", "internal/store"},
	"internal/recorder": {"internal/plan"},
	"internal/plan":     {"internal/store", "internal/workload", "internal/analysis", "internal/report"},
}

// Every registered suite (suite.All, filled by internal/workload's
// imports), wherever its package is, is a package under internal/workload
// of the suites' layer that reaches none of suiteForbidden (CheckSuite): a
// new suite is checked the day it registers, and needs no line here.
func TestSuitesStartNothing(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	suites := suite.All()
	if len(suites) < 4 {
		t.Fatalf("%d suites registered: internal/workload's imports should give every suite (sysbench, ibench, dbbench, script)", len(suites))
	}
	for _, s := range suites {
		for _, p := range CheckSuite(root, s) {
			t.Error(p)
		}
	}
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
		rank, ok := Layer(rel)
		if !ok {
			t.Errorf("package %s has no layer: add it to the table (layers.go) and to docs/architecture.md, or register the suite it holds", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			drank, known := Layer(dep)
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
	// bisect reaches serve's types (its Bisector) and runs its plans on
	// what app gives it: serve never imports it, it never imports app.
	if layer["internal/serve"] >= layer["internal/bisect"] || layer["internal/bisect"] >= layer["internal/app"] {
		t.Error("bisect must sit above serve and below app")
	}
}

// The metric registry (result.Register) is the one list of figures: only
// the packages that register figures (the engine, internal/metrics,
// internal/counters, each suite) name them in lists. A composite literal
// elsewhere that holds two or more registered names (or old names, the
// aliases) is a second catalogue, which drifts (serve's own figure list
// did); a result.Metric literal elsewhere is a figure with no owner. Name
// one figure where a default needs it (detect's qps); ask the registry for
// lists (result.All, MetricsOf, Names).
func TestFigureNamesOnlyWhereRegistered(t *testing.T) {
	names := map[string]bool{}
	for _, m := range result.All() {
		names[m.Name] = true
		for _, a := range m.Aliases {
			names[a] = true
		}
	}
	if !names["server_cpu_us/o"] || !names["ips"] {
		t.Fatal("the registry is empty: the test must import internal/workload")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	type hit struct {
		pkg, where, names string
		metric            bool // a result.Metric literal
	}
	var hits []hit
	owners := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				// A package that registers figures, or a suite (which
				// declares its headline per kind of test), owns names.
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Register" || sel.Sel.Name == "RegisterForm") {
					if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "result" || id.Name == "suite" && sel.Sel.Name == "Register") {
						owners[rel] = true
					}
				}
			case *ast.CompositeLit:
				var found []string
				ast.Inspect(x, func(n ast.Node) bool {
					if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
							found = append(found, s)
						}
					}
					return true
				})
				metric := metricLit(x.Type, rel) && len(x.Elts) > 0
				if len(found) >= 2 || metric {
					hits = append(hits, hit{rel, fset.Position(x.Pos()).String(), strings.Join(found, " "), metric})
				}
				return false // the outermost literal counts its nested ones
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if owners[h.pkg] {
			continue
		}
		where, _ := filepath.Rel(root, h.where)
		if why, ok := foreignNames[h.pkg]; ok && !h.metric {
			t.Logf("%s: %s (%s)", where, h.names, why)
			continue
		}
		t.Errorf("%s lists figures (%s) outside the packages that register them: ask the metric registry (result.All, MetricsOf, Lookup), or register the figure where it is made", where, h.names)
	}
	registers := []string{"internal/engine", "internal/metrics", "internal/counters"}
	for _, s := range suite.All() {
		if p, ok := packageOf(s); ok {
			registers = append(registers, p)
		}
	}
	for _, p := range registers {
		if !owners[p] {
			t.Errorf("%s registers no figure: who does?", p)
		}
	}
	if owners["internal/result"] {
		t.Error("internal/result registers figures: it keeps the registry, its owners the catalogue")
	}
}

// metricLit says whether a composite literal's type is result.Metric or
// a slice or array of it (Metric, in package result itself).
func metricLit(typ ast.Expr, pkg string) bool {
	if a, ok := typ.(*ast.ArrayType); ok {
		typ = a.Elt
	}
	switch x := typ.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "result" && x.Sel.Name == "Metric"
	case *ast.Ident:
		return pkg == "internal/result" && x.Name == "Metric"
	}
	return false
}

// foreignNames are packages whose lists of names are not the catalogue's,
// though some are figure names too: why each may keep them.
var foreignNames = map[string]string{
	"internal/importer": "the column names of the files it imports (the reference's sum_met.sh and io tables), which it reads into result.HW and Totals",
	"internal/result":   "Check names the result type's own fields (Totals' qps, tps and rows/s; a latency summary's p50 … max) in its messages",
}
