package owned

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/result"
)

// DefaultStorageEngine is the storage engine of the MySQL family's tables unless a
// plan names another (every table qpslab made before --engine was InnoDB).
const DefaultStorageEngine = result.DefaultStorageEngine

var (
	storageEngineRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	identRE         = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

// ParseStorageEngine reads a storage engine's name as a user gives it (InnoDB,
// rocksdb, MyRocks) and returns it as runs record it: lower case, MyRocks
// as rocksdb (the engine's name in the server).
func ParseStorageEngine(s string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(s))
	if e == "myrocks" {
		e = "rocksdb"
	}
	if !storageEngineRE.MatchString(e) {
		return "", fmt.Errorf("storage engine %q is not an engine's name: use innodb, rocksdb or another engine the server has (SHOW ENGINES)", s)
	}
	return e, nil
}

// CheckStorageEngine says, in one line, when the server conn is connected to
// cannot make tables in engine (information_schema.ENGINES has no row for
// it, or says NO or DISABLED), and what to do.
func CheckStorageEngine(ctx context.Context, conn client.Conn, engine string) error {
	if !storageEngineRE.MatchString(engine) { // it goes into the query's text
		return fmt.Errorf("storage engine %q is not an engine's name", engine)
	}
	n, err := conn.Query(ctx, "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = '"+engine+"' AND SUPPORT IN ('YES', 'DEFAULT')")
	if err != nil {
		return fmt.Errorf("look up storage engine %s in information_schema.ENGINES: %w", engine, err)
	}
	if n > 0 {
		return nil
	}
	hint := "load it in the config (plugin-load-add) or run with another --engine (SHOW ENGINES lists what the server has)"
	if engine == "rocksdb" {
		hint = "run with --config myrocks (the shipped config that loads MyRocks) or a config based on it; the MariaDB system build needs the Debian package mariadb-plugin-rocksdb (make setup installs it)"
	}
	return fmt.Errorf("the server has no storage engine %s: %s", engine, hint)
}

// VerifyStorageEngine checks that each of names (which exist) is a table of
// engine, so that runs recorded as one engine's never measure another's
// tables (kept from an earlier load with --no-load). A server without
// engines (the dialect's StorageEngines: PostgreSQL), and engine "", pass.
func VerifyStorageEngine(ctx context.Context, d client.Dialect, conn client.Conn, names []string, engine string) error {
	if !d.StorageEngines || engine == "" {
		return nil
	}
	for _, name := range names {
		if !identRE.MatchString(name) { // it goes into the query's text
			return fmt.Errorf("table name %q is not one qpslab makes", name)
		}
		n, err := conn.Query(ctx, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '"+name+"' AND LOWER(ENGINE) <> '"+engine+"'")
		if err != nil {
			return fmt.Errorf("look up the storage engine of %s: %w", name, err)
		}
		if n > 0 {
			return fmt.Errorf("table %s is not in storage engine %s: load the tables again with --engine %s (leave out --no-load)", name, engine, engine)
		}
	}
	return nil
}
