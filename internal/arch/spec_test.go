package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

const planPath = modulePath + "/internal/plan"

// specBuilders are the functions that may build a plan.Spec or write its
// fields (issue 61 item 1): Parse, the one function that builds a Spec
// from the flags' values, and nothing after it. A Spec is complete once
// Parse returns; what a run decides from it (the design of --repeat auto,
// the agent's own --allow-server-file, a spread part's seed) is the
// Runner's.
var specBuilders = map[string]bool{planPath + ".Parse": true}

func TestSpecIsCompleteAfterParse(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pkgs, imp := modulePackages(t, root)
	for _, p := range pkgs {
		fset, files, info := p.check(t, imp)
		for _, f := range files {
			path, _ := filepath.Rel(root, fset.File(f.Pos()).Name())
			for _, o := range specOffences(fset, f, info, p.path) {
				t.Errorf("%s:%s: only plan.Parse builds a Spec, complete: give what the run decides to the Runner (its Design, ServerFiles, Share) instead", filepath.ToSlash(path), o)
			}
		}
	}
}

// specOffences are the places in f, outside specBuilders, that build a
// plan.Spec (a composite literal) or write one of its fields (an
// assignment, ++ or --, or taking its address), as line: what.
func specOffences(fset *token.FileSet, f *ast.File, info *types.Info, pkg string) []string {
	var out []string
	add := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%d: %s", fset.Position(n.Pos()).Line, what))
	}
	written := func(e ast.Expr, how string) {
		if sel, ok := ast.Unparen(e).(*ast.SelectorExpr); ok {
			if s := info.Selections[sel]; s != nil && isSpecField(s) {
				add(sel, how+" Spec."+sel.Sel.Name)
			}
		}
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if ok && fn.Recv == nil && specBuilders[pkg+"."+fn.Name.Name] {
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					written(l, "assigns")
				}
			case *ast.IncDecStmt:
				written(n.X, "assigns")
			case *ast.UnaryExpr:
				if n.Op == token.AND {
					written(n.X, "takes the address of")
				}
			case *ast.CompositeLit:
				if tv, ok := info.Types[n]; ok && isSpec(tv.Type) {
					add(n, "builds a Spec")
				}
			}
			return true
		})
	}
	return out
}

// isSpecField says the selection is a field of plan.Spec, directly or
// promoted (through the Runner, which embeds it).
func isSpecField(s *types.Selection) bool {
	if s.Kind() != types.FieldVal {
		return false
	}
	t := s.Recv()
	for i, n := range s.Index() {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			return false
		}
		if i == len(s.Index())-1 {
			return isSpec(t)
		}
		t = st.Field(n).Type()
	}
	return false
}

func isSpec(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == planPath && n.Obj().Name() == "Spec"
}

// The rule catches what it is there to catch, in a file a test writes.
func TestTheSpecRuleCanFail(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	_, imp := modulePackages(t, root)
	const src = `package toy

import "github.com/qpslab/qpslab/internal/plan"

func after(r *plan.Runner, s *plan.Spec) {
	r.Threads = []int{1}
	r.Spec.Seed++
	s.Budget = 0
	_ = &r.Warmup
	_ = plan.Spec{Suite: "x"}
	r.Builds = nil
	r.Design.Repeat = 3
	_ = r.Threads
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "toy.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := (&types.Config{Importer: imp(fset)}).Check("toy", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(specOffences(fset, f, info, "toy"), "\n")
	want := strings.Join([]string{
		"6: assigns Spec.Threads",
		"7: assigns Spec.Seed",
		"8: assigns Spec.Budget",
		"9: takes the address of Spec.Warmup",
		"10: builds a Spec",
	}, "\n")
	if got != want {
		t.Errorf("offences:\n%s\nwant:\n%s", got, want)
	}
}
