package main_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/testenv"
)

// plantedPassword is the targets' password: no file under the home, no
// output and no process title may ever hold it.
const plantedPassword = "qpslab-Planted-7f3c9e"

// extServer is a server qpslab did not start: the test's own mariadbd or
// postgres command line, in the server's namespace.
type extServer struct {
	cmd    *exec.Cmd
	socket string // where the test itself (in the first namespace) sets it up
	ended  chan struct{}
}

// stop ends the server and waits for its process.
func (s *extServer) stop(sig syscall.Signal) {
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(sig)
		<-s.ended
	}
}

// serverDir is a folder the server's own account can use.
func serverDir(t *testing.T, owner string) string {
	d, err := os.MkdirTemp("", "qpslab-ext-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	os.Chmod(d, 0o755)
	if owner != "" {
		exec.Command("chown", owner, d).Run()
	}
	return d
}

// launch starts argv in namespace ns with the home's marker in its
// environment (so a leftover is found), and stops it at the test's end.
func launch(t *testing.T, h home.Home, ns string, env []string, argv ...string) *extServer {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(testenv.Env(h), env...)
	var logb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logb, &logb
	cmd = testenv.In(ns, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &extServer{cmd: cmd, ended: make(chan struct{})}
	go func() { cmd.Wait(); close(s.ended) }()
	t.Cleanup(func() {
		s.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("%s's output:\n%s", argv[0], logb.String())
		}
	})
	return s
}

// waitUp waits for the server to answer on its socket.
func waitUp(t *testing.T, s *extServer, ep client.Endpoint, what string) {
	testenv.WaitFor(t, 3*time.Minute, what+" answers", func() bool {
		select {
		case <-s.ended:
			t.Fatalf("%s ended before it answered", what)
		default:
		}
		return client.Ping(context.Background(), ep, false) == nil
	})
}

func execAll(t *testing.T, ep client.Endpoint, stmts ...string) {
	db, err := client.Open(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// startMariaDB starts MariaDB's server by its own command line in the
// server namespace, bound to the namespace's address only, with accounts
// for the client's address: bench (qpslab's database and nothing else,
// no PROCESS) and weak (nothing).
func startMariaDB(t *testing.T, h home.Home, hosts *testenv.Hosts) *extServer {
	b := testenv.Build(t, h, "mariadb-system")
	l, err := b.Layout()
	if err != nil {
		t.Fatal(err)
	}
	dir := serverDir(t, "")
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "mysqld.sock")
	common := []string{"--no-defaults", "--basedir=" + b.Basedir, "--datadir=" + data, "--user=root"}
	if l.Share != "" {
		common = append(common, "--lc-messages-dir="+l.Share)
	}
	install := exec.Command(l.InstallDB, append(common, "--force", "--auth-root-authentication-method=normal")...)
	install.Env = testenv.Env(h)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", l.InstallDB, err, out)
	}
	s := launch(t, h, hosts.Server, nil, append([]string{l.Server}, append(common,
		"--socket="+sock, "--port=3306", "--bind-address="+hosts.ServerAddr, "--skip-log-bin",
		"--innodb-buffer-pool-size=64M", "--max-connections=300", "--pid-file="+filepath.Join(dir, "pid"),
		"--log-error="+filepath.Join(dir, "error.log"))...)...)
	s.socket = sock
	root := client.Endpoint{Protocol: client.MySQL, Socket: sock, User: "root"}
	waitUp(t, s, root, "MariaDB")
	clients := "10.213.0.%" // the clients' addresses (testenv.Network)
	execAll(t, root,
		"CREATE USER bench@'"+clients+"' IDENTIFIED BY '"+plantedPassword+"'",
		"GRANT ALL ON qpslab.* TO bench@'"+clients+"'",
		"CREATE USER weak@'"+clients+"' IDENTIFIED BY '"+plantedPassword+"'")
	return s
}

// startPostgres starts PostgreSQL's server by its own command line (as
// the postgres account) in the server namespace, listening on the
// namespace's address with password (SCRAM) log-in, with a bench role that
// may create databases and a weak one that may not.
func startPostgres(t *testing.T, h home.Home, hosts *testenv.Hosts) *extServer {
	b := testenv.Build(t, h, "postgres-system")
	l, err := b.Layout()
	if err != nil {
		t.Fatal(err)
	}
	dir := serverDir(t, "postgres")
	data := filepath.Join(dir, "data")
	as := []string{"setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups"}
	initdb := exec.Command(as[0], append(as[1:], l.InstallDB, "-D", data, "-U", "postgres", "--auth-local=trust",
		"--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")...)
	initdb.Env = testenv.Env(h)
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	hba, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(hba, "host all all 10.213.0.0/24 scram-sha-256\n")
	hba.Close()
	s := launch(t, h, hosts.Server, nil, append(as, l.Server, "-D", data, "-c", "port=5432",
		"-c", "listen_addresses="+hosts.ServerAddr, "-c", "unix_socket_directories="+dir, "-c", "logging_collector=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=300", "-c", "fsync=off")...)
	s.socket = filepath.Join(dir, ".s.PGSQL.5432")
	su := client.Endpoint{Protocol: client.Postgres, Socket: s.socket, Port: 5432, User: "postgres", Database: "postgres"}
	waitUp(t, s, su, "PostgreSQL")
	execAll(t, su,
		"CREATE ROLE bench LOGIN CREATEDB PASSWORD '"+plantedPassword+"'",
		"CREATE ROLE weak LOGIN PASSWORD '"+plantedPassword+"'")
	return s
}

// inClient runs qpslab in the client's namespace, the password in its
// environment, every output kept for the password check.
func inClient(t *testing.T, h home.Home, hosts *testenv.Hosts, outs *[]string, env []string, args ...string) outcome {
	t.Helper()
	r := runIn(t, hosts.Client, append(append(testenv.Env(h), "QPSLAB_TEST_TARGET_PW="+plantedPassword), env...), args...)
	*outs = append(*outs, r.stdout, r.stderr)
	return r
}

// A MariaDB and a PostgreSQL that qpslab did not start, each in a network
// namespace of its own "host", measured through --target from qpslab in
// another: registered with the password in an environment variable,
// checked, then sysbench, the Insert Benchmark and a pgbench script on
// each; every bad target is refused in one line, a target that vanishes
// mid-run fails the run, and the password is nowhere qpslab wrote.
func TestTargetsFromAnotherHost(t *testing.T) {
	h := newHome(t)
	hosts := testenv.TwoHosts(t)
	t.Run("netem delay", func(t *testing.T) { hosts.Delay(t, "1ms") })
	my := startMariaDB(t, h, hosts)
	pg := startPostgres(t, h, hosts)
	var outs []string
	ok := func(args ...string) outcome {
		t.Helper()
		r := inClient(t, h, hosts, &outs, nil, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	ok("targets", "add", "my", "--flavor", "mariadb", "--dsn", "mysql://bench@"+hosts.ServerAddr+":3306/qpslab",
		"--password-env", "QPSLAB_TEST_TARGET_PW")
	pwFile := filepath.Join(t.TempDir(), "pgpass")
	os.WriteFile(pwFile, []byte(plantedPassword+"\n"), 0o600)
	ok("targets", "add", "pg", "--flavor", "postgres", "--host", hosts.ServerAddr, "--user", "bench", "--password-file", pwFile)
	for _, name := range []string{"my", "pg"} {
		r := ok("targets", "check", name)
		for _, want := range []string{"reachable at " + hosts.ServerAddr, "created now, qpslab's own", "counters: readable"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("targets check %s: no %q in\n%s", name, want, r.stdout)
			}
		}
	}
	myVersion := strings.TrimSpace(testenv.Build(t, h, "mariadb-system").Version)

	// The three suites on each target, from the client's namespace.
	for _, name := range []string{"my", "pg"} {
		ok("run", "sysbench", "--target", name, "--tests", "point-query_range=100,update-index_range=100", "--rows", "2000",
			"--read-secs", "1", "--write-secs", "1", "--warmup", "0", "--postwrite-scale", "0", "--threads", "2", "--repeat", "1")
		ok("run", "ibench", "--target", name, "--mr1", "0.002", "--mr2", "0.001", "--steps", "l.i0,l.x,l.i1,qr100",
			"--rates", "100", "--query-secs", "1", "--wait-scale", "0", "--repeat", "1")
		ok("run", "script", "--target", name, "--builtin", "select-only", "--scale", "1", "--secs", "1", "--warmup", "0",
			"--threads", "2", "--repeat", "1")
	}
	st, err := store.Open(context.Background(), "", h.StoreFile())
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(context.Background(), store.Filter{})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range runs {
		if r.Role != result.RoleTest || r.Status != result.OK {
			continue
		}
		seen[r.Suite+" "+strings.SplitN(r.Build, "-", 2)[0]]++
		if r.Totals.Events <= 0 && r.Test != "l.x" || r.HW == nil || !r.HW.Remote {
			t.Errorf("%s %s on %s: %d events, hw %+v", r.Suite, r.Test, r.Label(), r.Totals.Events, r.HW)
		}
		for _, f := range []string{"cpu/o", "server_cpu_us/o", "cs/o"} {
			m, _ := result.Lookup(f)
			if v, has := m.Of(r); has {
				t.Errorf("%s on %s has %s %v: the target's host was not measured, so it must be absent", r.Test, r.Label(), f, v)
			}
		}
		if m, _ := result.Lookup("client_cpu_us/o"); r.Suite == "sysbench" {
			if v, has := m.Of(r); !has || v <= 0 {
				t.Errorf("%s on %s: client_cpu_us/o %v %v", r.Test, r.Label(), v, has)
			}
		}
		if r.Config != "target" || !strings.HasPrefix(r.Build, "my-") && !strings.HasPrefix(r.Build, "pg-") {
			t.Errorf("%s: label %s", r.Test, r.Label())
		}
	}
	for _, want := range []string{"sysbench my", "ibench my", "script my", "sysbench pg", "ibench pg", "script pg"} {
		if seen[want] == 0 {
			t.Errorf("no measured run of %s (%v)", want, seen)
		}
	}
	if !strings.Contains(strings.Join(outs, ""), "my-"+myVersion+".target") {
		t.Errorf("no run labelled my-%s.target", myVersion)
	}
	// Only qpslab's database was written: the server holds no other.
	root := client.Endpoint{Protocol: client.MySQL, Socket: my.socket, User: "root"}
	if n := testenv.Int(t, root, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys', 'test', 'qpslab')"); n != 0 {
		t.Errorf("%d databases besides qpslab's and the server's own", n)
	}

	t.Run("bad targets", func(t *testing.T) {
		bad := func(env []string, want string, args ...string) {
			t.Helper()
			r := inClient(t, h, hosts, &outs, env, args...)
			if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, want) {
				t.Errorf("%s: exit %d, want one line with %q: %s", strings.Join(args, " "), r.code, want, r.stderr)
			}
		}
		bad([]string{"QPSLAB_TEST_TARGET_PW=wrong"}, "check the user and the password ($QPSLAB_TEST_TARGET_PW)", "targets", "check", "my")
		bad([]string{"QPSLAB_TEST_TARGET_PW=wrong"}, "cannot log in", "run", "sysbench", "--target", "my", "--tests", "point-query_range=100")
		ok("targets", "add", "wrongflavor", "--flavor", "mysql", "--host", hosts.ServerAddr, "--user", "bench", "--password-env", "QPSLAB_TEST_TARGET_PW")
		bad(nil, "registered as MySQL and the server is MariaDB", "targets", "check", "wrongflavor")
		ok("targets", "add", "weakmy", "--flavor", "mariadb", "--host", hosts.ServerAddr, "--user", "weak", "--password-env", "QPSLAB_TEST_TARGET_PW")
		bad(nil, "may not create database qpslab", "targets", "check", "weakmy")
		ok("targets", "add", "weakpg", "--flavor", "postgres", "--host", hosts.ServerAddr, "--user", "weak", "--password-env", "QPSLAB_TEST_TARGET_PW")
		bad(nil, "may not create tables in database qpslab", "targets", "check", "weakpg")
		ok("targets", "add", "nowhere", "--flavor", "mariadb", "--host", hosts.ServerAddr, "--port", "3999", "--password-env", "QPSLAB_TEST_TARGET_PW")
		bad(nil, "check that the server runs there", "targets", "check", "nowhere")
		bad(nil, "holds a password", "targets", "add", "x", "--flavor", "mariadb", "--dsn", "mysql://bench:"+plantedPassword+"@"+hosts.ServerAddr+"/qpslab")
		bad(nil, "has parameters (sslmode)", "targets", "add", "x", "--flavor", "postgres", "--dsn", "postgres://bench@"+hosts.ServerAddr+"/qpslab?sslmode=require")
		bad(nil, "no target named", "run", "sysbench", "--target", "ghost")
		bad(nil, "is not valid", "run", "sysbench", "--target", "x\x1b[2J")
		bad(nil, "spread its load over hosts with --load-hosts K", "fleet", "submit", "sysbench", "--target", "my", "--hosts", "any")
		bad(nil, "--build and --target exclude each other", "run", "sysbench", "--target", "my", "--build", "mariadb-system")
		bad(nil, "--restore snapshot", "run", "sysbench", "--target", "my", "--restore", "snapshot")
		bad(nil, "is not on this host", "run", "sysbench", "--target", "my", "--pmp", "1")
		// Someone else's tables in the database a target names: refused,
		// and left as they are.
		execAll(t, root, "CREATE DATABASE theirs", "CREATE TABLE theirs.orders (id INT PRIMARY KEY)", "INSERT INTO theirs.orders VALUES (1)",
			"GRANT ALL ON theirs.* TO bench@'10.213.0.%'")
		ok("targets", "add", "theirs", "--flavor", "mariadb", "--host", hosts.ServerAddr, "--user", "bench", "--database", "theirs",
			"--password-env", "QPSLAB_TEST_TARGET_PW")
		bad(nil, "holds 1 tables qpslab did not create", "run", "sysbench", "--target", "theirs", "--tests", "point-query_range=100")
		if n := testenv.Int(t, root, "SELECT COUNT(*) FROM theirs.orders"); n != 1 {
			t.Errorf("their table holds %d rows, want 1", n)
		}
	})

	t.Run("target vanishes mid-run", func(t *testing.T) {
		cmd := exec.Command(bin, "run", "sysbench", "--target", "my", "--tests", "point-query_range=100", "--no-load",
			"--read-secs", "120", "--warmup", "0", "--threads", "2", "--repeat", "1", "-v")
		cmd.Env = append(testenv.Env(h), "QPSLAB_TEST_TARGET_PW="+plantedPassword)
		var outb bytes.Buffer
		cmd.Stdout = &outb
		pr, pw := io.Pipe()
		cmd.Stderr = pw // the plan's log, with -v: its "-- TEST" line says the test started
		c := testenv.In(hosts.Client, cmd)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		var errb strings.Builder
		started, read := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(read)
			sc := bufio.NewScanner(pr)
			once := false
			for sc.Scan() {
				errb.WriteString(sc.Text() + "\n")
				if !once && strings.HasPrefix(sc.Text(), "-- point-query_range=100") {
					once = true
					close(started)
				}
			}
		}()
		exited := make(chan error, 1)
		go func() { exited <- c.Wait(); pw.Close() }()
		select {
		case <-started:
		case err := <-exited:
			<-read
			t.Fatalf("the run ended before its test started: %v\n%s%s", err, outb.String(), errb.String())
		}
		if title, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c.Process.Pid)); err == nil && bytes.Contains(title, []byte(plantedPassword)) {
			t.Errorf("qpslab's process title holds the password")
		}
		my.stop(syscall.SIGKILL)
		err := <-exited
		<-read
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Fatalf("the run of a target that vanished: %v, want a failure; %s", err, errb.String())
		}
		last := strings.TrimSpace(errb.String())
		last = last[strings.LastIndex(last, "\n")+1:]
		t.Logf("the vanished target's run ends with: %s", last)
		if !strings.Contains(last, "point-query_range=100") || !strings.HasPrefix(last, "qpslab: ") {
			t.Errorf("the failure's last line does not say which test failed: %q", last)
		}
		st, err := store.Open(context.Background(), "", h.StoreFile())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		runs, err := st.Runs(context.Background(), store.Filter{Build: "my-" + myVersion, Test: "point-query_range=100"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Status == result.OK && r.Totals.Seconds > 60 {
				t.Errorf("a run of the vanished target was stored as measured: %s %v s", r.Status, r.Totals.Seconds)
			}
		}
		outs = append(outs, outb.String(), errb.String())
	})

	// The password is in no file qpslab wrote and no output.
	filepath.WalkDir(h.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, rerr := os.ReadFile(p); rerr == nil && bytes.Contains(b, []byte(plantedPassword)) {
			t.Errorf("%s holds the password", p)
		}
		return nil
	})
	for _, o := range outs {
		if strings.Contains(o, plantedPassword) {
			t.Errorf("an output holds the password: %s", o)
		}
	}
	pg.stop(syscall.SIGINT)
}

// A target on this host (a server already running here, by its socket) is
// measured as a sandbox is: the server's CPU and context switches per
// operation are there, and its runs are not marked remote.
func TestTargetOnThisHost(t *testing.T) {
	h := newHome(t)
	if r := qpslab(t, h, "server", "start", "mariadb-system", "default", "--name", "running"); r.code != 0 {
		t.Fatalf("server start: %s", r.stderr)
	}
	defer qpslab(t, h, "server", "stop", "running")
	sock := filepath.Join(h.Root, "sandboxes", "running", "run", "mysqld.sock")
	if r := qpslab(t, h, "targets", "add", "here", "--flavor", "mariadb", "--socket", sock, "--user", "root"); r.code != 0 {
		t.Fatalf("targets add: %s", r.stderr)
	}
	r := qpslab(t, h, "targets", "check", "here")
	if r.code != 0 || !strings.Contains(r.stdout, "the server runs on this host (pid ") {
		t.Fatalf("targets check: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r = qpslab(t, h, "run", "sysbench", "--target", "here", "--tests", "point-query_range=100", "--rows", "2000", "--read-secs", "2",
		"--warmup", "0", "--repeat", "1", "--pmp", "0.5")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	st, err := store.Open(context.Background(), "", h.StoreFile())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), store.Filter{Test: "point-query_range=100", Stacks: true})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	run := runs[0]
	if run.HW == nil || run.HW.Remote || !strings.HasPrefix(run.Build, "here-") {
		t.Fatalf("run %s: hw %+v", run.Label(), run.HW)
	}
	for _, f := range []string{"cpu/o", "cs/o", "server_cpu_us/o"} {
		m, _ := result.Lookup(f)
		if v, ok := m.Of(run); !ok || v <= 0 {
			t.Errorf("%s: %v %v", f, v, ok)
		}
	}
	if s, ok := run.StacksOf("pmp"); !ok || s.Captures < 2 || len(s.Stacks) == 0 {
		t.Errorf("the local target's stacks (--pmp): %+v %v", s, ok)
	}
}
