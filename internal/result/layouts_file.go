package result

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// A user's layout is a YAML file (docs/results.md, "Groups"):
//
//	name: mine
//	title: points apart from ranges   # optional
//	groups:
//	  - name: point
//	    members: [point-query*, random-points*]
//	  - name: range
//	    members: [range-*, scan_range=100]
//
// groups in report order, members as test labels or path.Match globs. Unlike
// a suite's shipped layouts, where a test is in the first group that lists
// it, a user's layout puts each test in one group only: a test two groups
// would take is refused.

// MaxLayoutFile is the largest layout file read: a layout of every test of
// a suite is a few KB.
const MaxLayoutFile = 64 << 10

// layoutFix ends the errors of a layout file: what one looks like.
const layoutFix = "a layout file has name:, groups: and under each group name: and members: (test labels or globs; docs/results.md)"

type layoutFile struct {
	Name   string `yaml:"name"`
	Title  string `yaml:"title"`
	Groups []struct {
		Name    string   `yaml:"name"`
		Members []string `yaml:"members"`
	} `yaml:"groups"`
}

// ReadLayout reads a user's layout from the YAML file at p: one clear
// line of error if it cannot be read or is not a sound layout.
func ReadLayout(p string) (Layout, error) {
	f, err := os.Open(p)
	if err != nil {
		return Layout{}, fmt.Errorf("cannot be read (%v): give the path of a YAML layout file", unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return Layout{}, fmt.Errorf("is a directory: give the path of a YAML layout file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxLayoutFile+1))
	if err != nil {
		return Layout{}, fmt.Errorf("cannot be read (%v): give the path of a YAML layout file", unwrapPath(err))
	}
	return ParseLayout(data)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var yamlType = regexp.MustCompile(` in type [\w.]+`)

// ParseLayout reads a user's layout from YAML (ReadLayout's format) and
// checks it (Check, a member in each group, no test listed in two).
func ParseLayout(data []byte) (Layout, error) {
	if len(data) > MaxLayoutFile {
		return Layout{}, fmt.Errorf("is larger than %d KiB, far more than a layout needs: %s", MaxLayoutFile>>10, layoutFix)
	}
	if !utf8.Valid(data) {
		return Layout{}, fmt.Errorf("is not UTF-8 text: %s", layoutFix)
	}
	for i, line := range strings.Split(string(data), "\n") {
		for _, c := range strings.TrimSuffix(line, "\r") {
			if c != '\t' && unicode.IsControl(c) {
				return Layout{}, fmt.Errorf("has a control character (%U) on line %d: a layout file is plain text; %s", c, i+1, layoutFix)
			}
			if Invisible(c) { // a BOM, a bidi control, a zero-width space: a group named so shows as another
				return Layout{}, fmt.Errorf("has an invisible character (%U) on line %d: a layout file is plain text; %s",
					c, i+1, layoutFix)
			}
		}
	}
	var lf layoutFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&lf); errors.Is(err, io.EOF) {
		return Layout{}, fmt.Errorf("is empty: %s", layoutFix)
	} else if err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.TrimPrefix(msg, "unmarshal errors:")
		msg = yamlType.ReplaceAllString(strings.Join(strings.Fields(msg), " "), "")
		return Layout{}, fmt.Errorf("is not a layout (%s): %s", msg, layoutFix)
	}
	var more layoutFile
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return Layout{}, fmt.Errorf("holds more than one YAML document: keep one; %s", layoutFix)
	}
	l := Layout{Name: lf.Name, Title: lf.Title, Members: map[string][]string{}}
	if l.Name == "" {
		return Layout{}, fmt.Errorf("names no layout: give it a name: (no spaces or commas); %s", layoutFix)
	}
	if l.Title == "" {
		l.Title = "the layout " + l.Name
	}
	in := map[string]string{} // a listed label → its group
	for _, g := range lf.Groups {
		l.Groups = append(l.Groups, g.Name)
		if g.Name != "" && len(g.Members) == 0 {
			return Layout{}, fmt.Errorf("group %q lists no members: list its tests (labels or globs)", g.Name)
		}
		for _, m := range g.Members {
			m = strings.TrimSpace(m)
			if m == "" {
				return Layout{}, fmt.Errorf("group %q has an empty member: list test labels or globs", g.Name)
			}
			if prev, ok := in[m]; ok && prev != g.Name {
				return Layout{}, fmt.Errorf("%s is in two groups, %s and %s: put each test in one group", m, prev, g.Name)
			}
			in[m] = g.Name
			l.Members[g.Name] = append(l.Members[g.Name], m)
		}
	}
	if err := l.Check(); err != nil {
		return Layout{}, err
	}
	return l, nil
}

// CheckTests says what is wrong with l's members for a suite whose tests
// are tests: a label that names no test, a glob that matches none, a test
// two groups would take.
func (l Layout) CheckTests(tests []string) error {
	for _, g := range l.Groups {
		for _, m := range l.Members[g] {
			if !strings.ContainsAny(m, `*?[\`) {
				if !slices.Contains(tests, m) {
					return fmt.Errorf("group %s: no test is named %s: list tests by their labels (qpslab suites lists them) or by globs", g, m)
				}
				continue
			}
			if !slices.ContainsFunc(tests, func(t string) bool { ok, _ := path.Match(m, t); return ok }) {
				return fmt.Errorf("group %s: %s matches no test: list tests by their labels (qpslab suites lists them) or by globs that match some", g, m)
			}
		}
	}
	for _, t := range tests {
		var by []string
		for _, g := range l.Groups {
			for _, m := range l.Members[g] {
				if ok, _ := path.Match(m, t); ok {
					by = append(by, g+" ("+m+")")
					break
				}
			}
		}
		if len(by) > 1 {
			return fmt.Errorf("%s is in two groups, %s: put each test in one group", t, strings.Join(by, " and "))
		}
	}
	return nil
}
