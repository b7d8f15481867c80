package target_test

import (
	"context"
	"testing"

	"github.com/qpslab/qpslab/internal/target"
	"github.com/qpslab/qpslab/internal/testenv"
)

// A server on this host, as a target by its socket or its TCP port, is
// found: its process (the postmaster for PostgreSQL) and the folder it
// runs in, its datadir; Check says so. A port nothing listens on is no
// server here.
func TestLocalServer(t *testing.T) {
	for _, b := range []string{"mariadb-system", "postgres-system"} {
		t.Run(b, func(t *testing.T) {
			srv, _ := testenv.StartServer(t, b)
			ep := srv.Endpoint()
			for _, tg := range []target.Target{
				{Name: "sock", Flavor: srv.Flavor, Socket: ep.Socket, User: ep.User, Database: "qpslab_t"},
				{Name: "tcp", Flavor: srv.Flavor, Host: "127.0.0.1", Port: ep.Port, User: ep.User, Database: "qpslab_t"},
			} {
				pid, dir := target.Local(tg)
				if pid != srv.PID || dir != srv.Datadir {
					t.Errorf("%s: pid %d in %s, want %d in %s", tg.Name, pid, dir, srv.PID, srv.Datadir)
				}
			}
			r, err := target.Check(context.Background(), target.Target{Name: "here", Flavor: srv.Flavor, Socket: ep.Socket, User: ep.User, Database: "qpslab_t"})
			if err != nil || r.PID != srv.PID || !r.Created {
				t.Errorf("check: pid %d created %v: %v", r.PID, r.Created, err)
			}
			if pid, _ := target.Local(target.Target{Name: "none", Flavor: srv.Flavor, Host: "127.0.0.1", Port: 1, User: ep.User}); pid != 0 {
				t.Errorf("port 1: pid %d", pid)
			}
		})
	}
}
