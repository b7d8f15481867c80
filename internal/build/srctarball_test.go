package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// writeTarGz writes files under the folder top into a gzip tarball at p,
// as an upstream .orig.tar.gz holds them.
func writeTarGz(t *testing.T, p, top string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for rel, content := range files {
		h := &tar.Header{Name: top + "/" + rel, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}
		if strings.HasSuffix(rel, ".sh") {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	gz.Close()
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeRocksDBFiles is a RocksDB tree whose Makefile makes a db_bench that
// answers --version, and writes the make variables it was given to
// make-vars (as the real Makefile takes them from its command line).
func fakeRocksDBFiles(version string) map[string]string {
	v := strings.Split(version, ".")
	return map[string]string{
		"include/rocksdb/version.h": "#define ROCKSDB_MAJOR " + v[0] + "\n#define ROCKSDB_MINOR " + v[1] + "\n#define ROCKSDB_PATCH " + v[2] + "\n",
		"Makefile": "db_bench:\n\tprintf '#!/bin/sh\\necho db_bench version " + version + "\\n' > db_bench\n\tchmod +x db_bench\n" +
			"\techo \"DISABLE_WARNING_AS_ERROR=$(DISABLE_WARNING_AS_ERROR) PORTABLE=$(PORTABLE) DEBUG_LEVEL=$(DEBUG_LEVEL) EXTRA_CXXFLAGS=$(EXTRA_CXXFLAGS)\" > make-vars\n",
	}
}

// builds compile takes the tarball builds source prints: it is unpacked
// into the cache once per content and its tree compiled, and the build
// records the tarball and its SHA-256, and the recipe's make variables.
func TestCompileSourceTarball(t *testing.T) {
	needs := rocksDB.needs // the fake Makefile needs only make
	rocksDB.needs = []need{{Tool: "make", Pkg: "make"}}
	defer func() { rocksDB.needs = needs }()
	ctx := context.Background()
	dir := t.TempDir()
	tgz := filepath.Join(dir, "rocksdb_9.10.0.orig.tar.gz")
	writeTarGz(t, tgz, "rocksdb-9.10.0", fakeRocksDBFiles("9.10.0"))
	r := testRegistry(t)
	var progress strings.Builder
	b, err := r.Compile(ctx, CompileOptions{Src: tgz, Jobs: 1, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := fileSHA256(tgz)
	if b.Name != "rocksdb-9.10.0-src" || b.Version != "9.10.0" || b.Artifact != tgz || b.SHA256 != sum || b.Source != "compile" {
		t.Errorf("build %+v", b)
	}
	if b.Flags != "DISABLE_WARNING_AS_ERROR=1 PORTABLE=1 DEBUG_LEVEL=0 EXTRA_CXXFLAGS=-fno-omit-frame-pointer" {
		t.Errorf("recorded flags %q", b.Flags)
	}
	if filepath.Base(b.Src) != "rocksdb-9.10.0" || !strings.HasPrefix(b.Src, filepath.Join(r.Cache, "src", "tarballs")) {
		t.Errorf("the tree compiled is %s, want the tarball's top folder unpacked in the cache", b.Src)
	}
	vars, _ := filepath.Glob(filepath.Join(r.Cache, "src", "rocksdb-9.10.0-*", "build", "make-vars"))
	if len(vars) != 1 {
		t.Fatalf("make ran in %v", vars)
	}
	if raw, _ := os.ReadFile(vars[0]); string(raw) != "DISABLE_WARNING_AS_ERROR=1 PORTABLE=1 DEBUG_LEVEL=0 EXTRA_CXXFLAGS=-fno-omit-frame-pointer\n" {
		t.Errorf("make was given %q", raw)
	}
	if !strings.Contains(progress.String(), "unpacking rocksdb_9.10.0.orig.tar.gz") {
		t.Errorf("progress: %s", progress.String())
	}
	if got, err := r.Get(ctx, b.Name); err != nil || got.Artifact != tgz || got.SHA256 != sum {
		t.Errorf("the record: %+v, %v", got, err)
	}

	// The same tarball again: its tree is the one unpacked before.
	progress.Reset()
	b2, err := r.Compile(ctx, CompileOptions{Src: tgz, Jobs: 1, Replace: true, Progress: &progress})
	if err != nil || b2.Src != b.Src {
		t.Fatalf("again: %+v, %v", b2, err)
	}
	if strings.Contains(progress.String(), "unpacking") {
		t.Errorf("unpacked twice: %s", progress.String())
	}
	if ents, _ := filepath.Glob(filepath.Join(r.Cache, "src", "tarballs", "rocksdb_9.10.0.orig-*")); len(ents) != 2 { // the tree and its lock
		t.Errorf("tarballs holds %v", ents)
	}

	// A file that is no tarball, a tarball with --commit, an empty tarball.
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello\n"), 0o644)
	_, err = r.Compile(ctx, CompileOptions{Src: notes})
	wantErr(t, err, "source "+notes+" is a file but no tarball", "give a source tarball")
	_, err = r.Compile(ctx, CompileOptions{Src: tgz, Commit: "HEAD"})
	wantErr(t, err, tgz+" is a tarball, so it has no commit HEAD", "leave out --commit")
	empty := filepath.Join(dir, "empty.tar.gz")
	writeTarGz(t, empty, "x", nil)
	_, err = r.Compile(ctx, CompileOptions{Src: empty})
	wantErr(t, err, "holds no files")
	if _, err := os.Stat(filepath.Join(r.Cache, "src", "tarballs", "empty-"+mustSum(t, empty)[:8])); err == nil {
		t.Error("an empty tarball left a folder in the cache")
	}
}

func mustSum(t *testing.T, p string) string {
	t.Helper()
	s, err := fileSHA256(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// When a mirror holds a package's upstream tarball but not its .dsc, the
// tarball is found in the suite's Sources record with its SHA-256.
func TestOrigInSources(t *testing.T) {
	records := []byte(`Package: rocksdb
Version: 9.11.2-1
Checksums-Sha256:
 f16bc50ff7216943d8fa5e79aa5d3d87556d5de9b88328c5afede52ac2fb024b 2440 rocksdb_9.11.2-1.dsc
 4005068f5099c54c39968f3466da216e0a7b97fc78e1c51c722e643763058a5c 13714738 rocksdb_9.11.2.orig.tar.gz
Directory: pool/main/r/rocksdb

Package: rocksdb
Binary: librocksdb-dev, librocksdb9.10, rocksdb-tools
Version: 9.10.0-1
Files:
 66483ba712f807e6c674c97c4dc3dcc3 13693440 rocksdb_9.10.0.orig.tar.gz
Checksums-Sha256:
 f16bc50ff7216943d8fa5e79aa5d3d87556d5de9b88328c5afede52ac2fb024a 2440 rocksdb_9.10.0-1.dsc
 fdccab16133c9d927a183c2648bcea8d956fb41eb1df2aacaa73eb0b95e43724 13693440 rocksdb_9.10.0.orig.tar.gz
 bbbe9ab8e6138c958b5d8a68da917d20bf718657379dcae2de0d40324b9f64c4 14632 rocksdb_9.10.0-1.debian.tar.xz
Directory: pool/main/r/rocksdb

Package: hello
Version: 2.10-3
Checksums-Sha256:
 aaaa9ab8e6138c958b5d8a68da917d20bf718657379dcae2de0d40324b9f64c4 14632 hello_2.10-3.tar.xz
Directory: pool/main/h/hello

Package: evil
Version: 1.0-1
Checksums-Sha256:
 fdccab16133c9d927a183c2648bcea8d956fb41eb1df2aacaa73eb0b95e43724 13693440 evil_1.0.orig.tar.gz
Directory: ../../etc
`)
	file, sum, dir, err := origInSources(records, "rocksdb", "9.10.0-1")
	if err != nil || file != "rocksdb_9.10.0.orig.tar.gz" || sum != "fdccab16133c9d927a183c2648bcea8d956fb41eb1df2aacaa73eb0b95e43724" || dir != "pool/main/r/rocksdb" {
		t.Errorf("origInSources = %q %q %q, %v", file, sum, dir, err)
	}
	_, _, _, err = origInSources(records, "rocksdb", "9.9.9-1")
	wantErr(t, err, "Sources index has no rocksdb 9.9.9-1")
	_, _, _, err = origInSources(records, "hello", "2.10-3")
	wantErr(t, err, "lists no upstream tarball", "native package")
	_, _, _, err = origInSources(records, "evil", "1.0-1")
	wantErr(t, err, "names no pool folder")
}

// An interrupted step takes its whole process group with it: a compile
// cancelled mid-make leaves no compiler running.
func TestRunStepInterruptKillsItsChildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var log strings.Builder
	go func() {
		done <- runStep(ctx, step{Phase: "make", Dir: dir, Args: []string{"sh", "-c", "sleep 300 & echo $! > child.pid.tmp && mv child.pid.tmp child.pid; wait"}}, &log)
	}()
	var pid int
	for pid == 0 {
		if raw, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
		}
		runtime.Gosched()
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("an interrupted step ended without an error")
	}
	// The child was killed with its group: it is gone, or a zombie that
	// init reaps (never still running).
	for {
		raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return
		}
		if f := strings.Fields(string(raw)); len(f) > 2 && (f[2] == "Z" || f[2] == "X") {
			return
		}
		runtime.Gosched()
	}
}
