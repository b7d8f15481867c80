package client

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// Text runs a text query on c and returns every row, each column as text
// ("" for NULL): for the few statements whose answer is words, not a count
// (SHOW ENGINE … STATUS). Benchmarks never call it on their hot path.
func Text(ctx context.Context, c Conn, q string) ([][]string, error) {
	var out [][]string
	switch c := c.(type) {
	case *myConn:
		ctx, err := c.cancel.arm(ctx)
		if err != nil {
			return nil, err
		}
		defer c.cancel.done()
		rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, q, nil)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		dest := make([]driver.Value, len(rows.Columns()))
		for {
			err := rows.Next(dest)
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			row := make([]string, len(dest))
			for i, v := range dest {
				row[i] = textOf(v)
			}
			out = append(out, row)
		}
	case *pgConn:
		ctx, err := c.cancel.arm(ctx)
		if err != nil {
			return nil, err
		}
		defer c.cancel.done()
		rows, err := c.c.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				return nil, err
			}
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = textOf(v)
			}
			out = append(out, row)
		}
		return out, rows.Err()
	}
	return nil, fmt.Errorf("unknown connection type %T", c)
}

func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// UnknownVariable reports a MySQL-family server's refusal of a variable it
// does not have (1193, ER_UNKNOWN_SYSTEM_VARIABLE): what tells one fork's
// variables from another's.
func UnknownVariable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1193
}

// Denied reports a server's refusal of a statement for want of a privilege
// (MySQL 1227 ER_SPECIFIC_ACCESS_DENIED_ERROR, 1142 and 1143 on a table or
// column; PostgreSQL 42501 insufficient_privilege): what a target's user
// may lack where qpslab's own sandboxes' never do.
func Denied(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1227 || me.Number == 1142 || me.Number == 1143
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42501"
}
