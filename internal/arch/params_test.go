package arch

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
	"testing"
)

// maxLongParams is how many functions and methods of internal/ may take
// six parameters or more (issue 61: a run's state travels in the types
// that own it, not in argument lists). The pure mathematics of
// internal/changepoint (its tests and statistics over series) is exempt.
const maxLongParams = 10

// longParams lists the functions of internal/ (not tests, not
// changepoint) that take six parameters or more: "file:line name (n)".
func longParams(t *testing.T) []string {
	var out []string
	goFiles(t, "internal", func(rel string, fset *token.FileSet, file *ast.File) {
		if strings.HasPrefix(rel, "internal/changepoint/") {
			return
		}
		ast.Inspect(file, func(n ast.Node) bool {
			var ft *ast.FuncType
			name := "func literal"
			switch d := n.(type) {
			case *ast.FuncDecl:
				ft, name = d.Type, d.Name.Name
			case *ast.FuncLit:
				ft = d.Type
			default:
				return true
			}
			k := 0
			for _, f := range ft.Params.List {
				k += max(len(f.Names), 1)
			}
			if k >= 6 {
				out = append(out, fmt.Sprintf("%s:%d %s (%d)", rel, fset.Position(ft.Pos()).Line, name, k))
			}
			return true
		})
	})
	return out
}

// TestFewLongParameterLists: at most maxLongParams functions take six
// parameters or more.
func TestFewLongParameterLists(t *testing.T) {
	if got := longParams(t); len(got) > maxLongParams {
		t.Errorf("%d functions take 6 parameters or more, at most %d may: move what travels together into the type that owns it (a method), or into a type several functions share; not a struct for one function's arguments:\n  %s",
			len(got), maxLongParams, strings.Join(got, "\n  "))
	}
}
