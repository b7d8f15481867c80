package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A setting that points a server outside its sandbox is refused in one
// line by every command that starts one or queues a job that would,
// before anything starts, with the flag that lets it through; so is an
// --allowed-host that is no host name.
func TestServerFileRefusedByTheCommands(t *testing.T) {
	h := newHome(t)
	f := filepath.Join(t.TempDir(), "shadow.cnf")
	os.WriteFile(f, []byte("[mysqld]\ninit_file=/etc/shadow\n"), 0o644)
	if r := qpslab(t, h, "configs", "add", "shadow", f); r.code != 0 {
		t.Fatalf("configs add: exit %d %s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"server", "start", "mariadb-system", "shadow"}, []string{"config shadow sets init_file=/etc/shadow", "--allow-server-file /etc/shadow"}},
		{[]string{"run", "sysbench", "--build", "mariadb-system", "--config", "shadow"}, []string{"config shadow sets init_file=/etc/shadow"}},
		{[]string{"run", "sysbench", "--build", "mariadb-system", "--set", "ssl-key=/root/k.pem"}, []string{"--set/--grid sets ssl-key=/root/k.pem", "--allow-server-file /root/k.pem"}},
		{[]string{"fleet", "submit", "sysbench", "--build", "mariadb-system", "--set", "init_file=/etc/shadow", "--hosts", "a"}, []string{"--set/--grid sets init_file=/etc/shadow"}},
		{[]string{"serve", "--allowed-host", "http://bench.example.com"}, []string{`--allowed-host "http://bench.example.com"`, "without scheme"}},
	} {
		r := qpslab(t, h, c.args...)
		for _, w := range c.want {
			if r.code == 0 || !strings.Contains(r.stderr, w) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("%v: exit %d %q, want one line with %q", c.args, r.code, r.stderr, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(h.Sandboxes(), "mariadb-system.shadow")); err == nil {
		t.Error("a refused start made its sandbox")
	}
}
