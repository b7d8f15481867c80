package client

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestConnectLimit(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&mysql.MySQLError{Number: 1040, Message: "Too many connections"}, "max_connections"},
		{fmt.Errorf("connect: %w", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}), "max_connections"},
		{fmt.Errorf("dial: %w", syscall.EMFILE), "ulimit -n"},
		{fmt.Errorf("dial: %w", syscall.EADDRNOTAVAIL), "ip_local_port_range"},
		{fmt.Errorf("dial: %w", syscall.EAGAIN), "back_log"},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), ""},
	} {
		got := ConnectLimit(c.err)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want one naming %q", c.err, got, c.want)
		}
	}
}
