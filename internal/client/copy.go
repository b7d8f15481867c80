package client

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// Copier is a connection that loads rows in bulk; the connections Dial
// returns are Copiers.
type Copier interface {
	// Copy loads the rows src gives into table's columns in one statement
	// and returns how many the server took. src gives them in the text
	// format COPY and LOAD DATA share: a row per line ("\n"), columns
	// separated by tabs, \N for NULL, a backslash before a tab, newline or
	// backslash inside a value.
	Copy(ctx context.Context, table string, columns []string, src io.Reader) (int64, error)
}

// Copy loads rows into table through c: COPY … FROM STDIN on PostgreSQL
// (pgconn's CopyFrom), LOAD DATA LOCAL INFILE on the MySQL family
// (go-sql-driver's reader handlers). See Copier.
func Copy(ctx context.Context, c Conn, table string, columns []string, src io.Reader) (int64, error) {
	cp, ok := c.(Copier)
	if !ok {
		return 0, fmt.Errorf("copy into %s: the connection (%T) cannot load in bulk", table, c)
	}
	return cp.Copy(ctx, table, columns, src)
}

// quoteNames quotes table and columns with q, refusing names that hold it.
func quoteNames(q string, table string, columns []string) (string, string, error) {
	var cols []string
	for _, n := range append([]string{table}, columns...) {
		if n == "" || strings.Contains(n, q) || strings.ContainsRune(n, 0) {
			return "", "", fmt.Errorf("copy: bad name %q", n)
		}
		cols = append(cols, q+n+q)
	}
	return cols[0], strings.Join(cols[1:], ", "), nil
}

func (p *pgConn) Copy(ctx context.Context, table string, columns []string, src io.Reader) (int64, error) {
	t, cols, err := quoteNames(`"`, table, columns)
	if err != nil {
		return 0, err
	}
	ctx, err = p.cancel.arm(ctx)
	if err != nil {
		return 0, err
	}
	defer p.cancel.done()
	passThrough(p.cancel.nc, true)
	defer passThrough(p.cancel.nc, false)
	tag, err := p.c.PgConn().CopyFrom(ctx, src, "COPY "+t+" ("+cols+") FROM STDIN")
	if err != nil {
		return 0, fmt.Errorf("copy into %s: %w", table, err)
	}
	return tag.RowsAffected(), nil
}

var readers atomic.Int64 // numbers LOAD DATA's reader handlers

func (m *myConn) Copy(ctx context.Context, table string, columns []string, src io.Reader) (int64, error) {
	t, cols, err := quoteNames("`", table, columns)
	if err != nil {
		return 0, err
	}
	// The driver reads the file the server asks for from a handler
	// registered under the name the statement gives.
	name := "qpslab-" + strconv.FormatInt(readers.Add(1), 10)
	mysql.RegisterReaderHandler(name, func() io.Reader { return src })
	defer mysql.DeregisterReaderHandler(name)
	ctx, err = m.cancel.arm(ctx)
	if err != nil {
		return 0, err
	}
	defer m.cancel.done()
	q := "LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE " + t + " CHARACTER SET utf8mb4 (" + cols + ")"
	r, err := m.c.(driver.ExecerContext).ExecContext(ctx, q, nil)
	if err != nil {
		var me *mysql.MySQLError
		// 1148: ER_NOT_ALLOWED_COMMAND (MySQL 5.x, MariaDB before 10.5);
		// 3948: ER_CLIENT_LOCAL_FILES_DISABLED (MySQL 8); 4166: MariaDB's
		// ER_LOAD_INFILE_CAPABILITY_DISABLED.
		if errors.As(err, &me) && (me.Number == 1148 || me.Number == 3948 || me.Number == 4166) {
			return 0, fmt.Errorf("copy into %s: the server refuses LOAD DATA LOCAL INFILE (local_infile is off): set local_infile=ON in its config, or load with INSERTs: %w", table, err)
		}
		return 0, fmt.Errorf("copy into %s: %w", table, err)
	}
	return r.RowsAffected()
}

// RowReader writes rows 1..n in the text format Copy reads, each row's
// line made by line (appended to b, "\n" included), and reports the rows
// written to progress every 10,000 rows and at the end: a bulk load's
// source that holds one line at a time.
func RowReader(n int64, line func(b []byte, i int64) []byte, progress func(rows int64)) io.Reader {
	return &rowReader{n: n, line: line, progress: progress}
}

type rowReader struct {
	n, i     int64
	line     func(b []byte, i int64) []byte
	buf      []byte
	off      int
	pending  int64
	progress func(int64)
}

func (r *rowReader) Read(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		if r.off == len(r.buf) {
			if r.i == r.n {
				if r.pending > 0 {
					r.progress(r.pending)
					r.pending = 0
				}
				if written == 0 {
					return 0, io.EOF
				}
				break
			}
			r.i++
			r.buf, r.off = r.line(r.buf[:0], r.i), 0
			if r.pending++; r.pending == 10000 {
				r.progress(r.pending)
				r.pending = 0
			}
		}
		k := copy(p[written:], r.buf[r.off:])
		r.off += k
		written += k
	}
	return written, nil
}
