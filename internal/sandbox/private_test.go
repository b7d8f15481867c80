package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/testenv"
)

// The case: a config with init_file=/etc/shadow made a root
// MariaDB read the file at start and put its first line, as a syntax
// error, into server.log, which anyone could read (0644). The start is
// refused now, in one line naming the setting and the flag that allows
// it, before anything is made; allowed, the server reads it as an account
// of its own (which cannot: no line of the file reaches the log, nor the
// error), and the log is its owner's alone.
func TestInitFileOutsideTheSandbox(t *testing.T) {
	h := newHome(t)
	b := testenv.Build(t, h, "mariadb-system")
	cs := config.Store{Dir: h.Configs()}
	if _, err := cs.AddContent("shadow", []byte("# qpslab: base=default\n[mysqld]\ninit_file=/etc/shadow\n"), config.MySQL, false); err != nil {
		t.Fatal(err)
	}
	c, err := cs.Get("shadow", config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.Start(context.Background(), h, sandbox.Spec{Build: b, Config: c})
	testenv.WantErr(t, err, "config shadow sets init_file=/etc/shadow", "--allow-server-file /etc/shadow")
	dir := sandbox.Dir(h, sandbox.DefaultName(b, c))
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused start made %s (%v)", dir, err)
	}

	srv, err := sandbox.Start(context.Background(), h, sandbox.Spec{Build: b, Config: c, AllowFiles: []string{"/etc/shadow"}})
	if err == nil {
		srv.Stop()
	}
	t.Logf("allowed, the start: %v", err)
	log, rerr := os.ReadFile(filepath.Join(dir, "server.log"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, l := range shadowLines(t) {
		if strings.Contains(string(log), l) || err != nil && strings.Contains(err.Error(), l) {
			t.Errorf("a line of /etc/shadow reached the server's log or its error: %q", l)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "server.log")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("server.log: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}
}

// shadowLines are the lines of /etc/shadow this test can read (all of
// them as root), each long enough to tell.
func shadowLines(t *testing.T) []string {
	b, err := os.ReadFile("/etc/shadow")
	if err != nil {
		testenv.Skip(t, "this test cannot read /etc/shadow to look for its lines: "+err.Error())
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if len(l) >= 8 {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		testenv.Skip(t, "/etc/shadow holds no line to look for")
	}
	return out
}

// No server runs as root: when the tests run as root, each flavor's
// server runs as an account of its own, with none of root's groups; as
// another user, as that user. What its sandbox holds is its owner's
// alone: the folder 0700 (0710 with the server account's group, which
// passes through it), qpslab's files in it 0600, the folders the server
// writes 0700.
func TestServersRunUnprivilegedAndPrivate(t *testing.T) {
	for _, name := range []string{"mariadb-system", "postgres-system", testenv.MySQL} {
		t.Run(name, func(t *testing.T) {
			h := newHome(t)
			b := testenv.Build(t, h, name)
			srv := start(t, h, sandbox.Spec{Build: b, Config: defaultConfig(t, b)})
			uids, groups := procIDs(t, srv.PID)
			for _, id := range uids {
				if os.Geteuid() == 0 && id == 0 || os.Geteuid() != 0 && id != os.Geteuid() {
					t.Errorf("the server's uids are %v (qpslab's %d)", uids, os.Geteuid())
				}
			}
			if os.Geteuid() == 0 {
				if srv.User == "" {
					t.Error("sandbox.yaml names no account for the server")
				}
				for _, g := range groups {
					if g == 0 {
						t.Errorf("the server keeps root's group: %v", groups)
					}
				}
			}
			dirMode := os.FileMode(0o700)
			if os.Geteuid() == 0 {
				dirMode = 0o710
			}
			want := map[string]os.FileMode{srv.Dir: dirMode, srv.Datadir: 0o700, srv.RunDir: 0o700,
				filepath.Join(srv.Dir, "server.log"): 0o600, filepath.Join(srv.Dir, "init.log"): 0o600,
				filepath.Join(srv.Dir, "sandbox.yaml"): 0o600, filepath.Join(srv.Dir, ".lock"): 0o600}
			if b.Flavor.Describe().Family == string(config.MySQL) {
				for _, f := range []string{"my.cnf"} {
					want[filepath.Join(srv.Dir, f)] = 0o600
				}
				for _, d := range []string{"tmp", "files"} {
					want[filepath.Join(srv.Dir, d)] = 0o700
				}
			}
			for p, m := range want {
				fi, err := os.Lstat(p)
				if err != nil {
					t.Error(err)
				} else if fi.Mode().Perm() != m {
					t.Errorf("%s: mode %04o, want %04o", p, fi.Mode().Perm(), m)
				}
			}
			if fi, err := os.Stat(h.Sandboxes()); err != nil || fi.Mode().Perm()&0o044 != 0 {
				t.Errorf("%s lists its sandboxes to others: %v", h.Sandboxes(), fi.Mode())
			}
		})
	}
}

// procIDs are a process's real, effective, saved and file-system uids and
// its supplementary groups, from /proc.
func procIDs(t *testing.T, pid int) (uids, groups []int) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		k, v, _ := strings.Cut(sc.Text(), ":")
		for _, x := range strings.Fields(v) {
			n, _ := strconv.Atoi(x)
			switch k {
			case "Uid":
				uids = append(uids, n)
			case "Groups":
				groups = append(groups, n)
			}
		}
	}
	if len(uids) == 0 {
		t.Fatalf("no Uid line in /proc/%d/status", pid)
	}
	return uids, groups
}
