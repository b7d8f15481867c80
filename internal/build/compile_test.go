package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func commands(rc recipe) []string {
	var out []string
	for _, s := range rc.Steps {
		out = append(out, s.Phase+": "+s.Command())
	}
	return out
}

func checkCommands(t *testing.T, what string, got recipe, want []string) {
	t.Helper()
	g := commands(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got  %s\n want %s", what, strings.Join(g, "\n      "), strings.Join(want, "\n      "))
	}
}

// Each flavor's recipe, as the command lines it runs: flags (default and
// --cflags), prefix, ccache on and off, jobs.
func TestRecipeCommandLines(t *testing.T) {
	in := recipeIn{Src: "/s", Build: "/b", Prefix: "/p", Jobs: 2, Cache: "/c"}
	cc := in
	cc.CCache, cc.Jobs, cc.CFlags = true, 8, "-O3 -march=native"

	checkCommands(t, "postgres", pgRecipe(in), []string{
		"configure: /s/configure --prefix=/p --without-icu 'CFLAGS=-O2 -fno-omit-frame-pointer'",
		"make: make -j2",
		"install: make install",
	})
	checkCommands(t, "postgres ccache", pgRecipe(cc), []string{
		"configure: /s/configure --prefix=/p --without-icu 'CFLAGS=-O3 -march=native' 'CC=ccache gcc'",
		"make: make -j8",
		"install: make install",
	})
	if rc := pgRecipe(in); rc.Flags != "--without-icu CFLAGS='-O2 -fno-omit-frame-pointer'" || !rc.Steps[0].Once || rc.Program != "" {
		t.Errorf("postgres flags %q, configure once %v", rc.Flags, rc.Steps[0].Once)
	}
	meson := t.TempDir()
	os.WriteFile(filepath.Join(meson, "meson.build"), []byte("project('postgresql', ['c'], version: '18devel')\n"), 0o644)
	min := in
	min.Src = meson
	checkCommands(t, "postgres meson", pgRecipe(min), []string{
		"configure: 'CFLAGS=-O2 -fno-omit-frame-pointer' meson setup /b " + meson + " --prefix=/p --buildtype=plain -Dicu=disabled",
		"make: ninja -C /b -j2",
		"install: ninja -C /b install",
	})

	common := "-DCMAKE_BUILD_TYPE=Release '-DCMAKE_C_FLAGS=-g1 -fno-omit-frame-pointer' '-DCMAKE_CXX_FLAGS=-g1 -fno-omit-frame-pointer' " +
		"'-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG' '-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG' -DWITH_SSL=system -DWITH_ZLIB=bundled " +
		"-DMYSQL_MAINTAINER_MODE=0 -DENABLED_LOCAL_INFILE=1 -DWITH_UNIT_TESTS=OFF"
	checkCommands(t, "mysql", mySQL.recipe(in), []string{
		"configure: cmake -S /s -B /b -DCMAKE_INSTALL_PREFIX=/p " + common + " -DWITH_NUMA=ON -DWITH_ROUTER=OFF -DWITH_MYSQLX=OFF -DDOWNLOAD_BOOST=1 -DWITH_BOOST=/c/boost",
		"make: cmake --build /b --parallel 2",
		"install: cmake --install /b",
	})
	mcc := mySQL.recipe(cc)
	if c := mcc.Steps[0].Command(); !strings.HasSuffix(c, "-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache") ||
		!strings.Contains(c, "'-DCMAKE_CXX_FLAGS=-O3 -march=native'") || mcc.Steps[1].Command() != "cmake --build /b --parallel 8" {
		t.Errorf("mysql with ccache and --cflags: %s", strings.Join(commands(mcc), "; "))
	}
	if f := mySQL.recipe(in).Flags; strings.Contains(f, "BOOST=/c") || !strings.Contains(f, "-DDOWNLOAD_BOOST=1") || strings.Contains(f, "/p") {
		t.Errorf("mysql flags hold a path: %s", f)
	}
	checkCommands(t, "mariadb", mariaDB.recipe(in), []string{
		"configure: cmake -S /s -B /b -DCMAKE_INSTALL_PREFIX=/p " + common + " -DPLUGIN_TOKUDB=NO -DPLUGIN_MROONGA=NO -DPLUGIN_SPIDER=NO -DPLUGIN_OQGRAPH=NO " +
			"-DPLUGIN_CONNECT=NO -DPLUGIN_COLUMNSTORE=NO -DPLUGIN_S3=NO -DPLUGIN_ROCKSDB=NO -DWITH_WSREP=OFF",
		"make: cmake --build /b --parallel 2",
		"install: cmake --install /b",
	})

	checkCommands(t, "rocksdb", rocksDBRecipe(in), []string{
		"make: make DISABLE_WARNING_AS_ERROR=1 PORTABLE=1 DEBUG_LEVEL=0 EXTRA_CXXFLAGS=-fno-omit-frame-pointer -j2 db_bench",
		"install: install -D -m 0755 db_bench /p/bin/db_bench",
	})
	// The Makefile has no ccache switch (6.x to 9.x): the compiler goes
	// through it.
	checkCommands(t, "rocksdb ccache", rocksDBRecipe(cc), []string{
		"make: make DISABLE_WARNING_AS_ERROR=1 PORTABLE=1 DEBUG_LEVEL=0 'EXTRA_CXXFLAGS=-O3 -march=native' 'CC=ccache gcc' 'CXX=ccache g++' -j8 db_bench",
		"install: install -D -m 0755 db_bench /p/bin/db_bench",
	})
	if rc := rocksDBRecipe(in); rc.Program != "bin/db_bench" || rc.Flags != "DISABLE_WARNING_AS_ERROR=1 PORTABLE=1 DEBUG_LEVEL=0 EXTRA_CXXFLAGS=-fno-omit-frame-pointer" {
		t.Errorf("rocksdb program %q flags %q", rc.Program, rc.Flags)
	}
	if rc := rocksDBRecipe(cc); rc.Flags != "DISABLE_WARNING_AS_ERROR=1 PORTABLE=1 DEBUG_LEVEL=0 EXTRA_CXXFLAGS='-O3 -march=native'" {
		t.Errorf("rocksdb flags with --cflags (ccache is no flag): %q", rc.Flags)
	}
}

// RocksDB's recipe needs gflags (else db_bench is a stub) and every
// compression library its runs may ask for: lz4 first, the db_bench
// suites' default.
func TestRocksDBNeeds(t *testing.T) {
	have := map[string]string{}
	for _, n := range rocksDB.needs {
		have[n.Pkg] = n.Header
	}
	for pkg, header := range map[string]string{"liblz4-dev": "lz4.h", "libzstd-dev": "zstd.h", "libsnappy-dev": "snappy.h",
		"zlib1g-dev": "zlib.h", "libbz2-dev": "bzlib.h", "libgflags-dev": "gflags/gflags.h"} {
		if have[pkg] != header {
			t.Errorf("rocksdb needs %s (%s): have %q", pkg, header, have[pkg])
		}
	}
	saved := rocksDB.needs
	defer func() { rocksDB.needs = saved }()
	rocksDB.needs = []need{{Header: "qpslab-no-such/lz4.h", Pkg: "liblz4-dev"}, {Header: "qpslab-no-such/zstd.h", Pkg: "libzstd-dev"}}
	wantErr(t, checkNeeds(&rocksDB), "compiling RocksDB needs liblz4-dev, libzstd-dev, not installed here", "apt-get install -y liblz4-dev libzstd-dev")
}

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDetectSource(t *testing.T) {
	version := "MYSQL_VERSION_MAJOR=10\nMYSQL_VERSION_MINOR=11\nMYSQL_VERSION_PATCH=7\nMYSQL_VERSION_EXTRA=\n"
	cases := []struct {
		files      map[string]string
		flavor     Flavor
		ver, named string
	}{
		{map[string]string{"configure": "# Generated by GNU Autoconf for PostgreSQL 15.18.\nPACKAGE_NAME='PostgreSQL'\nPACKAGE_VERSION='15.18'\n"}, Postgres, "15.18", "pg1518"},
		{map[string]string{"configure.ac": "AC_INIT([PostgreSQL], [17devel], [pgsql-bugs@lists.postgresql.org], [], [https://www.postgresql.org/])\n"}, Postgres, "17devel", "pg17"},
		{map[string]string{"meson.build": "project('postgresql',\n  ['c'],\n  version: '16.4',\n)\n"}, Postgres, "16.4", "pg164"},
		{map[string]string{"VERSION": version, "CMakeLists.txt": "PROJECT(MySQL)\n# MariaDB server\n"}, MariaDB, "10.11.7", "ma101107"},
		{map[string]string{"VERSION": "MYSQL_VERSION_MAJOR=8\nMYSQL_VERSION_MINOR=0\nMYSQL_VERSION_PATCH=36\n", "CMakeLists.txt": "PROJECT(MySQL)\n"}, MySQL, "8.0.36", "my8036"},
		{map[string]string{"MYSQL_VERSION": "MYSQL_VERSION_MAJOR=8\nMYSQL_VERSION_MINOR=4\nMYSQL_VERSION_PATCH=0\n", "CMakeLists.txt": "PROJECT(MySQL)\n"}, MySQL, "8.4.0", "my840"},
		{map[string]string{"Makefile": "db_bench: $(OBJS)\n", "include/rocksdb/version.h": "#define ROCKSDB_MAJOR 8\n#define ROCKSDB_MINOR 6\n#define ROCKSDB_PATCH 7\n"}, RocksDB, "8.6.7", "rx867"},
	}
	c := Commit{Hash: "2ee061c2aabbccdd", Time: time.Date(2024, 7, 23, 12, 0, 0, 0, time.UTC)}
	for _, tc := range cases {
		dir := tree(t, tc.files)
		f, ver, err := DetectSource(dir, "")
		if err != nil || f != tc.flavor || ver != tc.ver {
			t.Errorf("%v: %s %s, %v; want %s %s", tc.files, f, ver, err, tc.flavor, tc.ver)
			continue
		}
		if n := DefaultCompileName(f, ver, c); n != tc.named+"_240723_2ee061c2" {
			t.Errorf("%s %s named %s", f, ver, n)
		}
		if n := DefaultCompileName(f, ver, Commit{}); n != string(f)+"-"+ver+"-src" {
			t.Errorf("%s %s not in git named %s", f, ver, n)
		}
	}
	pg := tree(t, cases[0].files)
	if _, _, err := DetectSource(pg, MySQL); err == nil || !strings.Contains(err.Error(), "is not a MySQL source tree") {
		t.Errorf("--flavor mysql on a PostgreSQL tree: %v", err)
	}
	if _, _, err := DetectSource(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "no source tree qpslab knows") {
		t.Errorf("empty folder: %v", err)
	}
}

// fakePG is a PostgreSQL source tree whose configure and build are tiny
// shell scripts: configure writes a Makefile into the build folder (out of
// tree, as PostgreSQL's VPATH build) and counts its runs there; make builds
// a bin/postgres that prints banner, or fails when fail is set.
func fakePG(t *testing.T, dir, banner string, fail bool) {
	t.Helper()
	build := "#!/bin/sh\nprintf '#!/bin/sh\\necho \"%s\"\\n' > postgres\nprintf '#!/bin/sh\\nexit 0\\n' > initdb\nchmod +x postgres initdb\necho compiled\n"
	build = fmt.Sprintf(build, banner)
	if fail {
		build = "#!/bin/sh\necho 'gram.y:12: error: syntax error, unexpected IDENT' >&2\nexit 2\n"
	}
	files := map[string]string{
		"configure": "#!/bin/sh\n# configure for PostgreSQL (a test's stand-in)\nPACKAGE_VERSION='15.18'\n" +
			"for a in \"$@\"; do case \"$a\" in --prefix=*) prefix=\"${a#--prefix=}\";; esac; done\n" +
			"src=$(cd \"$(dirname \"$0\")\" && pwd)\necho run >> configure.runs\n" +
			"printf 'all:\\n\\tsh %s/build.sh\\ninstall:\\n\\tmkdir -p %s/bin\\n\\tcp postgres initdb %s/bin/\\n' \"$src\" \"$prefix\" \"$prefix\" > Makefile\n",
		"build.sh": build,
	}
	for rel, content := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// fakePGGit is a git tree of one commit (2024-07-23) of fakePG, and the
// commit's hash.
func fakePGGit(t *testing.T) (string, string) {
	t.Helper()
	src := t.TempDir()
	gitIn(t, src, 0, "init", "-q", "-b", "main")
	fakePG(t, src, "postgres (PostgreSQL) 15.18", false)
	gitIn(t, src, 1721736000, "add", ".")
	gitIn(t, src, 1721736000, "commit", "-q", "-m", "first")
	return src, gitIn(t, src, 0, "rev-parse", "HEAD")
}

func gitIn(t *testing.T, dir string, when int64, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if when != 0 {
		stamp := fmt.Sprintf("%d +0000", when)
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+stamp, "GIT_COMMITTER_DATE="+stamp)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func testRegistry(t *testing.T) Registry {
	home := t.TempDir()
	return Registry{Dir: filepath.Join(home, "builds"), Cache: filepath.Join(home, "cache")}
}

// listing is every file under dir with its content, for checking that a
// compile left the user's tree as it was.
func listing(t *testing.T, dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			raw, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel+"="+string(raw))
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// A commit of a git tree compiles in qpslab's own checkout: the build is
// recorded with its commit, commit time, flags and default name; the
// user's tree and HEAD are untouched; a second commit reuses the build
// folder (configure ran once).
func TestCompileGitTree(t *testing.T) {
	ctx := context.Background()
	src, _ := fakePGGit(t)
	first := gitIn(t, src, 0, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(src, "README"), []byte("second\n"), 0o644)
	gitIn(t, src, 1721822400, "add", ".")
	gitIn(t, src, 1721822400, "commit", "-q", "-m", "second")
	head := gitIn(t, src, 0, "rev-parse", "HEAD")
	before := listing(t, src)

	r := testRegistry(t)
	var progress bytes.Buffer
	b, err := r.Compile(ctx, CompileOptions{Src: src, Commit: first, Jobs: 1, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	want := "pg1518_240723_" + first[:8]
	if b.Name != want || b.Flavor != Postgres || b.Version != "15.18" || b.Source != "compile" || b.Commit != first ||
		!b.CommitTime.Equal(time.Unix(1721736000, 0)) || b.Src != src || b.Flags != "--without-icu CFLAGS='-O2 -fno-omit-frame-pointer'" {
		t.Errorf("build %+v", b)
	}
	if got, err := r.Get(ctx, want); err != nil || got.Commit != first || !got.CommitTime.Equal(b.CommitTime) || got.Flags != b.Flags || got.Basedir != b.Basedir {
		t.Errorf("record %+v, %v", got, err)
	}
	for _, phase := range []string{"configure", "make", "install"} {
		if !strings.Contains(progress.String(), "compile "+want+": "+phase+" (log: ") {
			t.Errorf("no progress line for %s: %q", phase, progress.String())
		}
	}
	if st := gitIn(t, src, 0, "status", "--porcelain"); st != "" || gitIn(t, src, 0, "rev-parse", "HEAD") != head || listing(t, src) != before {
		t.Errorf("the user's tree changed: status %q", st)
	}

	b2, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1}) // HEAD
	if err != nil {
		t.Fatal(err)
	}
	if b2.Commit != head || b2.Name != "pg1518_240724_"+head[:8] || b2.Basedir == b.Basedir {
		t.Errorf("HEAD build %+v", b2)
	}
	runs, _ := filepath.Glob(filepath.Join(r.Cache, "src", "*", "build", "configure.runs"))
	if len(runs) != 1 {
		t.Fatalf("build folders: %v", runs)
	}
	if raw, _ := os.ReadFile(runs[0]); strings.Count(string(raw), "run") != 1 {
		t.Errorf("configure ran %d times for two commits of one tree", strings.Count(string(raw), "run"))
	}
	if _, _, _, _, err := Inspect(ctx, Postgres, b.Basedir); err != nil {
		t.Errorf("the first build is gone after the second: %v", err)
	}

	// The same commit with the same flags again (a bisection asking for a
	// commit an earlier one compiled): the build is reused, nothing runs.
	progress.Reset()
	again, err := r.Compile(ctx, CompileOptions{Src: src, Commit: first, Jobs: 1, Progress: &progress})
	if err != nil || again.Name != want || again.Basedir != b.Basedir || !strings.Contains(progress.String(), "the build is reused") {
		t.Errorf("the same commit again: %+v, %v, %q", again, err, progress.String())
	}
	if raw, _ := os.ReadFile(runs[0]); strings.Count(string(raw), "run") != 1 {
		t.Errorf("the reused build ran configure again")
	}
	// Decided from the record, before any clone or checkout.
	if err := os.RemoveAll(filepath.Join(r.Cache, "src")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", want} {
		if again, err := r.Compile(ctx, CompileOptions{Src: src, Commit: first, Name: name, Jobs: 1}); err != nil || again.Basedir != b.Basedir {
			t.Errorf("the same commit again (--name %q): %+v, %v", name, again, err)
		}
	}
	if _, err := os.Stat(filepath.Join(r.Cache, "src")); err == nil {
		t.Errorf("a reused build was cloned or checked out")
	}
	// The same tree named by a symbolic link: the same build, reused.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	if again, err := r.Compile(ctx, CompileOptions{Src: link, Commit: first, Jobs: 1}); err != nil || again.Basedir != b.Basedir {
		t.Errorf("the same commit through a link: %+v, %v", again, err)
	}

	// Bad input: an unknown commit; a name taken (by the same commit with
	// other flags, and by another commit).
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Commit: "no-such-rev"}); err == nil || !strings.Contains(err.Error(), `has no commit "no-such-rev"`) {
		t.Errorf("unknown commit: %v", err)
	}
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Commit: first, CFlags: "-O3", Name: want}); err == nil || !strings.Contains(err.Error(), "other flags") || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("name taken by other flags: %v", err)
	}
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Commit: head, Name: want}); err == nil || !strings.Contains(err.Error(), "exists") || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("name taken: %v", err)
	}
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Commit: first, Replace: true, Name: want}); err != nil {
		t.Errorf("--replace: %v", err)
	}
}

// An unpacked tree builds out of tree without a write into it; --commit
// on it is refused; a tree that fails to build returns a CompileError
// naming the phase and the log, and leaves no record and no prefix.
func TestCompilePlainTree(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	fakePG(t, src, "postgres (PostgreSQL) 15.18", false)
	before := listing(t, src)
	r := testRegistry(t)
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Commit: "HEAD"}); err == nil || !strings.Contains(err.Error(), "is not a git tree") {
		t.Errorf("--commit on a plain tree: %v", err)
	}
	b, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, CFlags: "-O1"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "postgres-15.18-src" || b.Commit != "" || !b.CommitTime.IsZero() || b.Flags != "--without-icu CFLAGS=-O1" {
		t.Errorf("build %+v", b)
	}
	if listing(t, src) != before {
		t.Errorf("the unpacked tree was written")
	}
	if b, err := r.Compile(ctx, CompileOptions{Src: src, Flavor: "pg", Name: "pg-alias"}); err != nil || b.Flavor != Postgres {
		t.Errorf("--flavor pg: %+v %v", b, err)
	}
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Flavor: "mysql"}); err == nil || !strings.Contains(err.Error(), "is not a MySQL source tree") {
		t.Errorf("--flavor mysql on a PostgreSQL tree: %v", err)
	}
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Flavor: "oracle"}); err == nil || !strings.Contains(err.Error(), `unknown flavor "oracle"`) {
		t.Errorf("--flavor oracle: %v", err)
	}
	if _, err := r.Compile(ctx, CompileOptions{Src: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no source tree qpslab knows") {
		t.Errorf("an empty folder: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(r.Cache, "src")); len(ents) != 2 { // the tree's folder and its lock
		t.Errorf("the cache holds %d entries for one tree: a refused folder left one", len(ents))
	}

	bad := t.TempDir()
	fakePG(t, bad, "", true)
	_, err = r.Compile(ctx, CompileOptions{Src: bad, Name: "broken"})
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Phase != "make" || !strings.Contains(err.Error(), "compile broken: make failed (exit 2): see ") ||
		!strings.Contains(err.Error(), "(last line: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a tree that fails: %v", err)
	}
	if raw, err := os.ReadFile(ce.Log); err != nil || !strings.Contains(string(raw), "gram.y:12: error") {
		t.Errorf("log %s: %v %q", ce.Log, err, raw)
	}
	if _, err := r.Get(ctx, "broken"); err == nil {
		t.Errorf("a failed compile was recorded")
	}
	left, _ := filepath.Glob(filepath.Join(r.Cache, "src", "*", "install"))
	comp, _ := filepath.Glob(filepath.Join(r.Cache, "compiled", "broken"))
	if len(left)+len(comp) != 0 {
		t.Errorf("install prefix left: %v %v", left, comp)
	}

	// Interrupted: no CompileError (the commit may well build), nothing kept.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Compile(cctx, CompileOptions{Src: src, Name: "interrupted"}); err == nil || errors.As(err, &ce) || !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted: %v", err)
	}
	if comp, _ := filepath.Glob(filepath.Join(r.Cache, "compiled", "interrupted")); len(comp) != 0 {
		t.Errorf("prefix of an interrupted build left")
	}

	// The tree says 15.18, the binary another version: refused, nothing kept.
	liar := t.TempDir()
	fakePG(t, liar, "postgres (PostgreSQL) 16.1", false)
	if _, err := r.Compile(ctx, CompileOptions{Src: liar, Name: "liar"}); !errors.As(err, &ce) || ce.Phase != "check" || !strings.Contains(err.Error(), "reports 16.1") {
		t.Errorf("version disagreement: %v", err)
	}
	if comp, _ := filepath.Glob(filepath.Join(r.Cache, "compiled", "liar")); len(comp) != 0 {
		t.Errorf("prefix of a refused build left")
	}
	// A --replace that fails leaves the build it would replace whole.
	if _, err := r.Compile(ctx, CompileOptions{Src: liar, Name: "postgres-15.18-src", Replace: true}); !errors.As(err, &ce) || ce.Phase != "check" {
		t.Errorf("a failed --replace: %v", err)
	}
	if old, err := r.Get(ctx, "postgres-15.18-src"); err != nil || old.Flags != "--without-icu CFLAGS=-O1" {
		t.Errorf("the replaced build's record: %+v %v", old, err)
	} else if _, _, ver, _, err := Inspect(ctx, Postgres, old.Basedir); err != nil || ver != "15.18" {
		t.Errorf("the replaced build's prefix: %s %v", ver, err)
	}
}

// What a recipe lacks is said in one line with the apt-get line to
// install it; PostgreSQL's also points at make setup.
func TestCheckNeeds(t *testing.T) {
	d := &Descriptor{Flavor: MariaDB, Title: "MariaDB", needs: []need{{Tool: "sh", Pkg: "dash"}, {Tool: "no-such-cmake-here", Pkg: "cmake"},
		{Header: "no/such.h", Pkg: "libnosuch-dev"}, {Header: "no/other.h", Pkg: "libnosuch-dev"}}}
	err := checkNeeds(d)
	if err == nil || err.Error() != "compiling MariaDB needs cmake, libnosuch-dev, not installed here: sudo apt-get install -y cmake libnosuch-dev" {
		t.Errorf("%v", err)
	}
	d.Flavor = Postgres
	if err := checkNeeds(d); err == nil || !strings.Contains(err.Error(), "run make setup, or sudo apt-get") {
		t.Errorf("%v", err)
	}
	if err := checkNeeds(&postgres); err != nil {
		t.Errorf("this machine (after make setup): %v", err)
	}
}

// lines is a Progress writer that hands each line it is given to a channel.
type lines chan string

func (l lines) Write(p []byte) (int, error) { l <- string(p); return len(p), nil }

// Two compiles of one tree wait for each other: while another holds the
// tree's lock, a compile says it waits, and does nothing until the lock is
// let go.
func TestCompileWaitsForTheTreesLock(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	fakePG(t, src, "postgres (PostgreSQL) 15.18", false)
	r := testRegistry(t)
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Name: "first"}); err != nil {
		t.Fatal(err)
	}
	locks, _ := filepath.Glob(filepath.Join(r.Cache, "src", "*.lock"))
	if len(locks) != 1 {
		t.Fatalf("locks %v", locks)
	}
	unlock, err := lockFile(ctx, locks[0])
	if err != nil {
		t.Fatal(err)
	}
	progress := make(lines, 10)
	done := make(chan error, 1)
	go func() {
		_, err := r.Compile(ctx, CompileOptions{Src: src, Name: "second", Progress: progress})
		done <- err
	}()
	if l := <-progress; !strings.Contains(l, "another compile of "+src+" is running") || !strings.Contains(l, "waiting for it") {
		t.Fatalf("first line while locked: %q", l)
	}
	if _, err := r.Get(ctx, "second"); err == nil {
		t.Fatal("compiled while another held the lock")
	}
	select {
	case l := <-progress:
		t.Fatalf("a phase ran while another held the lock: %q", l)
	default:
	}
	unlock()
	go func() {
		for range progress {
		}
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, "second"); err != nil {
		t.Error(err)
	}
}

// A commit whose tree has submodules is checked out with them (MariaDB's
// libmariadb): the build sees the submodule's files.
func TestCompileCheckoutHasSubmodules(t *testing.T) {
	ctx := context.Background()
	sub := t.TempDir()
	gitIn(t, sub, 0, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(sub, "banner"), []byte("postgres (PostgreSQL) 15.18\n"), 0o644)
	gitIn(t, sub, 1721736000, "add", ".")
	gitIn(t, sub, 1721736000, "commit", "-q", "-m", "sub")

	src := t.TempDir()
	gitIn(t, src, 0, "init", "-q", "-b", "main")
	fakePG(t, src, "", false)
	// build.sh: a postgres that prints the banner the submodule holds.
	build := "#!/bin/sh\nsrc=$(cd \"$(dirname \"$0\")\" && pwd)\nprintf '#!/bin/sh\\necho \"%s\"\\n' \"$(cat $src/libsub/banner)\" > postgres\nprintf '#!/bin/sh\\nexit 0\\n' > initdb\nchmod +x postgres initdb\n"
	os.WriteFile(filepath.Join(src, "build.sh"), []byte(build), 0o755)
	gitIn(t, src, 0, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "libsub")
	gitIn(t, src, 1721736000, "add", ".")
	gitIn(t, src, 1721736000, "commit", "-q", "-m", "with a submodule")

	b, err := testRegistry(t).Compile(ctx, CompileOptions{Src: src, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != "15.18" {
		t.Errorf("build %+v", b)
	}
}

// A bad --name and a flavor whose tools are missing are refused before
// anything is cloned or made in the cache.
func TestCompileRefusesBeforeTheCache(t *testing.T) {
	ctx := context.Background()
	src, _ := fakePGGit(t)
	r := testRegistry(t)
	empty := func(what string) {
		t.Helper()
		if ents, err := os.ReadDir(filepath.Join(r.Cache, "src")); err == nil && len(ents) > 0 {
			t.Errorf("%s left %d entries in the cache's src (%s …)", what, len(ents), ents[0].Name())
		}
	}
	for _, name := range []string{"bad name", "pg-system", strings.Repeat("a", 300)} {
		_, err := r.Compile(ctx, CompileOptions{Src: src, Name: name})
		if err == nil || !strings.Contains(err.Error(), "build name") {
			t.Errorf("--name %.20q: %v", name, err)
		}
		empty("--name " + name[:5])
	}
	for _, d := range []*Descriptor{&mariaDB, &mySQL, &rocksDB} {
		if checkNeeds(d) == nil {
			continue
		}
		_, err := r.Compile(ctx, CompileOptions{Src: src, Flavor: d.Flavor})
		if err == nil || !strings.Contains(err.Error(), "not installed here") {
			t.Errorf("--flavor %s without its tools: %v", d.Flavor, err)
		}
		empty("--flavor " + string(d.Flavor))
	}
}

// A git tree that is no source tree qpslab knows is named as the user gave
// it, with the commit, and its clone is not left in the cache.
func TestCompileGitTreeOfNoFlavor(t *testing.T) {
	ctx := context.Background()
	src := gitRepo(t, 1)
	head := gitIn(t, src, 0, "rev-parse", "HEAD")
	r := testRegistry(t)
	_, err := r.Compile(ctx, CompileOptions{Src: src})
	wantErr(t, err, src+" at commit "+head[:8]+" is no PostgreSQL, MariaDB, MySQL or RocksDB source tree")
	if strings.Contains(err.Error(), r.Cache) {
		t.Errorf("the error names the cache: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(r.Cache, "src")); len(ents) > 0 {
		t.Errorf("the clone stayed in the cache: %s …", ents[0].Name())
	}
	// A work folder made before (an earlier compile's build) stays.
	fakePG(t, src, "postgres (PostgreSQL) 15.18", false)
	gitIn(t, src, 1721736000, "add", ".")
	gitIn(t, src, 1721736000, "commit", "-q", "-m", "pg")
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = r.Compile(ctx, CompileOptions{Src: src, Commit: head})
	wantErr(t, err, "is no PostgreSQL")
	if runs, _ := filepath.Glob(filepath.Join(r.Cache, "src", "*", "build", "configure.runs")); len(runs) != 1 {
		t.Errorf("the earlier compile's build folder is gone: %v", runs)
	}
}

// Other --cflags build in a build folder of their own (configure keeps
// the flags of its first run) and, without --name, into a build named
// with a short hash of the flags beside the default flags' build.
func TestCompileFlagsHaveTheirOwnBuildFolder(t *testing.T) {
	ctx := context.Background()
	src, head := fakePGGit(t)
	r := testRegistry(t)
	def, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	o3, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, CFlags: "-O3"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "pg1518_240723_" + head[:8] + "_" + flagsKey("-O3"); o3.Name != want || def.Name != "pg1518_240723_"+head[:8] || o3.Flags != "--without-icu CFLAGS=-O3" {
		t.Errorf("builds %s (%s) and %s, want %s", def.Name, def.Flags, o3.Name, want)
	}
	runs, _ := filepath.Glob(filepath.Join(r.Cache, "src", "*", "build*", "configure.runs"))
	sort.Strings(runs)
	if len(runs) != 2 || filepath.Base(filepath.Dir(runs[0])) != "build-"+flagsKey("-O3") || filepath.Base(filepath.Dir(runs[1])) != "build" {
		t.Errorf("build folders of two flags: %v", runs)
	}
	for _, p := range runs {
		if raw, _ := os.ReadFile(p); strings.Count(string(raw), "run") != 1 {
			t.Errorf("%s: configure ran %d times", p, strings.Count(string(raw), "run"))
		}
	}
}

// RocksDB builds in its checkout: a compile with other flags than the
// checkout's objects were made with runs make clean first.
func TestCompileRocksDBCleansOnOtherFlags(t *testing.T) {
	needs := rocksDB.needs // the fake Makefile needs only make
	rocksDB.needs = []need{{Tool: "make", Pkg: "make"}}
	defer func() { rocksDB.needs = needs }()
	ctx := context.Background()
	src := t.TempDir()
	gitIn(t, src, 0, "init", "-q", "-b", "main")
	files := map[string]string{
		"include/rocksdb/version.h": "#define ROCKSDB_MAJOR 8\n#define ROCKSDB_MINOR 6\n#define ROCKSDB_PATCH 7\n",
		"Makefile": "db_bench:\n\tprintf '#!/bin/sh\\necho db_bench version 8.6.7\\n' > db_bench\n\tchmod +x db_bench\n\techo \"$(EXTRA_CXXFLAGS)\" >> objects\n" +
			"clean:\n\trm -f objects db_bench\n\techo clean >> cleans\n",
	}
	for rel, c := range files {
		os.MkdirAll(filepath.Join(src, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(src, rel), []byte(c), 0o644)
	}
	gitIn(t, src, 1721736000, "add", ".")
	gitIn(t, src, 1721736000, "commit", "-q", "-m", "first")
	r := testRegistry(t)
	for _, c := range []struct{ cflags, name string }{{"", "a"}, {"", "b"}, {"-O3", "c"}} {
		if _, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, CFlags: c.cflags, Name: c.name}); err != nil {
			t.Fatal(err)
		}
	}
	cleans, _ := filepath.Glob(filepath.Join(r.Cache, "src", "*", "tree", "cleans"))
	if len(cleans) != 1 {
		t.Fatalf("make clean ran in %v, want once", cleans)
	}
	if raw, _ := os.ReadFile(cleans[0]); string(raw) != "clean\n" {
		t.Errorf("make clean ran %q", raw)
	}
}

// A --replace whose new build cannot be moved in keeps the build it
// replaces whole.
func TestCompileReplaceKeepsTheOldOnFailure(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	fakePG(t, src, "postgres (PostgreSQL) 15.18", false)
	r := testRegistry(t)
	b, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	renameDir = func(from, to string) error { return errors.New("injected") }
	defer func() { renameDir = os.Rename }()
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, Name: "x", Replace: true}); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Errorf("a failed move: %v", err)
	}
	if _, _, _, _, err := Inspect(ctx, Postgres, b.Basedir); err != nil {
		t.Errorf("the replaced build is gone: %v", err)
	}
	if _, err := os.Stat(b.Basedir + ".replaced"); err == nil {
		t.Errorf("the aside copy stayed")
	}
	renameDir = os.Rename
	if _, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, Name: "x", Replace: true}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(b.Basedir)); len(ents) != 1 {
		t.Errorf("compiled holds %d entries after a replace", len(ents))
	}
}

// A failed compile's last log line reaches the terminal without escape
// sequences or control characters; --cflags with one is refused.
func TestCompileErrorLastLineIsPrintable(t *testing.T) {
	log := filepath.Join(t.TempDir(), "compile.log")
	os.WriteFile(log, []byte("ok\n\x1b[31mgram.y:12: error\x1b[0m:\tsyntax\x1b]0;title\x07 error\x07\r\x00 end\n\n"), 0o644)
	err := &CompileError{Name: "x", Phase: "make", Log: log, Err: errors.New("exit 2")}
	want := `(last line: gram.y:12: error: syntax error\a\r\x00 end)`
	if !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %q, want it to end %q", err.Error(), want)
	}
	r := testRegistry(t)
	_, cerr := r.Compile(context.Background(), CompileOptions{Src: t.TempDir(), CFlags: "-O2\n-g"})
	wantErr(t, cerr, `--cflags "-O2\n-g" holds a control character`)
}

// A name taken by another tree's build is refused, and the clone this
// compile made for it is not left in the cache.
func TestCompileNameTakenLeavesNoClone(t *testing.T) {
	ctx := context.Background()
	plain := t.TempDir()
	fakePG(t, plain, "postgres (PostgreSQL) 15.18", false)
	r := testRegistry(t)
	if _, err := r.Compile(ctx, CompileOptions{Src: plain, Jobs: 1, Name: "x"}); err != nil {
		t.Fatal(err)
	}
	src, _ := fakePGGit(t)
	_, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, Name: "x"})
	wantErr(t, err, `build "x" exists`)
	if ents, _ := os.ReadDir(filepath.Join(r.Cache, "src")); len(ents) != 2 { // the plain tree's folder and lock
		t.Errorf("the cache's src holds %d entries, want the plain tree's 2", len(ents))
	}
}
