package build

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// mySQL: MySQL and its forks that say nothing else in their banner (Percona
// Server). From 5.7 the server makes its own datadir (mysqld
// --initialize-insecure); before, mysql_install_db does.
var mySQL = Descriptor{
	Flavor: MySQL, Title: "MySQL",
	Protocol: "mysql", Dialect: "mysql", Family: "mysql", StorageEngines: true, Start: "mysql", Counters: "mysql",
	layout: mysqlLayout,
	version: func(banner string) (string, bool) {
		m := mysqlVerRE.FindStringSubmatch(banner)
		if m == nil || strings.Contains(banner, "MariaDB") {
			return "", false
		}
		return m[1], true
	},
	startable: func(ver, basedir string, l Layout) error {
		if CompareVersions(ver, "5.7") < 0 {
			return fmt.Errorf("basedir %s has MySQL %s, which makes a datadir with mysql_install_db (mysqld --initialize came in 5.7), and no such script (looked for %s): point --basedir at the whole install prefix", basedir, ver, installScripts)
		}
		return nil
	},
	short: "my",
	source: func(src string) (string, bool) {
		if isMariaDBTree(src) {
			return "", false
		}
		return mysqlSourceVersion(src)
	},
	recipe: func(in recipeIn) recipe {
		extra := []string{"-DWITH_NUMA=ON", "-DWITH_ROUTER=OFF", "-DWITH_MYSQLX=OFF"}
		if firstDir(in.Src, "extra/boost") == "" && firstDir(in.Src, "boost") == "" {
			// 5.7 and 8.0 need a Boost of one exact version their CMake downloads.
			extra = append(extra, "-DDOWNLOAD_BOOST=1", "-DWITH_BOOST="+filepath.Join(in.Cache, "boost"))
		}
		return cmakeRecipe(in, extra)
	},
	cmake: true,
	needs: cmakeNeeds(need{Header: "numa.h", Pkg: "libnuma-dev"}),
}

// CMakeCFlags are the C and C++ flags (CMAKE_C_FLAGS, CMAKE_CXX_FLAGS)
// MariaDB and MySQL compile with unless --cflags says otherwise, with the
// Release flags -O2 -DNDEBUG: the reference's cmk.80.rel_o2nofp
// (https://github.com/mdcallag/mytools/blob/master/bench/build/dec23.bee.my56.57.80.cmk/8.0.35/cmk.80.rel_o2nofp).
const CMakeCFlags = "-g1 -fno-omit-frame-pointer"

// cmakeRecipe is the MySQL family's CMake Release build, with the
// reference's flags and the flavor's own options (extra), out of tree.
func cmakeRecipe(in recipeIn, extra []string) recipe {
	cflags := in.CFlags
	if cflags == "" {
		cflags = CMakeCFlags
	}
	opts := []string{
		"-DCMAKE_BUILD_TYPE=Release",
		"-DCMAKE_C_FLAGS=" + cflags, "-DCMAKE_CXX_FLAGS=" + cflags,
		"-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG", "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG",
		"-DWITH_SSL=system", "-DWITH_ZLIB=bundled", "-DMYSQL_MAINTAINER_MODE=0", "-DENABLED_LOCAL_INFILE=1", "-DWITH_UNIT_TESTS=OFF",
	}
	extra = append(append([]string{}, extra...), in.CMakeOptions...) // the user's last: CMake takes the last -D of a name
	var flags []string
	for _, o := range append(append([]string{}, opts...), extra...) {
		if !strings.HasPrefix(o, "-DWITH_BOOST=") {
			flags = append(flags, shellQuote(o))
		}
	}
	args := append([]string{"cmake", "-S", in.Src, "-B", in.Build, "-DCMAKE_INSTALL_PREFIX=" + in.Prefix}, opts...)
	args = append(args, extra...)
	if in.CCache {
		args = append(args, "-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
	}
	return recipe{
		Flags: strings.Join(flags, " "),
		Steps: []step{
			{Phase: "configure", Dir: in.Build, Args: args, Once: true},
			{Phase: "make", Dir: in.Build, Args: []string{"cmake", "--build", in.Build, "--parallel", strconv.Itoa(in.Jobs)}},
			{Phase: "install", Dir: in.Build, Args: []string{"cmake", "--install", in.Build}},
		},
	}
}

// cmakeNeeds are what a MySQL-family CMake build needs, and more.
func cmakeNeeds(more ...need) []need {
	return append([]need{{Tool: "cmake", Pkg: "cmake"}, {Tool: "g++", Pkg: "g++"}, {Tool: "make", Pkg: "make"}, {Tool: "bison", Pkg: "bison"}, {Tool: "pkg-config", Pkg: "pkg-config"},
		{Header: "openssl/ssl.h", Pkg: "libssl-dev"}, {Header: "ncurses.h", Pkg: "libncurses-dev"}}, more...)
}

// mysqlSourceVersion reads the version of a MySQL-family tree: its VERSION
// file (MYSQL_VERSION in MySQL 8.4 on) of MYSQL_VERSION_MAJOR, _MINOR and
// _PATCH.
func mysqlSourceVersion(src string) (string, bool) {
	for _, name := range []string{"VERSION", "MYSQL_VERSION"} {
		v := readVersionFile(filepath.Join(src, name))
		if v["MYSQL_VERSION_MAJOR"] == "" || firstFile(src, "CMakeLists.txt") == "" {
			continue
		}
		ver := v["MYSQL_VERSION_MAJOR"] + "." + v["MYSQL_VERSION_MINOR"]
		if v["MYSQL_VERSION_PATCH"] != "" {
			ver += "." + v["MYSQL_VERSION_PATCH"]
		}
		return ver, true
	}
	return "", false
}

// isMariaDBTree: MariaDB's tree says so in its CMakeLists.txt or README.
func isMariaDBTree(src string) bool {
	return fileHas(filepath.Join(src, "CMakeLists.txt"), "MariaDB") || fileHas(filepath.Join(src, "README.md"), "MariaDB")
}

// mysqlVerRE reads the MySQL family's --version banner ("mysqld  Ver
// 8.0.36 for Linux", "mariadbd  Ver 10.11.19-MariaDB").
var mysqlVerRE = regexp.MustCompile(`Ver\s+(\d+\.\d+\.\d+)(\S*)`)

// installScripts are where mysqlLayout looks for the MySQL family's script
// that makes a datadir.
const installScripts = "scripts/mariadb-install-db, bin/mariadb-install-db, scripts/mysql_install_db or bin/mysql_install_db"

// mysqlLayout finds a MySQL-family server, its install script and the
// folder of its error messages.
func mysqlLayout(f Flavor, basedir string) (Layout, error) {
	var l Layout
	l.Server = firstFile(basedir, "sbin/mariadbd", "bin/mariadbd", "sbin/mysqld", "bin/mysqld", "libexec/mysqld")
	if l.Server == "" {
		return Layout{}, fmt.Errorf("basedir %s has no %s server binary (looked for sbin/mariadbd, bin/mariadbd, sbin/mysqld or bin/mysqld)", basedir, f)
	}
	l.InstallDB = firstFile(basedir, "scripts/mariadb-install-db", "bin/mariadb-install-db", "scripts/mysql_install_db", "bin/mysql_install_db")
	if !systemPrefix(basedir) && filepath.Base(basedir) == "usr" {
		// A Debian package's prefix (fetched from a suite): its server's
		// compiled-in plugin folder is the host's /usr/lib/mysql/plugin,
		// whose plugins are of the host's server, not of this one.
		l.PluginDir = firstDir(basedir, "lib/mysql/plugin")
	}
	for _, d := range []string{"share/mariadb", "share/mysql", "share"} {
		if firstFile(basedir, filepath.Join(d, "english/errmsg.sys")) != "" {
			l.Share = filepath.Join(basedir, d)
			break
		}
	}
	return l, nil
}
