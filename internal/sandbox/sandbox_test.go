package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/testenv"
)

// newHome is a test home whose path every server started by the test carries
// in its environment, so the process table can be checked afterwards.
func newHome(t *testing.T) home.Home {
	h := testenv.Home(t)
	t.Setenv("QPSLAB_HOME", h.Root)
	t.Cleanup(func() {
		sandbox.StopAll()
		if left := testenv.Processes(h.Root); len(left) > 0 {
			t.Errorf("processes left behind: %q", left)
		}
	})
	return h
}

func defaultConfig(t *testing.T, b build.Build) config.Config {
	c, err := config.Store{Dir: t.TempDir()}.Get("default", config.Family(b.Flavor.Describe().Family))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func start(t *testing.T, h home.Home, spec sandbox.Spec) *sandbox.Server {
	t.Helper()
	srv, err := sandbox.Start(context.Background(), h, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return srv
}

func queryOne(t *testing.T, ep client.Endpoint, tcp bool, q string) string {
	t.Helper()
	_, rows, err := client.Query(context.Background(), ep, tcp, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("%s: got %q", q, rows)
	}
	return rows[0][0]
}

// The four builds the issue names, and MySQL where a MySQL basedir is
// present: start, query over socket and TCP, stop.
func TestStartQueryStop(t *testing.T) {
	for _, name := range []string{"mariadb-system", "mariadb-10.2.11", "postgres-system", "postgres-12.17.0", testenv.MySQL} {
		t.Run(name, func(t *testing.T) {
			h := newHome(t)
			b := testenv.Build(t, h, name)
			srv := start(t, h, sandbox.Spec{Build: b, Config: defaultConfig(t, b)})
			ep := srv.Endpoint()
			if ep.Database != sandbox.Database {
				t.Errorf("endpoint database %q, want %q", ep.Database, sandbox.Database)
			}
			v := queryOne(t, ep, false, "SELECT version()")
			if !strings.Contains(v, b.Version) {
				t.Errorf("server says %q, build version is %s", v, b.Version)
			}
			db := "SELECT database()"
			if ep.Protocol == client.Postgres {
				db = "SELECT current_database()"
			}
			if got := queryOne(t, ep, true, db); got != sandbox.Database {
				t.Errorf("over TCP the current database is %q, want %q", got, sandbox.Database)
			}
			if _, err := os.Stat(srv.Log); err != nil {
				t.Errorf("server log: %v", err)
			}
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			st, err := sandbox.Get(h, srv.Name)
			if err != nil {
				t.Fatal(err)
			}
			if st.Running() || st.PID != 0 {
				t.Errorf("after Stop the sandbox records pid %d, running=%v", st.PID, st.Running())
			}
			if left := testenv.Processes(h.Root); len(left) > 0 {
				t.Errorf("after Stop: %q", left)
			}
			if _, err := os.Stat(srv.Log); err != nil {
				t.Errorf("the server log must be kept: %v", err)
			}
		})
	}
}

// Two sandboxes of each system build at once, started concurrently, on
// different ports and sockets.
func TestTwoSandboxesAtOnce(t *testing.T) {
	h := newHome(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var srvs []*sandbox.Server
	for _, name := range []string{"mariadb-system", "postgres-system"} {
		b := testenv.Build(t, h, name)
		cfg := defaultConfig(t, b)
		for _, sb := range []string{"a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				srv, err := sandbox.Start(context.Background(), h, sandbox.Spec{Name: name + "-" + sb, Build: b, Config: cfg})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				srvs = append(srvs, srv)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if len(srvs) != 4 {
		t.FailNow()
	}
	ports := map[int]bool{}
	for _, s := range srvs {
		ports[s.Endpoint().Port] = true
		queryOne(t, s.Endpoint(), false, "SELECT 1")
	}
	if len(ports) != 4 {
		t.Errorf("sandboxes share ports: %v", ports)
	}
	for _, s := range srvs {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}
}

// A datadir is kept only when asked: --reuse-datadir keeps a table, a plain
// start makes a new datadir.
func TestReuseDatadir(t *testing.T) {
	for _, name := range []string{"mariadb-system", "postgres-system"} {
		t.Run(name, func(t *testing.T) {
			h := newHome(t)
			b := testenv.Build(t, h, name)
			spec := sandbox.Spec{Build: b, Config: defaultConfig(t, b)}
			srv := start(t, h, spec)
			db, err := client.Open(srv.Endpoint(), false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("CREATE TABLE kept (id int)"); err != nil {
				t.Fatal(err)
			}
			db.Close()
			srv.Stop()

			spec.Reuse = true
			srv = start(t, h, spec)
			count := "SELECT count(*) FROM information_schema.tables WHERE table_name = 'kept'"
			if got := queryOne(t, srv.Endpoint(), false, count); got != "1" {
				t.Errorf("with Reuse the table is gone (count %s)", got)
			}
			srv.Stop()

			spec.Reuse = false
			srv = start(t, h, spec)
			if got := queryOne(t, srv.Endpoint(), false, count); got != "0" {
				t.Errorf("without Reuse the old table is still there (count %s)", got)
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	h := newHome(t)
	maria := testenv.Build(t, h, "mariadb-system")
	pg := testenv.Build(t, h, "postgres-system")
	mcfg, pcfg := defaultConfig(t, maria), defaultConfig(t, pg)

	t.Run("port in use", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		_, err = sandbox.Start(context.Background(), h, sandbox.Spec{Build: maria, Config: mcfg, Port: port})
		testenv.WantErr(t, err, "is in use", "--port")
	})

	t.Run("server dies during start", func(t *testing.T) {
		bad := config.Config{Name: "bad", Family: config.MySQL, Content: []byte("[mysqld]\nno_such_option_qpslab=1\n")}
		_, err := sandbox.Start(context.Background(), h, sandbox.Spec{Name: "dies", Build: maria, Config: bad})
		testenv.WantErr(t, err, "exited during start", "no_such_option_qpslab", "server.log")
		badpg := config.Config{Name: "bad", Family: config.Postgres, Content: []byte("shared_buffers = 'lots'\n")}
		_, err = sandbox.Start(context.Background(), h, sandbox.Spec{Name: "dies-pg", Build: pg, Config: badpg})
		testenv.WantErr(t, err, "exited during start", "shared_buffers")
	})

	t.Run("config of another family", func(t *testing.T) {
		_, err := sandbox.Start(context.Background(), h, sandbox.Spec{Build: maria, Config: pcfg})
		testenv.WantErr(t, err, "postgres config", "mariadb")
	})

	t.Run("unwritable datadir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			// Root ignores modes; an immutable folder stops even root.
			if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
				testenv.Skip(t, fmt.Sprintf("chattr +i fails here, and root writes any folder without it: %v %s", err, out))
			}
			defer exec.Command("chattr", "-i", dir).Run()
		}
		_, err := sandbox.Start(context.Background(), h, sandbox.Spec{Name: "ro", Build: maria, Config: mcfg, Datadir: filepath.Join(dir, "data")})
		testenv.WantErr(t, err, "not writable", "--datadir")
	})

	t.Run("datadir not made by qpslab", func(t *testing.T) {
		dir := t.TempDir()
		precious := filepath.Join(dir, "precious.txt")
		os.WriteFile(precious, []byte("keep me"), 0o644)
		_, err := sandbox.Start(context.Background(), h, sandbox.Spec{Name: "foreign", Build: maria, Config: mcfg, Datadir: dir})
		testenv.WantErr(t, err, "not made by qpslab")
		if b, err := os.ReadFile(precious); err != nil || string(b) != "keep me" {
			t.Errorf("a foreign file was touched: %q %v", b, err)
		}
	})

	t.Run("sandbox folder not made by qpslab", func(t *testing.T) {
		dir := sandbox.Dir(h, "squat")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "notes"), []byte("mine"), 0o644)
		_, err := sandbox.Start(context.Background(), h, sandbox.Spec{Name: "squat", Build: maria, Config: mcfg})
		testenv.WantErr(t, err, "not made by qpslab")
	})

	t.Run("already running", func(t *testing.T) {
		start(t, h, sandbox.Spec{Name: "twice", Build: maria, Config: mcfg})
		_, err := sandbox.Start(context.Background(), h, sandbox.Spec{Name: "twice", Build: maria, Config: mcfg})
		testenv.WantErr(t, err, "already running", "qpslab server stop twice")
	})
}

// Cancelling the context while the init program's bootstrap server runs, or
// once the server is launched and not yet answering, fails the start with the
// context's error and leaves no process behind. The cancel comes from a hook
// at that very point, so the test always exercises the cancel path.
func TestCancelDuringStart(t *testing.T) {
	for _, name := range []string{"mariadb-10.2.11", "postgres-system", testenv.MySQL} {
		for _, phase := range []string{"init", "launch"} {
			t.Run(name+"/"+phase, func(t *testing.T) {
				h := newHome(t)
				b := testenv.Build(t, h, name)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				reached := false
				defer sandbox.SetHook(func(p string, pid int) {
					if p != phase {
						return
					}
					reached = true
					if phase == "init" {
						// Wait for the bootstrap server (mysqld --bootstrap,
						// postgres --boot or --single) the init program forks.
						deadline := time.Now().Add(time.Minute)
						for !hasBootstrap(h.Root) {
							if time.Now().After(deadline) {
								t.Error("no bootstrap server seen during init")
								break
							}
							time.Sleep(5 * time.Millisecond)
						}
					}
					cancel()
				})()
				srv, err := sandbox.Start(ctx, h, sandbox.Spec{Build: b, Config: defaultConfig(t, b)})
				if !reached {
					t.Fatalf("the start never reached %s (err %v)", phase, err)
				}
				if err == nil {
					srv.Stop()
					t.Fatalf("the start succeeded although it was cancelled during %s", phase)
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("want a cancelled start, got %v", err)
				}
				if left := testenv.Processes(h.Root); len(left) > 0 {
					t.Errorf("after a cancelled start: %q", left)
				}
				st, err := sandbox.Get(h, sandbox.DefaultName(b, defaultConfig(t, b)))
				if err != nil {
					t.Fatal(err)
				}
				if st.Status() != "failed" || !strings.Contains(st.Failed, "context canceled") {
					t.Errorf("after a cancelled start the sandbox is %s (failed %q), want failed", st.Status(), st.Failed)
				}
			})
		}
	}
}

// hasBootstrap: MariaDB's install script forks mysqld --bootstrap,
// initdb postgres --boot or --single; MySQL 5.7 and later initialise with
// mysqld --initialize-insecure itself.
func hasBootstrap(marker string) bool {
	for _, p := range testenv.Processes(marker) {
		if strings.Contains(p, " --boot") || strings.Contains(p, " --single") || strings.Contains(p, " --initialize") {
			return true
		}
	}
	return false
}

// A server that dies during a run is told as it is: Exited fires, and the exit
// names the signal; sandbox.yaml says it died. A server qpslab stopped is no
// death.
func TestServerDeath(t *testing.T) {
	for _, name := range []string{"mariadb-system", "postgres-system", testenv.MySQL} {
		t.Run(name, func(t *testing.T) {
			h := newHome(t)
			b := testenv.Build(t, h, name)
			srv := start(t, h, sandbox.Spec{Build: b, Config: defaultConfig(t, b)})
			if srv.ExitCause() != "" {
				t.Errorf("a running server has an exit cause: %q", srv.ExitCause())
			}
			if err := syscall.Kill(srv.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			select {
			case <-srv.Exited():
			case <-time.After(30 * time.Second):
				t.Fatal("Exited did not fire within 30 s of a SIGKILL")
			}
			e := srv.Exit()
			if e.Status != "killed by signal 9 (SIGKILL)" || e.Stopped || e.Log != srv.Log {
				t.Errorf("Exit = %+v, want killed by signal 9 (SIGKILL), not stopped, log %s", e, srv.Log)
			}
			if c := srv.ExitCause(); !strings.HasPrefix(c, "killed by signal 9 (SIGKILL)") || !strings.Contains(c, srv.Log) {
				t.Errorf("ExitCause = %q", c)
			}
			if err := srv.Stop(); err != nil { // waits for the cleanup after the death
				t.Errorf("Stop after a death: %v", err)
			}
			st, err := sandbox.Get(h, srv.Name)
			if err != nil {
				t.Fatal(err)
			}
			if st.Status() != "died" || !strings.Contains(st.Died, "SIGKILL") || st.PID != 0 {
				t.Errorf("after the death the sandbox is %s, pid %d, died %q", st.Status(), st.PID, st.Died)
			}
			if left := testenv.Processes(h.Root); len(left) > 0 {
				t.Errorf("after the death: %q", left)
			}

			srv = start(t, h, sandbox.Spec{Build: b, Config: defaultConfig(t, b)})
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			if e := srv.Exit(); !e.Stopped || e.Status != "exited with status 0" {
				t.Errorf("after Stop, Exit = %+v, want stopped, exited with status 0", e)
			}
			if st, _ := sandbox.Get(h, srv.Name); st.Status() != "stopped" || st.Died != "" {
				t.Errorf("after Stop the sandbox is %s (died %q)", st.Status(), st.Died)
			}
		})
	}
}
