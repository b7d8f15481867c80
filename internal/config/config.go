// Package config owns named config variants: a my.cnf fragment for the MySQL
// family or a postgresql.conf fragment for PostgreSQL. qpslab ships defaults
// (embedded in the binary); users add their own by file, under their own names,
// into the home's configs folder. A config is identified by its name plus a hash
// of its content, so an edited file is a different config. This package only
// reads and writes fragments; applying them to a server is the sandbox's job.
package config

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Family says which servers a fragment applies to.
type Family string

const (
	MySQL    Family = "mysql"    // my.cnf fragments, for MariaDB and MySQL
	Postgres Family = "postgres" // postgresql.conf fragments
)

// Ext is the file extension of a family's fragments.
func (f Family) Ext() string {
	if f == Postgres {
		return ".conf"
	}
	return ".cnf"
}

// FamilyOf maps a build flavor (mariadb, mysql, postgres) to its config family.
func FamilyOf(flavor string) Family {
	if flavor == "postgres" {
		return Postgres
	}
	return MySQL
}

// Config is one named config variant.
type Config struct {
	Name    string
	Family  Family
	Content []byte
	Source  string // "shipped" or the file it was read from
}

// Hash is the SHA-256 of the content, hex.
func (c Config) Hash() string {
	s := sha256.Sum256(c.Content)
	return hex.EncodeToString(s[:])
}

// ID is name@hash (12 hex digits): what a stored run records.
func (c Config) ID() string { return c.Name + "@" + c.Hash()[:12] }

//go:embed shipped/*
var shipped embed.FS

// Store reads shipped configs and the user's configs folder.
type Store struct{ Dir string }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// ErrNotFound is returned by Get for an unknown config.
var ErrNotFound = errors.New("config not found")

// Get returns the config called name for family. A user's file shadows a
// shipped config of the same name.
func (s Store) Get(name string, fam Family) (Config, error) {
	if !nameRE.MatchString(name) {
		return Config{}, fmt.Errorf("config name %q is not valid: use letters, digits, _ and - (e.g. cz11a_bee)", name)
	}
	file := name + fam.Ext()
	path := filepath.Join(s.Dir, file)
	if b, err := os.ReadFile(path); err == nil {
		return Config{Name: name, Family: fam, Content: b, Source: path}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Config{}, fmt.Errorf("read config %s: %w", path, err)
	}
	if b, err := shipped.ReadFile("shipped/" + file); err == nil {
		return Config{Name: name, Family: fam, Content: b, Source: "shipped"}, nil
	}
	return Config{}, fmt.Errorf("%w: no %s config named %q: see qpslab configs list, or add one with qpslab configs add %s FILE", ErrNotFound, fam, name, name)
}

// List returns every config, shipped and the user's, sorted by family and name.
func (s Store) List() ([]Config, error) {
	seen := map[string]bool{}
	var out []Config
	add := func(file, source string, b []byte) {
		fam, name, ok := parseFile(file)
		if !ok || seen[file] {
			return
		}
		seen[file] = true
		out = append(out, Config{Name: name, Family: fam, Content: b, Source: source})
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

// Add copies file into the configs folder under name. The family comes from
// the file's extension (.cnf or .conf) unless fam is set. It refuses to
// overwrite an existing user config unless replace is set.
func (s Store) Add(name, file string, fam Family, replace bool) (Config, error) {
	if !nameRE.MatchString(name) {
		return Config{}, fmt.Errorf("config name %q is not valid: use letters, digits, _ and - (e.g. cz11a_bee)", name)
	}
	if fam == "" {
		switch filepath.Ext(file) {
		case ".cnf":
			fam = MySQL
		case ".conf":
			fam = Postgres
		default:
			return Config{}, fmt.Errorf("cannot tell the family of %s: name it .cnf (MySQL family) or .conf (PostgreSQL), or pass --family", file)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return Config{}, fmt.Errorf("read config file: %w", err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return Config{}, fmt.Errorf("create %s: %w", s.Dir, err)
	}
	dst := filepath.Join(s.Dir, name+fam.Ext())
	if _, err := os.Stat(dst); err == nil && !replace {
		return Config{}, fmt.Errorf("config %q (%s) exists at %s: pass --replace to overwrite it", name, fam, dst)
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return Config{}, fmt.Errorf("write %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return Config{}, fmt.Errorf("write %s: %w", dst, err)
	}
	return Config{Name: name, Family: fam, Content: b, Source: dst}, nil
}

func parseFile(file string) (Family, string, bool) {
	for _, fam := range []Family{MySQL, Postgres} {
		if name, ok := strings.CutSuffix(file, fam.Ext()); ok && nameRE.MatchString(name) {
			return fam, name, true
		}
	}
	return "", "", false
}

// AddContent stores content as the user's config name of family fam, as
// Add does for a file.
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
	if err := os.WriteFile(dst+".tmp", content, 0o644); err != nil {
		return Config{}, fmt.Errorf("write %s: %w", dst, err)
	}
	if err := os.Rename(dst+".tmp", dst); err != nil {
		return Config{}, fmt.Errorf("write %s: %w", dst, err)
	}
	return Config{Name: name, Family: fam, Content: content, Source: dst}, nil
}
