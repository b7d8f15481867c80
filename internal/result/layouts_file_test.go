package result

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A user's layout file reads into a Layout in its groups' order; a bad one
// is refused with one line that names the problem.
func TestReadLayout(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "name: mine\ntitle: points apart\ngroups:\n  - name: point\n    members: [\"point-*\", hot-points_range=100]\n  - name: range\n    members: [scan_range=100]\n")
	l, err := ReadLayout(good)
	if err != nil {
		t.Fatal(err)
	}
	if l.Name != "mine" || !slices.Equal(l.Groups, []string{"point", "range"}) {
		t.Errorf("read %+v", l)
	}
	if p, ok := l.Place("scan_range=100"); !ok || p.Group != "range" || p.Pos != 1 {
		t.Errorf("scan placed %+v %v", p, ok)
	}
	tests := []string{"point-query_range=100", "hot-points_range=100", "scan_range=100", "insert_range=100"}
	if err := l.CheckTests(tests); err != nil {
		t.Errorf("CheckTests: %v", err)
	}
	for _, c := range []struct{ name, text, want string }{
		{"empty.yaml", "", "is empty"},
		{"bad.yaml", "name: x\ngroups: [\n", "is not a layout (line 2"},
		{"field.yaml", "name: x\nowner: me\ngroups:\n  - name: a\n    members: [t]\n", "field owner not found"},
		{"noname.yaml", "groups:\n  - name: a\n    members: [t]\n", "names no layout"},
		{"nogroups.yaml", "name: x\n", "list its groups"},
		{"nomembers.yaml", "name: x\ngroups:\n  - name: a\n", `group "a" lists no members`},
		{"twice.yaml", "name: x\ngroups:\n  - name: a\n    members: [t]\n  - name: b\n    members: [t]\n", "t is in two groups, a and b"},
		{"dupgroup.yaml", "name: x\ngroups:\n  - name: a\n    members: [t]\n  - name: a\n    members: [u]\n", "named twice"},
		{"glob.yaml", "name: x\ngroups:\n  - name: a\n    members: [\"[t\"]\n", "not a glob"},
		{"control.yaml", "name: x\x1b[31m\ngroups: []\n", "control character (U+001B) on line 1"},
		{"bidi.yaml", "name: x\u202e\n", "invisible character (U+202E) on line 1"},
		{"zero-width.yaml", "name: x\ngroups:\n - name: point\u200b\n", "invisible character (U+200B) on line 3"},
		{"binary.yaml", "name: \xff\xfe\n", "not UTF-8"},
		{"two.yaml", "name: x\ngroups:\n  - name: a\n    members: [t]\n---\nname: y\n", "more than one YAML document"},
		{"huge.yaml", "name: x\n#" + strings.Repeat("a", MaxLayoutFile) + "\n", "larger than 64 KiB"},
		{"missing.yaml", "-", "cannot be read"},
	} {
		p := filepath.Join(dir, c.name)
		if c.text != "-" {
			p = write(c.name, c.text)
		}
		_, err := ReadLayout(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.name, err, c.want)
		}
	}
	if _, err := ReadLayout(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	for _, c := range []struct {
		members map[string][]string
		want    string
	}{
		{map[string][]string{"point": {"nosuch_range=1"}}, "no test is named nosuch_range=1"},
		{map[string][]string{"point": {"zz*"}}, "zz* matches no test"},
		{map[string][]string{"point": {"*_range=100"}, "range": {"scan*"}}, "scan_range=100 is in two groups, point (*_range=100) and range (scan*)"},
	} {
		bad := Layout{Name: "x", Groups: []string{"point", "range"}, Members: c.members}
		if err := bad.CheckTests(tests); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want %q", c.members, err, c.want)
		}
	}
}
