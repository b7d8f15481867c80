package target_test

import (
	"context"
	"sync"
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
			// Several qpslab processes checking a new target at once (the
			// parts of a spread run) all pass, and one created the database.
			reports := make([]target.Report, 4)
			errs := make([]error, 4)
			var wg sync.WaitGroup
			for i := range reports {
				wg.Go(func() {
					reports[i], errs[i] = target.Check(context.Background(), target.Target{Name: "here", Flavor: srv.Flavor, Socket: ep.Socket, User: ep.User, Database: "qpslab_t"})
				})
			}
			wg.Wait()
			created := 0
			for i, r := range reports {
				if errs[i] != nil || r.PID != srv.PID {
					t.Errorf("check %d: pid %d: %v", i, r.PID, errs[i])
				}
				if r.Created {
					created++
				}
			}
			if created != 1 {
				t.Errorf("%d checks created the database", created)
			}
			if pid, _ := target.Local(target.Target{Name: "none", Flavor: srv.Flavor, Host: "127.0.0.1", Port: 1, User: ep.User}); pid != 0 {
				t.Errorf("port 1: pid %d", pid)
			}
		})
	}
}
