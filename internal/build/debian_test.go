package build_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/testenv"
)

func TestUpstream(t *testing.T) {
	for deb, want := range map[string]string{
		"1:10.11.14-0+deb12u2": "10.11.14", "9.7.4-2": "9.7.4", "1:10.5.23-0+deb11u1": "10.5.23", "17.0-1": "17.0", "8.4.3": "8.4.3",
		"1:11.8.3-0+deb13u1": "11.8.3", "2.36+dfsg-1": "2.36",
	} {
		if got := build.Upstream(deb); got != want {
			t.Errorf("Upstream(%q) = %q, want %q", deb, got, want)
		}
	}
}

// Debian's newest MySQL, fetched from its suite with a private apt state:
// the version its binary reports, the package and suite recorded, a
// launcher where the host's C library is too old for it (decided by
// trying), nothing of the system's apt state touched; a second fetch comes
// from the cache.
func TestFetchFromDebian(t *testing.T) {
	ctx := context.Background()
	h := testenv.Home(t)
	r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	newest, err := r.DebianNewest(ctx, build.MySQL, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile("/var/lib/dpkg/status")
	spec := "mysql-" + newest.Upstream()
	b, err := r.Fetch(ctx, spec, build.FetchOptions{From: "debian"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != spec || b.Flavor != build.MySQL || !strings.HasPrefix(b.Version, newest.Upstream()) || b.Source != "debian" ||
		!strings.Contains(b.Artifact, newest.Package) || !strings.Contains(b.Artifact, "Debian "+newest.Suite) {
		t.Errorf("Fetch = %+v, want %s from Debian %s's %s", b, spec, newest.Suite, newest.Package)
	}
	if !strings.HasPrefix(b.Basedir, filepath.Join(h.Cache, "builds")) {
		t.Errorf("Basedir %s is outside the cache", b.Basedir)
	}
	l, err := b.Layout()
	if err != nil {
		t.Fatal(err)
	}
	if _, f, ver, _, err := build.Inspect(ctx, build.MySQL, b.Basedir); err != nil || f != build.MySQL || ver != b.Version {
		t.Errorf("Inspect: %v %s %s", err, f, ver)
	}
	if raw, err := os.ReadFile(l.Server); err == nil && strings.HasPrefix(string(raw), "#!") {
		if _, err := os.Stat(l.Server + ".debian"); err != nil || !strings.Contains(string(raw), "--library-path") {
			t.Errorf("the launcher %s does not start %s.debian through its suite's loader:\n%s", l.Server, l.Server, raw)
		}
		if notes := build.RuntimeNotes([]build.Build{b}); len(notes) != 1 || !strings.Contains(notes[0], "Debian "+newest.Suite+"'s C library") {
			t.Errorf("a build on its suite's C library is not noted for host check: runtime %q, notes %q", b.Runtime, notes)
		}
	} else if b.Runtime != "" {
		t.Errorf("a server that runs on the host's C library records the runtime %q", b.Runtime)
	}
	if after, _ := os.ReadFile("/var/lib/dpkg/status"); string(after) != string(before) {
		t.Error("the fetch changed the system's dpkg status")
	}
	again, err := r.Fetch(ctx, spec, build.FetchOptions{From: "debian", Replace: true})
	if err != nil || again.Basedir != b.Basedir {
		t.Errorf("a second fetch: %v, basedir %s (first %s)", err, again.Basedir, b.Basedir)
	}
}

// A version no suite has is refused in one line naming what they have;
// PostgreSQL is not fetched from Debian; an unknown source is refused.
func TestFetchFromDebianRefusals(t *testing.T) {
	ctx := context.Background()
	h := testenv.Home(t)
	r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	for _, c := range []struct {
		spec, from string
		want       []string
	}{
		{"mysql-1.2.3", "debian", []string{"have no mysql 1.2.3", "they have"}},
		{"postgres-17.0", "debian", []string{"MySQL and MariaDB", "from Maven"}},
		{"mysql-9.7.4", "nowhere", []string{`--from "nowhere"`, "maven, tarball, debian"}},
		{"mysql-9.7.4", "debian\x00", []string{"--from"}},
	} {
		_, err := r.Fetch(ctx, c.spec, build.FetchOptions{From: c.from})
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s --from %q: %v, want one line", c.spec, c.from, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s --from %q: %v, want %q in it", c.spec, c.from, err, w)
			}
		}
	}
}

// A Debian source package through the private apt state (the suite's
// deb-src lists under the cache): its upstream tarball, fetched once; a
// second call finds it and reads nothing. Bad names, versions and suites
// are refused in one line before apt runs.
func TestDebianSource(t *testing.T) {
	ctx := context.Background()
	h := testenv.Home(t)
	r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	dir := t.TempDir()
	var said bytes.Buffer
	tar, err := r.DebianSource(ctx, "bookworm", "hello=2.10-3", dir, build.FetchOptions{Log: &said})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(tar) != dir || !strings.HasPrefix(filepath.Base(tar), "hello_2.10.orig.tar.") {
		t.Fatalf("tarball %s", tar)
	}
	if st, err := os.Stat(tar); err != nil || st.Size() < 100<<10 {
		t.Fatalf("tarball %s: %v", tar, err)
	}
	if _, err := os.Stat(filepath.Join(h.Cache, "apt", "bookworm-src", "sources.list")); err != nil {
		t.Errorf("no private deb-src state under the cache: %v", err)
	}
	said.Reset()
	if again, err := r.DebianSource(ctx, "bookworm", "hello=2.10-3", dir, build.FetchOptions{Log: &said}); err != nil || again != tar || said.Len() > 0 {
		t.Errorf("again: %s %v, said %q: want the same tarball, nothing read", again, err, said.String())
	}
	for _, c := range []struct{ suite, spec, want string }{
		{"bookworm", "hello", "give NAME=VERSION"},
		{"bookworm", "hello=2.10-3; rm -rf /", "give NAME=VERSION"},
		{"bookworm", "Hello=2.10-3", "give NAME=VERSION"},
		{"sid\n", "hello=2.10-3", "--suite"},
		{"bookworm", "hello=9.99-1", "apt-get source hello=9.99-1"},
	} {
		_, err := r.DebianSource(ctx, c.suite, c.spec, t.TempDir(), build.FetchOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q %q: %v, want one line naming %q", c.suite, c.spec, err, c.want)
		}
	}
}

// A MariaDB server fetched from Debian comes with the MyRocks plugin of its
// version, which Debian ships apart (mariadb-plugin-rocksdb), and its
// layout names its own plugin folder: its compiled-in one is the host's
// /usr/lib/mysql/plugin, whose ha_rocksdb.so is of another server.
func TestFetchFromDebianMyRocks(t *testing.T) {
	ctx := context.Background()
	h := testenv.Home(t)
	r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	picks, err := r.DebianAvailable(ctx, build.MariaDB, "", func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	var spec string
	for _, p := range picks {
		if p.Suite == "bullseye" {
			spec = "mariadb-" + p.Upstream()
		}
	}
	if spec == "" {
		t.Fatalf("Debian bullseye has no MariaDB: %+v", picks)
	}
	b, err := r.Fetch(ctx, spec, build.FetchOptions{From: "debian"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.Layout()
	if err != nil {
		t.Fatal(err)
	}
	if l.PluginDir != filepath.Join(b.Basedir, "lib/mysql/plugin") {
		t.Errorf("plugin folder %q, want the build's own", l.PluginDir)
	}
	if _, err := os.Stat(filepath.Join(l.PluginDir, "ha_rocksdb.so")); err != nil {
		t.Errorf("no MyRocks plugin with the fetched %s: %v", spec, err)
	}
	if sys, err := r.Get(ctx, "mariadb-system"); err == nil {
		if l, err := sys.Layout(); err == nil && l.PluginDir != "" {
			t.Errorf("the system build names a plugin folder %q: its own compiled-in one is right", l.PluginDir)
		}
	}
}
