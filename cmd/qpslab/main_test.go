package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/testenv"
)

// bin is the qpslab binary under test: $QPSLAB_BIN (make test builds it), or
// one built here.
var bin string

func TestMain(m *testing.M) {
	bin = os.Getenv("QPSLAB_BIN")
	if bin == "" {
		dir, err := os.MkdirTemp("", "qpslab-bin-")
		if err != nil {
			panic(err)
		}
		bin = filepath.Join(dir, "qpslab")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build qpslab: %v\n%s", err, out)
			os.Exit(1)
		}
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

type outcome struct {
	stdout, stderr string
	code           int
}

func qpslab(t *testing.T, h home.Home, args ...string) outcome {
	t.Helper()
	return runIn(t, "", testenv.Env(h), args...)
}

// runIn runs qpslab with env in network namespace ns ("": this one).
func runIn(t *testing.T, ns string, env []string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	if ns != "" {
		cmd = testenv.In(ns, cmd)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := outcome{out.String(), errb.String(), 0}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// newHome is a test home that is checked for leftover processes at the end.
func newHome(t *testing.T) home.Home {
	h := testenv.Home(t)
	t.Cleanup(func() {
		if left := testenv.Processes(h.Root); len(left) > 0 {
			t.Errorf("processes left behind: %q", left)
			exec.Command(bin, "server", "stop", "--all").Run()
		}
	})
	return h
}

func TestHelpAndVersion(t *testing.T) {
	h := newHome(t)
	r := qpslab(t, h, "--help")
	for _, want := range []string{"builds", "configs", "server", "version", "QPSLAB_HOME"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help does not mention %q:\n%s", want, r.stdout)
		}
	}
	// A suite's help offers the plan's flags it takes, and no other.
	if r := qpslab(t, h, "run", "ibench", "--help"); r.code != 0 || strings.Contains(r.stdout, "--rate ") || strings.Contains(r.stdout, "--warmup") || !strings.Contains(r.stdout, "--rates") {
		t.Errorf("run ibench --help offers --rate or --warmup, or lacks --rates: %+v", r)
	}
	if r := qpslab(t, h, "run", "sysbench", "--help"); r.code != 0 || !strings.Contains(r.stdout, "--rate ") || !strings.Contains(r.stdout, "With --rate, open loop") {
		t.Errorf("run sysbench --help lacks --rate: %+v", r)
	}
	if r := qpslab(t, h, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "qpslab ") {
		t.Errorf("version: %+v", r)
	}
}

func TestBuildsAndConfigsLists(t *testing.T) {
	h := newHome(t)
	r := qpslab(t, h, "builds", "list")
	for _, want := range []string{"mariadb-system", "10.11.", "postgres-system", "15."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("builds list lacks %q:\n%s", want, r.stdout)
		}
	}
	f := filepath.Join(t.TempDir(), "cz11a_bee.cnf")
	os.WriteFile(f, []byte("[mysqld]\ninnodb_buffer_pool_size=1G\n"), 0o644)
	if r := qpslab(t, h, "configs", "add", "cz11a_bee", f); r.code != 0 {
		t.Fatalf("configs add: %+v", r)
	}
	r = qpslab(t, h, "configs", "list")
	for _, want := range []string{"cz11a_bee", "default"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("configs list lacks %q:\n%s", want, r.stdout)
		}
	}
}

// Every bad input gets one line on stderr, naming the problem and the fix,
// and a non-zero exit.
func TestBadInput(t *testing.T) {
	h := newHome(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := fmt.Sprint(busy.Addr().(*net.TCPAddr).Port)
	empty := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.cnf")
	os.WriteFile(bad, []byte("[mysqld]\nno_such_option_qpslab=1\n"), 0o644)
	if r := qpslab(t, h, "configs", "add", "bad", bad); r.code != 0 {
		t.Fatalf("configs add: %+v", r)
	}
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o555)
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", ro).CombinedOutput(); err != nil {
			t.Fatalf("chattr +i: %v %s", err, out)
		}
		defer exec.Command("chattr", "-i", ro).Run()
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown build", []string{"server", "start", "nosuch", "default"}, []string{"unknown build \"nosuch\"", "qpslab builds list"}},
		{"unknown config", []string{"server", "start", "mariadb-system", "nosuch"}, []string{"no mysql config named \"nosuch\"", "qpslab configs add"}},
		{"basedir without server", []string{"builds", "add", "mine", "--flavor", "mariadb", "--basedir", empty}, []string{"has no mariadb server binary"}},
		{"basedir of another flavor", []string{"builds", "add", "mine", "--flavor", "mysql", "--basedir", "/usr"}, []string{"holds mariadb", "--flavor mariadb"}},
		{"unknown flavor", []string{"builds", "add", "mine", "--flavor", "oracle", "--basedir", "/usr"}, []string{"unknown flavor \"oracle\""}},
		{"fetch offline", []string{"builds", "fetch", "mysql-8.0.36", "--mirror", "http://127.0.0.1:1"}, []string{"cannot reach 127.0.0.1:1", "offline", "--from-file"}},
		{"fetch garbage", []string{"builds", "fetch", "mariadb"}, []string{"cannot fetch", "mariadb-10.2.11"}},
		{"compile no source tree", []string{"builds", "compile", empty}, []string{"no source tree qpslab knows", "--flavor"}},
		{"compile a commit of no git tree", []string{"builds", "compile", empty, "--commit", "HEAD~1"}, []string{"is not a git tree", "leave out --commit"}},
		{"port in use", []string{"server", "start", "mariadb-system", "default", "--port", busyPort}, []string{"port " + busyPort + " is in use", "--port"}},
		{"unwritable datadir", []string{"server", "start", "mariadb-system", "default", "--datadir", filepath.Join(ro, "data")}, []string{"not writable", "--datadir"}},
		{"server dies during start", []string{"server", "start", "mariadb-system", "bad"}, []string{"exited during start", "no_such_option_qpslab", "server.log"}},
		{"stop unknown sandbox", []string{"server", "stop", "nosuch"}, []string{"no sandbox named \"nosuch\"", "qpslab server status"}},
		{"unknown command", []string{"frobnicate"}, []string{"unknown command"}},
		{"run without a build", []string{"run", "sysbench"}, []string{"--build", "--sandbox"}},
		{"run with bad threads", []string{"run", "sysbench", "--build", "mariadb-system", "--threads", "1,x"}, []string{"--threads", "1,4,16"}},
		{"run with no matching test", []string{"run", "sysbench", "--build", "mariadb-system", "--tests", "no-such-test*"}, []string{"no-such-test*"}},
		{"run with an unknown list", []string{"run", "sysbench", "--build", "mariadb-system", "--list", "1999"}, []string{"--list 1999", "use 2024"}},
		{"run with a config of another family", []string{"run", "sysbench", "--build", "postgres-system", "--config", "bad"}, []string{"no postgres config named \"bad\""}},
		{"run with a bad transport", []string{"run", "sysbench", "--build", "mariadb-system", "--transport", "carrier-pigeon"}, []string{"unknown transport", "blocking"}},
		{"run with no rows", []string{"run", "sysbench", "--build", "mariadb-system", "--rows", "0"}, []string{"--rows 0", "give a whole number from 1"}},
		{"run on a stopped sandbox", []string{"run", "sysbench", "--sandbox", "nosuch"}, []string{"no sandbox named"}},
		{"ibench given --rate", []string{"run", "ibench", "--build", "mariadb-system", "--rate", "10"}, []string{"unknown flag: --rate", "ibench does not take it", "--rates"}},
		{"ibench submitted with --threads", []string{"fleet", "submit", "ibench", "--threads", "4"}, []string{"unknown flag: --threads", "--clients"}},
		{"sysbench takes --rate", []string{"run", "sysbench", "--rate", "10"}, []string{"--build"}},
	} {
		t.Run(tc.name, func(t *testing.T) { oneErrorLine(t, h, tc.args, tc.want) })
	}
}

// oneErrorLine runs qpslab with args and wants it to fail with one line
// starting "qpslab: " that holds each of want.
func oneErrorLine(t *testing.T, h home.Home, args, want []string) {
	t.Helper()
	r := qpslab(t, h, args...)
	if r.code == 0 {
		t.Fatalf("exit 0 for %v; stdout %q", args, r.stdout)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "qpslab: ") {
		t.Errorf("want one line starting with \"qpslab: \", got %q", r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q does not contain %q", r.stderr, w)
		}
	}
}

// server start detaches; status, sql and stop find it from other processes.
func TestServerDetached(t *testing.T) {
	h := newHome(t)
	if r := qpslab(t, h, "server", "start", "mariadb-system", "default"); r.code != 0 {
		t.Fatalf("start: %+v", r)
	}
	r := qpslab(t, h, "server", "status")
	if !strings.Contains(r.stdout, "mariadb-system.default") || !strings.Contains(r.stdout, "running") {
		t.Errorf("status:\n%s", r.stdout)
	}
	if r := qpslab(t, h, "server", "sql", "mariadb-system.default", "SELECT 40+2"); !strings.Contains(r.stdout, "42") {
		t.Errorf("sql: %+v", r)
	}
	if r := qpslab(t, h, "server", "start", "mariadb-system", "default"); r.code == 0 || !strings.Contains(r.stderr, "already running") {
		t.Errorf("a second start of a running sandbox: %+v", r)
	}
	if r := qpslab(t, h, "server", "stop", "--all"); r.code != 0 || !strings.Contains(r.stdout, "stopped mariadb-system.default") {
		t.Errorf("stop: %+v", r)
	}
	if left := testenv.Processes(h.Root); len(left) > 0 {
		t.Errorf("after stop: %q", left)
	}
	if r := qpslab(t, h, "server", "sql", "mariadb-system.default", "SELECT 1"); r.code == 0 || !strings.Contains(r.stderr, "not running") {
		t.Errorf("sql on a stopped sandbox: %+v", r)
	}
}

// SIGINT or SIGTERM at any moment stops every server qpslab started: while it
// runs in the foreground, and in the middle of a start: while the init
// program runs (initdb, mysql_install_db), and while the bootstrap server
// it starts runs (postgres --boot or --single, mysqld --bootstrap).
func TestSignalsLeaveNoProcess(t *testing.T) {
	for _, tc := range []struct {
		build string
		sig   syscall.Signal
		when  string // "running", "init" or "bootstrap": signalled once seen
	}{
		{"mariadb-system", syscall.SIGINT, "running"},
		{"postgres-system", syscall.SIGTERM, "running"},
		{"postgres-12.17.0", syscall.SIGINT, "running"},
		{"postgres-system", syscall.SIGINT, "init"},
		{"mariadb-10.2.11", syscall.SIGTERM, "bootstrap"},
		{"postgres-12.17.0", syscall.SIGINT, "bootstrap"},
	} {
		t.Run(fmt.Sprintf("%s/%v/%s", tc.build, tc.sig, tc.when), func(t *testing.T) {
			h := newHome(t)
			if !strings.HasSuffix(tc.build, "-system") {
				testenv.Build(t, h, tc.build) // fetched (from the cache) and registered in this home
			}
			cmd := exec.Command(bin, "server", "start", tc.build, "default", "--foreground")
			cmd.Env = testenv.Env(h)
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { // a test that failed before its signal
				if cmd.ProcessState == nil {
					cmd.Process.Signal(syscall.SIGTERM)
					cmd.Wait()
				}
			})
			ready := make(chan bool, 1)
			var out bytes.Buffer
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					out.WriteString(sc.Text() + "\n")
					if strings.HasPrefix(sc.Text(), "running in the foreground") {
						ready <- true
					}
				}
				close(ready)
			}()
			if tc.when == "running" {
				select {
				case ok := <-ready:
					if !ok {
						cmd.Wait()
						t.Fatalf("server did not start: %s", stderr.String())
					}
				case <-time.After(3 * time.Minute):
					cmd.Process.Kill()
					t.Fatal("server did not start within 3 minutes")
				}
				if len(testenv.Processes(h.Root)) < 2 {
					t.Fatalf("no server process found before the signal: %q", testenv.Processes(h.Root))
				}
			} else {
				marks := []string{"/initdb ", "install_db "}
				if tc.when == "bootstrap" {
					marks = []string{" --boot", " --single", " --bootstrap", " --initialize"}
				}
				testenv.WaitFor(t, 3*time.Minute, "the "+tc.when+" step of the start", func() bool {
					for _, p := range testenv.Processes(h.Root) {
						for _, m := range marks {
							if strings.Contains(p+" ", m) {
								return true
							}
						}
					}
					return false
				})
			}
			cmd.Process.Signal(tc.sig)
			err := cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			t.Logf("exit %d; stdout %q; stderr %q", code, out.String(), stderr.String())
			switch {
			case tc.when == "running" && code != 0:
				t.Errorf("exit %d after %v in the foreground; stderr %q", code, tc.sig, stderr.String())
			case tc.when != "running" && code != 0 && code != 130:
				t.Errorf("exit %d after %v during start; stderr %q", code, tc.sig, stderr.String())
			}
			if left := testenv.Processes(h.Root); len(left) > 0 {
				t.Errorf("after %v: processes left: %q", tc.sig, left)
			}
		})
	}
}

func TestHostCheck(t *testing.T) {
	h := newHome(t)
	r := qpslab(t, h, "host", "check", "--json")
	if r.code != 0 {
		t.Fatalf("host check --json: %+v", r)
	}
	var c struct {
		CPUs   int    `json:"cpus"`
		Driver string `json:"cpufreq_driver"`
		Risks  []struct{ Name, Fix string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("host check --json printed no JSON: %v", err)
	}
	if c.CPUs < 1 || c.Driver == "" {
		t.Errorf("host check: %+v", c)
	}
	for _, risk := range c.Risks {
		if risk.Fix == "" {
			t.Errorf("risk %s has no fix", risk.Name)
		}
	}
	r = qpslab(t, h, "host", "check")
	if r.code != 0 || !strings.Contains(r.stdout, "cpufreq driver:") {
		t.Errorf("host check: %+v", r)
	}
	r = qpslab(t, h, "host", "check", "--procfs", "/nonexistent")
	if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "/nonexistent") {
		t.Errorf("a bad --procfs: %+v", r)
	}
}

// tune then reset over a writable fixture tree (an acpi-cpufreq machine with
// boost on and the schedutil governor) puts every byte back.
func TestHostTuneReset(t *testing.T) {
	h := newHome(t)
	root := t.TempDir()
	files := map[string]string{
		"sys/devices/system/cpu/online":                                   "0\n",
		"sys/devices/system/cpu/offline":                                  "\n",
		"sys/devices/system/cpu/cpufreq/boost":                            "1\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_driver":              "acpi-cpufreq\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor":            "schedutil\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors": "performance powersave schedutil\n",
		"sys/devices/system/cpu/cpu0/cpufreq/related_cpus":                "0\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_setspeed":            "<unsupported>\n",
		"proc/cpuinfo": "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu\n\n",
		"proc/meminfo": "MemTotal:       1000 kB\nSwapTotal:      0 kB\n",
		"proc/stat":    "cpu  1 0 1 1 0 0 0 0 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\nintr 1\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n",
		"proc/cmdline": "ro\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
	}
	roots := []string{"--sysfs", filepath.Join(root, "sys"), "--procfs", filepath.Join(root, "proc")}
	r := qpslab(t, h, append([]string{"host", "tune"}, roots...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "scaling_governor: schedutil -> performance") || !strings.Contains(r.stdout, "cpufreq/boost: 1 -> 0") {
		t.Fatalf("tune: %+v", r)
	}
	if r := qpslab(t, h, append([]string{"host", "check"}, roots...)...); strings.Contains(r.stdout, "- boost") || strings.Contains(r.stdout, "- governor") {
		t.Errorf("risks left after tune:\n%s", r.stdout)
	}
	if r := qpslab(t, h, "host", "reset"); r.code != 0 || !strings.Contains(r.stdout, "boost: 0 -> 1") {
		t.Fatalf("reset: %+v", r)
	}
	for p, c := range files {
		if b, _ := os.ReadFile(filepath.Join(root, p)); string(b) != c {
			t.Errorf("%s is %q after reset, was %q", p, b, c)
		}
	}
}
