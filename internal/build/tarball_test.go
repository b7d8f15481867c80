package build_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/testenv"
)

// arch is the machine's architecture as the projects name their tarballs.
func arch(t *testing.T) string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	testenv.Skip(t, "the projects publish no tarballs for "+runtime.GOARCH)
	return ""
}

// serverTarball is a binary tarball as the projects lay them out: one top
// folder with bin/mysqld (or bin/mariadbd and scripts/mariadb-install-db),
// share/english/errmsg.sys, and a lib/ of incompressible bytes, so that a
// download takes several reads and can be cut in the middle. Its server is
// a script that prints banner: no MySQL binary can be had here.
func serverTarball(t *testing.T, top, banner string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name string, mode int64, body []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + name, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	script := []byte("#!/bin/sh\ncat <<'EOF'\n" + banner + "\nEOF\n")
	if strings.Contains(banner, "MariaDB") {
		add("bin/mariadbd", 0o755, script)
		add("scripts/mariadb-install-db", 0o755, []byte("#!/bin/sh\nexit 0\n"))
	} else {
		add("bin/mysqld", 0o755, script)
	}
	add("share/english/errmsg.sys", 0o644, []byte("errmsg"))
	pad := make([]byte, 600<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range pad {
		pad[i] = byte(r.Uint32())
	}
	add("lib/libpadding.so", 0o644, pad)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// archive is a local HTTP server standing in for a project's archive: it
// serves files by path (Range requests too, as http.ServeContent does), can
// cut a file's first download in the middle, and records every request.
type archive struct {
	*httptest.Server
	mu       sync.Mutex
	files    map[string][]byte
	cutOnce  map[string]bool
	requests []string // "GET /path" plus " Range=…" when one was asked
}

func newArchive(t *testing.T) *archive {
	a := &archive{files: map[string][]byte{}, cutOnce: map[string]bool{}}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		req := r.Method + " " + r.URL.Path
		if rg := r.Header.Get("Range"); rg != "" {
			req += " Range=" + rg
		}
		a.requests = append(a.requests, req)
		body, ok := a.files[r.URL.Path]
		cut := a.cutOnce[r.URL.Path]
		delete(a.cutOnce, r.URL.Path)
		a.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if cut {
			// Promise the whole file, send half, and drop the connection.
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(http.StatusOK)
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		http.ServeContent(w, r, path.Base(r.URL.Path), time.Time{}, bytes.NewReader(body))
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *archive) put(p string, body []byte) { a.mu.Lock(); a.files[p] = body; a.mu.Unlock() }

func (a *archive) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string{}, a.requests...)
}

// gets counts the requests of p.
func (a *archive) gets(p string) int {
	n := 0
	for _, r := range a.got() {
		if r == "GET "+p || strings.HasPrefix(r, "GET "+p+" ") {
			n++
		}
	}
	return n
}

// wantNothingLeft: a refused fetch leaves no download, no part of one, no
// unpacked tree and no build record.
func wantNothingLeft(t *testing.T, r build.Registry) {
	t.Helper()
	for _, dir := range []string{filepath.Join(r.Cache, "downloads"), filepath.Join(r.Cache, "builds"), r.Dir} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != ".lock" {
				t.Errorf("a refused fetch left %s", filepath.Join(dir, e.Name()))
			}
		}
	}
}

const mysqlBanner = "/opt/mysql/bin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)"

// A tarball by URL with its checksum published beside it: downloaded,
// checked, unpacked, registered as the flavor and version its server
// reports; the tarball is not kept, and a second fetch asks the server for
// nothing.
func TestFetchTarballByURL(t *testing.T) {
	a := newArchive(t)
	tgz := serverTarball(t, "mysql-8.0.36-linux-glibc2.17-x86_64", mysqlBanner)
	p := "/mysql/mysql-8.0.36-linux-glibc2.17-x86_64.tar.gz"
	a.put(p, tgz)
	a.put(p+".sha256", []byte(sum(tgz)+"  mysql-8.0.36-linux-glibc2.17-x86_64.tar.gz\n"))
	r := freshRegistry(t)
	var log bytes.Buffer
	b, err := r.Fetch(context.Background(), a.URL+p, build.FetchOptions{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(r.Cache, "builds", "mysql-8.0.36-linux-glibc2.17-x86_64")
	if b.Name != "mysql-8.0.36" || b.Flavor != build.MySQL || b.Version != "8.0.36" || b.Source != "url" || b.Artifact != a.URL+p || b.SHA256 != sum(tgz) || b.Basedir != dest {
		t.Errorf("Fetch = %+v", b)
	}
	for _, want := range []string{"downloading " + a.URL + p, "matches " + a.URL + p + ".sha256", "unpacking"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the fetch did not say %q:\n%s", want, log.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dest, ".qpslab-complete")); err != nil {
		t.Errorf("not marked complete: %v", err)
	}
	if got, err := r.Get(context.Background(), "mysql-8.0.36"); err != nil || got.Basedir != dest {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(r.Cache, "downloads")); len(ents) != 0 {
		t.Errorf("the unpacked tarball is still kept: %v", ents)
	}
	n := len(a.got())
	again, err := r.Fetch(context.Background(), a.URL+p, build.FetchOptions{Name: "my8036", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if again.Basedir != dest || again.SHA256 != sum(tgz) || again.Name != "my8036" {
		t.Errorf("fetch from the cache = %+v", again)
	}
	if len(a.got()) != n {
		t.Errorf("a fetch of a cached tarball asked the server: %v", a.got()[n:])
	}
}

// Each way a download goes wrong.
func TestFetchTarballRefused(t *testing.T) {
	tgz := serverTarball(t, "mysql-8.0.36-linux-glibc2.17-x86_64", mysqlBanner)
	p := "/mysql/mysql-8.0.36-linux-glibc2.17-x86_64.tar.gz"
	corrupt := bytes.Clone(tgz)
	corrupt[len(corrupt)/2] ^= 0xff
	short := tgz[:len(tgz)*2/3]
	for _, c := range []struct {
		name      string
		body, sum []byte
		sha256    string
		want      []string
	}{
		{"corrupted", corrupt, tgz, "", []string{"checksum mismatch", "SHA-256 is " + sum(corrupt), p + ".sha256 says " + sum(tgz), "the download was removed"}},
		{"truncated", short, tgz, "", []string{"checksum mismatch", "SHA-256 is " + sum(short)}},
		{"truncated with its own checksum", short, short, "", []string{"unpack", "mysql-8.0.36-linux-glibc2.17-x86_64.tar.gz"}},
		{"wrong --sha256", tgz, nil, strings.Repeat("ab", 32), []string{"checksum mismatch", "--sha256 says " + strings.Repeat("ab", 32)}},
		{"not a SHA-256", tgz, nil, "abc", []string{`--sha256 "abc" is not a SHA-256`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newArchive(t)
			a.put(p, c.body)
			if c.sum != nil {
				a.put(p+".sha256", []byte(sum(c.sum)+"\n"))
			}
			r := freshRegistry(t)
			_, err := r.Fetch(context.Background(), a.URL+p, build.FetchOptions{SHA256: c.sha256})
			testenv.WantErr(t, err, c.want...)
			wantNothingLeft(t, r)
		})
	}
	t.Run("not found", func(t *testing.T) {
		a := newArchive(t)
		r := freshRegistry(t)
		_, err := r.Fetch(context.Background(), a.URL+p, build.FetchOptions{})
		testenv.WantErr(t, err, "not found (404)", a.URL+p)
		wantNothingLeft(t, r)
	})
	t.Run("not connected", func(t *testing.T) {
		r := freshRegistry(t)
		_, err := r.Fetch(context.Background(), "mysql-8.0.36", build.FetchOptions{Mirror: "http://127.0.0.1:1"})
		testenv.WantErr(t, err, "cannot reach 127.0.0.1:1", "offline", "--from-file FILE --sha256 SUM")
		wantNothingLeft(t, r)
	})
	t.Run("no such version in the archive", func(t *testing.T) {
		a := newArchive(t)
		r := freshRegistry(t)
		_, err := r.Fetch(context.Background(), "mysql-8.0.99", build.FetchOptions{Mirror: a.URL})
		testenv.WantErr(t, err, "no tarball of that version for this machine", "mysql-8.0.99-linux-glibc")
		wantNothingLeft(t, r)
	})
}

// A download cut in the middle is kept as .part and resumed by the next
// fetch with a Range request, then checked and registered.
func TestFetchTarballResumes(t *testing.T) {
	a := newArchive(t)
	tgz := serverTarball(t, "mysql-8.0.36-linux-glibc2.17-x86_64", mysqlBanner)
	p := "/mysql/mysql-8.0.36-linux-glibc2.17-x86_64.tar.gz"
	a.put(p, tgz)
	a.put(p+".sha256", []byte(sum(tgz)+"\n"))
	a.cutOnce[p] = true
	r := freshRegistry(t)
	_, err := r.Fetch(context.Background(), a.URL+p, build.FetchOptions{})
	testenv.WantErr(t, err, "download of mysql-8.0.36-linux-glibc2.17-x86_64.tar.gz interrupted", "run the same fetch again to resume")
	part := filepath.Join(r.Cache, "downloads", path.Base(p)+".part")
	st, err := os.Stat(part)
	if err != nil || st.Size() == 0 || st.Size() >= int64(len(tgz)) {
		t.Fatalf("after the interruption the part is %v, %v (want some of %d bytes)", st, err, len(tgz))
	}
	if ents, _ := os.ReadDir(r.Dir); len(ents) != 0 {
		t.Errorf("an interrupted fetch registered a build")
	}
	b, err := r.Fetch(context.Background(), a.URL+p, build.FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.SHA256 != sum(tgz) || b.Version != "8.0.36" {
		t.Errorf("resumed fetch = %+v", b)
	}
	want := "GET " + p + " Range=bytes=" + strconv.FormatInt(st.Size(), 10) + "-"
	found := false
	for _, req := range a.got() {
		found = found || req == want
	}
	if !found {
		t.Errorf("the second fetch did not resume with %q: %v", want, a.got())
	}
	wantNoFile(t, part)
}

// Tarballs by name from each project's archive layout (served by a mirror
// here): the URL patterns, the checksum files each publishes (Percona's
// .sha256sum, MariaDB's sha256sums.txt), the flavor and version checked.
// MySQL publishes no checksum file: the download is kept, and a fetch with
// --sha256 uses it without downloading again.
func TestFetchTarballByName(t *testing.T) {
	ar := arch(t)
	a := newArchive(t)
	ctx := context.Background()

	percona := "Percona-Server-8.0.36-28-Linux." + ar + ".glibc2.17.tar.gz"
	ptgz := serverTarball(t, strings.TrimSuffix(percona, ".tar.gz"), "/x/bin/mysqld  Ver 8.0.36-28 for Linux on x86_64 (Percona Server (GPL), Release 28, Revision 47601f19)")
	pp := "/downloads/Percona-Server-8.0/Percona-Server-8.0.36-28/binary/tarball/" + percona
	a.put(pp, ptgz)
	a.put(pp+".sha256sum", []byte(sum(ptgz)+"  "+percona+"\n"))

	maria := "mariadb-10.11.7-linux-systemd-" + ar + ".tar.gz"
	mtgz := serverTarball(t, strings.TrimSuffix(maria, ".tar.gz"), "/x/bin/mariadbd  Ver 10.11.7-MariaDB for Linux on x86_64 (MariaDB Server)")
	mdir := "/mariadb-10.11.7/bintar-linux-systemd-" + ar + "/"
	a.put(mdir+maria, mtgz)
	a.put(mdir+"sha256sums.txt", []byte(strings.Repeat("0", 64)+"  other.tar.gz\n"+sum(mtgz)+"  "+maria+"\n"))

	mysql := "mysql-8.0.36-linux-glibc2.17-" + ar + ".tar.xz"
	mytgz := serverTarball(t, strings.TrimSuffix(mysql, ".tar.xz"), mysqlBanner) // gzip inside, as any name: the magic tells
	a.put("/Downloads/MySQL-8.0/"+mysql, mytgz)

	r := freshRegistry(t)
	b, err := r.Fetch(ctx, "percona-server-8.0.36-28", build.FetchOptions{Mirror: a.URL})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "percona-server-8.0.36-28" || b.Flavor != build.MySQL || b.Version != "8.0.36" || b.Artifact != a.URL+pp {
		t.Errorf("Percona Server = %+v", b)
	}
	// By URL, the build is named as its server reports: Percona's release too.
	if b, err := r.Fetch(ctx, a.URL+pp, build.FetchOptions{}); err != nil || b.Name != "percona-server-8.0.36-28" {
		t.Errorf("Percona Server by URL = %+v, %v", b, err)
	}
	b, err = r.Fetch(ctx, "mariadb-10.11.7", build.FetchOptions{Mirror: a.URL, Official: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "mariadb-10.11.7" || b.Flavor != build.MariaDB || b.Version != "10.11.7" || b.SHA256 != sum(mtgz) {
		t.Errorf("MariaDB = %+v", b)
	}

	_, err = r.Fetch(ctx, "mysql-8.0.36", build.FetchOptions{Mirror: a.URL})
	testenv.WantErr(t, err, "publishes no checksum file beside "+mysql, "SHA-256 "+sum(mytgz), "MD5 ", "--sha256 "+sum(mytgz))
	kept := filepath.Join(r.Cache, "downloads", mysql)
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("the unverified download is not kept: %v", err)
	}
	if _, err := r.Get(ctx, "mysql-8.0.36"); err == nil {
		t.Error("an unverified tarball was registered")
	}
	n := a.gets("/Downloads/MySQL-8.0/" + mysql)
	b, err = r.Fetch(ctx, "mysql-8.0.36", build.FetchOptions{Mirror: a.URL, SHA256: sum(mytgz)})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "mysql-8.0.36" || b.Version != "8.0.36" || b.SHA256 != sum(mytgz) {
		t.Errorf("MySQL = %+v", b)
	}
	if a.gets("/Downloads/MySQL-8.0/"+mysql) != n {
		t.Error("the kept download was downloaded again")
	}

	// A tarball whose server is not the version asked for.
	other := "mysql-8.0.35-linux-glibc2.17-" + ar + ".tar.gz"
	otgz := serverTarball(t, "x", mysqlBanner) // says 8.0.36
	a.put("/Downloads/MySQL-8.0/"+other, otgz)
	_, err = r.Fetch(ctx, "mysql-8.0.35", build.FetchOptions{Mirror: a.URL, SHA256: sum(otgz)})
	testenv.WantErr(t, err, "asked for mysql 8.0.35", "reports mysql 8.0.36")

	// Names refused before anything is fetched.
	for spec, want := range map[string]string{
		"percona-server-8.0.36": "carry a release number",
		"mysql-8.0.36-1":        "MySQL versions have no release number",
	} {
		_, err := r.Fetch(ctx, spec, build.FetchOptions{Mirror: a.URL})
		testenv.WantErr(t, err, want)
	}
	_, err = r.Fetch(ctx, "postgres-12.17.0", build.FetchOptions{Mirror: a.URL})
	testenv.WantErr(t, err, "--official and --mirror fetch official tarballs")
}

// A tarball from a local file, as a machine without a connection gets it.
func TestFetchTarballFromFile(t *testing.T) {
	tgz := serverTarball(t, "mysql-8.0.36-linux-glibc2.17-x86_64", mysqlBanner)
	f := filepath.Join(t.TempDir(), "mysql-8.0.36-linux-glibc2.17-x86_64.tar.gz")
	if err := os.WriteFile(f, tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	r := freshRegistry(t)
	_, err := r.Fetch(context.Background(), "mysql-8.0.36", build.FetchOptions{FromFile: f, SHA256: strings.Repeat("0", 64)})
	testenv.WantErr(t, err, "checksum mismatch")
	if strings.Contains(err.Error(), "removed") {
		t.Errorf("the error says the user's file was removed: %v", err)
	}
	if _, err := os.Stat(f); err != nil {
		t.Errorf("a refused --from-file was removed: %v", err)
	}
	b, err := r.Fetch(context.Background(), "mysql-8.0.36", build.FetchOptions{FromFile: f, SHA256: sum(tgz)})
	if err != nil {
		t.Fatal(err)
	}
	if b.Source != "file" || b.Artifact != f || b.Version != "8.0.36" {
		t.Errorf("Fetch = %+v", b)
	}
}
