// Package client owns connections to a server under test: MySQL-protocol
// servers through go-sql-driver/mysql and PostgreSQL through jackc/pgx, over a
// unix socket or loopback TCP. The drivers log in and run the rare
// statements; the statements a suite repeats take a lean path over the same
// socket (MySQL's binary protocol written by hand, PostgreSQL's extended
// protocol through pgx's pgconn and pgproto3) that allocates nothing per
// statement once warm (Options.Driver turns it off, for comparison). A
// statement's rows are read and discarded (Stmt.QueryArgs counts them), or
// handed one at a time to a callback as text (Stmt.QueryEach's Values, in
// buffers the connection reuses: the binary protocol's values written as
// the text protocol gives them, PostgreSQL's referenced in place). It
// knows nothing of sandboxes or workloads; it takes an Endpoint and hands
// back connections.
package client

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Protocol is the wire protocol a server speaks.
type Protocol string

const (
	MySQL    Protocol = "mysql"    // MariaDB and MySQL
	Postgres Protocol = "postgres" // PostgreSQL
)

// go-sql-driver/mysql logs what it also returns ("unexpected EOF" when a
// server dies) to stderr; qpslab reports errors itself, once.
func init() { mysql.SetLogger(log.New(io.Discard, "", 0)) }

// Endpoint says where a server listens and as whom to log in. Sandboxes use
// local trust/empty-password accounts bound to loopback only; a target's
// password (internal/target) is read from its environment variable or file
// when the target is used, and is never written anywhere: Password has no
// YAML or JSON form, and String leaves it out.
type Endpoint struct {
	Protocol Protocol `yaml:"protocol" json:"protocol"`
	Socket   string   `yaml:"socket" json:"socket"` // unix socket path (PostgreSQL: the socket file itself)
	Host     string   `yaml:"host" json:"host"`
	Port     int      `yaml:"port" json:"port"`
	User     string   `yaml:"user" json:"user"`
	Database string   `yaml:"database" json:"database"` // empty: none (MySQL) or the user's (PostgreSQL)
	Password string   `yaml:"-" json:"-"`
}

// String is where e is, as user@host:port/database (or the socket), for
// messages: never the password.
func (e Endpoint) String() string {
	where := e.Socket
	if where == "" {
		where = net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	}
	return e.User + "@" + where + "/" + e.Database
}

// GoString keeps the password out of %#v too.
func (e Endpoint) GoString() string { return "client.Endpoint(" + e.String() + ")" }

// WithDatabase returns a copy of e using database db.
func (e Endpoint) WithDatabase(db string) Endpoint { e.Database = db; return e }

// Open returns a database/sql handle for e. With tcp set it connects over
// loopback TCP, otherwise over the unix socket.
func Open(e Endpoint, tcp bool) (*sql.DB, error) {
	switch e.Protocol {
	case MySQL:
		c := mysql.NewConfig()
		c.User = e.User
		c.DBName = e.Database
		c.Timeout = 5 * time.Second
		c.Passwd = e.Password
		if tcp || e.Socket == "" {
			c.Net, c.Addr = "tcp", net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
		} else {
			c.Net, c.Addr = "unix", e.Socket
		}
		conn, err := mysql.NewConnector(c)
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(conn), nil
	case Postgres:
		c, err := pgx.ParseConfig("")
		if err != nil {
			return nil, err
		}
		c.User = e.User
		c.Database = e.Database
		c.ConnectTimeout = 5 * time.Second
		if e.Password != "" {
			c.Password = e.Password
		}
		c.Port = uint16(e.Port)
		c.Host = e.Host
		if !tcp && e.Socket != "" {
			// pgx takes the socket's directory as the host and the port from
			// the socket name (.s.PGSQL.<port>).
			c.Host = socketDir(e.Socket)
		}
		c.TLSConfig = nil
		c.Fallbacks = nil
		c.RuntimeParams["application_name"] = "qpslab"
		return stdlib.OpenDB(*c), nil
	}
	return nil, fmt.Errorf("unknown protocol %q", e.Protocol)
}

func socketDir(sock string) string {
	for i := len(sock) - 1; i >= 0; i-- {
		if sock[i] == '/' {
			return sock[:i]
		}
	}
	return "."
}

// Ping opens a connection to e and runs a trivial query, once.
func Ping(ctx context.Context, e Endpoint, tcp bool) error {
	db, err := Open(e, tcp)
	if err != nil {
		return err
	}
	defer db.Close()
	var one int
	return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Query runs q on e and returns the column names and rows as text.
func Query(ctx context.Context, e Endpoint, tcp bool, q string) ([]string, [][]string, error) {
	db, err := Open(e, tcp)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if v.Valid {
				row[i] = v.String
			} else {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	return cols, out, rows.Err()
}
