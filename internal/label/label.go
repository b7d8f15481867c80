// Package label is how a result set is addressed, on every surface (the
// terminal, the HTML report, the dashboard and its API): BUILD.CONFIG,
// with the storage engine after a colon when it is not InnoDB
// (mariadb-system.myrocks:rocksdb), so that the runs of two engines under
// one build and config are two result sets while an InnoDB run keeps the
// label every run had before --engine. Every label qpslab writes is
// composed here (Of, String) and every label a user gives is read here
// (Parse); the InnoDB rule is OtherStorageEngine, written once.
package label

import (
	"fmt"
	"strings"
)

// InnoDB is the storage engine of a MySQL-family run that records none:
// every table qpslab made before --engine existed was InnoDB.
const InnoDB = "innodb"

// Label addresses a result set: its build, its config's name (without
// @HASH) and its storage engine when it is not InnoDB ("" for InnoDB, for
// PostgreSQL and for a run that records none).
type Label struct{ Build, Config, StorageEngine string }

// OtherStorageEngine is engine as a label carries it: "" for InnoDB (and for
// none), else engine.
func OtherStorageEngine(engine string) string {
	if engine == InnoDB {
		return ""
	}
	return engine
}

// Of is the label of runs of build under the config named config in
// storage engine engine (as a run records it: "innodb", "rocksdb", or ""
// for none).
func Of(build, config, engine string) Label {
	return Label{Build: build, Config: config, StorageEngine: OtherStorageEngine(engine)}
}

// Parse reads a label as a user gives it: s split at its last dot
// (ma100244_rel.cz11a_bee; mariadb-10.2.11.default), and the engine off
// the config at a colon, in lower case. A label without an engine is
// InnoDB's (and PostgreSQL's); ":innodb" says the same.
func Parse(s string) (Label, error) {
	i := strings.LastIndex(s, ".")
	if i <= 0 || i == len(s)-1 {
		return Label{}, fmt.Errorf("label %q is not build.config (for example mariadb-system.default): see qpslab labels", s)
	}
	l := Label{Build: s[:i], Config: s[i+1:]}
	if c, e, ok := strings.Cut(l.Config, ":"); ok {
		if c == "" || e == "" || strings.Contains(e, ":") {
			return Label{}, fmt.Errorf("label %q is not build.config or build.config:engine (for example mariadb-system.myrocks:rocksdb): see qpslab labels", s)
		}
		l.Config, l.StorageEngine = c, OtherStorageEngine(strings.ToLower(e))
	}
	return l, nil
}

// String is the label as qpslab writes it: BUILD.CONFIG, or
// BUILD.CONFIG:ENGINE for an engine other than InnoDB.
func (l Label) String() string {
	if e := OtherStorageEngine(l.StorageEngine); e != "" {
		return l.Build + "." + l.Config + ":" + e
	}
	return l.Build + "." + l.Config
}

// StorageEngineFilter is the storage engine a store filter selects for the
// label: its engine, or InnoDB (which runs that record none are).
func (l Label) StorageEngineFilter() string {
	if l.StorageEngine == "" {
		return InnoDB
	}
	return l.StorageEngine
}
