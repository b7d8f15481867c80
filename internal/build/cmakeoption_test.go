package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/table"
)

// fakeCMake puts on PATH a cmake that configures by writing its arguments
// into the build folder, and installs a MariaDB 10.11.7 that answers
// --version, into the prefix the configure was given.
func fakeCMake(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	script := `#!/bin/sh
case "$1" in
-S) mkdir -p "$4"; printf '%s\n' "$@" > "$4/configure-args"; echo configured >> "$4/configure-runs";;
--build) ;;
--install)
  p=$(sed -n 's/^-DCMAKE_INSTALL_PREFIX=//p' "$2/configure-args")
  mkdir -p "$p/bin" "$p/scripts"
  printf '#!/bin/sh\necho "mariadbd  Ver 10.11.7-MariaDB for Linux on x86_64"\n' > "$p/bin/mariadbd"
  printf '#!/bin/sh\nexit 0\n' > "$p/scripts/mariadb-install-db"
  chmod +x "$p/bin/mariadbd" "$p/scripts/mariadb-install-db";;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "cmake"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	needs := mariaDB.needs
	mariaDB.needs = []need{{Tool: "cmake", Pkg: "cmake"}}
	t.Cleanup(func() { mariaDB.needs = needs })
}

// --cmake-option: each -DNAME=VALUE goes to the CMake configure after the
// recipe's own, into the recorded flags and the build's record (builds
// list shows them); a build with other options has a build folder and a
// default name of its own; bad options, the recipe's own, and a flavor
// that does not build with CMake are refused before anything runs.
func TestCompileCMakeOptions(t *testing.T) {
	fakeCMake(t)
	ctx := context.Background()
	src := tree(t, map[string]string{"VERSION": "MYSQL_VERSION_MAJOR=10\nMYSQL_VERSION_MINOR=11\nMYSQL_VERSION_PATCH=7\n", "CMakeLists.txt": "PROJECT(MySQL)\n# MariaDB server\n"})
	r := testRegistry(t)
	lto := []string{"-DWITH_LTO=ON", "-DPLUGIN_ROCKSDB=YES"}
	b, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, Name: "ma101107_lto", CMakeOptions: lto})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(b.CMakeOptions, " ") != "-DWITH_LTO=ON -DPLUGIN_ROCKSDB=YES" || !strings.HasSuffix(b.Flags, "-DWITH_WSREP=OFF -DWITH_LTO=ON -DPLUGIN_ROCKSDB=YES") {
		t.Errorf("recorded options %q, flags %q", b.CMakeOptions, b.Flags)
	}
	got, err := r.Get(ctx, "ma101107_lto")
	if err != nil || strings.Join(got.CMakeOptions, " ") != "-DWITH_LTO=ON -DPLUGIN_ROCKSDB=YES" {
		t.Errorf("the record: %+v, %v", got, err)
	}
	args, _ := filepath.Glob(filepath.Join(r.Cache, "src", "*", "build-*", "configure-args"))
	if len(args) != 1 {
		t.Fatalf("configure ran in %v, want a build folder of the options' own", args)
	}
	raw, _ := os.ReadFile(args[0])
	// The user's after the recipe's -DPLUGIN_ROCKSDB=NO: CMake takes the last.
	no, user := strings.Index(string(raw), "-DPLUGIN_ROCKSDB=NO\n"), strings.Index(string(raw), "-DWITH_LTO=ON\n-DPLUGIN_ROCKSDB=YES\n")
	if no < 0 || user < no {
		t.Errorf("configure's arguments:\n%s", raw)
	}
	var list strings.Builder
	if err := table.Render(&list, table.Text, ListTable([]Build{b, {Name: "rocksdb-system", Flavor: RocksDB, Version: "7.8.3", Source: "system", Basedir: "/usr"}}), table.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list.String(), "OPTIONS") || !strings.Contains(list.String(), "-DWITH_LTO=ON -DPLUGIN_ROCKSDB=YES") {
		t.Errorf("builds list:\n%s", list.String())
	}
	def, err := r.Compile(ctx, CompileOptions{Src: src, Jobs: 1, Name: "ma101107"})
	if err != nil || len(def.CMakeOptions) != 0 || strings.Contains(def.Flags, "WITH_LTO") {
		t.Errorf("the default build: %+v, %v", def, err)
	}

	for _, c := range []struct {
		opt  string
		want []string
	}{
		{"WITH_LTO=ON", []string{`--cmake-option "WITH_LTO=ON" is not a CMake option`, "-DNAME=VALUE"}},
		{"-DWITH_LTO", []string{"is not a CMake option"}},
		{"-DX=1\n-DY=2", []string{"holds a control character"}},
		{"-DCMAKE_INSTALL_PREFIX=/usr", []string{"qpslab installs the build into its cache itself"}},
		{"-DCMAKE_C_FLAGS=-O3", []string{"--cflags"}},
		{"-DCMAKE_BUILD_TYPE:STRING=Debug", []string{"the recipe sets the build type"}},
	} {
		_, err := r.Compile(ctx, CompileOptions{Src: src, CMakeOptions: []string{c.opt}})
		wantErr(t, err, c.want...)
	}
	pg := t.TempDir()
	fakePG(t, pg, "postgres (PostgreSQL) 15.18", false)
	_, err = r.Compile(ctx, CompileOptions{Src: pg, CMakeOptions: []string{"-DWITH_LTO=ON"}})
	wantErr(t, err, "--cmake-option is for the CMake builds (MariaDB, MySQL); PostgreSQL 15.18 builds with configure")
}
