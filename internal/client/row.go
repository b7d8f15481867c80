package client

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
)

// Row runs q with args on c through the drivers and returns its column
// names, its first row's values as text (nil for NULL) and how many rows
// it returned (all are read): for the statements whose answer a client
// keeps (a script's \gset). Benchmarks' repeated statements take
// Prepare's lean path instead.
func Row(ctx context.Context, c Conn, q string, args []Arg) (cols []string, first []any, n int64, err error) {
	switch c := c.(type) {
	case *myConn:
		ctx, err := c.cancel.arm(ctx)
		if err != nil {
			return nil, nil, 0, err
		}
		defer c.cancel.done()
		nv, err := c.named(params{args: args})
		if err != nil {
			return nil, nil, 0, err
		}
		var rows driver.Rows
		if len(nv) == 0 {
			rows, err = c.c.(driver.QueryerContext).QueryContext(ctx, q, nil)
		} else {
			var s driver.Stmt
			if s, err = c.c.(driver.ConnPrepareContext).PrepareContext(ctx, q); err != nil {
				return nil, nil, 0, err
			}
			defer s.Close()
			rows, err = s.(driver.StmtQueryContext).QueryContext(ctx, nv)
		}
		if err != nil {
			return nil, nil, 0, err
		}
		defer rows.Close()
		cols = rows.Columns()
		dest := make([]driver.Value, len(cols))
		for {
			err := rows.Next(dest)
			if err == io.EOF {
				return cols, first, n, nil
			}
			if err != nil {
				return nil, nil, n, err
			}
			if n++; n == 1 {
				first = make([]any, len(dest))
				for i, v := range dest {
					if v != nil {
						first[i] = textOf(v)
					}
				}
			}
		}
	case *pgConn:
		ctx, err := c.cancel.arm(ctx)
		if err != nil {
			return nil, nil, 0, err
		}
		defer c.cancel.done()
		rows, err := c.c.Query(ctx, q, anyArgs(args)...)
		if err != nil {
			return nil, nil, 0, err
		}
		defer rows.Close()
		for rows.Next() {
			if cols == nil {
				for _, f := range rows.FieldDescriptions() {
					cols = append(cols, f.Name)
				}
			}
			if n++; n == 1 {
				raw := rows.RawValues()
				first = make([]any, len(raw))
				for i, v := range raw {
					if v != nil {
						first[i] = string(v)
					}
				}
			}
		}
		return cols, first, n, rows.Err()
	}
	return nil, nil, 0, fmt.Errorf("unknown connection type %T", c)
}
