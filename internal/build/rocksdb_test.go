package build_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/testenv"
)

// fakeDBBench writes a script at base/rel that answers --version as
// db_bench 6.x on does, or, with no version string (RocksDB before 6), as
// gflags does, printing the run header only when it runs.
func fakeDBBench(t *testing.T, base, rel, version string, modern bool) string {
	t.Helper()
	script := "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in\n    --version)\n"
	if modern {
		script += "      echo 'db_bench version " + version + "'; exit 0;;\n"
	} else {
		script += "      echo 'db_bench'; exit 0;;\n"
	}
	script += "  esac\ndone\necho 'RocksDB:    version " + version + "'\necho 'Date:       Mon Nov 23 16:17:06 2026'\n"
	return writeFile(t, base, rel, script, 0o755)
}

func TestRocksDBFlavor(t *testing.T) {
	for _, s := range []string{"rocksdb", "RocksDB", "db_bench"} {
		if f, err := build.ParseFlavor(s); err != nil || f != build.RocksDB {
			t.Errorf("ParseFlavor(%q) = %q, %v", s, f, err)
		}
	}
	if build.RocksDB.HasServer() || !build.MariaDB.HasServer() || !build.Postgres.HasServer() {
		t.Error("only rocksdb builds have no server")
	}
}

// A rocksdb basedir is an install prefix (bin/db_bench), a source tree
// built with make (db_bench at the top, maybe a shared librocksdb beside
// it) or with cmake (build/db_bench).
func TestFindLayoutRocksDB(t *testing.T) {
	for _, rel := range []string{"bin/db_bench", "db_bench", "build/db_bench"} {
		dir := t.TempDir()
		want := fakeDBBench(t, dir, rel, "8.6.7", true)
		l, err := build.FindLayout(build.RocksDB, dir)
		if err != nil || l.Server != want || len(l.LibDirs) != 0 {
			t.Errorf("%s: layout %+v, %v", rel, l, err)
		}
	}
	dir := t.TempDir()
	fakeDBBench(t, dir, "db_bench", "8.6.7", true)
	writeFile(t, dir, "librocksdb.so.8.6", "", 0o644)
	if l, err := build.FindLayout(build.RocksDB, dir); err != nil || len(l.LibDirs) != 1 || l.LibDirs[0] != dir {
		t.Errorf("a shared librocksdb beside db_bench: %+v, %v", l, err)
	}
	empty := t.TempDir()
	_, err := build.FindLayout(build.RocksDB, empty)
	testenv.WantErr(t, err, empty, "no db_bench", "bin/db_bench, db_bench, build/db_bench", "--path")
}

func TestReadVersionRocksDB(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		modern  bool
		version string
		banner  string
	}{
		{"--version (6.x on)", true, "9.7.3", "db_bench version 9.7.3"},
		{"the run header (before 6)", false, "5.18.4", "RocksDB:    version 5.18.4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeDBBench(t, t.TempDir(), "db_bench", tt.version, tt.modern)
			f, ver, banner, err := build.ReadVersion(ctx, build.RocksDB, build.Layout{Server: srv})
			if err != nil || f != build.RocksDB || ver != tt.version || banner != tt.banner {
				t.Errorf("ReadVersion = %s %s %q, %v; want rocksdb %s %q", f, ver, banner, err, tt.version, tt.banner)
			}
		})
	}
	dir := t.TempDir()
	bad := fakeServer(t, dir, "db_bench", "hello world\nsecond line", 0)
	_, _, _, err := build.ReadVersion(ctx, build.RocksDB, build.Layout{Server: bad})
	testenv.WantErr(t, err, bad, "no RocksDB version", `"hello world"`)
	fails := fakeServer(t, dir, "db_bench2", "error while loading shared libraries: librocksdb.so.8\nmore", 127)
	_, _, _, err = build.ReadVersion(ctx, build.RocksDB, build.Layout{Server: fails})
	testenv.WantErr(t, err, fails, "exit status 127", "librocksdb.so.8")
}

// Debian's rocksdb-tools is the system build rocksdb-system.
func TestSystemBuildRocksDB(t *testing.T) {
	b, err := registry(t).Get(context.Background(), "rocksdb-system")
	if err != nil {
		t.Fatalf("%v (make setup installs rocksdb-tools)", err)
	}
	l, err := b.Layout()
	if b.Flavor != build.RocksDB || b.Source != "system" || b.Basedir != "/usr" || err != nil || l.Server != "/usr/bin/db_bench" {
		t.Errorf("got %+v, layout %+v, %v", b, l, err)
	}
	if b.Version == "" || b.Banner != "db_bench version "+b.Version {
		t.Errorf("version %q, banner %q", b.Version, b.Banner)
	}
}

// A db_bench named by its path, as benchmark_compare.sh keeps them
// (db_bench.8.6.7 beside db_bench.9.7.3), is its own build; its version
// comes from the binary, not the name.
func TestRegistryAddProgram(t *testing.T) {
	r := registry(t)
	ctx := context.Background()
	dir := t.TempDir()
	p8 := fakeDBBench(t, dir, "db_bench.8.6.7", "8.6.7", true)
	p9 := fakeDBBench(t, dir, "db_bench.9.7.3", "9.1.0", true)
	b, err := r.AddProgram(ctx, "rx867", p8, false)
	if err != nil || b.Flavor != build.RocksDB || b.Version != "8.6.7" || b.Program != p8 || b.Source != "path" {
		t.Fatalf("AddProgram = %+v, %v", b, err)
	}
	got, err := r.Get(ctx, "rx867")
	if err != nil || got.Program != p8 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if l, err := got.Layout(); err != nil || l.Server != p8 {
		t.Errorf("Layout = %+v, %v", l, err)
	}
	if b, err := r.AddProgram(ctx, "rx973", p9, false); err != nil || b.Version != "9.1.0" {
		t.Errorf("the version is read from the binary: %+v, %v", b, err)
	}
	_, err = r.AddProgram(ctx, "rx867", p9, false)
	testenv.WantErr(t, err, "rx867", "exists", "--replace")
	_, err = r.AddProgram(ctx, "rx000", filepath.Join(dir, "nothere"), false)
	testenv.WantErr(t, err, "nothere", "is not a file", "--path")
	plain := writeFile(t, dir, "db_bench.noexec", "#!/bin/sh\n", 0o644)
	_, err = r.AddProgram(ctx, "rx001", plain, false)
	testenv.WantErr(t, err, plain, "not executable")
	os.Remove(p8)
	if _, err := got.Layout(); err == nil {
		t.Error("a build whose program is gone has a layout")
	}
}
