package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "engine" means two things in qpslab: internal/engine, which drives the
// load, and the storage engine a MySQL-family server keeps its tables in
// (InnoDB, MyRocks). In Go the second is always spelled StorageEngine
// (issue 61 item 2; the CLI's --engine, the stored runs' engine parameter
// and the API's field names stay): a package-level name, a struct field
// or a method outside the load engine's package that says "engine" says
// "StorageEngine". engineOwn are the packages whose "engine" is their
// own: the load engine, and changepoint's search engine.
var engineOwn = []string{"internal/engine", "internal/changepoint"}

func TestStorageEngineIsSpelledSo(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			for _, own := range engineOwn {
				if rel == own {
					return filepath.SkipDir
				}
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, name := range engineNames(f) {
			t.Errorf("%s: %s: call the storage engine StorageEngine in Go (internal/engine is the load's engine)", rel, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// engineNames are f's package-level names, struct fields and methods that
// say "engine" without "storage engine".
func engineNames(f *ast.File) []string {
	var out []string
	check := func(id *ast.Ident) {
		n := strings.ToLower(id.Name)
		if strings.Contains(n, "engine") && !strings.Contains(n, "storageengine") {
			out = append(out, id.Name)
		}
	}
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, fd := range fl.List {
			for _, id := range fd.Names {
				check(id)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			check(n.Name)
		case *ast.StructType:
			fields(n.Fields)
		case *ast.InterfaceType:
			fields(n.Methods)
		}
		return true
	})
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range g.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				check(s.Name)
			case *ast.ValueSpec:
				for _, id := range s.Names {
					check(id)
				}
			}
		}
	}
	return out
}

// The rule catches what it is there to catch, in a file a test writes.
func TestTheStorageEngineRuleCanFail(t *testing.T) {
	const src = `package toy

type Server struct{ Engine, StorageEngine string }

var defaultEngine = "innodb"

func ParseEngine(s string) string { engine := s; return engine }

func (s Server) OtherStorageEngine() string { return "" }
`
	f, err := parser.ParseFile(token.NewFileSet(), "toy.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(engineNames(f), " "); got != "Engine ParseEngine defaultEngine" {
		t.Errorf("flagged %q, want the field Engine, defaultEngine and ParseEngine (not a local, not StorageEngine)", got)
	}
}
