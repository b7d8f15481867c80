package client_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/testenv"
)

func needUring(t *testing.T) {
	t.Helper()
	if !client.UringWorks() {
		testenv.Skip(t, "io_uring is refused here: TestUringAvailable says why")
	}
}

// Workers on one loop thread run their statements interleaved: each
// leaves the rows it should, and while one waits for a 60 s statement the
// others on the same thread go on; the last of them to finish ends that
// wait by closing its connection.
func TestLoopInterleaves(t *testing.T) {
	needUring(t)
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			ctx := context.Background()
			p := ep.Protocol
			setup, err := client.Dial(ctx, ep, client.Options{Transport: client.Blocking})
			if err != nil {
				t.Fatal(err)
			}
			defer setup.Close()
			if _, err := setup.Exec(ctx, "CREATE TABLE lt (id INT PRIMARY KEY, v INT)"); err != nil {
				t.Fatal(err)
			}
			const workers, each = 6, 200
			conns := make([]client.Conn, workers)
			for i := range conns {
				if _, err := setup.Exec(ctx, fmt.Sprintf("INSERT INTO lt VALUES (%d, 0)", i)); err != nil {
					t.Fatal(err)
				}
				if conns[i], err = client.Dial(ctx, ep, client.Options{Transport: client.Loop}); err != nil {
					t.Fatal(err)
				}
				defer conns[i].Close()
			}
			sleep := "SELECT sleep(60)"
			if p == client.Postgres {
				sleep = "SELECT pg_sleep(60)"
			}
			var mu sync.Mutex
			var order []int // workers in the order they finished
			errs := make([]error, workers)
			left := workers - 1
			err = client.Loops{Threads: 1}.Run(ctx, workers, func(ctx context.Context, i int) {
				defer func() {
					mu.Lock()
					defer mu.Unlock()
					order = append(order, i)
					if i > 0 {
						if left--; left == 0 {
							conns[0].Close() // the last of the others ends worker 0's wait
						}
					}
				}()
				c := conns[i]
				if i == 0 {
					_, errs[i] = c.Query(ctx, sleep)
					return
				}
				upd, err := c.Prepare(ctx, "UPDATE lt SET v = v + 1 WHERE id = "+placeholder(p, 1))
				if err != nil {
					errs[i] = err
					return
				}
				sel, err := c.Prepare(ctx, "SELECT v FROM lt WHERE id = "+placeholder(p, 1))
				if err != nil {
					errs[i] = err
					return
				}
				args := []client.Arg{client.Int(int64(i))}
				for range each {
					if n, err := upd.ExecArgs(ctx, args); err != nil || n != 1 {
						errs[i] = fmt.Errorf("update: %d rows, %v", n, err)
						return
					}
					if n, err := sel.QueryArgs(ctx, args); err != nil || n != 1 {
						errs[i] = fmt.Errorf("select: %d rows, %v", n, err)
						return
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, err := range errs[1:] {
				if err != nil {
					t.Errorf("worker %d: %v", i+1, err)
				}
			}
			if errs[0] == nil {
				t.Error("worker 0's statement, its connection closed under it, returned no error")
			}
			for i := 1; i < workers; i++ {
				if v := testenv.Int(t, ep, fmt.Sprintf("SELECT v FROM lt WHERE id = %d", i)); v != each {
					t.Errorf("worker %d's row: %d, want %d", i, v, each)
				}
			}
			if len(order) != workers || order[workers-1] != 0 {
				t.Errorf("finishing order %v: the others did not go on while worker 0 waited on the server", order)
			}
		})
	}
}

// A statement cancelled through its context ends promptly on a loop, and
// the thread's other worker goes on.
func TestLoopCancel(t *testing.T) {
	needUring(t)
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			sleep := "SELECT sleep(30)"
			if ep.Protocol == client.Postgres {
				sleep = "SELECT pg_sleep(30)"
			}
			conns := loopConns(t, ep, 2)
			cancelled := make(chan struct{})
			errs := make([]error, 2)
			done := make(chan error, 1)
			go func() {
				done <- client.Loops{Threads: 1}.Run(context.Background(), 2, func(ctx context.Context, i int) {
					if i == 0 {
						ctx, cancel := context.WithCancel(ctx)
						defer cancel()
						go func() { <-cancelled; cancel() }()
						_, errs[0] = conns[0].Query(ctx, sleep)
						return
					}
					for range 20 { // the other worker's statements go on meanwhile
						if _, err := conns[1].Query(ctx, "SELECT 1"); err != nil {
							errs[1] = err
							return
						}
					}
					close(cancelled)
				})
			}()
			waitLoop(t, done, "a cancelled statement on a loop did not return")
			if errs[0] == nil {
				t.Error("a cancelled 30 s statement returned no error")
			}
			if errs[1] != nil {
				t.Errorf("the other worker: %v", errs[1])
			}
		})
	}
}

// A server that dies in the middle of statements ends them with an error
// on every transport, the loop's included: nothing hangs.
func TestServerDiesMidStatement(t *testing.T) {
	trs := append(rawTransports(), client.Netpoll)
	if client.UringWorks() {
		trs = append(trs, client.Loop)
	}
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		for _, tr := range trs {
			t.Run(build+"/"+string(tr), func(t *testing.T) {
				srv, _ := testenv.StartServer(t, build)
				ep := srv.Endpoint()
				sleep := "SELECT sleep(30)"
				if ep.Protocol == client.Postgres {
					sleep = "SELECT pg_sleep(30)"
				}
				const n = 3
				conns := make([]client.Conn, n)
				for i := range conns {
					c, err := client.Dial(context.Background(), ep, client.Options{Transport: tr})
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					conns[i] = c
				}
				// Kill the server once it runs all three statements.
				go func() {
					look, err := client.Dial(context.Background(), ep, client.Options{Transport: client.Netpoll})
					if err != nil {
						return
					}
					defer look.Close()
					q := "SELECT count(*) FROM information_schema.processlist WHERE info LIKE 'SELECT sleep(30)%'"
					if ep.Protocol == client.Postgres {
						q = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' AND state = 'active'"
					}
					testenv.WaitFor(t, 20*time.Second, "three sleeping statements", func() bool {
						v, err := client.Scalar(context.Background(), look, q)
						return err == nil && v >= n
					})
					syscall.Kill(srv.PID, syscall.SIGKILL)
				}()
				errs := make([]error, n)
				run := func(ctx context.Context, i int) { _, errs[i] = conns[i].Query(ctx, sleep) }
				done := make(chan struct{})
				go func() {
					defer close(done)
					if tr == client.Loop {
						if err := (client.Loops{Threads: 1}).Run(context.Background(), n, run); err != nil {
							t.Error(err)
						}
						return
					}
					var wg sync.WaitGroup
					for i := range n {
						wg.Go(func() { run(context.Background(), i) })
					}
					wg.Wait()
				}()
				select {
				case <-done:
				case <-time.After(25 * time.Second):
					t.Fatal("statements on a dead server did not return")
				}
				for i, err := range errs {
					if err == nil {
						t.Errorf("worker %d: no error from a server that died", i)
					} else if !client.ConnectionLost(err) {
						t.Errorf("worker %d: %v, not a lost connection", i, err)
					}
				}
			})
		}
	}
}

// A send that fails (its connection shut down after the statement was
// queued, before the thread submitted it) ends the worker's statement with
// an error: the loop does not wait for the receive the kernel then skips.
func TestLoopSendFails(t *testing.T) {
	needUring(t)
	for _, build := range []string{"mariadb-system", "postgres-system"} {
		t.Run(build, func(t *testing.T) {
			ep := startServer(t, build)
			conns := loopConns(t, ep, 2)
			var errs [2]error
			done := make(chan error, 1)
			go func() {
				// Worker 0 runs first and queues its statement; worker 1
				// then closes worker 0's connection, before the thread
				// submits anything.
				done <- client.Loops{Threads: 1}.Run(context.Background(), 2, func(ctx context.Context, i int) {
					if i == 0 {
						_, errs[0] = conns[0].Query(ctx, "SELECT 1")
						return
					}
					errs[1] = conns[0].Close()
				})
			}()
			waitLoop(t, done, "a statement whose send failed never ended")
			if errs[0] == nil {
				t.Error("a statement on a connection closed before its send: no error")
			}
			if errs[1] != nil {
				t.Errorf("close: %v", errs[1])
			}
		})
	}
}

// waitLoop waits for a loop's Run to return its error on done, failing the
// test with why if it does not within 15 s.
func waitLoop(t *testing.T, done <-chan error, why string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal(why)
	}
}

// loopConns dials n connections of the loop transport, closed with the test.
func loopConns(t *testing.T, ep client.Endpoint, n int) []client.Conn {
	t.Helper()
	conns := make([]client.Conn, n)
	for i := range conns {
		c, err := client.Dial(context.Background(), ep, client.Options{Transport: client.Loop})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	return conns
}

// Each statement on a loop has its own completion time, taken when the
// thread reaped it: after the statement began and before its worker ran
// again.
func TestLoopCompleted(t *testing.T) {
	needUring(t)
	ep := startServer(t, "postgres-system")
	conns := loopConns(t, ep, 3)
	var ls client.Loops
	bad := make([]string, 3)
	err := client.Loops{Threads: 1}.Run(context.Background(), 3, func(ctx context.Context, i int) {
		for range 50 {
			before := time.Now()
			if _, err := conns[i].Query(ctx, "SELECT 1"); err != nil {
				bad[i] = err.Error()
				return
			}
			after := time.Now()
			if done, ok := ls.Completed(ctx); !ok || !done.After(before) || done.After(after) {
				bad[i] = fmt.Sprintf("completed %v (%v), statement from %v to %v", done, ok, before, after)
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range bad {
		if b != "" {
			t.Errorf("worker %d: %s", i, b)
		}
	}
	if _, ok := ls.Completed(context.Background()); ok {
		t.Error("a completion time off a loop")
	}
}
