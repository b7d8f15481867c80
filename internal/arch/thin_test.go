package arch

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/qpslab/qpslab/internal/build"
)

// goFiles calls f with each non-test Go file under dir (relative to the
// module's root), parsed.
func goFiles(t *testing.T, dir string, f func(rel string, fset *token.FileSet, file *ast.File)) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		f(filepath.ToSlash(rel), fset, file)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cmd/qpslab only wires flags (docs/architecture.md): no line wider than
// 120 columns, and what it must leave to the packages it wires it cannot do:
// encode JSON (report.JSON and report.FormatFlag are the one way out),
// open a database of its own or compare a build's flavor (the flavor's
// descriptor says what differs).
func TestCommandsOnlyWire(t *testing.T) {
	const width, tab = 120, 4
	var wide []string
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	goFiles(t, "cmd/qpslab", func(rel string, fset *token.FileSet, file *ast.File) {
		fh, err := os.Open(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		n := 0
		for sc := bufio.NewScanner(fh); sc.Scan(); {
			n++
			if w := utf8.RuneCountInString(strings.ReplaceAll(sc.Text(), "\t", strings.Repeat(" ", tab))); w > width {
				wide = append(wide, fmt.Sprintf("%s:%d is %d columns", rel, n, w))
			}
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch p {
			case "encoding/json", "database/sql":
				t.Errorf("%s imports %s: cmd only wires flags; encode with report.JSON, query through the store", rel, p)
			}
		}
	})
	for _, l := range wide {
		t.Errorf("%s: wider than %d columns (a tab as %d): wrap it (a long help text: split the string literal)", l, width, tab)
	}
}

// A build's flavor is asked, never compared: outside internal/build (where
// each flavor's descriptor lives) no code tests `flavor == build.X`;
// it asks the descriptor (b.Flavor.Describe(): protocol, config family,
// engines, start procedure, counter set). Naming a flavor to pick it
// (a test's build, an importer's mapping of the seeds' name prefixes) is
// not a comparison and is allowed.
func TestFlavorsAreAskedNotCompared(t *testing.T) {
	for _, dir := range []string{"cmd", "internal"} {
		goFiles(t, dir, func(rel string, fset *token.FileSet, file *ast.File) {
			if strings.HasPrefix(rel, "internal/build/") || strings.HasPrefix(rel, "internal/testenv/") {
				return // the descriptors; the tests' choice of a MySQL build
			}
			ast.Inspect(file, func(n ast.Node) bool {
				var sides []ast.Expr
				switch x := n.(type) {
				case *ast.BinaryExpr: // f == build.X, f != build.X
					if x.Op == token.EQL || x.Op == token.NEQ {
						sides = []ast.Expr{x.X, x.Y}
					}
				case *ast.CaseClause: // switch f { case build.X: }
					sides = x.List
				}
				for _, side := range sides {
					if sel, ok := side.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "build" {
							switch sel.Sel.Name {
							case "MariaDB", "MySQL", "Postgres", "RocksDB":
								p := fset.Position(side.Pos())
								t.Errorf("%s:%d: compares a flavor with build.%s: ask its descriptor (Flavor.Describe()) instead", rel, p.Line, sel.Sel.Name)
							}
						}
					}
				}
				return true
			})
		})
	}
}

// A flavor qpslab does not know is refused, never taken for another (it
// once fell back to MariaDB's descriptor): Check names the known ones,
// and its descriptor gives no server, config family, counters or registry,
// so that nothing starts, configures or fetches it as something else.
func TestUnknownFlavorRefused(t *testing.T) {
	for _, f := range []build.Flavor{"nosuchdb", "", "MariaDB ", "mariadb\x00"} {
		err := f.Check()
		if err == nil || !strings.Contains(err.Error(), "use mariadb") {
			t.Errorf("flavor %q: Check gave %v, want an error naming the known flavors", f, err)
		}
		d := f.Describe()
		if f.HasServer() || d.Protocol != "" || d.Family != "" || d.Counters != "" || d.Maven != "" || d.StorageEngines || d.Start != "" {
			t.Errorf("flavor %q is described with capabilities %+v: an unknown flavor has none", f, d)
		}
	}
	for _, f := range build.Flavors() {
		if err := f.Check(); err != nil || f.Describe().Flavor != f {
			t.Errorf("flavor %s: Check %v, described as %s", f, err, f.Describe().Flavor)
		}
	}
}

// formatNames are the names --format takes (report's registry).
var formatNames = map[string]bool{"text": true, "md": true, "markdown": true, "csv": true, "tsv": true, "json": true, "html": true,
	"qps.abs": true, "qps.rel": true, "folded": true, "pprof": true}

// report's writers build a Doc or a table once and never ask which format
// they print in: only the registry (format.go) and the one renderer of a
// Doc (doc.go) tell formats apart, and report sets up no tabwriter or csv
// writer of its own (internal/table does). A comparison with a format's name (f ==
// "json", case "md":) in any other file of report is counted here, and
// must stay at none: a new format is a renderer in internal/table and an
// entry in the registry, not a case in every writer.
func TestWritersAskNoFormat(t *testing.T) {
	allowed := map[string]bool{"internal/report/format.go": true, "internal/report/doc.go": true}
	n := 0
	goFiles(t, "internal/report", func(rel string, fset *token.FileSet, file *ast.File) {
		for _, imp := range file.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "text/tabwriter" || p == "encoding/csv" {
				t.Errorf("%s imports %s: build a table.Table and let internal/table render it", rel, p)
			}
		}
		if allowed[rel] {
			return
		}
		isFormat := func(e ast.Expr) bool {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return false
			}
			s, _ := strconv.Unquote(lit.Value)
			return formatNames[s]
		}
		ast.Inspect(file, func(node ast.Node) bool {
			var hit ast.Expr
			switch x := node.(type) {
			case *ast.BinaryExpr:
				if (x.Op == token.EQL || x.Op == token.NEQ) && (isFormat(x.X) || isFormat(x.Y)) {
					hit = x
				}
			case *ast.CaseClause:
				for _, e := range x.List {
					if isFormat(e) {
						hit = e
					}
				}
			}
			if hit != nil {
				n++
				t.Errorf("%s:%d: a writer tells a format apart by name: build a Doc (report/doc.go) and let Doc.Write render it", rel, fset.Position(hit.Pos()).Line)
			}
			return true
		})
	})
	if n > 0 {
		t.Errorf("%d format switch(es) in report's writers, want none", n)
	}
}

// The dashboard's pages are one file each (internal/serve/page_*.go), and
// no file of internal/serve holds more than 700 lines: a page that grows
// past it splits, as pages.go once held ten of them in 1,100 lines.
func TestServePagesStaySmall(t *testing.T) {
	const most = 700
	pages := 0
	goFiles(t, "internal/serve", func(rel string, fset *token.FileSet, file *ast.File) {
		if strings.HasPrefix(filepath.Base(rel), "page_") {
			pages++
		}
		if n := fset.File(file.Pos()).LineCount(); n > most {
			t.Errorf("%s has %d lines, more than %d: split it (a page per file)", rel, n, most)
		}
	})
	if pages < 9 {
		t.Errorf("internal/serve has %d page_*.go files, want one per page (9 or more)", pages)
	}
}
