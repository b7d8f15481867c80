// Package config owns named config variants: a my.cnf fragment for the MySQL
// family, a postgresql.conf fragment for PostgreSQL, or an option set for
// RocksDB's db_bench (its flags, one --name=value per line). qpslab ships defaults
// (embedded in the binary); users add their own by file, under their own names,
// into the home's configs folder. A config may name a base ("# qpslab:
// base=default"): its effective settings are then the base's with its own laid
// over them, by section and option. A config is identified by its name plus a
// hash of its effective content, so an edited file, or an edited base, is a
// different config. Settings marked for it are sized to the host's memory
// (sizing.go), as the shipped presets of the seeds' configs are. This
// package only reads, layers, sizes and writes fragments; applying them to a
// server is the sandbox's job.
package config

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/qpslab/qpslab/internal/atomicfile"
)

// Family says which servers a fragment applies to.
type Family string

const (
	MySQL    Family = "mysql"    // my.cnf fragments, for MariaDB and MySQL
	Postgres Family = "postgres" // postgresql.conf fragments
	// RocksDB option sets: db_bench flags, one --name=value per line (a
	// gflags flagfile), which the db_bench suite passes to db_bench.
	RocksDB Family = "rocksdb"
)

// families are each family's file extension and the names --family takes
// for it; its syntax is fragment.go's and memory.go's. A new family: a line
// here, and its syntax there.
var families = []struct {
	fam   Family
	ext   string
	names []string // what --family also takes
	use   string   // how ParseFamily's refusal offers it
	file  string   // how AddWith's refusal names its files
}{
	{MySQL, ".cnf", []string{"mariadb", "maria"}, "mysql (MariaDB and MySQL)", "MySQL family"},
	{Postgres, ".conf", []string{"postgresql", "pg"}, "postgres", "PostgreSQL"},
	{RocksDB, ".flags", []string{"db_bench"}, "rocksdb (db_bench option sets)", "a db_bench option set"},
}

// Families are every family, in the order lists show them.
var Families = func() []Family {
	var out []Family
	for _, f := range families {
		out = append(out, f.fam)
	}
	return out
}()

// Ext is the file extension of a family's fragments.
func (f Family) Ext() string {
	for _, x := range families {
		if x.fam == f {
			return x.ext
		}
	}
	return ".cnf"
}

// ParseFamily reads a family as the command line gives it: its name or
// another name for it (mariadb for mysql, db_bench for rocksdb).
func ParseFamily(s string) (Family, error) {
	s = strings.ToLower(s)
	var use []string
	for _, f := range families {
		if s == string(f.fam) || slices.Contains(f.names, s) {
			return f.fam, nil
		}
		use = append(use, f.use)
	}
	return "", fmt.Errorf("unknown config family %q: use %s or %s", s, strings.Join(use[:len(use)-1], ", "), use[len(use)-1])
}

// Config is one named config variant.
type Config struct {
	Name   string
	Family Family
	// Content is the effective fragment: what the sandbox applies, what ID and
	// Hash identify and what a stored run records. For a config with a base
	// it is the base chain's settings with this config's laid over them; for
	// one without, the file as it is.
	Content []byte
	Own     []byte   // the file as it is, base line included
	Base    string   // the config this one is laid over, "" for none
	Chain   []string // this config, then its bases in order (cz11a_bee, default)
	Source  string   // "shipped" or the file it was read from
	// Err is set by List only, for a config that cannot be resolved (a
	// missing base, a cycle, a line that does not parse); Content is nil then.
	Err error
}

// Hash is the SHA-256 of the effective content, hex.
func (c Config) Hash() string {
	s := sha256.Sum256(c.Content)
	return hex.EncodeToString(s[:])
}

// ID is name@hash (12 hex digits): what a stored run records.
func (c Config) ID() string { return c.Name + "@" + c.Hash()[:12] }

//go:embed shipped/*
var shipped embed.FS

// Store reads shipped configs and the user's configs folder.
type Store struct {
	Dir string
	// Memory is the host memory, in bytes, that settings marked
	// "# qpslab: size=…" are sized to (sizing.go); 0: this host's total
	// memory (MemTotal).
	Memory int64
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// ErrNotFound is returned by Get for an unknown config.
var ErrNotFound = errors.New("config not found")

// Get returns the config called name for family, resolved over its bases. A
// user's file shadows a shipped config of the same name.
func (s Store) Get(name string, fam Family) (Config, error) {
	c, err := s.load(name, fam)
	if err != nil {
		return Config{}, err
	}
	c, _, err = s.resolve(c, nil)
	return c, err
}

// Find returns the config called name in whichever family has one; a name
// both families have needs the family (Get).
func (s Store) Find(name string) (Config, error) {
	var found []Config
	for _, fam := range Families {
		c, err := s.load(name, fam)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return Config{}, err
		}
		found = append(found, c)
	}
	switch len(found) {
	case 0:
		return Config{}, fmt.Errorf("%w: no config named %q: see qpslab configs list, or add one with qpslab configs add %s FILE", ErrNotFound, name, name)
	case 1:
	default:
		var fams, flags []string
		for _, c := range found {
			fams = append(fams, string(c.Family))
			flags = append(flags, "--family "+string(c.Family))
		}
		last := len(flags) - 1
		return Config{}, fmt.Errorf("there is a config named %q in several families (%s): pass %s or %s", name, strings.Join(fams, ", "), strings.Join(flags[:last], ", "), flags[last])
	}
	c, _, err := s.resolve(found[0], nil)
	return c, err
}

// Lookup returns the config called name in the family named by family
// (mysql, postgres or rocksdb, as ParseFamily reads it), or, when family is "", in
// whichever family has one (Find).
func (s Store) Lookup(name, family string) (Config, error) {
	if family == "" {
		return s.Find(name)
	}
	fam, err := ParseFamily(family)
	if err != nil {
		return Config{}, err
	}
	return s.Get(name, fam)
}

// load reads the config called name for family, unresolved: Own, Base and
// Source set, Content not.
func (s Store) load(name string, fam Family) (Config, error) {
	if !nameRE.MatchString(name) {
		return Config{}, fmt.Errorf("config name %q is not valid: use letters, digits, _ and - (e.g. cz11a_bee)", name)
	}
	file := name + fam.Ext()
	path := filepath.Join(s.Dir, file)
	c := Config{Name: name, Family: fam}
	if b, err := os.ReadFile(path); err == nil {
		c.Own, c.Source = b, path
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Config{}, fmt.Errorf("read config %s: %w", path, err)
	} else if b, err := shipped.ReadFile("shipped/" + file); err == nil {
		c.Own, c.Source = b, "shipped"
	} else {
		return Config{}, fmt.Errorf("%w: no %s config named %q: see qpslab configs list, or add one with qpslab configs add %s FILE", ErrNotFound, fam, name, name)
	}
	base, err := baseOf(c.Own)
	if err != nil {
		return Config{}, fmt.Errorf("config %s (%s): %w", name, c.Source, err)
	}
	if base != NoBase {
		c.Base = base
	}
	return c, nil
}

// resolve fills in c's effective content over its base chain; seen holds the
// configs that are on their way down to c, to find a cycle. For a config with
// a base it also returns the layered fragment, for configs based on it.
func (s Store) resolve(c Config, seen []string) (Config, *fragment, error) {
	var err error
	seen = append(seen, c.Name)
	if c.Base == "" {
		if c.Family == RocksDB { // db_bench takes every line as a flag: one that is none fails here, not in a run
			if _, err := parse(c.Family, c.Own, c.Name); err != nil {
				return Config{}, nil, fmt.Errorf("config %s (%s): %w", c.Name, c.Source, err)
			}
		}
		c.Chain = []string{c.Name}
		if c.Content, err = s.size(c.Family, c.Own); err != nil {
			return Config{}, nil, fmt.Errorf("config %s (%s): %w", c.Name, c.Source, err)
		}
		return c, nil, nil
	}
	if slices.Contains(seen, c.Base) {
		return Config{}, nil, fmt.Errorf("config %s: its bases make a cycle (%s → %s): remove the base line of one of them", seen[0], strings.Join(seen, " → "), c.Base)
	}
	b, err := s.load(c.Base, c.Family)
	if errors.Is(err, ErrNotFound) {
		return Config{}, nil, fmt.Errorf("config %s is based on %s, but there is no %s config named %q: see qpslab configs list, or add it with qpslab configs add %s FILE", c.Name, c.Base, c.Family, c.Base, c.Base)
	}
	if err != nil {
		return Config{}, nil, err
	}
	b, baseFrag, err := s.resolve(b, seen)
	if err != nil {
		return Config{}, nil, err
	}
	if baseFrag == nil {
		f, err := parse(b.Family, b.Own, b.Name)
		if err != nil {
			return Config{}, nil, fmt.Errorf("config %s (%s), the base of %s: %w", b.Name, b.Source, c.Name, err)
		}
		baseFrag = &f
	}
	own, err := parse(c.Family, c.Own, c.Name)
	if err != nil {
		return Config{}, nil, fmt.Errorf("config %s (%s): %w", c.Name, c.Source, err)
	}
	merged := overlay(*baseFrag, own)
	c.Chain = append([]string{c.Name}, b.Chain...)
	root := c.Chain[len(c.Chain)-1]
	order := slices.Clone(c.Chain)
	slices.Reverse(order)
	header := fmt.Sprintf("# Effective settings of config %s: %s, later wins.\n# Lines marked \"# from NAME\" come from NAME, the others from %s.\n", c.Name, strings.Join(order, ", then "), root)
	if c.Content, err = s.size(c.Family, merged.render(header, root)); err != nil {
		return Config{}, nil, fmt.Errorf("config %s (%s): %w", c.Name, c.Source, err)
	}
	return c, &merged, nil
}

// List returns every config, shipped and the user's, sorted by family and
// name, each resolved over its bases; one that cannot be has Err set.
func (s Store) List() ([]Config, error) {
	seen := map[string]bool{}
	var out []Config
	add := func(file, source string, b []byte) {
		fam, name, ok := parseFile(file)
		if !ok || seen[file] {
			return
		}
		seen[file] = true
		c := Config{Name: name, Family: fam, Own: b, Source: source}
		base, err := baseOf(b)
		if err == nil {
			if base != NoBase {
				c.Base = base
			}
			var r Config
			if r, _, err = s.resolve(c, nil); err == nil {
				c = r
			}
		} else {
			err = fmt.Errorf("config %s (%s): %w", name, source, err)
		}
		c.Err = err
		out = append(out, c)
	}
	if ents, err := os.ReadDir(s.Dir); err == nil {
		for _, e := range ents {
			p := filepath.Join(s.Dir, e.Name())
			if b, err := os.ReadFile(p); err == nil && e.Type().IsRegular() {
				add(e.Name(), p, b)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list configs in %s: %w", s.Dir, err)
	}
	ents, _ := shipped.ReadDir("shipped")
	for _, e := range ents {
		b, _ := shipped.ReadFile("shipped/" + e.Name())
		add(e.Name(), "shipped", b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Family != out[j].Family {
			return out[i].Family < out[j].Family
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// DefaultBase is the base qpslab configs add gives a file that names none.
const DefaultBase = "default"

// AddOptions says how Add stores a file.
type AddOptions struct {
	Family Family // "": from the file's extension (.cnf or .conf)
	// Base is the config to lay the new one over: a name, NoBase ("none")
	// for none, or "" for what the file's own base line says (none without
	// one). A base given here that the file's base line contradicts is an
	// error; one the file lacks is written into it as its first line.
	Base string
	// BaseIsDefault makes Base a default only: the file's own base line, if
	// any, wins over it.
	BaseIsDefault bool
	Replace       bool // overwrite the user's config of that name
}

// Add copies file into the configs folder under name, as it is (a base line
// in it counts). The family comes from the file's extension (.cnf or .conf)
// unless fam is set. It refuses to overwrite an existing user config unless
// replace is set.
func (s Store) Add(name, file string, fam Family, replace bool) (Config, error) {
	return s.AddWith(name, file, AddOptions{Family: fam, Replace: replace})
}

// AddWith copies file into the configs folder under name, with the base o
// says. The config must resolve (its base exists, no cycle, every line in the
// chain parses) before anything is written.
func (s Store) AddWith(name, file string, o AddOptions) (Config, error) {
	if !nameRE.MatchString(name) {
		return Config{}, fmt.Errorf("config name %q is not valid: use letters, digits, _ and - (e.g. cz11a_bee)", name)
	}
	fam := o.Family
	if fam == "" {
		var named []string
		for _, f := range families {
			if filepath.Ext(file) == f.ext {
				fam = f.fam
			}
			named = append(named, f.ext+" ("+f.file+")")
		}
		if fam == "" {
			return Config{}, fmt.Errorf("cannot tell the family of %s: name it %s or %s, or pass --family", file, strings.Join(named[:len(named)-1], ", "), named[len(named)-1])
		}
	}
	if o.Base != "" && o.Base != NoBase && !nameRE.MatchString(o.Base) {
		return Config{}, fmt.Errorf("base %q is not a config name: use letters, digits, _ and -, or none", o.Base)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return Config{}, fmt.Errorf("read config file: %w", err)
	}
	fileBase, err := baseOf(b)
	if err != nil {
		return Config{}, fmt.Errorf("config file %s: %w", file, err)
	}
	base := fileBase
	switch {
	case o.Base == "" || o.BaseIsDefault && fileBase != "":
	case fileBase != "" && fileBase != o.Base:
		return Config{}, fmt.Errorf("%s names base %s and --base says %s: drop one, or edit its base line", file, fileBase, o.Base)
	default:
		base = o.Base
	}
	if base == NoBase {
		base = ""
	}
	if base == name {
		return Config{}, fmt.Errorf("config %s cannot be based on itself: pass --base none (a %s of yours replaces the shipped one), or another base", name, name)
	}
	if base != "" && fileBase == "" {
		b = append([]byte("# qpslab: base="+base+"\n"), b...)
	}
	dst := filepath.Join(s.Dir, name+fam.Ext())
	if _, err := os.Stat(dst); err == nil && !o.Replace {
		return Config{}, fmt.Errorf("config %q (%s) exists at %s: pass --replace to overwrite it", name, fam, dst)
	}
	c, _, err := s.resolve(Config{Name: name, Family: fam, Own: b, Base: base, Source: dst}, nil)
	if err != nil {
		return Config{}, err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return Config{}, fmt.Errorf("create %s: %w", s.Dir, err)
	}
	if err := atomicfile.Write(dst, b, 0o644); err != nil {
		return Config{}, err
	}
	return c, nil
}

func parseFile(file string) (Family, string, bool) {
	for _, fam := range Families {
		if name, ok := strings.CutSuffix(file, fam.Ext()); ok && nameRE.MatchString(name) {
			return fam, name, true
		}
	}
	return "", "", false
}

// AddContent stores content as the user's config name of family fam, as
// Add does for a file.
// Ensure writes a config qpslab names itself (the demo's, an A/A run's
// labels): it creates it, keeps it when it holds exactly content, and
// refuses one of that name with other settings (a config the user made),
// which it never overwrites.
func (s Store) Ensure(name string, content []byte, fam Family) (Config, error) {
	dst := filepath.Join(s.Dir, name+fam.Ext())
	if have, err := os.ReadFile(dst); err == nil {
		if !bytes.Equal(have, content) {
			return Config{}, fmt.Errorf("config %q (%s) exists with settings qpslab did not write: rename or remove it (qpslab names this config itself and never overwrites yours)", name, dst)
		}
		return Config{Name: name, Family: fam, Content: content, Source: dst}, nil
	}
	return s.AddContent(name, content, fam, false)
}

func (s Store) AddContent(name string, content []byte, fam Family, replace bool) (Config, error) {
	if !nameRE.MatchString(name) {
		return Config{}, fmt.Errorf("config name %q is not valid: use letters, digits, _ and - (e.g. cz11a_bee)", name)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return Config{}, fmt.Errorf("create %s: %w", s.Dir, err)
	}
	dst := filepath.Join(s.Dir, name+fam.Ext())
	if _, err := os.Stat(dst); err == nil && !replace {
		return Config{}, fmt.Errorf("config %q (%s) exists at %s: pass --replace to overwrite it", name, fam, dst)
	}
	if err := atomicfile.Write(dst, content, 0o644); err != nil {
		return Config{}, err
	}
	return Config{Name: name, Family: fam, Content: content, Source: dst}, nil
}
