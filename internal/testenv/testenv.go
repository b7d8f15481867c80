// Package testenv gives qpslab's tests what they share: a throwaway qpslab
// home that an unprivileged server account can reach, the builds the tests
// start (fetched once into the shared artifact cache), and a look at the
// process table. It is imported only by tests.
package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/home"
)

// Home returns a new qpslab home under the temp folder, removed after the
// test. Its folders are mode 0755 (t.TempDir's are 0700), because PostgreSQL
// runs as an unprivileged user when the tests run as root. The artifact cache
// is the user's real one (QPSLAB_CACHE, or the default home's), so that
// registry builds are fetched once, not once per test.
func Home(t testing.TB) home.Home {
	t.Helper()
	dir, err := os.MkdirTemp("", "qpslab-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cache := os.Getenv("QPSLAB_CACHE")
	if cache == "" {
		real, err := home.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		cache = real.Cache
	}
	return home.Home{Root: dir, Cache: cache}
}

// Env returns the environment that points a qpslab process at h.
func Env(h home.Home) []string {
	return append(os.Environ(), "QPSLAB_HOME="+h.Root, "QPSLAB_CACHE="+h.Cache)
}

// Build returns the named build in h: a system build, a registry build
// (mariadb-10.2.11, postgres-12.17.0) fetched into the shared cache, or for
// MySQL QPSLAB_MYSQL_BASEDIR, else Debian's newest MySQL, fetched into the
// shared cache once.
func Build(t testing.TB, h home.Home, name string) build.Build {
	t.Helper()
	if name == MySQL {
		return mysqlBuild(t, h)
	}
	r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	ctx := context.Background()
	if strings.HasSuffix(name, "-system") {
		b, err := r.Get(ctx, name)
		if err != nil {
			t.Fatalf("%v (make setup installs the Debian packages)", err)
		}
		return b
	}
	b, err := r.Fetch(ctx, name, build.FetchOptions{})
	if err != nil {
		t.Fatalf("fetch %s: %v", name, err)
	}
	return b
}

// Processes returns "pid cmdline" for every live process whose command line
// or environment contains marker (zombies have no command line and are not
// counted). Tests put the home's path in the environment with Setenv, so every
// server they start, and every child of one, carries it.
func Processes(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	self := fmt.Sprint(os.Getpid())
	for _, e := range ents {
		if e.Name() == self || e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		// PostgreSQL's children retitle themselves ("postgres: checkpointer"),
		// but they inherit the environment, which names the home.
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if !bytes.Contains(b, []byte(marker)) && !bytes.Contains(env, []byte(marker)) {
			continue
		}
		out = append(out, e.Name()+" "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
	}
	return out
}

// WantErr fails unless err is a one-line error containing every substring:
// what every bad input must get.
func WantErr(t testing.TB, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", subs)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	for _, s := range subs {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q does not mention %q", msg, s)
		}
	}
}

// MySQL is the name tests give Build for a MySQL build: one is used
// wherever a MySQL basedir is present (QPSLAB_MYSQL_BASEDIR, or a MySQL
// tarball fetched into the shared cache with qpslab builds fetch
// mysql-VERSION); without one the test is skipped, and the skip is named
// in `make test`'s summary (Skip).
const MySQL = "mysql"

// mysqlBuild registers the MySQL basedir of QPSLAB_MYSQL_BASEDIR, or else
// the first MySQL build unpacked in the shared cache, in h, or skips t.
func mysqlBuild(t testing.TB, h home.Home) build.Build {
	t.Helper()
	r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	ctx := context.Background()
	if dir := os.Getenv("QPSLAB_MYSQL_BASEDIR"); dir != "" {
		b, err := r.Add(ctx, "mysql-test", build.MySQL, dir, true)
		if err != nil {
			t.Fatalf("QPSLAB_MYSQL_BASEDIR=%s: %v", dir, err)
		}
		return b
	}
	// Debian's newest MySQL, fetched once into the shared cache (a later
	// fetch reads the suites' lists at most once a day and finds it there).
	newest, err := r.DebianNewest(ctx, build.MySQL, func(string, ...any) {})
	if err != nil {
		t.Fatalf("no MySQL to test with (%v): set QPSLAB_MYSQL_BASEDIR to a MySQL install prefix", err)
	}
	b, err := r.Fetch(ctx, "mysql-"+newest.Upstream(), build.FetchOptions{From: "debian", Name: "mysql-test", Replace: true})
	if err != nil {
		t.Fatalf("fetch MySQL %s from Debian %s: %v", newest.Upstream(), newest.Suite, err)
	}
	return b
}
