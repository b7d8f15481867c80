package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
)

// Salvaged is what a salvage copied of one table.
type Salvaged struct {
	Table string
	Rows  int  // copied
	Lost  bool // some rows could not be read
}

// Salvage copies what still reads of a damaged SQLite store (dsn, def:
// the default file) into a new store at to, which it creates as Open does
// (refusing a file that exists): each table's rows in rowid order until a
// read fails, then from its last row backwards to that point, as the
// sqlite3 program's .dump does, each row kept under its rowid; the new
// store's indexes are built as the rows go in. What could not be read is
// lost, and the report says in which tables. The damaged store is only
// read. Written by hand: SQLite's recover extension (which reads the pages
// themselves) is not in the driver, and the sqlite3 programs that
// distributions ship often lack what its .recover needs.
func Salvage(ctx context.Context, dsn, def, to string) ([]Salvaged, error) {
	if isPostgres(dsn) {
		return nil, fmt.Errorf("--salvage copies a SQLite store: a PostgreSQL store is restored from its backups")
	}
	from := sqlitePath(dsn, def)
	if _, err := os.Stat(from); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNoStore, from)
	}
	if _, err := os.Stat(to); err == nil {
		return nil, fmt.Errorf("--salvage %s exists: name a new file for the salvaged store", to)
	}
	src, err := openSQLite(sqliteDSN(from), from)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", from, err)
	}
	defer src.Close()
	tables, err := columnsOf(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("store %s: its schema cannot be read, so nothing can be salvaged (%v): import the results files into a new store", from, err)
	}
	dst, err := Open(ctx, to, "")
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	have, err := columnsOf(ctx, dst.db)
	if err != nil {
		return nil, err
	}
	conn, err := dst.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// The rows of a table whose rows another table refers to may be the
	// ones lost: the copies are kept all the same.
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var out []Salvaged
	for _, t := range slices.Sorted(maps.Keys(tables)) {
		var cols []string
		for _, c := range tables[t] {
			if slices.Contains(have[t], c) {
				cols = append(cols, c)
			}
		}
		if len(cols) == 0 || t == "goose_db_version" {
			continue // the new store's own, or a table it does not have
		}
		s, err := salvageTable(ctx, src, tx, t, cols)
		if err != nil {
			return nil, fmt.Errorf("salvage %s into %s: %w", t, to, err)
		}
		out = append(out, s)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("salvage into %s: %w", to, err)
	}
	return out, nil
}

// columnsOf is each table's columns (SQLite's own tables left out).
func columnsOf(ctx context.Context, db *sql.DB) (map[string][]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, n := range names {
		rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, n)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var c string
			if rows.Scan(&c) == nil {
				out[n] = append(out[n], c)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// salvageTable copies table t's columns cols from src into tx: forwards
// in rowid order until a read fails, then backwards from the end to the
// last rowid read.
func salvageTable(ctx context.Context, src *sql.DB, tx *sql.Tx, t string, cols []string) (Salvaged, error) {
	s := Salvaged{Table: t}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	table := `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	list := strings.Join(quoted, ", ")
	insert, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO `+table+` (rowid, `+list+`) VALUES (?`+strings.Repeat(", ?", len(cols))+`)`)
	if err != nil {
		return s, err
	}
	defer insert.Close()
	last := int64(-1 << 63)
	pass := func(query string, args ...any) (stopped bool, err error) {
		rows, err := src.QueryContext(ctx, query, args...)
		if err != nil {
			return true, nil // the table cannot be read from here
		}
		defer rows.Close()
		vals := make([]any, len(cols)+1)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return true, nil
			}
			if _, err := insert.ExecContext(ctx, vals...); err != nil {
				return false, err
			}
			s.Rows++
			if id, ok := vals[0].(int64); ok && id > last {
				last = id
			}
		}
		return rows.Err() != nil, nil
	}
	stopped, err := pass(`SELECT rowid, ` + list + ` FROM ` + table + ` ORDER BY rowid`)
	if err != nil || !stopped {
		return s, err
	}
	s.Lost = true
	_, err = pass(`SELECT rowid, `+list+` FROM `+table+` WHERE rowid > ? ORDER BY rowid DESC`, last)
	return s, err
}
