package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
)

// Every flavor with a server names a start procedure the sandbox has: a
// new flavor whose descriptor names none fails here, not at its first start.
func TestEveryServerFlavorHasAStart(t *testing.T) {
	for _, f := range build.Flavors() {
		if !f.HasServer() {
			continue
		}
		if _, err := flavorOf(f); err != nil {
			t.Error(err)
		}
	}
}

// The MySQL family's procedures differ by their fields only: MySQL from
// 5.7 makes its datadir itself and turns the X plugin off; MariaDB uses its
// install script, telling it from 10.4 on to give root a password login.
func TestMySQLFamilyStarts(t *testing.T) {
	l := build.Layout{Server: "/x/bin/mysqld", InstallDB: "/x/scripts/mysql_install_db"}
	tests := []struct {
		flavor  build.Flavor
		version string
		initBy  string
		initHas string // an argument the init command has ("" none of those below)
		noX     bool
	}{
		{build.MySQL, "8.0.36", l.Server, "--initialize-insecure", true},
		{build.MySQL, "5.6.51", l.InstallDB, "", true},
		{build.MariaDB, "10.11.7", l.InstallDB, "--auth-root-authentication-method=normal", false},
		{build.MariaDB, "10.2.11", l.InstallDB, "", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.flavor)+"-"+tt.version, func(t *testing.T) {
			fl, err := flavorOf(tt.flavor)
			if err != nil {
				t.Fatal(err)
			}
			s := &setup{b: build.Build{Flavor: tt.flavor, Version: tt.version, Basedir: "/x"}, layout: l, dir: t.TempDir(), datadir: "/d", runDir: "/r"}
			path, args := fl.initCommand(s)
			if path != tt.initBy {
				t.Errorf("init by %s, want %s", path, tt.initBy)
			}
			for _, a := range []string{"--initialize-insecure", "--auth-root-authentication-method=normal"} {
				if has := slices.Contains(args, a); has != (a == tt.initHas) {
					t.Errorf("init args %v: has %s = %v", args, a, has)
				}
			}
			_, args = fl.serverCommand(s)
			if has := slices.Contains(args, "--loose-mysqlx=OFF"); has != tt.noX {
				t.Errorf("server args %s: has --loose-mysqlx=OFF = %v, want %v", strings.Join(args, " "), has, tt.noX)
			}
		})
	}
}
