package arch

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The SQL that differs between the protocols' servers is one value, the
// client.Dialect, chosen once from the flavor (issue 61 item 3): outside
// internal/client and the flavor descriptors (internal/build) no code
// names client.MySQL or client.Postgres, compares a client.Protocol (==,
// !=, switch, through a conversion too, slices.Contains and the like), or
// keys a map by one; it asks the dialect (suite.Server.Dialect,
// client.Endpoint.Dialect, a suite's suite.Plan.RunsOn) instead. The
// Dialect itself cannot be compared (its function fields):
// TestTheDialectCannotBeCompared. No file is allowed an exception: the
// allow-list the packages were converted under is gone, empty.
const (
	modulePath = "github.com/qpslab/qpslab"
	clientPath = modulePath + "/internal/client"
	buildPath  = modulePath + "/internal/build"
)

// protocolExempt are the packages that may tell the protocols apart: the
// client, whose dialects they are, and the flavor descriptors.
var protocolExempt = []string{"internal/client", "internal/build"}

func TestAskTheDialectNotTheProtocol(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pkgs, imp := modulePackages(t, root)
	offending := map[string][]string{}
	for _, p := range pkgs {
		rel, _ := filepath.Rel(root, p.dir)
		rel = filepath.ToSlash(rel)
		if exempt(rel) {
			continue
		}
		fset, files, info := p.check(t, imp)
		for _, f := range files {
			path, _ := filepath.Rel(root, fset.File(f.Pos()).Name())
			path = filepath.ToSlash(path)
			for _, o := range protocolOffences(fset, f, info) {
				offending[path] = append(offending[path], path+":"+o)
			}
		}
	}
	var files []string
	for f := range offending {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		for _, o := range offending[f] {
			t.Errorf("%s: ask the client.Dialect (suite.Server.Dialect, client.Endpoint.Dialect) for the SQL or the capability that differs, or add a field to it; never the protocol", o)
		}
	}
}

func exempt(rel string) bool {
	for _, e := range protocolExempt {
		if rel == e || strings.HasPrefix(rel, e+"/") {
			return true
		}
	}
	return false
}

// protocolOffences are the places in f that tell the protocols apart, as
// line: what.
func protocolOffences(fset *token.FileSet, f *ast.File, info *types.Info) []string {
	var out []string
	add := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%d: %s", fset.Position(n.Pos()).Line, what))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if c, ok := info.Uses[n].(*types.Const); ok && c.Pkg() != nil && c.Pkg().Path() == clientPath && isProtocol(c.Type()) {
				add(n, "names client."+c.Name())
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (protocolOperand(info, n.X) || protocolOperand(info, n.Y)) {
				add(n, "compares a client.Protocol ("+n.Op.String()+")")
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && protocolOperand(info, n.Tag) {
				add(n, "switches on a client.Protocol")
			}
		case *ast.MapType:
			if tv, ok := info.Types[n.Key]; ok && isProtocol(tv.Type) {
				add(n, "keys a map by client.Protocol")
			}
		case *ast.CallExpr:
			// The standard library's generic comparisons (slices.Contains,
			// slices.Index, maps.Keys …) compare what they are given.
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok {
				break
			}
			f, ok := info.Uses[sel.Sel].(*types.Func)
			if !ok || f.Pkg() == nil || (f.Pkg().Path() != "slices" && f.Pkg().Path() != "maps") {
				break
			}
			for _, a := range n.Args {
				if tv, ok := info.Types[a]; ok && holdsProtocol(tv.Type) {
					add(n, "compares client.Protocol values ("+f.Pkg().Name()+"."+f.Name()+")")
					break
				}
			}
		}
		return true
	})
	return out
}

// protocolOperand says e is a client.Protocol, or one converted (to a
// string, say).
func protocolOperand(info *types.Info, e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.CallExpr:
			if tv, ok := info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
				if tv, ok := info.Types[x.Args[0]]; ok && isProtocol(tv.Type) {
					return true
				}
				e = x.Args[0]
				continue
			}
		}
		break
	}
	// A flavor descriptor's protocol, a name (build.Descriptor.Protocol).
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if v, ok := info.Uses[sel.Sel].(*types.Var); ok && v.IsField() && v.Name() == "Protocol" && v.Pkg() != nil && v.Pkg().Path() == buildPath {
			return true
		}
	}
	tv, ok := info.Types[e]
	return ok && isProtocol(tv.Type)
}

// holdsProtocol says t is a client.Protocol or a slice or map of them.
func holdsProtocol(t types.Type) bool {
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Slice:
		return isProtocol(u.Elem())
	case *types.Map:
		return isProtocol(u.Key()) || isProtocol(u.Elem())
	}
	return isProtocol(t)
}

func isProtocol(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == clientPath && n.Obj().Name() == "Protocol"
}

type goPackage struct {
	path, dir string
	files     []string
}

// modulePackages lists the module's packages (their non-test files) and
// gives an importer that reads every import's export data, as go list
// -export wrote it.
func modulePackages(t *testing.T, root string) ([]goPackage, func(*token.FileSet) types.Importer) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}\t{{with .Module}}{{.Path}}{{end}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v: %s", err, stderr.String())
	}
	export := map[string]string{}
	var pkgs []goPackage
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		export[f[0]] = f[1]
		if f[4] == modulePath && f[3] != "" {
			pkgs = append(pkgs, goPackage{path: f[0], dir: f[2], files: strings.Split(f[3], ",")})
		}
	}
	lookup := func(path string) (io.ReadCloser, error) {
		if export[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(export[path])
	}
	return pkgs, func(fset *token.FileSet) types.Importer { return importer.ForCompiler(fset, "gc", lookup) }
}

// check parses and type-checks the package's files: the uses, types and
// selections of what they name.
func (p goPackage) check(t *testing.T, imp func(*token.FileSet) types.Importer) (*token.FileSet, []*ast.File, *types.Info) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.files {
		f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := (&types.Config{Importer: imp(fset)}).Check(p.path, fset, files, info); err != nil {
		t.Fatalf("type-check %s: %v", p.path, err)
	}
	return fset, files, info
}

// The rule catches what it is there to catch, in a file a test writes.
func TestTheDialectRuleCanFail(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	_, imp := modulePackages(t, root)
	const src = `package toy

import (
	"slices"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
)

var names = map[client.Protocol]string{}

func pick(e client.Endpoint) string {
	if e.Protocol == client.Postgres {
		return "a"
	}
	if string(e.Protocol) != "mysql" {
		return "b"
	}
	switch e.Protocol {
	}
	if slices.Contains(client.Protocols(), e.Protocol) {
		return "c"
	}
	return e.Dialect().Analyze("t")
}

func named(f build.Flavor) bool { return f.Describe().Protocol != "" }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "toy.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: imp(fset)}).Check("toy", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(protocolOffences(fset, f, info), "\n")
	want := strings.Join([]string{
		"10: keys a map by client.Protocol",
		"13: compares a client.Protocol (==)",
		"13: names client.Postgres",
		"16: compares a client.Protocol (!=)",
		"19: switches on a client.Protocol",
		"21: compares client.Protocol values (slices.Contains)",
		"27: compares a client.Protocol (!=)", // the descriptor's, by name
	}, "\n")
	if got != want {
		t.Errorf("offences:\n%s\nwant:\n%s", got, want)
	}
}

// The Dialect cannot be compared, so no code can tell dialects apart by
// identity: a flavor's dialect is told by what its fields say.
func TestTheDialectCannotBeCompared(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	_, imp := modulePackages(t, root)
	pkg, err := imp(token.NewFileSet()).Import(clientPath)
	if err != nil {
		t.Fatal(err)
	}
	d := pkg.Scope().Lookup("Dialect")
	if d == nil {
		t.Fatal("client.Dialect is gone")
	}
	if types.Comparable(d.Type()) {
		t.Error("client.Dialect is comparable: keep a function field in it, so that no code tells dialects apart by ==")
	}
}
