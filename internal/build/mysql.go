package build

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// mySQL: MySQL and its forks that say nothing else in their banner (Percona
// Server). From 5.7 the server makes its own datadir (mysqld
// --initialize-insecure); before, mysql_install_db does.
var mySQL = Descriptor{
	Flavor: MySQL, Title: "MySQL",
	Protocol: "mysql", Family: "mysql", Engines: true, Start: "mysql", Counters: "mysql",
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
	for _, d := range []string{"share/mariadb", "share/mysql", "share"} {
		if firstFile(basedir, filepath.Join(d, "english/errmsg.sys")) != "" {
			l.Share = filepath.Join(basedir, d)
			break
		}
	}
	return l, nil
}
