package config

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/names"
)

// Setting is one option a grid varies, with the values it takes.
type Setting struct {
	Name   string
	Values []string
}

// Grid is the settings a plan varies (--set, --grid): one config per
// combination of their values, derived from each base config.
type Grid []Setting

// settingRE is what a setting's name may be: an option as my.cnf and
// postgresql.conf spell them.
var settingRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// ParseSets reads --set values as the flag gives them, split at commas:
// "innodb_io_capacity=2000", "20000", "innodb_flush_neighbors=0", "1" is
// two settings of two values each (a part without "=" is one more value of
// the setting before it).
func ParseSets(parts []string) (Grid, error) {
	var g Grid
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		name, val, ok := strings.Cut(p, "=")
		if !ok {
			if len(g) == 0 {
				return nil, fmt.Errorf("--set %s: give NAME=VALUE[,VALUE…] (e.g. --set innodb_io_capacity=2000,20000)", p)
			}
			g[len(g)-1].Values = append(g[len(g)-1].Values, p)
			continue
		}
		g = append(g, Setting{Name: strings.TrimSpace(name), Values: []string{strings.TrimSpace(val)}})
	}
	return g, g.check()
}

// ReadGrid reads a grid file: YAML mapping each setting to its values
// (innodb_io_capacity: [2000, 20000]), in the file's order.
func ReadGrid(path string) (Grid, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the grid: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("grid %s: %w", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("grid %s: want a mapping of each setting to its values (innodb_io_capacity: [2000, 20000])", path)
	}
	m := doc.Content[0]
	var g Grid
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		s := Setting{Name: k.Value}
		switch v.Kind {
		case yaml.SequenceNode:
			for _, x := range v.Content {
				if x.Kind != yaml.ScalarNode {
					return nil, fmt.Errorf("grid %s: %s: values must be plain values", path, k.Value)
				}
				s.Values = append(s.Values, x.Value)
			}
		case yaml.ScalarNode:
			s.Values = []string{v.Value}
		default:
			return nil, fmt.Errorf("grid %s: %s: give a list of values", path, k.Value)
		}
		g = append(g, s)
	}
	if err := g.check(); err != nil {
		return nil, fmt.Errorf("grid %s: %w", path, err)
	}
	return g, nil
}

func (g Grid) check() error {
	seen := map[string]bool{}
	for _, s := range g {
		if !settingRE.MatchString(s.Name) {
			return fmt.Errorf("--set %q: not an option name (letters, digits, _ . -)", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("--set %s is given twice: give its values once, comma-separated", s.Name)
		}
		seen[s.Name] = true
		vals := map[string]bool{}
		for _, v := range s.Values {
			if v == "" || strings.ContainsAny(v, "\n#") {
				return fmt.Errorf("--set %s: the value %q cannot go into a config", s.Name, v)
			}
			if vals[v] {
				return fmt.Errorf("--set %s: the value %s is given twice", s.Name, v)
			}
			vals[v] = true
		}
	}
	return nil
}

// Combination is one point of a grid: a value for each setting, in the
// grid's order.
type Combination []Setting // each with one value

// Combinations are every combination of the grid's values, the first
// setting varying slowest.
func (g Grid) Combinations() []Combination {
	if len(g) == 0 {
		return nil
	}
	out := []Combination{nil}
	for _, s := range g {
		var next []Combination
		for _, c := range out {
			for _, v := range s.Values {
				nc := append(append(Combination{}, c...), Setting{Name: s.Name, Values: []string{v}})
				next = append(next, nc)
			}
		}
		out = next
	}
	return out
}

// String is "name=value,name=value", as runs record it.
func (c Combination) String() string {
	parts := make([]string, len(c))
	for i, s := range c {
		parts[i] = s.Name + "=" + s.Values[0]
	}
	return strings.Join(parts, ",")
}

// nameUnsafe are the characters a config name cannot hold.
var nameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// DerivedName is the name of the config Derived makes for combination c
// over the config named base: base-name-value… (--list-tests shows it
// without writing anything).
func DerivedName(base string, c Combination) string {
	var parts []string
	for _, x := range c {
		parts = append(parts, nameUnsafe.ReplaceAllString(x.Name, "_"), nameUnsafe.ReplaceAllString(x.Values[0], "_"))
	}
	return base + "-" + strings.Join(parts, "-")
}

// DerivedNames are the names of the configs a grid derives over each of
// bases, in plan order. A name package names refuses (too long: a long
// base name or many settings), or one two grid points share (values that
// differ only in characters a name cannot hold: "a b" and "a_b"), is an
// error naming the point and the fix.
func DerivedNames(bases []string, g Grid) ([]string, error) {
	var out []string
	from := map[string]string{}
	for _, base := range bases {
		for _, pt := range g.Combinations() {
			name := DerivedName(base, pt)
			if err := names.Config(name); err != nil {
				return nil, fmt.Errorf("the grid point %s over config %s: %w: give the base config a shorter name, or vary fewer settings in one grid", pt, base, err)
			}
			if prev, ok := from[name]; ok {
				return nil, fmt.Errorf("the grid points %s and %s over config %s both make config %s (a name holds letters, digits, _ and - only): give the values apart by more than those characters", prev, pt, base, name)
			}
			from[name] = pt.String()
			out = append(out, name)
		}
	}
	return out, nil
}

// Derived is the config for combination c over base: named base-name-value…
// (e.g. default-innodb_io_capacity-2000), its own content the base line and
// the settings, written into the store unless a config of that name holds
// exactly that already. A config of that name with other content is not
// touched: the error says so.
func (s Store) Derived(base Config, c Combination) (Config, error) {
	name := DerivedName(base.Name, c)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# qpslab: base=%s\n# Derived by qpslab from %s for the grid point %s.\n", base.Name, base.Name, c)
	if base.Family == MySQL {
		b.WriteString("[mysqld]\n")
	}
	for _, x := range c {
		if base.Family == MySQL {
			fmt.Fprintf(&b, "%s=%s\n", x.Name, x.Values[0])
		} else {
			fmt.Fprintf(&b, "%s = %s\n", x.Name, pgValue(x.Values[0]))
		}
	}
	existing, err := s.load(name, base.Family)
	switch {
	case err == nil && bytes.Equal(existing.Own, b.Bytes()):
	case err == nil:
		return Config{}, fmt.Errorf("config %s exists (%s) with other settings than the grid point %s: rename or remove it, qpslab does not overwrite it", name, existing.Source, c)
	case errors.Is(err, ErrNotFound):
		if _, err := s.AddContent(name, b.Bytes(), base.Family, false); err != nil {
			return Config{}, err
		}
	default:
		return Config{}, err
	}
	return s.Get(name, base.Family)
}

var pgPlain = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// pgValue quotes a postgresql.conf value that is not a plain word or number.
func pgValue(v string) string {
	if pgPlain.MatchString(v) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}
