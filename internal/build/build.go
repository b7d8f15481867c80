// Package build owns builds: a flavor (mariadb, mysql, postgres, or rocksdb:
// RocksDB's db_bench, which is no server), a version read from the binary,
// and the directory holding the binaries. Builds come from the Debian
// packages ("system"), from any install prefix the user names (a basedir,
// or for rocksdb the program itself), from registry artifacts fetched
// once into the cache, or are compiled from a source tree or a git commit
// with the flavor's recipe (compile.go). What differs between flavors is
// each flavor's Descriptor (flavor.go), which the packages above ask
// instead of comparing flavors. This package finds binaries, compiles and
// records builds; it never starts a server.
package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Build is one registered build. It is stored as YAML, one file per build.
type Build struct {
	Name     string    `yaml:"name"`
	Flavor   Flavor    `yaml:"flavor"`
	Version  string    `yaml:"version"`            // numeric, e.g. 10.11.19 or 15.18
	Banner   string    `yaml:"banner"`             // what --version printed
	Basedir  string    `yaml:"basedir"`            // install prefix
	Program  string    `yaml:"program,omitempty"`  // the binary itself, when named by its path (a rocksdb build's db_bench.8.6.7)
	Source   string    `yaml:"source"`             // system, basedir, maven, file, compile
	Artifact string    `yaml:"artifact,omitempty"` // registry coordinates or file
	SHA256   string    `yaml:"sha256,omitempty"`   // of the artifact
	Added    time.Time `yaml:"added"`
	// A build compiled from source (qpslab builds compile) says from what.
	Commit     string    `yaml:"commit,omitempty"`      // full hash ("" for a tree not in git)
	CommitTime time.Time `yaml:"commit_time,omitempty"` // committer time (Commit.Time): commit builds order by it
	Flags      string    `yaml:"flags,omitempty"`       // the recipe's flags (CFLAGS / cmake -D… / make vars)
	// CMakeOptions are the -DNAME=VALUE the user added (--cmake-option),
	// also at the end of Flags.
	CMakeOptions []string `yaml:"cmake_options,omitempty"`
	Src          string   `yaml:"src,omitempty"` // the source tree compiled
	// Runtime names the C library a build fetched from a Debian suite runs
	// on where it is not the host's ("" where it is the host's).
	Runtime string `yaml:"runtime,omitempty"`
}

// Layout is where a build's programs are.
type Layout struct {
	Server    string   // mariadbd, mysqld or postgres; db_bench for rocksdb
	InstallDB string   // mariadb-install-db, mysql_install_db or initdb; empty when the server initializes itself (mysqld --initialize-insecure)
	Share     string   // MySQL family: the directory holding english/errmsg.sys (--lc-messages-dir)
	LibDirs   []string // prepended to LD_LIBRARY_PATH (bundled libraries such as libaio)
	// PluginDir is the MySQL family's plugin folder where the server's
	// compiled-in one is not its own (a Debian suite's server: MyRocks'
	// ha_rocksdb.so of its version); "" for the server's default.
	PluginDir string
}

// Env is the environment the build's programs need, on top of env.
func (l Layout) Env(env []string) []string {
	if len(l.LibDirs) == 0 {
		return env
	}
	ld := strings.Join(l.LibDirs, ":")
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_LIBRARY_PATH="); ok {
			if v != "" {
				ld += ":" + v
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LD_LIBRARY_PATH="+ld)
}

func firstFile(base string, rels ...string) string {
	for _, r := range rels {
		p := filepath.Join(base, r)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func firstDir(base string, rels ...string) string {
	for _, r := range rels {
		p := filepath.Join(base, r)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
	}
	return ""
}

// FindLayout locates the programs of a flavor under basedir.
func FindLayout(f Flavor, basedir string) (Layout, error) {
	if st, err := os.Stat(basedir); err != nil || !st.IsDir() {
		return Layout{}, fmt.Errorf("basedir %s is not a directory", basedir)
	}
	d, ok := lookup(f)
	if !ok {
		return Layout{}, fmt.Errorf("unknown flavor %q", f)
	}
	l, err := d.layout(f, basedir)
	if err != nil {
		return Layout{}, err
	}
	var libs []string
	for _, dir := range []string{"libs", "lib"} {
		// Only bundled-library folders; a system prefix such as /usr has lib/
		// too, and putting that first would change nothing but is noise.
		if p := firstDir(basedir, dir); p != "" && !systemPrefix(basedir) {
			libs = append(libs, p)
		}
	}
	if filepath.Base(basedir) == "usr" && !systemPrefix(basedir) {
		libs = append(libs, multiarch(filepath.Dir(basedir))...) // a Debian package's prefix (fetched from a suite)
	}
	l.LibDirs = append(libs, l.LibDirs...)
	return l, nil
}

// systemPrefix says whether basedir is the system's own install prefix,
// whose libraries the dynamic loader finds without help.
func systemPrefix(basedir string) bool { return basedir == "/usr" || basedir == "/usr/local" }

// ReadVersion runs the server binary with --version and returns the flavor it
// reports (each flavor's descriptor reads its own banner: MariaDB says so,
// anything else with "Ver" is MySQL), the numeric version and the whole
// banner. Names are never trusted for this.
func ReadVersion(ctx context.Context, f Flavor, l Layout) (Flavor, string, string, error) {
	if d, ok := lookup(f); ok && d.readVersion != nil {
		return d.readVersion(ctx, l)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Server, "--version")
	cmd.Env = l.Env(os.Environ())
	out, err := cmd.CombinedOutput()
	banner := strings.TrimSpace(string(out))
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrPermission) {
			return "", "", banner, fmt.Errorf("run %s --version: %v: %s", l.Server, err, firstLine(banner))
		}
		return "", "", banner, fmt.Errorf("run %s --version: %w", l.Server, err)
	}
	for _, d := range flavors {
		if d.version == nil {
			continue
		}
		if ver, ok := d.version(banner); ok {
			return d.Flavor, ver, banner, nil
		}
	}
	return "", "", banner, fmt.Errorf("%s --version printed no version: %q", l.Server, firstLine(banner))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Inspect finds the layout of basedir and reads its version, checking that the
// binary is of the flavor claimed.
func Inspect(ctx context.Context, f Flavor, basedir string) (Layout, Flavor, string, string, error) {
	l, err := FindLayout(f, basedir)
	if err != nil {
		return Layout{}, "", "", "", err
	}
	got, ver, banner, err := ReadVersion(ctx, f, l)
	if err != nil {
		return Layout{}, "", "", "", err
	}
	if got != f {
		return Layout{}, "", "", "", fmt.Errorf("basedir %s holds %s %s, not %s: use --flavor %s", basedir, got, ver, f, got)
	}
	if err := checkStartable(got, ver, basedir, l); err != nil {
		return Layout{}, "", "", "", err
	}
	return l, got, ver, banner, nil
}

// checkStartable checks that a basedir holds what qpslab needs to make a
// datadir and start a server of its flavor: an install script always does;
// without one, the flavor's descriptor says (MariaDB needs its script,
// MySQL before 5.7 too; PostgreSQL's initdb is part of its layout).
func checkStartable(f Flavor, ver, basedir string, l Layout) error {
	d, ok := lookup(f)
	if l.InstallDB != "" || !ok || d.startable == nil {
		return nil
	}
	return d.startable(ver, basedir, l)
}

// Layout finds this build's programs.
func (b Build) Layout() (Layout, error) {
	if b.Program != "" {
		return programLayout(b.Program)
	}
	return FindLayout(b.Flavor, b.Basedir)
}

// AtLeast reports whether the build's version is >= the dotted version v.
func (b Build) AtLeast(v string) bool { return CompareVersions(b.Version, v) >= 0 }

// CompareVersions compares dotted numeric versions naturally
// (10.2.44 < 10.11.7 < 11.4.1); missing parts count as 0.
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			fmt.Sscanf(as[i], "%d", &x)
		}
		if i < len(bs) {
			fmt.Sscanf(bs[i], "%d", &y)
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
