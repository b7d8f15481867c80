package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/testenv"
)

func startServer(t testing.TB, build string) client.Endpoint {
	t.Helper()
	srv, _ := testenv.StartServer(t, build)
	return srv.Endpoint()
}

// Every combination of protocol, transport, socket/TCP and prepared/text runs
// the same statements and gets the same answers.
func TestConnMatrix(t *testing.T) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			ph := func(i int) string { return "?" }
			if ep.Protocol == client.Postgres {
				ph = func(i int) string { return "$" + string(rune('0'+i)) }
			}
			ctx := context.Background()
			setup, err := client.Dial(ctx, ep, client.Options{Transport: client.Netpoll})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"DROP TABLE IF EXISTS t", "CREATE TABLE t (id int primary key, v int)"} {
				if _, err := setup.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			setup.Close()
			for _, tr := range append(rawTransports(), client.Netpoll) {
				for _, tcp := range []bool{false, true} {
					for _, noPrep := range []bool{false, true} {
						name := string(tr)
						if tcp {
							name += "/tcp"
						} else {
							name += "/socket"
						}
						if noPrep {
							name += "/text"
						} else {
							name += "/prepared"
						}
						t.Run(name, func(t *testing.T) {
							c, err := client.Dial(ctx, ep, client.Options{TCP: tcp, NoPrepare: noPrep, Transport: tr})
							if err != nil {
								t.Fatal(err)
							}
							defer c.Close()
							ins, err := c.Prepare(ctx, "INSERT INTO t (id, v) VALUES ("+ph(1)+", "+ph(2)+")")
							if err != nil {
								t.Fatal(err)
							}
							del, err := c.Prepare(ctx, "DELETE FROM t WHERE id >= "+ph(1))
							if err != nil {
								t.Fatal(err)
							}
							sel, err := c.Prepare(ctx, "SELECT id, v FROM t WHERE id BETWEEN "+ph(1)+" AND "+ph(2))
							if err != nil {
								t.Fatal(err)
							}
							if _, err := del.Exec(ctx, 0); err != nil {
								t.Fatal(err)
							}
							if err := c.Begin(ctx); err != nil {
								t.Fatal(err)
							}
							for i := 1; i <= 20; i++ {
								if n, err := ins.Exec(ctx, i, i*10); err != nil || n != 1 {
									t.Fatalf("insert %d: %d rows, %v", i, n, err)
								}
							}
							if err := c.Commit(ctx); err != nil {
								t.Fatal(err)
							}
							if n, err := sel.Query(ctx, 5, 14); err != nil || n != 10 {
								t.Errorf("select 5..14: %d rows, %v", n, err)
							}
							if n, err := c.Query(ctx, "SELECT * FROM t"); err != nil || n != 20 {
								t.Errorf("text select: %d rows, %v", n, err)
							}
							if n, err := del.Exec(ctx, 11); err != nil || n != 10 {
								t.Errorf("delete: %d rows, %v", n, err)
							}
						})
					}
				}
			}
		})
	}
}

// A query cancelled through its context returns promptly on the blocking
// transport too (a deadline in the past shuts the socket down).
func TestBlockingCancel(t *testing.T) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		for _, tr := range rawTransports() {
			t.Run(build+"/"+string(tr), func(t *testing.T) { cancelSleep(t, build, tr) })
		}
	}
}

func cancelSleep(t *testing.T, build string, tr client.Transport) {
	{
		{
			ep := startServer(t, build)
			c, err := client.Dial(context.Background(), ep, client.Options{Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sleep := "SELECT sleep(30)"
			if ep.Protocol == client.Postgres {
				sleep = "SELECT pg_sleep(30)"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { _, err := c.Query(ctx, sleep); done <- err }()
			select {
			case err := <-done:
				if err == nil {
					t.Error("a cancelled 30 s query returned no error")
				}
			case <-time.After(15 * time.Second):
				t.Fatal("a cancelled query did not return")
			}
		}
	}
}

func TestRetryableAndLost(t *testing.T) {
	ep := startServer(t, "mariadb-system")
	ctx := context.Background()
	a, _ := client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
	b, _ := client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
	defer a.Close()
	defer b.Close()
	a.Exec(ctx, "CREATE TABLE r (id int primary key)")
	a.Exec(ctx, "INSERT INTO r VALUES (1)")
	b.Exec(ctx, "SET innodb_lock_wait_timeout = 1")
	a.Begin(ctx)
	a.Exec(ctx, "UPDATE r SET id = 1 WHERE id = 1")
	_, err := b.Exec(ctx, "UPDATE r SET id = 1 WHERE id = 1")
	a.Rollback(ctx)
	if !client.Retryable(err) {
		t.Errorf("lock wait timeout %v is not retryable", err)
	}
	if client.ConnectionLost(err) {
		t.Errorf("lock wait timeout %v taken for a lost connection", err)
	}
	a.Exec(ctx, "KILL CONNECTION_ID()")
	_, err = a.Query(ctx, "SELECT 1")
	if !client.ConnectionLost(err) {
		t.Errorf("a killed connection's error %v is not taken as lost", err)
	}
}

// A context that ends while no statement is in flight (a rollback's short
// timeout, say) must leave the connection usable.
func TestIdleContextEndKeepsConnection(t *testing.T) {
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			for _, tr := range append(rawTransports(), client.Netpoll) {
				c, err := client.Dial(context.Background(), ep, client.Options{Transport: tr})
				if err != nil {
					t.Fatal(err)
				}
				short, cancel := context.WithTimeout(context.Background(), time.Minute)
				handled := make(chan struct{})
				remove := client.OnEndHandled(func(ctx context.Context) {
					if ctx == short {
						close(handled)
					}
				})
				if _, err := c.Query(short, "SELECT 1"); err != nil {
					t.Fatal(err)
				}
				cancel()
				select { // the connection's watcher has seen the end
				case <-handled:
				case <-time.After(time.Minute):
					t.Fatal("the end of an idle context was not handled within a minute")
				}
				remove()
				run, stop := context.WithCancel(context.Background())
				if _, err := c.Query(run, "SELECT 1"); err != nil {
					t.Errorf("%s: after an idle context ended, the connection fails: %v", tr, err)
				}
				// The worker's pattern after a failed transaction: a ROLLBACK
				// under a short context, cancelled as the next event starts
				// under the run's context. The cancel must not close the
				// connection under the next statement.
				for i := 0; i < 300; i++ {
					rb, rbCancel := context.WithTimeout(context.Background(), 10*time.Second)
					if _, err := c.Query(rb, "SELECT 1"); err != nil {
						t.Fatalf("%s: iteration %d: %v", tr, i, err)
					}
					rbCancel()
					if _, err := c.Query(run, "SELECT 1"); err != nil {
						t.Fatalf("%s: iteration %d: the next statement failed: %v", tr, i, err)
					}
				}
				stop()
				if _, err := c.Query(run, "SELECT 1"); err == nil {
					t.Errorf("%s: a statement with an ended context ran", tr)
				}
				c.Close()
			}
		})
	}
}

// The io_uring transport's tests run where the kernel allows io_uring;
// where it does not, this test is the one skipped, with the reason.
func TestUringAvailable(t *testing.T) {
	if !client.UringWorks() {
		testenv.Skip(t, "io_uring is refused here (kernel.io_uring_disabled, a seccomp filter, or a kernel before 5.11): the uring transport's tests do not run, and auto picks blocking")
	}
	if _, err := client.ParseTransport("uring"); err != nil {
		t.Fatal(err)
	}
}

// Auto picks the transport measured cheapest: loop for several PostgreSQL
// connections where io_uring works, blocking otherwise, netpoll beyond
// BlockingMax; a named transport stays.
func TestResolveAuto(t *testing.T) {
	several := client.Blocking
	if client.UringWorks() {
		several = client.Loop
	}
	for _, c := range []struct {
		t    client.Transport
		n    int
		p    client.Protocol
		want client.Transport
	}{
		{client.Auto, 1, client.Postgres, client.Blocking},
		{client.Auto, 8, client.Postgres, several},
		{"", 8, client.Postgres, several},
		{client.Auto, 8, client.MySQL, client.Blocking},
		{client.Auto, client.BlockingMax + 1, client.Postgres, client.Netpoll},
		{client.Blocking, 8, client.Postgres, client.Blocking},
		{client.Uring, 1, client.MySQL, client.Uring},
	} {
		if got := c.t.Resolve(c.n, c.p); got != c.want {
			t.Errorf("%q.Resolve(%d, %s) = %s, want %s", c.t, c.n, c.p, got, c.want)
		}
	}
}

// Where io_uring is refused, auto falls back to the blocking transport and
// asking for uring or loop is one error line naming why.
func TestUringRefused(t *testing.T) {
	defer client.RefuseUring()()
	if got := client.Auto.Resolve(8, client.Postgres); got != client.Blocking {
		t.Errorf("auto at 8 PostgreSQL connections without io_uring: %s, want blocking", got)
	}
	for _, tr := range []string{"uring", "loop"} {
		_, err := client.ParseTransport(tr)
		testenv.WantErr(t, err, "--transport "+tr+": this kernel refuses io_uring", "use auto, blocking or netpoll")
	}
}
