package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/atomicfile"
)

// Registry reads and writes build records and knows the system builds.
type Registry struct {
	Dir   string // one NAME.yaml per build
	Cache string // artifact cache
	Logs  string // compile logs; "" for the logs folder beside Dir (the home's)
}

// MaxNameLen is the longest build name.
const MaxNameLen = 100

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// ValidName checks a build name: letters, digits and _ . + - (the seeds name
// builds like ma100244_rel_withdbg or my8036_rel), at most MaxNameLen of
// them (a name is a file name in the registry, the cache and the logs).
func ValidName(name string) error {
	if len(name) > MaxNameLen {
		return fmt.Errorf("build name %.20q… is %d characters long: use at most %d (e.g. ma100244_rel)", name, len(name), MaxNameLen)
	}
	if !nameRE.MatchString(name) {
		return fmt.Errorf("build name %q is not valid: use letters, digits and _ . + - (e.g. ma100244_rel)", name)
	}
	return nil
}

// systemCandidates are the Debian packages' builds, by name
// (FLAVOR-system), where a flavor's descriptor knows its package's prefix.
func systemCandidates() []Build {
	var out []Build
	for _, d := range flavors {
		if d.system == nil {
			continue
		}
		if dir := d.system(); dir != "" {
			out = append(out, Build{Name: string(d.Flavor) + "-system", Flavor: d.Flavor, Basedir: dir, Source: "system"})
		}
	}
	return out
}

// systemBuild returns the named system build if its binaries are installed.
func systemBuild(ctx context.Context, name string) (Build, bool, error) {
	for _, b := range systemCandidates() {
		if b.Name != name {
			continue
		}
		l, err := FindLayout(b.Flavor, b.Basedir)
		if err != nil {
			return Build{}, false, nil
		}
		got, ver, banner, err := ReadVersion(ctx, b.Flavor, l)
		if err != nil {
			return Build{}, false, err
		}
		if got != b.Flavor {
			return Build{}, false, nil // e.g. /usr/sbin/mariadbd missing, something else there
		}
		b.Version, b.Banner = ver, banner
		return b, true, nil
	}
	return Build{}, false, nil
}

// List returns the installed system builds and every registered build.
func (r Registry) List(ctx context.Context) ([]Build, error) {
	var out []Build
	for _, c := range systemCandidates() {
		if b, ok, err := systemBuild(ctx, c.Name); err != nil {
			return nil, err
		} else if ok {
			out = append(out, b)
		}
	}
	ents, err := os.ReadDir(r.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list builds in %s: %w", r.Dir, err)
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".yaml")
		if !ok {
			continue
		}
		b, err := r.load(name)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Get returns the named build.
func (r Registry) Get(ctx context.Context, name string) (Build, error) {
	if err := ValidName(name); err != nil {
		return Build{}, err
	}
	if _, err := os.Stat(r.path(name)); err == nil {
		return r.load(name)
	}
	b, ok, err := systemBuild(ctx, name)
	if err != nil {
		return Build{}, err
	}
	if ok {
		return b, nil
	}
	hint := "see qpslab builds list; add one with qpslab builds add NAME --flavor F --basedir DIR or qpslab builds fetch mariadb-10.2.11"
	if strings.HasSuffix(name, "-system") {
		hint = "its Debian package is not installed: run make setup"
	}
	return Build{}, fmt.Errorf("unknown build %q: %s", name, hint)
}

func (r Registry) path(name string) string { return filepath.Join(r.Dir, name+".yaml") }

func (r Registry) load(name string) (Build, error) {
	raw, err := os.ReadFile(r.path(name))
	if err != nil {
		return Build{}, fmt.Errorf("read build %s: %w", name, err)
	}
	var b Build
	if err := yaml.Unmarshal(raw, &b); err != nil {
		return Build{}, fmt.Errorf("read build %s: %s: %w", name, r.path(name), err)
	}
	if b.Name != name {
		return Build{}, fmt.Errorf("build record %s names %q, not %q: rename the file or fix its name field", r.path(name), b.Name, name)
	}
	switch err := b.Flavor.Check(); {
	case b.Flavor == "":
		b.Flavor = MariaDB // recorded before builds had flavors: qpslab began with MariaDB only
	case err != nil:
		return Build{}, fmt.Errorf("build record %s: %v (fix its flavor field, or qpslab builds add %s … --replace)", r.path(name), err, name)
	}
	return b, nil
}

func (r Registry) save(b Build, replace bool) error {
	if err := ValidName(b.Name); err != nil {
		return err
	}
	if strings.HasSuffix(b.Name, "-system") {
		return fmt.Errorf("build name %q is reserved for the Debian packages: choose another name", b.Name)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", r.Dir, err)
	}
	p := r.path(b.Name)
	if !replace {
		if old, err := r.load(b.Name); err == nil && (old.Basedir != b.Basedir || old.Flavor != b.Flavor || old.Program != b.Program) {
			return fmt.Errorf("build %q exists (%s %s at %s): choose another name or pass --replace", b.Name, old.Flavor, old.Version, old.Basedir)
		}
	}
	raw, err := yaml.Marshal(b)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(p, raw, 0o644); err != nil {
		return fmt.Errorf("write build %s: %w", b.Name, err)
	}
	return nil
}

// Add registers the install prefix basedir as build name of flavor f, after
// finding its server binary and reading its version.
func (r Registry) Add(ctx context.Context, name string, f Flavor, basedir string, replace bool) (Build, error) {
	if err := ValidName(name); err != nil {
		return Build{}, err
	}
	abs, err := filepath.Abs(basedir)
	if err != nil {
		return Build{}, fmt.Errorf("resolve basedir %s: %w", basedir, err)
	}
	_, got, ver, banner, err := Inspect(ctx, f, abs)
	if err != nil {
		return Build{}, err
	}
	b := Build{Name: name, Flavor: got, Version: ver, Banner: banner, Basedir: abs, Source: "basedir", Added: time.Now().UTC()}
	if err := r.save(b, replace); err != nil {
		return Build{}, err
	}
	return b, nil
}
