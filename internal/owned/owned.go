// Package owned keeps track of the tables qpslab creates in a server under
// test. Each is recorded in qpslab_tables before it is created, so that a
// suite never drops, fills or reads a table of the same name that someone
// else made: such a table is refused with a line saying what to do.
package owned

import (
	"context"
	"fmt"

	"github.com/qpslab/qpslab/internal/client"
)

// Registry is the table in which qpslab records the tables it creates.
const Registry = "qpslab_tables"

const createRegistry = "CREATE TABLE IF NOT EXISTS " + Registry + " (name VARCHAR(64) PRIMARY KEY, created TIMESTAMP)"

// Exists reports whether table name exists in the connection's database
// (MySQL) or current schema (PostgreSQL): the dialect's TableExists.
func Exists(ctx context.Context, d client.Dialect, conn client.Conn, name string) (bool, error) {
	n, err := conn.Query(ctx, d.TableExists(name))
	if err != nil {
		return false, fmt.Errorf("look up table %s: %w", name, err)
	}
	return n > 0, nil
}

// recorded reports whether qpslab recorded name (the registry must exist).
func recorded(ctx context.Context, conn client.Conn, name string) (bool, error) {
	n, err := conn.Query(ctx, "SELECT 1 FROM "+Registry+" WHERE name = '"+name+"'")
	if err != nil {
		return false, fmt.Errorf("look up %s in %s: %w", name, Registry, err)
	}
	return n > 0, nil
}

// Drop makes sure the registry exists, refuses if any of names exists
// unrecorded (dropping nothing then), and drops the ones that exist and
// forgets them.
func Drop(ctx context.Context, d client.Dialect, conn client.Conn, names []string) error {
	if d.HasDatabase != "" {
		n, err := conn.Query(ctx, d.HasDatabase)
		if err != nil {
			return fmt.Errorf("look up the current database: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("the connection has no database: connect to qpslab's own")
		}
	}
	if _, err := conn.Exec(ctx, createRegistry); err != nil {
		return fmt.Errorf("create %s: %w", Registry, err)
	}
	exists := make([]bool, len(names))
	for i, name := range names {
		var err error
		if exists[i], err = Exists(ctx, d, conn, name); err != nil || !exists[i] {
			if err != nil {
				return err
			}
			continue
		}
		ok, err := recorded(ctx, conn, name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("table %s exists but qpslab did not create it (it is not in %s): drop or rename it yourself, or use another database", name, Registry)
		}
	}
	for i, name := range names {
		if exists[i] {
			if _, err := conn.Exec(ctx, "DROP TABLE "+name); err != nil {
				return fmt.Errorf("drop %s: %w", name, err)
			}
		}
		if _, err := conn.Exec(ctx, "DELETE FROM "+Registry+" WHERE name = '"+name+"'"); err != nil {
			return fmt.Errorf("forget %s in %s: %w", name, Registry, err)
		}
	}
	return nil
}

// Table is a table to create: its name and its CREATE statement.
type Table struct{ Name, DDL string }

// Create records each table, then creates it. None of them may exist: one
// that does is refused (someone else's) or must be dropped first (an
// earlier run's), before anything is created.
func Create(ctx context.Context, d client.Dialect, conn client.Conn, tables []Table) error {
	if _, err := conn.Exec(ctx, createRegistry); err != nil {
		return fmt.Errorf("create %s: %w", Registry, err)
	}
	for _, t := range tables {
		ok, err := Exists(ctx, d, conn, t.Name)
		if err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		mine, err := recorded(ctx, conn, t.Name)
		switch {
		case err != nil:
			return err
		case !mine:
			return fmt.Errorf("table %s exists but qpslab did not create it (it is not in %s): drop or rename it yourself, or use another database", t.Name, Registry)
		}
		return fmt.Errorf("%s is still there from an earlier load: drop the tables first", t.Name)
	}
	for _, t := range tables {
		// Record first: a table qpslab made must never look like someone else's.
		if _, err := conn.Exec(ctx, "INSERT INTO "+Registry+" (name, created) VALUES ('"+t.Name+"', CURRENT_TIMESTAMP)"); err != nil {
			return fmt.Errorf("record %s in %s: %w", t.Name, Registry, err)
		}
		if _, err := conn.Exec(ctx, t.DDL); err != nil {
			return fmt.Errorf("create %s: %w", t.Name, err)
		}
	}
	return nil
}

// Verify checks that every one of names exists and that qpslab recorded
// it, before a step reads or writes it.
func Verify(ctx context.Context, d client.Dialect, conn client.Conn, names []string) error {
	reg, err := Exists(ctx, d, conn, Registry)
	if err != nil {
		return err
	}
	for _, name := range names {
		ok, err := Exists(ctx, d, conn, name)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("table %s does not exist: load the tables first", name)
		}
		mine := false
		if reg {
			if mine, err = recorded(ctx, conn, name); err != nil {
				return err
			}
		}
		if !mine {
			return fmt.Errorf("table %s exists but qpslab did not create it (it is not in %s): load the tables with qpslab, or use another database", name, Registry)
		}
	}
	return nil
}

// Claim makes the connection's database (MySQL) or current schema
// (PostgreSQL) qpslab's own, for a server qpslab did not start (a
// target): it is already (the registry is there), or it holds no table or
// view, and the registry is created in it. A database that holds someone
// else's tables is refused, and nothing is created in it. claimed says
// the registry was created now.
func Claim(ctx context.Context, d client.Dialect, conn client.Conn, database string) (claimed bool, err error) {
	reg, err := Exists(ctx, d, conn, Registry)
	if err != nil {
		return false, err
	}
	if reg {
		// Again, as a test of the user's privilege to create tables here:
		// the server checks it before it finds the table there.
		if _, err := conn.Exec(ctx, createRegistry); err != nil {
			return false, fmt.Errorf("the user may not create tables in database %s: %w", database, err)
		}
		return false, nil
	}
	// The registry itself is not counted: another qpslab claiming the
	// database at once (a part of a spread run) may have just made it.
	n, err := client.Scalar(ctx, conn, d.CountTablesExcept(Registry))
	if err != nil {
		return false, fmt.Errorf("count the tables of database %s: %w", database, err)
	}
	if n > 0 {
		return false, fmt.Errorf("database %s holds %d tables qpslab did not create (it has no %s): qpslab works only in a database of its own; name an empty or new one with --database", database, n, Registry)
	}
	if _, err := conn.Exec(ctx, createRegistry); err != nil {
		// PostgreSQL's IF NOT EXISTS does not hold against another session
		// creating the table at the same moment: it is there now, claimed.
		if reg, rerr := Exists(ctx, d, conn, Registry); rerr == nil && reg {
			return false, nil
		}
		return false, fmt.Errorf("create %s in database %s (the user needs CREATE there): %w", Registry, database, err)
	}
	return true, nil
}
