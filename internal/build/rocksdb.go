package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// rocksDB: RocksDB's db_bench, a program the db_bench suite runs; no server.
var rocksDB = Descriptor{
	Flavor: RocksDB, Title: "RocksDB", Names: []string{"db_bench"},
	Family: "rocksdb",
	layout: func(f Flavor, basedir string) (Layout, error) {
		l := Layout{Server: firstFile(basedir, rocksDBPrograms...)}
		if l.Server == "" {
			return Layout{}, fmt.Errorf("basedir %s has no db_bench (looked for %s): point --basedir at the RocksDB source or install tree, or name the program with --path", basedir, strings.Join(rocksDBPrograms, ", "))
		}
		if !systemPrefix(basedir) {
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(l.Server), "librocksdb.so*")); len(m) > 0 {
				l.LibDirs = append(l.LibDirs, filepath.Dir(l.Server)) // a source tree built with make shared_lib
			}
		}
		return l, nil
	},
	readVersion: readDBBenchVersion,
	system:      func() string { return "/usr" }, // rocksdb-tools: /usr/bin/db_bench
	short:       "rx",
	source:      rocksDBSourceVersion,
	recipe:      rocksDBRecipe,
	inTree:      true,
	needs:       rocksDBNeeds,
}

// rocksDBNeeds are what db_bench's make needs: a compiler and make, perl
// for its build scripts, gflags (without it db_bench is built as a stub
// that prints "Please install gflags"), and the compression libraries
// db_bench's runs use: lz4 (the compression db_bench's suites ask for by
// default), zstd (the bottommost level in the reference's configs),
// snappy (db_bench's own default), zlib and bzip2. build_detect_platform
// leaves out a library it does not find without a word, and a run that
// asks for it then fails: so each is a need, not an option.
var rocksDBNeeds = []need{{Tool: "g++", Pkg: "g++"}, {Tool: "make", Pkg: "make"}, {Tool: "perl", Pkg: "perl"},
	{Header: "gflags/gflags.h", Pkg: "libgflags-dev"}, {Header: "lz4.h", Pkg: "liblz4-dev"}, {Header: "zstd.h", Pkg: "libzstd-dev"},
	{Header: "snappy.h", Pkg: "libsnappy-dev"}, {Header: "zlib.h", Pkg: "zlib1g-dev"}, {Header: "bzlib.h", Pkg: "libbz2-dev"}}

// RocksDBCFlags are db_bench's EXTRA_CXXFLAGS unless --cflags says
// otherwise: frame pointers for perf and PMP stacks (DEBUG_LEVEL=0 gives
// -O2 and no assertions).
const RocksDBCFlags = "-fno-omit-frame-pointer"

var rocksDBVersionHRE = regexp.MustCompile(`(?m)^#define ROCKSDB_(MAJOR|MINOR|PATCH)\s+(\d+)`)

// rocksDBSourceVersion reads include/rocksdb/version.h of a tree whose
// Makefile makes db_bench.
func rocksDBSourceVersion(src string) (string, bool) {
	raw, err := os.ReadFile(filepath.Join(src, "include/rocksdb/version.h"))
	if err != nil || !fileHas(filepath.Join(src, "Makefile"), "db_bench") {
		return "", false
	}
	v := map[string]string{}
	for _, m := range rocksDBVersionHRE.FindAllStringSubmatch(string(raw), -1) {
		v[m[1]] = m[2]
	}
	if v["MAJOR"] == "" || v["MINOR"] == "" {
		return "", false
	}
	ver := v["MAJOR"] + "." + v["MINOR"]
	if v["PATCH"] != "" {
		ver += "." + v["PATCH"]
	}
	return ver, true
}

// RocksDBMakeVars are the make variables of every RocksDB compile, as the
// reference author builds db_bench: a release build (DEBUG_LEVEL=0: -O2,
// no assertions), PORTABLE=1 (no -march=native: the binary runs on
// another host of the architecture, and two builds compiled here differ
// by their source, not by what this CPU offers), and warnings not made
// errors (DISABLE_WARNING_AS_ERROR=1: the Makefile adds -Werror, and a
// release tree built with a newer gcc than it was tested with stops on a
// new warning: 7.8.3 with gcc 12 does).
var RocksDBMakeVars = []string{"DISABLE_WARNING_AS_ERROR=1", "PORTABLE=1", "DEBUG_LEVEL=0"}

// rocksDBRecipe: make db_bench in the tree (RocksDB's Makefile builds in
// place) with RocksDBMakeVars, then install it as bin/db_bench. The
// Makefile (6.x to 9.x) has no ccache switch of its own, unlike RocksDB's
// CMake build, which finds ccache by itself: through ccache the compiler
// is CC='ccache gcc' CXX='ccache g++'. ccache is not in the recorded
// flags: it makes the same objects.
func rocksDBRecipe(in recipeIn) recipe {
	cflags := in.CFlags
	if cflags == "" {
		cflags = RocksDBCFlags
	}
	vars := append(slices.Clone(RocksDBMakeVars), "EXTRA_CXXFLAGS="+cflags)
	flags := make([]string, len(vars))
	for i, v := range vars {
		flags[i] = shellQuoteVar(v)
	}
	args := append([]string{"make"}, vars...)
	if in.CCache {
		args = append(args, "CC=ccache gcc", "CXX=ccache g++")
	}
	return recipe{
		Flags:   strings.Join(flags, " "),
		Program: "bin/db_bench",
		Steps: []step{
			{Phase: "make", Dir: in.Build, Args: append(args, jobsArg(in.Jobs), "db_bench")},
			{Phase: "install", Dir: in.Build, Args: []string{"install", "-D", "-m", "0755", "db_bench", filepath.Join(in.Prefix, "bin/db_bench")}},
		},
	}
}

// rocksDBPrograms are where a rocksdb basedir holds db_bench: an install
// prefix (bin/, as Debian's rocksdb-tools), a source tree built with make
// (the top), or one built with cmake (build/).
var rocksDBPrograms = []string{"bin/db_bench", "db_bench", "build/db_bench"}

var (
	// db_bench --version (RocksDB 6.x on): "db_bench version 7.8.3".
	dbBenchVersionRE = regexp.MustCompile(`db_bench version (\d+\.\d+(?:\.\d+)?)`)
	// The header of every db_bench run: "RocksDB:    version 7.8.3".
	rocksDBHeaderRE = regexp.MustCompile(`(?m)^RocksDB:\s+version (\d+\.\d+(?:\.\d+)?)`)
)

// programLayout is the layout of a build named by its program: the program,
// and its folder for the dynamic loader when a shared librocksdb lies beside
// it (a source tree built with make shared_lib).
func programLayout(program string) (Layout, error) {
	st, err := os.Stat(program)
	if err != nil || !st.Mode().IsRegular() {
		return Layout{}, fmt.Errorf("program %s is not a file: name the db_bench binary with --path, or its folder with --basedir", program)
	}
	if st.Mode().Perm()&0o111 == 0 {
		return Layout{}, fmt.Errorf("program %s is not executable: chmod +x it", program)
	}
	l := Layout{Server: program}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(program), "librocksdb.so*")); len(m) > 0 {
		l.LibDirs = []string{filepath.Dir(program)}
	}
	return l, nil
}

// readDBBenchVersion reads a db_bench's version: from --version where the
// binary knows it (RocksDB 6.x on), else from the header of a run that does
// nothing, in a database of its own in a temporary folder it removes.
// Names are never trusted for this.
func readDBBenchVersion(ctx context.Context, l Layout) (Flavor, string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, l.Server, args...)
		cmd.Env = l.Env(os.Environ())
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	out, err := run("--version")
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrPermission) || errors.Is(err, context.DeadlineExceeded) {
		return "", "", out, fmt.Errorf("run %s --version: %w", l.Server, err)
	}
	if m := dbBenchVersionRE.FindStringSubmatch(out); m != nil && err == nil {
		return RocksDB, m[1], firstLine(out), nil
	}
	tmp, terr := os.MkdirTemp("", "qpslab-db_bench-version-")
	if terr != nil {
		return "", "", out, fmt.Errorf("read the version of %s: %w", l.Server, terr)
	}
	defer os.RemoveAll(tmp)
	head, herr := run("--benchmarks=", "--num=1", "--db="+filepath.Join(tmp, "db"), "--wal_dir="+filepath.Join(tmp, "db"))
	if m := rocksDBHeaderRE.FindStringSubmatch(head); m != nil {
		return RocksDB, m[1], strings.TrimSpace(m[0]), nil
	}
	if herr != nil {
		return "", "", head, fmt.Errorf("%s is not a db_bench that runs: %v: %s", l.Server, herr, firstLine(head))
	}
	return "", "", head, fmt.Errorf("%s printed no RocksDB version (neither db_bench --version nor a run's header): %q", l.Server, firstLine(out))
}

// AddProgram registers program (a db_bench binary, named by its path) as
// rocksdb build name, after reading its version from it.
func (r Registry) AddProgram(ctx context.Context, name, program string, replace bool) (Build, error) {
	if err := ValidName(name); err != nil {
		return Build{}, err
	}
	abs, err := filepath.Abs(program)
	if err != nil {
		return Build{}, fmt.Errorf("resolve program %s: %w", program, err)
	}
	l, err := programLayout(abs)
	if err != nil {
		return Build{}, err
	}
	_, ver, banner, err := ReadVersion(ctx, RocksDB, l)
	if err != nil {
		return Build{}, err
	}
	b := Build{Name: name, Flavor: RocksDB, Version: ver, Banner: banner, Basedir: filepath.Dir(abs), Program: abs, Source: "path", Added: time.Now().UTC()}
	if err := r.save(b, replace); err != nil {
		return Build{}, err
	}
	return b, nil
}

// shellQuoteVar is a make variable NAME=VALUE with its value quoted for a
// shell where it needs it (EXTRA_CXXFLAGS='-O2 -g').
func shellQuoteVar(v string) string {
	name, value, _ := strings.Cut(v, "=")
	return name + "=" + shellQuote(value)
}
